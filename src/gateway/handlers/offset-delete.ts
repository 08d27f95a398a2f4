// OffsetDelete: deletes a group's committed offsets for some partitions.
// Kafka's rule: a partition of a topic that a live member of the group
// subscribes to is refused with GROUP_SUBSCRIBED_TO_TOPIC; the others go.
// An unknown group answers GROUP_ID_NOT_FOUND.
import { OffsetDelete } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';
import { groupErrorCode, NONE } from '../kafka-errors.js';

export const offsetDelete: ApiHandler = {
  api: OffsetDelete,
  versions: '0',
  async handle(request, ctx) {
    const topics = request.topics as { name: string; partitions: { partitionIndex: number }[] }[];
    const result = await ctx.core.deleteGroupOffsets({
      group: request.groupId,
      partitions: topics.flatMap((t) => t.partitions.map((p) => ({ queue: t.name, partition: p.partitionIndex }))),
    });
    const errors = new Map(result.partitions.map((p) => [`${p.queue}/${p.partition}`, groupErrorCode(p.error)]));
    return {
      errorCode: groupErrorCode(result.error),
      throttleTimeMs: 0,
      topics: result.error
        ? []
        : topics.map((t) => ({
            name: t.name,
            partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: errors.get(`${t.name}/${p.partitionIndex}`) ?? NONE })),
          })),
    };
  },
};

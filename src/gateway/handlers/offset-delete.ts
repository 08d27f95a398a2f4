// OffsetDelete: deletes a group's committed offsets for some partitions.
// Kafka's rule: a partition of a topic that a live member of the group
// subscribes to is refused with GROUP_SUBSCRIBED_TO_TOPIC; the others go.
// An unknown group answers GROUP_ID_NOT_FOUND.
//
// ACLs: DELETE on the group (else GROUP_AUTHORIZATION_FAILED) and READ on each
// topic (else its partitions answer TOPIC_AUTHORIZATION_FAILED).
import { OffsetDelete } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { groupErrorCode, NONE } from '../kafka-errors.js';

export const offsetDelete: ApiHandler = {
  api: OffsetDelete,
  versions: '0',
  async handle(request, ctx) {
    const topics = request.topics as { name: string; partitions: { partitionIndex: number }[] }[];
    if (!ctx.access.allows('DELETE', 'GROUP', request.groupId)) return { errorCode: DENIED_CODE.GROUP, throttleTimeMs: 0, topics: [] };
    const readable = (name: string) => ctx.access.allows('READ', 'TOPIC', name);
    const result = await ctx.core.deleteGroupOffsets({
      group: request.groupId,
      partitions: topics.filter((t) => readable(t.name)).flatMap((t) => t.partitions.map((p) => ({ queue: t.name, partition: p.partitionIndex }))),
    });
    const errors = new Map(result.partitions.map((p) => [`${p.queue}/${p.partition}`, groupErrorCode(p.error)]));
    for (const t of topics) if (!readable(t.name)) for (const p of t.partitions) errors.set(`${t.name}/${p.partitionIndex}`, DENIED_CODE.TOPIC);
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

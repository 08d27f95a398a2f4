// OffsetDelete: deletes a group's committed offsets for some partitions.
// Kafka's rules: a partition that does not exist (its topic unknown, or past
// the topic's partitions) answers UNKNOWN_TOPIC_OR_PARTITION; one of a topic that a live member of the group
// subscribes to is refused with GROUP_SUBSCRIBED_TO_TOPIC; the others go. An
// unknown group answers GROUP_ID_NOT_FOUND for the whole request.
//
// ACLs: DELETE on the group (else GROUP_AUTHORIZATION_FAILED) and READ on each
// topic (else its partitions answer TOPIC_AUTHORIZATION_FAILED).
import { ErrorCode } from '../../../protocol/error-codes.js';
import { OffsetDelete } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { groupErrorCode, NONE } from '../kafka-errors.js';
import { describeTopics, topicNameProblem } from '../topics.js';

export const offsetDelete: ApiHandler<typeof OffsetDelete> = {
  api: OffsetDelete,
  versions: '0',
  async handle(request, ctx) {
    const topics = request.topics;
    if (!ctx.access.allows('DELETE', 'GROUP', request.groupId)) return { errorCode: DENIED_CODE.GROUP, throttleTimeMs: 0, topics: [] };
    const readable = (name: string) => ctx.access.allows('READ', 'TOPIC', name);
    const known = await describeTopics(ctx, topics.map((t) => t.name).filter((name) => topicNameProblem(name) === null && readable(name)));
    const exists = (topic: string, partition: number) => known.get(topic)?.partitions.some((p) => p.index === partition) ?? false;
    // The group is checked even when no partition exists, as Kafka's coordinator does.
    const result = await ctx.core.deleteGroupOffsets({
      group: request.groupId,
      partitions: topics.flatMap((t) => t.partitions.filter((p) => exists(t.name, p.partitionIndex)).map((p) => ({ queue: t.name, partition: p.partitionIndex }))),
    });
    const errors = new Map(result.partitions.map((p) => [`${p.queue}/${p.partition}`, groupErrorCode(p.error)]));
    const codeOf = (topic: string, partition: number) =>
      !readable(topic) ? DENIED_CODE.TOPIC : exists(topic, partition) ? errors.get(`${topic}/${partition}`) ?? NONE : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    return {
      errorCode: groupErrorCode(result.error),
      throttleTimeMs: 0,
      topics: result.error
        ? []
        : topics.map((t) => ({
            name: t.name,
            partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: codeOf(t.name, p.partitionIndex) })),
          })),
    };
  },
  unavailable: (_request, errorCode) => ({ errorCode, throttleTimeMs: 0, topics: [] }),
};

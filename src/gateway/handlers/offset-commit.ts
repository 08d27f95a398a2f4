// OffsetCommit: stores a consumer group's positions. The core checks the
// commit against the group's membership first (Kafka's generation fencing):
// a member of an old generation gets ILLEGAL_GENERATION, a stranger
// UNKNOWN_MEMBER_ID, a commit during CompletingRebalance
// REBALANCE_IN_PROGRESS; a commit from outside any group (generation -1,
// empty member id: assign-mode consumers, tools) is taken when the group has
// no members. A KIP-848 consumer group checks the member id and epoch
// instead: a stranger UNKNOWN_MEMBER_ID, another epoch STALE_MEMBER_EPOCH
// (docs/consumer-groups.md). Offsets are durable in the core and shared with
// Queen consumer groups of the same name.
//
// Choices:
// - A partition of an unknown topic, or beyond its partition count, answers
//   UNKNOWN_TOPIC_OR_PARTITION; its neighbours still commit.
// - Metadata longer than 4096 bytes (Kafka's offset.metadata.max.bytes)
//   answers OFFSET_METADATA_TOO_LARGE for that partition.
// - A commit with a generation (0 or more) to a group that does not exist
//   answers ILLEGAL_GENERATION before v9 and GROUP_ID_NOT_FOUND from v9, as
//   Kafka's coordinator does (v9 is the version both group protocols share).
// - RetentionTimeMs (v2-v4) and CommitTimestamp (v1) are accepted and
//   ignored: committed offsets are kept until deleted, as Kafka 2.1+ does for
//   groups that are alive.
//
// Versions: v0 has no generation or member id; GroupInstanceId from v7.
//
// ACLs: READ on the group (else every partition answers
// GROUP_AUTHORIZATION_FAILED) and READ on each topic (else its partitions
// answer TOPIC_AUTHORIZATION_FAILED), as Kafka's.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { OffsetCommit } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { COORDINATOR_TRANSIENT, groupErrorCode, kafkaErrorOf, NONE } from '../kafka-errors.js';
import { describeTopics, topicNameProblem } from '../topics.js';

const MAX_METADATA_BYTES = 4096;

/** Whether the group has members or committed offsets: DescribeGroups answers any other group Dead. */
async function groupExists(ctx: HandlerContext, group: string): Promise<boolean> {
  const { groups } = await ctx.core.describeGroups({ groups: [group] });
  return groups[0]?.state !== 'Dead';
}

export const offsetCommit: ApiHandler<typeof OffsetCommit> = {
  api: OffsetCommit,
  versions: '0-9',
  async handle(request, ctx) {
    const topics = request.topics;
    if (!ctx.access.allows('READ', 'GROUP', request.groupId)) {
      return { throttleTimeMs: 0, topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: DENIED_CODE.GROUP })) })) };
    }
    const known = await describeTopics(ctx, topics.map((t) => t.name).filter((n) => topicNameProblem(n) === null));
    const errors = new Map<string, number>(); // "topic/partition" → code
    const offsets: { queue: string; partition: number; offset: number; leaderEpoch: number; metadata: string | null }[] = [];
    for (const t of topics) {
      const queue = known.get(t.name);
      for (const p of t.partitions) {
        const key = `${t.name}/${p.partitionIndex}`;
        if (!ctx.access.allows('READ', 'TOPIC', t.name)) {
          errors.set(key, DENIED_CODE.TOPIC);
        } else if (!queue || p.partitionIndex < 0 || p.partitionIndex >= queue.partitions.length) {
          errors.set(key, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        } else if (p.committedMetadata !== null && Buffer.byteLength(p.committedMetadata) > MAX_METADATA_BYTES) {
          errors.set(key, ErrorCode.OFFSET_METADATA_TOO_LARGE);
        } else {
          offsets.push({
            queue: t.name,
            partition: p.partitionIndex,
            offset: Number(p.committedOffset),
            leaderEpoch: p.committedLeaderEpoch ?? -1,
            metadata: p.committedMetadata,
          });
        }
      }
    }
    let groupCode = NONE;
    if (offsets.length > 0) {
      try {
        const { error } = await ctx.core.commitGroupOffsets({
          group: request.groupId,
          generationId: ctx.header.apiVersion >= 1 ? request.generationIdOrMemberEpoch : -1,
          memberId: ctx.header.apiVersion >= 1 ? request.memberId : '',
          groupInstanceId: request.groupInstanceId ?? null,
          offsets,
        });
        groupCode = groupErrorCode(error === 'illegal_generation' && ctx.header.apiVersion >= 9 && !(await groupExists(ctx, request.groupId)) ? 'group_id_not_found' : error);
      } catch (e) {
        groupCode = kafkaErrorOf(e, COORDINATOR_TRANSIENT).errorCode;
      }
    }
    return {
      throttleTimeMs: 0,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partitionIndex: p.partitionIndex,
          errorCode: errors.get(`${t.name}/${p.partitionIndex}`) ?? groupCode,
        })),
      })),
    };
  },
  unavailable: (request, errorCode) => ({
    throttleTimeMs: 0,
    topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
  }),
};

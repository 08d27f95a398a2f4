// OffsetFetch: reads a consumer group's committed positions. A partition
// without a commit answers offset -1 and no error, so the consumer applies
// its auto.offset.reset policy.
//
// Choices:
// - Null topics (v2+) means every partition the group has committed.
// - RequireStable (v7+): a partition with offsets pending in an open Kafka
//   transaction (TxnOffsetCommit before EndTxn) answers UNSTABLE_OFFSET_COMMIT
//   and offset -1, as Kafka does; the client retries until the transaction
//   ends. Without it the last committed offset answers.
//
// Versions: v0-v7 ask for one group, with a top-level error from v2; v8+
// batch several groups, each with its own error; v9 adds member id and
// epoch: a KIP-848 consumer group checks them as Kafka does (a stranger
// UNKNOWN_MEMBER_ID, another epoch STALE_MEMBER_EPOCH; a null member id with
// epoch -1 is a fetch from outside the group), classic groups ignore them.
//
// ACLs: DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED) and on each
// topic: a topic asked for without it answers TOPIC_AUTHORIZATION_FAILED per
// partition; asked for every topic, those are left out.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { OffsetFetch } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { consumerGroupErrorCode, COORDINATOR_TRANSIENT, kafkaErrorOf, NONE } from '../kafka-errors.js';

type TopicPartitions = NonNullable<RequestOf<typeof OffsetFetch>['groups'][number]['topics']>[number];

type Member = { memberId: string | null; memberEpoch: number };

async function fetchGroup(ctx: HandlerContext, group: string, asked: TopicPartitions[] | null, requireStable: boolean, member: Member | null = null) {
  if (!ctx.access.allows('DESCRIBE', 'GROUP', group)) return { errorCode: DENIED_CODE.GROUP, topics: [] };
  if (member !== null && (member.memberId !== null || member.memberEpoch >= 0)) {
    try {
      const { error } = await ctx.core.checkOffsetFetchMember({ group, memberId: member.memberId ?? '', memberEpoch: member.memberEpoch });
      if (error !== null) return { errorCode: consumerGroupErrorCode(error), topics: [] };
    } catch (e) {
      return { errorCode: kafkaErrorOf(e, COORDINATOR_TRANSIENT).errorCode, topics: [] };
    }
  }
  const describable = (name: string) => ctx.access.allows('DESCRIBE', 'TOPIC', name);
  const topics = asked === null ? null : asked.filter((t) => describable(t.name));
  const hidden = (asked ?? [])
    .filter((t) => !describable(t.name))
    .map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode: DENIED_CODE.TOPIC })) }));
  try {
    const partitions = topics === null ? null : topics.flatMap((t) => t.partitionIndexes.map((partition) => ({ queue: t.name, partition })));
    const { offsets } = await ctx.core.fetchOffsets({ group, partitions });
    const unstable = requireStable ? new Set((await ctx.core.unstableOffsets({ group, partitions })).partitions.map((p) => `${p.queue}\u0000${p.partition}`)) : new Set<string>();
    const byTopic = new Map<string, { partitionIndex: number; committedOffset: number; committedLeaderEpoch: number; metadata: string; errorCode: number }[]>();
    for (const o of offsets) {
      // Asked for every topic: those the principal may not see are left out.
      if (topics === null && !describable(o.queue)) continue;
      let list = byTopic.get(o.queue);
      if (!list) byTopic.set(o.queue, (list = []));
      if (unstable.has(`${o.queue}\u0000${o.partition}`)) {
        list.push({ partitionIndex: o.partition, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT });
      } else {
        list.push({ partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: o.leaderEpoch, metadata: o.metadata ?? '', errorCode: NONE });
      }
    }
    return { errorCode: NONE, topics: [...[...byTopic].map(([name, partitions]) => ({ name, partitions })), ...hidden] };
  } catch (e) {
    return { errorCode: kafkaErrorOf(e, COORDINATOR_TRANSIENT).errorCode, topics: [] };
  }
}

export const offsetFetch: ApiHandler<typeof OffsetFetch> = {
  api: OffsetFetch,
  versions: '0-9',
  async handle(request, ctx) {
    if (ctx.header.apiVersion >= 8) {
      const groups = request.groups;
      return {
        throttleTimeMs: 0,
        groups: await Promise.all(
          groups.map(async (g) => {
            const member = ctx.header.apiVersion >= 9 ? { memberId: g.memberId ?? null, memberEpoch: g.memberEpoch ?? -1 } : null;
            const found = await fetchGroup(ctx, g.groupId, g.topics, request.requireStable === true, member);
            return { groupId: g.groupId, topics: found.topics, errorCode: found.errorCode };
          }),
        ),
      };
    }
    const found = await fetchGroup(ctx, request.groupId, request.topics, ctx.header.apiVersion >= 7 && request.requireStable === true);
    return { throttleTimeMs: 0, topics: found.topics, errorCode: found.errorCode };
  },
};

// OffsetFetch: reads a consumer group's committed positions. A partition
// without a commit answers offset -1 and no error, so the consumer applies
// its auto.offset.reset policy.
//
// Choices:
// - Null topics (v2+) means every partition the group has committed.
// - RequireStable (v7+) asks to wait out pending transactional commits;
//   there are none until Kafka transactions exist, so it changes nothing.
//
// Versions: v0-v7 ask for one group, with a top-level error from v2; v8+
// batch several groups, each with its own error; v9 adds member id and
// epoch (KIP-848 groups), which classic groups ignore.
//
// ACLs: DESCRIBE on the group (else GROUP_AUTHORIZATION_FAILED) and on each
// topic: a topic asked for without it answers TOPIC_AUTHORIZATION_FAILED per
// partition; asked for every topic, those are left out.
import { OffsetFetch } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';

interface TopicPartitions {
  name: string;
  partitionIndexes: number[];
}

async function fetchGroup(ctx: HandlerContext, group: string, asked: TopicPartitions[] | null) {
  if (!ctx.access.allows('DESCRIBE', 'GROUP', group)) return { errorCode: DENIED_CODE.GROUP, topics: [] };
  const describable = (name: string) => ctx.access.allows('DESCRIBE', 'TOPIC', name);
  const topics = asked === null ? null : asked.filter((t) => describable(t.name));
  const hidden = (asked ?? [])
    .filter((t) => !describable(t.name))
    .map((t) => ({ name: t.name, partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode: DENIED_CODE.TOPIC })) }));
  try {
    const { offsets } = await ctx.core.fetchOffsets({
      group,
      partitions: topics === null ? null : topics.flatMap((t) => t.partitionIndexes.map((partition) => ({ queue: t.name, partition }))),
    });
    const byTopic = new Map<string, { partitionIndex: number; committedOffset: number; committedLeaderEpoch: number; metadata: string; errorCode: number }[]>();
    for (const o of offsets) {
      // Asked for every topic: those the principal may not see are left out.
      if (topics === null && !describable(o.queue)) continue;
      let list = byTopic.get(o.queue);
      if (!list) byTopic.set(o.queue, (list = []));
      list.push({ partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: o.leaderEpoch, metadata: o.metadata ?? '', errorCode: NONE });
    }
    return { errorCode: NONE, topics: [...[...byTopic].map(([name, partitions]) => ({ name, partitions })), ...hidden] };
  } catch (e) {
    return { errorCode: kafkaErrorOf(e).errorCode, topics: [] };
  }
}

export const offsetFetch: ApiHandler = {
  api: OffsetFetch,
  versions: '0-9',
  async handle(request, ctx) {
    if (ctx.header.apiVersion >= 8) {
      const groups = request.groups as { groupId: string; topics: TopicPartitions[] | null }[];
      return {
        throttleTimeMs: 0,
        groups: await Promise.all(
          groups.map(async (g) => {
            const found = await fetchGroup(ctx, g.groupId, g.topics);
            return { groupId: g.groupId, topics: found.topics, errorCode: found.errorCode };
          }),
        ),
      };
    }
    const found = await fetchGroup(ctx, request.groupId, request.topics);
    return { throttleTimeMs: 0, topics: found.topics, errorCode: found.errorCode };
  },
};

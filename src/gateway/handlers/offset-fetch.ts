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
import { OffsetFetch } from '../../../protocol/messages/index.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';

interface TopicPartitions {
  name: string;
  partitionIndexes: number[];
}

async function fetchGroup(ctx: HandlerContext, group: string, topics: TopicPartitions[] | null) {
  try {
    const { offsets } = await ctx.core.fetchOffsets({
      group,
      partitions: topics === null ? null : topics.flatMap((t) => t.partitionIndexes.map((partition) => ({ queue: t.name, partition }))),
    });
    const byTopic = new Map<string, { partitionIndex: number; committedOffset: number; committedLeaderEpoch: number; metadata: string; errorCode: number }[]>();
    for (const o of offsets) {
      let list = byTopic.get(o.queue);
      if (!list) byTopic.set(o.queue, (list = []));
      list.push({ partitionIndex: o.partition, committedOffset: o.offset, committedLeaderEpoch: o.leaderEpoch, metadata: o.metadata ?? '', errorCode: NONE });
    }
    return { errorCode: NONE, topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })) };
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

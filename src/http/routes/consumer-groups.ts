/**
 * Consumer groups, in Queen's shapes (Kafka's groups and Queen's are one:
 * a group's committed offsets are its position).
 *
 * GET /api/v1/consumer-groups lists groups per queue as Queen does (members
 * are the partitions the group has a position on, and its lag);
 * GET /api/v1/resources/consumer-groups lists every group with its committed
 * position and lag per partition.
 */
import type { CommittedOffset, Core } from '../../core/core.js';
import type { HttpApiContext } from '../context.js';

export function registerConsumerGroupRoutes({ app, core }: HttpApiContext): void {
  app.get('/api/v1/consumer-groups', { schema: {} }, async () => groupsPerQueue(core));
  app.get('/api/v1/resources/consumer-groups', { schema: {} }, async () => groupsWithLag(core));
}

type PartitionEnds = Awaited<ReturnType<Core['offsets']>>['partitions'][number];

/** A group's committed offsets, each beside its partition's offsets now. */
async function positionsOf(core: Core, group: string): Promise<{ offset: CommittedOffset; end: PartitionEnds }[]> {
  const { offsets } = await core.fetchOffsets({ group, partitions: null });
  const { partitions: ends } = await core.offsets({ partitions: offsets.map(({ queue, partition }) => ({ queue, partition })) });
  return offsets.map((offset, i) => ({ offset, end: ends[i]! }));
}

async function groupsPerQueue(core: Core) {
  const { groups } = await core.listGroups();
  const rows = [];
  for (const { group } of groups) {
    const byQueue = new Map<string, { members: number; lag: number; withLag: number }>();
    for (const { offset: o, end } of await positionsOf(core, group)) {
      const lag = end.error ? 0 : Math.max(0, end.highWatermark - Math.max(o.offset, end.logStartOffset));
      const q = byQueue.get(o.queue) ?? { members: 0, lag: 0, withLag: 0 };
      q.members++;
      q.lag += lag;
      if (lag > 0) q.withLag++;
      byQueue.set(o.queue, q);
    }
    for (const [queue, q] of byQueue) {
      rows.push({ name: group, topics: [queue], queueName: queue, members: q.members, partitionsWithLag: q.withLag, totalLag: q.lag, maxTimeLag: null, state: q.lag > 0 ? 'Lagging' : 'Stable', subscriptionMode: 'all', subscriptionTimestamp: null, subscriptionCreatedAt: null });
    }
  }
  return rows;
}

async function groupsWithLag(core: Core) {
  const { groups } = await core.listGroups();
  const partitionName = partitionNames(core);
  return {
    consumer_groups: await Promise.all(
      groups.map(async ({ group }) => {
        const partitions = await Promise.all(
          (await positionsOf(core, group)).map(async ({ offset: o, end }) => ({
            queue: o.queue,
            partition: (await partitionName(o.queue)).get(o.partition) ?? String(o.partition),
            partition_index: o.partition,
            offset: o.offset,
            high_watermark: end.highWatermark,
            lag: end.error ? null : Math.max(0, end.highWatermark - Math.max(o.offset, end.logStartOffset)),
          })),
        );
        return { name: group, lag: partitions.reduce((n, p) => n + (p.lag ?? 0), 0), partitions };
      }),
    ),
  };
}

/** Partition names by index, per queue, each queue looked up once per listing. */
function partitionNames(core: Core): (queue: string) => Promise<Map<number, string>> {
  const names = new Map<string, Map<number, string>>();
  return async (queue) => {
    let byIndex = names.get(queue);
    if (!byIndex) {
      const info = await core.describeQueue({ name: queue });
      byIndex = new Map(info?.partitions.map((p) => [p.index, p.name]) ?? []);
      names.set(queue, byIndex);
    }
    return byIndex;
  };
}

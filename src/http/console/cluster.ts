/**
 * The cluster (DescribeCluster: DESCRIBE on the cluster): the gateways the
 * node registry lists, or this one alone, with counts of what the core
 * holds; and the throughput sample the page's charts poll. Records in are
 * the growth of every partition's high watermark; records out the growth
 * of every group's committed offsets (what consumers report as consumed).
 * The page turns two samples into a rate.
 */
import type { Core } from '../../core/core.js';
import { cluster } from '../access.js';
import { consoleAccess, type ConsoleContext } from './context.js';

async function overview({ core, sources }: ConsoleContext) {
  const [queues, { groups }, { transactions }] = await Promise.all([core.listQueues(), core.listGroups(), core.listTransactions({ states: [], producerIds: [] })]);
  return {
    ...sources.cluster(),
    topics: queues.length,
    partitions: queues.reduce((n, q) => n + q.partitions.length, 0),
    groups: groups.length,
    openTransactions: transactions.filter((t) => t.state === 'Ongoing' || t.state.startsWith('Prepare')).length,
  };
}

/** Totals now: records ever appended (high watermarks) and consumed (committed offsets). */
async function throughputSample(core: Core) {
  const queues = await core.listQueues();
  const { partitions } = await core.offsets({ partitions: queues.flatMap((q) => q.partitions.map((p) => ({ queue: q.name, partition: p.index }))) });
  const produced = partitions.reduce((n, p) => n + (p.error ? 0 : p.highWatermark), 0);
  const { groups } = await core.listGroups();
  const committed = await Promise.all(groups.map(({ group }) => core.fetchOffsets({ group, partitions: null })));
  const consumed = committed.reduce((n, { offsets }) => n + offsets.reduce((m, o) => m + Math.max(0, o.offset), 0), 0);
  return { at: Date.now(), produced, consumed };
}

export function registerConsoleClusterRoutes(context: ConsoleContext): void {
  const describeCluster = consoleAccess(() => [cluster('DESCRIBE')]);
  context.app.get('/console/api/cluster', { schema: {}, config: describeCluster }, () => overview(context));
  context.app.get('/console/api/throughput', { schema: {}, config: describeCluster }, () => throughputSample(context.core));
}

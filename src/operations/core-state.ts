import { Gauge, Registry } from 'prom-client';
import type { Core } from '../core/core.js';

/**
 * Figures read from the core when /metrics is scraped, so they cover every
 * protocol and every node on the engine, whoever wrote the records: queue
 * depth, partition offsets and consumer-group lag (under kafka_exporter's
 * names, which Kafka lag dashboards use), groups by state (under the names
 * the JMX exporter gives Kafka's GroupMetadataManager gauges) and open
 * transactions by state.
 */

const GROUP_STATES = ['PreparingRebalance', 'CompletingRebalance', 'Stable', 'Dead', 'Empty'] as const;
const TRANSACTION_STATES = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'] as const;

function gauge(registry: Registry, name: string, help: string, labelNames: string[] = []): Gauge {
  return new Gauge({ name, help, labelNames, registers: [registry] });
}

/** A registry holding the core's figures as they are now. */
export async function readCoreState(core: Core): Promise<Registry> {
  const registry = new Registry();
  const depth = gauge(registry, 'queen_queue_depth_messages', 'Records retained in each queue (high watermark minus log start, summed over partitions).', ['queue']);
  const newest = gauge(registry, 'kafka_topic_partition_current_offset', 'High watermark of each partition: the offset the next record appended gets.', ['topic', 'partition']);
  const oldest = gauge(registry, 'kafka_topic_partition_oldest_offset', 'Log start offset of each partition: the oldest offset still kept.', ['topic', 'partition']);
  const groupOffset = gauge(registry, 'kafka_consumergroup_current_offset', 'Committed offset of a consumer group on a partition.', ['consumergroup', 'topic', 'partition']);
  const groupLag = gauge(registry, 'kafka_consumergroup_lag', 'Records of a partition a consumer group has not yet consumed (high watermark minus committed offset).', ['consumergroup', 'topic', 'partition']);
  const groupLagSum = gauge(registry, 'kafka_consumergroup_lag_sum', 'A consumer group\'s lag summed over the partitions of a topic.', ['consumergroup', 'topic']);
  const queenLag = gauge(registry, 'queen_consumer_group_lag_messages', 'Records a consumer group has not yet consumed, by group and queue.', ['group', 'queue']);

  const highWatermarks = new Map<string, number>();
  for (const queue of await core.listQueues()) {
    const { partitions } = await core.offsets({ partitions: queue.partitions.map((p) => ({ queue: queue.name, partition: p.index })) });
    let retained = 0;
    for (const p of partitions) {
      if (p.error) continue;
      retained += p.highWatermark - p.logStartOffset;
      highWatermarks.set(`${p.queue}\u0000${p.partition}`, p.highWatermark);
      newest.set({ topic: p.queue, partition: String(p.partition) }, p.highWatermark);
      oldest.set({ topic: p.queue, partition: String(p.partition) }, p.logStartOffset);
    }
    depth.set({ queue: queue.name }, retained);
  }
  for (const { group } of (await core.listGroups()).groups) {
    const { offsets } = await core.fetchOffsets({ group, partitions: null });
    for (const o of offsets) {
      const hw = highWatermarks.get(`${o.queue}\u0000${o.partition}`);
      if (hw === undefined || o.offset < 0) continue;
      const lag = Math.max(0, hw - o.offset);
      const partition = { consumergroup: group, topic: o.queue, partition: String(o.partition) };
      groupOffset.set(partition, o.offset);
      groupLag.set(partition, lag);
      groupLagSum.inc({ consumergroup: group, topic: o.queue }, lag);
      queenLag.inc({ group, queue: o.queue }, lag);
    }
  }

  const states = new Map<string, number>(GROUP_STATES.map((s) => [s, 0]));
  const { groups } = await core.listGroupStates({});
  for (const g of groups) states.set(g.state, (states.get(g.state) ?? 0) + 1);
  gauge(registry, 'kafka_coordinator_group_groupmetadatamanager_numgroups', 'Consumer groups the core knows.').set(groups.length);
  for (const state of GROUP_STATES) {
    gauge(registry, `kafka_coordinator_group_groupmetadatamanager_numgroups${state.toLowerCase()}`, `Consumer groups in the ${state} state.`).set(states.get(state)!);
  }

  const transactions = gauge(registry, 'queen_transactions', 'Kafka transactional ids the core keeps, by transaction state (Ongoing: open now).', ['state']);
  for (const state of TRANSACTION_STATES) transactions.set({ state }, 0);
  for (const t of (await core.listTransactions({ states: [], producerIds: [] })).transactions) transactions.inc({ state: t.state });
  return registry;
}

import { abortExpiredTransactions } from '../../kafka-transactions/coordinator.js';
import { storedBatchLimit } from '../../rules/batches.js';
import { isInsideWindow } from '../../rules/dedup.js';
import { liveOrNull } from '../../rules/kv.js';
import { compactPartition } from './compaction.js';
import { emptyCompactionStats, type CompactionStats } from '../../rules/compaction.js';
import type { MemoryStore } from './store.js';

/** Retention, expiry, the Kafka transaction timeout sweep and the compactor's rounds. */
export class MemoryMaintenance {
  private compacting: Promise<CompactionStats> | null = null;

  constructor(private readonly store: MemoryStore) {}

  /** Aborts the Kafka transactions open past their timeout (runs on a timer; tests call it after moving the clock). */
  async abortExpiredTransactions(): Promise<void> {
    if (!this.store.closed) await abortExpiredTransactions(this.store.kafkaTxns);
  }

  // ─── Lifecycle and maintenance ─────────────────────────────────────────────

  /**
   * Retention and expiry: drops batches past retention, expired KV entries and
   * dedup entries outside their queue's window. Runs on a timer; tests call it
   * after moving the clock.
   */
  async runMaintenance(): Promise<void> {
    if (this.store.closed) return;
    await this.abortExpiredTransactions();
    const now = this.store.clock();
    for (const queue of this.store.queues.values()) {
      for (const partition of queue.partitions) {
        partition.log.applyRetention(queue.config, now);
        this.store.kafkaTxns.trimAborted(partition, partition.log.logStartOffset);
        for (const [id, hit] of partition.dedup) {
          if (!isInsideWindow(hit.storedAt, now, queue.config.dedupWindowSeconds)) partition.dedup.delete(id);
        }
      }
    }
    for (const [slot, entry] of this.store.kv) if (!liveOrNull(entry, now)) this.store.writeKv(slot, null);
  }

  /**
   * One compactor round over every compacted queue's partitions
   * (./compaction.ts); a call while a round runs joins it. Runs on a timer;
   * tests and the benchmark call it.
   */
  runCompaction(): Promise<CompactionStats> {
    this.compacting ??= (async () => {
      const stats = emptyCompactionStats();
      const now = this.store.clock();
      for (const queue of [...this.store.queues.values()]) {
        const settings = queue.config.compaction;
        if (!settings) continue;
        for (const partition of queue.partitions) {
          if (this.store.closed) return stats;
          const isCurrent = () => this.store.queues.get(queue.name) === queue;
          // Never past an open Kafka transaction: its outcome decides which record of a key is the latest.
          const lastStableOffset = this.store.kafkaTxns.lastStableOffset(partition, partition.log.highWatermark);
          const isAborted = (producerId: number, baseOffset: number) => this.store.kafkaTxns.isAborted(partition, producerId, baseOffset);
          await compactPartition({ log: partition.log, settings, lastStableOffset, isAborted, isCurrent }, now, storedBatchLimit(this.store.appendLimits), stats);
        }
      }
      return stats;
    })().finally(() => (this.compacting = null));
    return this.compacting;
  }
}

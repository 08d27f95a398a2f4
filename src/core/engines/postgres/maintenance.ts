import type {
  QueueConfig,
} from '../../core.js';
import { abortExpiredTransactions } from '../../kafka-transactions/coordinator.js';
import { storedBatchLimit } from '../../rules/batches.js';
import { retentionStartOffset } from '../../rules/retention.js';
import { compactPostgres } from './compaction.js';
import { emptyCompactionStats, type CompactionStats } from '../../rules/compaction.js';
import { type PartitionRow, type PostgresStore } from './store.js';

/** Retention, expiry, the Kafka transaction timeout sweep and the compactor's rounds (sql/maintenance.sql). */
export class PostgresMaintenance {
  private compacting: Promise<CompactionStats> | null = null;

  constructor(private readonly store: PostgresStore) {}

  /** Aborts the Kafka transactions open past their timeout (on a timer; tests call it after moving the clock). */
  async abortExpiredTransactions(): Promise<void> {
    if (!this.store.closed) await abortExpiredTransactions(this.store.kafkaTxns);
  }

  // ─── Lifecycle and maintenance ─────────────────────────────────────────────

  /**
   * Retention and expiry: drops batches past retention, expired KV entries,
   * dedup entries outside their queue's window and old append-ledger entries.
   * Runs on a timer in one process at a time; tests call it after moving the clock.
   */
  async runMaintenance(): Promise<void> {
    if (this.store.closed) return;
    await this.abortExpiredTransactions();
    const now = this.store.clock();
    const ran = await this.store.db.transaction(async (tx) => {
      const lock = await tx.one<{ locked: boolean }>('try-lock-maintenance');
      if (!lock?.locked) return false;
      await tx.run('expire-dedup', [now]);
      await tx.run('expire-kv', [now]);
      await tx.run('txn-trim-aborted');
      await tx.run('trim-append-ledger', [this.store.options.appendLedgerSize]);
      return true;
    });
    if (!ran) return;
    const partitions = await this.store.db.statements.run<{ id: number; log_start_offset: number; config: QueueConfig }>('retention-partitions', [now]);
    for (const p of partitions) {
      // Each partition in its own short transaction: appends to it wait only for its own reaping.
      await this.store.db.transaction(async (tx) => {
        const locked = await tx.one<PartitionRow>('lock-partition', [p.id]);
        if (!locked) return;
        const batches = await tx.run<{ base_offset: number; next_offset: number; size: number; appended_at: number }>('partition-batch-sizes', [p.id]);
        const start = retentionStartOffset(
          batches.map((b) => ({ baseOffset: b.base_offset, nextOffset: b.next_offset, size: b.size, appendedAt: b.appended_at })),
          p.config,
          locked.log_start_offset,
          now,
        );
        if (start > locked.log_start_offset) await tx.run('truncate-log', [p.id, start]);
      });
    }
  }

  /**
   * One compactor round over every compacted queue's partitions
   * (./compaction.ts); a call while a round runs joins it. Runs on a timer;
   * tests and the benchmark call it.
   */
  runCompaction(): Promise<CompactionStats> {
    this.compacting ??= (async () => {
      const stats = emptyCompactionStats();
      if (this.store.closed) return stats;
      await compactPostgres(this.store.db, this.store.clock(), storedBatchLimit(this.store.options.appendLimits), stats, () => this.store.closed);
      return stats;
    })().finally(() => (this.compacting = null));
    return this.compacting;
  }

  /** Resolves once a compactor round under way has ended (close() waits for it). */
  async settled(): Promise<void> {
    await this.compacting?.catch(() => {});
  }
}

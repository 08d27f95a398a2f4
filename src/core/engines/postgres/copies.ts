import type { AppendAtPartition, AppendAtPartitionResult, AppendAtRequest, AppendAtResult } from '../../core.js';
import { gapBatch, parseCopies, planCopy, storedCopy, type ParsedCopy } from '../../rules/copied-batches.js';
import type { PostgresStore } from './store.js';
import type { Statements } from './database.js';
import { LogWrites } from './log-writes.js';

/**
 * appendAt in PostgreSQL: one transaction locks the partitions (the same
 * `lock-partitions` statement, in id order, as Produce's appends, so the two
 * serialize on the row lock), decides each partition from its locked
 * next_offset, and gathers the batches and new next offsets for the one
 * `append-write` statement. already_there is decided under the lock, so two
 * bridges, or a call and its RPC retry, can never both write an offset.
 */

interface LockedRow {
  id: number;
  idx: number;
  next_offset: number;
  queue_name: string;
}

export async function planCopies(tx: Statements, parts: readonly AppendAtPartition[], parsed: readonly ParsedCopy[], now: number): Promise<{ results: AppendAtPartitionResult[]; writes: LogWrites }> {
  const rows = await tx.run<LockedRow>('lock-partitions', [parts.map((p) => p.queue), parts.map((p) => p.partition)]);
  const locked = new Map(rows.map((r) => [`${r.queue_name}\u0000${r.idx}`, r]));
  const writes = new LogWrites();
  const results = parts.map((p, i): AppendAtPartitionResult => {
    const where = { queue: p.queue, partition: p.partition };
    const row = locked.get(`${p.queue}\u0000${p.partition}`);
    if (!row) return { ...where, error: 'unknown_partition', errorMessage: `Queue "${p.queue}" does not exist or has no partition ${p.partition}.`, nextOffset: -1 };
    const copy = parsed[i]!;
    if (!copy.ok) return { ...where, error: copy.error, errorMessage: copy.message, nextOffset: row.next_offset };
    const plan = planCopy(copy, row.next_offset);
    if (plan.kind === 'already_there') return { ...where, error: 'already_there', errorMessage: plan.message, nextOffset: row.next_offset };
    const place = { queue: row.queue_name, index: row.idx };
    for (const batch of copy.batches) {
      writes.addBatch({ partitionId: row.id, baseOffset: batch.baseOffset, nextOffset: batch.nextOffset, maxTimestamp: batch.maxTimestamp, appendedAt: now, bytes: storedCopy(p.records, batch) }, place);
    }
    const gap = plan.trailingGap;
    if (gap) writes.addBatch({ partitionId: row.id, baseOffset: gap.baseOffset, nextOffset: gap.nextOffset, maxTimestamp: gap.maxTimestamp, appendedAt: now, bytes: gapBatch(gap) }, place);
    writes.highWatermarks.set(row.id, plan.nextOffset);
    row.next_offset = plan.nextOffset;
    return { ...where, error: null, nextOffset: plan.nextOffset };
  });
  return { results, writes };
}

/** appendAt: copied batches stored at the offsets they carry (the migration bridge). */
export class PostgresCopies {
  constructor(private readonly store: PostgresStore) {}

  /** One transaction, outside the group commit, which decides offsets itself. */
  async appendAt(req: AppendAtRequest): Promise<AppendAtResult> {
    const parts = req.partitions;
    // Checked (and inflated) before the transaction, so no partition lock waits on it.
    const parsed = parseCopies(parts, this.store.options.appendLimits);
    const { results, writes } = await this.store.db.transaction(async (tx) => {
      const planned = await planCopies(tx, parts, parsed, this.store.clock());
      await this.store.write(tx, planned.writes);
      return planned;
    });
    this.store.wakeTouched(writes);
    return { partitions: results };
  }
}

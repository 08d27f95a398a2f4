import type { AppendAtPartition, AppendAtPartitionResult, AppendAtRequest, AppendAtResult } from '../../core.js';
import { copiedProducers, copiedWindows, gapBatch, parseCopies, planCopy, storedCopy, type ParsedCopy } from '../../rules/copied-batches.js';
import type { ProducerWindow, RetainedBatch } from '../../rules/producer-window.js';
import type { PostgresStore } from './store.js';
import type { Statements } from './database.js';
import { LogWrites } from './log-writes.js';
import { copiedTransactionState, copiedTxnProducers, type CopiedTxnState } from '../../rules/copied-transactions.js';

/** The reserved transactional id under which a copied producer's open transaction is kept (a control character no client id starts with). */
export function copiedTxnId(producerId: number): string {
  return `\u0001copied-producer-${producerId}`;
}

/**
 * appendAt in PostgreSQL: one transaction locks the partitions (the same
 * `lock-partitions` statement, in id order, as Produce's appends, so the two
 * serialize on the row lock), decides each partition from its locked
 * next_offset, and gathers the batches, new next offsets and the producer
 * windows the copied batches leave for the one `append-write` statement; the
 * copied producer ids are recorded, and the id sequence moved past them. already_there is decided under the lock, so two
 * bridges, or a call and its RPC retry, can never both write an offset.
 */

interface LockedRow {
  id: number;
  idx: number;
  next_offset: number;
  queue_name: string;
}

interface PlannedCopies {
  results: AppendAtPartitionResult[];
  writes: LogWrites;
  /** Per written partition id, its copied transactions' outcome. */
  txns: Map<number, CopiedTxnState>;
}

export async function planCopies(tx: Statements, parts: readonly AppendAtPartition[], parsed: readonly ParsedCopy[], now: number): Promise<PlannedCopies> {
  const rows = await tx.run<LockedRow>('lock-partitions', [parts.map((p) => p.queue), parts.map((p) => p.partition)]);
  const locked = new Map(rows.map((r) => [`${r.queue_name}\u0000${r.idx}`, r]));
  const windows = await storedWindows(tx, parts, parsed, locked);
  const openCopied = await storedOpenCopied(tx, parts, parsed, locked);
  const writes = new LogWrites();
  const txns = new Map<number, CopiedTxnState>();
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
    for (const window of copiedWindows(copy.batches, (producerId) => windows.get(`${row.id}:${producerId}`) ?? null).values()) writes.setWindow(row.id, window);
    txns.set(row.id, copiedTransactionState(copy.batches, (producerId) => openCopied.get(`${row.id}:${producerId}`)));
    const gap = plan.trailingGap;
    if (gap) writes.addBatch({ partitionId: row.id, baseOffset: gap.baseOffset, nextOffset: gap.nextOffset, maxTimestamp: gap.maxTimestamp, appendedAt: now, bytes: gapBatch(gap) }, place);
    writes.highWatermarks.set(row.id, plan.nextOffset);
    row.next_offset = plan.nextOffset;
    return { ...where, error: null, nextOffset: plan.nextOffset };
  });
  return { results, writes, txns };
}

/** The stored open copied transactions' first offsets of the producers with transactional batches in the copies, by `${partition id}:${producer id}`. */
async function storedOpenCopied(tx: Statements, parts: readonly AppendAtPartition[], parsed: readonly ParsedCopy[], locked: Map<string, LockedRow>): Promise<Map<string, number>> {
  const keys: [number, number][] = [];
  parts.forEach((p, i) => {
    const row = locked.get(`${p.queue}\u0000${p.partition}`);
    const copy = parsed[i]!;
    if (row && copy.ok) for (const producerId of copiedTxnProducers(copy.batches)) keys.push([row.id, producerId]);
  });
  const open = new Map<string, number>();
  if (keys.length === 0) return open;
  const byId = new Map(keys.map(([partitionId, producerId]) => [`${partitionId}:${copiedTxnId(producerId)}`, producerId]));
  const rows = await tx.run<{ partition_id: number; transactional_id: string; first_offset: number }>('copied-txn-open-offsets', [keys.map((k) => k[0]), keys.map((k) => copiedTxnId(k[1]))]);
  for (const r of rows) open.set(`${r.partition_id}:${byId.get(`${r.partition_id}:${r.transactional_id}`)}`, Number(r.first_offset));
  return open;
}

/** Stores the copies' transaction outcomes: open copied transactions, and the aborted ranges in the index read_committed uses. */
async function writeCopiedTxns(tx: Statements, txns: Map<number, CopiedTxnState>): Promise<void> {
  const open: [number, string, number | null][] = [];
  const aborted: [number, number, number, number][] = [];
  for (const [partitionId, state] of txns) {
    for (const [producerId, first] of state.open) open.push([partitionId, copiedTxnId(producerId), first]);
    for (const a of state.aborted) aborted.push([partitionId, a.producerId, a.firstOffset, a.lastOffset]);
  }
  if (open.length > 0) await tx.run('copied-txn-set', [open.map((o) => o[0]), open.map((o) => o[1]), open.map((o) => o[2])]);
  if (aborted.length > 0) await tx.run('txn-record-aborted', [0, 1, 2, 3].map((k) => aborted.map((a) => a[k])));
}

/** The stored windows of the producers the copied batches name, by `${partition id}:${producer id}`. */
async function storedWindows(tx: Statements, parts: readonly AppendAtPartition[], parsed: readonly ParsedCopy[], locked: Map<string, LockedRow>): Promise<Map<string, ProducerWindow>> {
  const keys: [number, number][] = [];
  parts.forEach((p, i) => {
    const row = locked.get(`${p.queue}\u0000${p.partition}`);
    const copy = parsed[i]!;
    if (!row || !copy.ok) return;
    for (const producerId of new Set(copy.batches.flatMap((b) => (b.producer ? [b.producer.producerId] : [])))) keys.push([row.id, producerId]);
  });
  const windows = new Map<string, ProducerWindow>();
  if (keys.length === 0) return windows;
  const rows = await tx.run<{ partition_id: number; producer_id: number; producer_epoch: number; retained: RetainedBatch[]; last_timestamp: number }>('producer-windows', [keys.map((k) => k[0]), keys.map((k) => k[1])]);
  for (const r of rows) windows.set(`${r.partition_id}:${r.producer_id}`, { producerId: r.producer_id, producerEpoch: r.producer_epoch, batches: r.retained, lastTimestamp: r.last_timestamp });
  return windows;
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
      await writeCopiedTxns(tx, planned.txns);
      const producers = copiedProducers(parsed);
      if (producers.size > 0) {
        await tx.run('copied-producers', [[...producers.keys()], [...producers.values()]]);
        await tx.run('producer-ids-past', [Math.max(...producers.keys())]);
      }
      return planned;
    });
    this.store.wakeTouched(writes);
    return { partitions: results };
  }
}

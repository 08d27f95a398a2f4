import { BatchPos } from '../../../../protocol/records/batch-header.js';
import type { CompactionSettings } from '../../core.js';
import { isAbortedBatch } from '../../rules/kafka-transactions.js';
import { compactBatch, earlierHorizon, mapBatch, planCompaction, type BatchSpan, type CompactionStats, type LatestOffsets, type AbortedCheck } from '../../rules/compaction.js';
import { Statements, type Database } from './database.js';

/**
 * The PostgreSQL engine's compactor (rules/compaction.ts says what it does).
 * A pass reads its range outside any transaction and writes it back a page
 * at a time, each page in one transaction (sql/compaction.sql,
 * compaction-write): a reader, under MVCC, sees each page before or after
 * its rewrite, never half of one, and appends (which only add rows after the
 * range) never wait for it. The checkpoint moves with the last page, so a
 * pass cut short by a crash is simply done again. One compactor works on a
 * partition at a time across all cores, under a session advisory lock.
 */

/** Batches per read and per write transaction. */
const PAGE_ROWS = 500;

interface CompactedPartitionRow {
  id: number;
  next_offset: number;
  log_start_offset: number;
  settings: CompactionSettings;
  cleaned_to: number;
  tombstone_horizon: number | null;
}

interface SpanRow {
  base_offset: number;
  next_offset: number;
  size: number;
  appended_at: number;
}

export async function compactPostgres(db: Database, now: number, maxBytes: number, stats: CompactionStats, isClosed: () => boolean): Promise<void> {
  const partitions = await db.statements.run<CompactedPartitionRow>('compacted-partitions');
  for (const partition of partitions) {
    if (isClosed()) return;
    // Nothing written since the last pass and no tombstone due: nothing to do.
    const tombstonesDue = partition.tombstone_horizon !== null && now >= partition.tombstone_horizon;
    if (partition.next_offset <= partition.cleaned_to && !tombstonesDue) continue;
    const client = await db.pool.connect();
    const session = new Statements(client, db.availability);
    let broken: unknown;
    try {
      const lock = await session.one<{ locked: boolean }>('try-lock-compaction', [partition.id]);
      if (!lock?.locked) continue;
      try {
        await compactPartition(db, partition, now, maxBytes, stats);
      } finally {
        await session.run('unlock-compaction', [partition.id]);
      }
    } catch (e) {
      broken = e;
      throw e;
    } finally {
      client.release(broken === undefined ? undefined : (broken as Error));
    }
  }
}

async function compactPartition(db: Database, partition: CompactedPartitionRow, now: number, maxBytes: number, stats: CompactionStats): Promise<void> {
  const spans = (await db.statements.run<SpanRow>('partition-batch-sizes', [partition.id])).map(
    (b): BatchSpan => ({ baseOffset: b.base_offset, nextOffset: b.next_offset, size: b.size, appendedAt: b.appended_at }),
  );
  // Never past an open Kafka transaction (its outcome decides which record of a key is the latest);
  // batches of aborted transactions supersede nothing and are kept.
  const open = await db.statements.run<{ first_offset: number | null }>('compaction-open-transaction', [partition.id]);
  const lastStableOffset = Math.min(partition.next_offset, open[0]?.first_offset ?? Number.POSITIVE_INFINITY);
  const abortedRanges = (await db.statements.run<{ producer_id: number; first_offset: number; last_offset: number }>('txn-aborted-from', [partition.id, -1])).map((r) => ({
    producerId: Number(r.producer_id),
    firstOffset: Number(r.first_offset),
    lastOffset: Number(r.last_offset),
  }));
  const plan = planCompaction(spans, partition.cleaned_to, lastStableOffset, partition.settings, now, partition.tombstone_horizon);
  if (!plan) return;
  const pass: Pass = { db, partition, now, maxBytes, stats, isAborted: (producerId, baseOffset) => isAbortedBatch(abortedRanges, producerId, baseOffset) };
  const { latest, end } = await mapLatest(pass, plan.dirty[0]?.baseOffset ?? plan.end, plan.end);
  await rewritePages(pass, plan.range[0]!.baseOffset, end, latest);
  stats.partitions++;
}

/** One compaction pass over one partition: what its steps share. */
interface Pass {
  db: Database;
  partition: CompactedPartitionRow;
  now: number;
  maxBytes: number;
  stats: CompactionStats;
  isAborted: AbortedCheck;
}

/** The latest offset of every key in the dirty batches; the pass ends early, at the batch that did not fit in memory. */
async function mapLatest(pass: Pass, start: number, planEnd: number): Promise<{ latest: LatestOffsets; end: number }> {
  const latest: LatestOffsets = new Map();
  for (let from = start; from < planEnd; ) {
    const rows = await pass.db.statements.run<{ base_offset: number; bytes: Buffer }>('compaction-batches', [pass.partition.id, from, planEnd, PAGE_ROWS]);
    for (const row of rows) {
      if (!mapBatch(latest, row.bytes, row.base_offset, pass.maxBytes, pass.isAborted)) return { latest, end: row.base_offset };
    }
    if (rows.length < PAGE_ROWS) break;
    from = rows[rows.length - 1]!.base_offset + 1;
  }
  return { latest, end: planEnd };
}

/** Rewrites [start, end) a page at a time, each page in one transaction; the last page moves the checkpoint. */
async function rewritePages(pass: Pass, start: number, end: number, latest: LatestOffsets): Promise<void> {
  const { db, partition, stats } = pass;
  let horizon: number | null = null;
  for (let from = start; ; ) {
    const rows = await db.statements.run<{ base_offset: number; bytes: Buffer }>('compaction-batches', [partition.id, from, end, PAGE_ROWS]);
    const rewritten: { baseOffset: number; bytes: Buffer; maxTimestamp: number }[] = [];
    const dropped: number[] = [];
    for (const row of rows) {
      stats.recordsScanned += row.bytes.readInt32BE(BatchPos.RecordCount);
      const outcome = compactBatch(row.bytes, row.base_offset, latest, partition.settings.deleteRetentionMs, pass.now, pass.maxBytes, pass.isAborted);
      if (outcome.kind !== 'drop') horizon = earlierHorizon(horizon, outcome.horizon);
      if (outcome.kind === 'drop') {
        dropped.push(row.base_offset);
        stats.batchesRemoved++;
        stats.recordsRemoved += outcome.records;
      } else if (outcome.kind === 'rewrite') {
        rewritten.push({ baseOffset: row.base_offset, bytes: outcome.bytes, maxTimestamp: outcome.maxTimestamp });
        stats.batchesRewritten++;
        stats.recordsRemoved += outcome.removed;
      }
    }
    const last = rows.length < PAGE_ROWS;
    if (rewritten.length > 0 || dropped.length > 0 || last) {
      await db.transaction((tx) =>
        tx.run('compaction-write', [
          partition.id,
          rewritten.map((r) => r.baseOffset),
          Buffer.concat(rewritten.map((r) => r.bytes)),
          rewritten.map((r) => r.bytes.length),
          rewritten.map((r) => r.maxTimestamp),
          dropped,
          last ? end : -1,
          horizon,
        ]),
      );
    }
    if (last) return;
    from = rows[rows.length - 1]!.base_offset + 1;
  }
}

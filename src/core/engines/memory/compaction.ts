import { BatchPos } from '../../../../protocol/records/batch-header.js';
import type { CompactionSettings } from '../../core.js';
import type { AbortedCheck, CompactionStats } from '../../rules/compaction.js';
import { CompactionPass } from '../../log/compaction.js';
import type { PartitionLog, StoredBatch } from './partition-log.js';

/**
 * The memory engine's compactor (rules/compaction.ts says what it does;
 * ../../log/compaction.ts decides each pass). A
 * pass reads a snapshot of the cleanable range, yielding to the event loop
 * every few batches so appends and reads go on meanwhile, and swaps the
 * compacted range in with one synchronous step (PartitionLog.replaceBefore):
 * a reader sees the range before the pass or after it, never half of it.
 * Appends only ever add after the range, so they never meet the swap.
 */

/** One compacted partition as the pass needs it. */
export interface CompactablePartition {
  log: PartitionLog;
  settings: CompactionSettings;
  lastStableOffset: number;
  /** Whether a transactional batch belongs to an aborted transaction. */
  isAborted: AbortedCheck;
  /** False once the partition was deleted during the pass: its result is dropped. */
  isCurrent(): boolean;
}

/** Records between yields: a few milliseconds of work, so a pass never holds the event loop for long. */
const RECORDS_PER_SLICE = 4_096;

/** Yields to the event loop once RECORDS_PER_SLICE records have been worked on since the last time. */
class Slicer {
  private records = 0;
  async done(batch: StoredBatch): Promise<void> {
    this.records += batch.bytes.readInt32BE(BatchPos.RecordCount);
    if (this.records < RECORDS_PER_SLICE) return;
    this.records = 0;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** Compacts the partition when it is due (../../log/compaction.ts); adds what it did to `stats`. */
export async function compactPartition(partition: CompactablePartition, now: number, maxBytes: number, stats: CompactionStats): Promise<void> {
  const { log, settings } = partition;
  const pass = CompactionPass.due(
    { spans: log.batches.slice(), cleanedTo: log.cleanedTo, lastStableOffset: partition.lastStableOffset, settings, tombstoneHorizon: log.tombstoneHorizon, isAborted: partition.isAborted },
    now,
    maxBytes,
    stats,
  );
  if (!pass) return;

  const slicer = new Slicer();
  for (const batch of pass.plan.dirty) {
    if (!pass.map(batch.bytes, batch.baseOffset)) break;
    await slicer.done(batch);
  }

  const replacement: StoredBatch[] = [];
  for (const batch of pass.plan.range) {
    if (batch.baseOffset >= pass.end) break;
    const outcome = pass.judge(batch.bytes, batch.baseOffset);
    if (outcome.kind === 'keep') replacement.push(batch);
    else if (outcome.kind === 'rewrite') replacement.push({ ...batch, bytes: outcome.bytes, size: outcome.bytes.length, maxTimestamp: outcome.maxTimestamp });
    await slicer.done(batch);
  }
  if (!partition.isCurrent()) return;
  log.replaceBefore(pass.end, replacement);
  log.cleanedTo = Math.max(log.cleanedTo, pass.end);
  log.tombstoneHorizon = pass.horizon;
  pass.finish();
}

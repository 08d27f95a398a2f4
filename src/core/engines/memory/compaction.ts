import { BatchPos } from '../../../../protocol/records/batch-header.js';
import type { CompactionSettings } from '../../core.js';
import { compactBatch, earlierHorizon, mapBatch, planCompaction, type AbortedCheck, type CompactionStats, type LatestOffsets } from '../../rules/compaction.js';
import type { PartitionLog, StoredBatch } from './partition-log.js';

/**
 * The memory engine's compactor (rules/compaction.ts says what it does). A
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

/** Compacts the partition when it is due; adds what it did to `stats`. */
export async function compactPartition(partition: CompactablePartition, now: number, maxBytes: number, stats: CompactionStats): Promise<void> {
  const { log, settings } = partition;
  const plan = planCompaction(log.batches.slice(), log.cleanedTo, partition.lastStableOffset, settings, now, log.tombstoneHorizon);
  if (!plan) return;
  let end = plan.end;
  const { range, dirty } = plan;

  const slicer = new Slicer();
  const latest: LatestOffsets = new Map();
  for (const batch of dirty) {
    if (!mapBatch(latest, batch.bytes, batch.baseOffset, maxBytes, partition.isAborted)) {
      end = batch.baseOffset;
      break;
    }
    await slicer.done(batch);
  }

  const replacement: StoredBatch[] = [];
  let horizon: number | null = null;
  for (const batch of range) {
    if (batch.baseOffset >= end) break;
    stats.recordsScanned += batch.bytes.readInt32BE(BatchPos.RecordCount);
    const outcome = compactBatch(batch.bytes, batch.baseOffset, latest, settings.deleteRetentionMs, now, maxBytes, partition.isAborted);
    if (outcome.kind !== 'drop') horizon = earlierHorizon(horizon, outcome.horizon);
    if (outcome.kind === 'keep') replacement.push(batch);
    else if (outcome.kind === 'drop') {
      stats.batchesRemoved++;
      stats.recordsRemoved += outcome.records;
    } else {
      replacement.push({ ...batch, bytes: outcome.bytes, size: outcome.bytes.length, maxTimestamp: outcome.maxTimestamp });
      stats.batchesRewritten++;
      stats.recordsRemoved += outcome.removed;
    }
    await slicer.done(batch);
  }
  if (!partition.isCurrent()) return;
  log.replaceBefore(end, replacement);
  log.cleanedTo = Math.max(log.cleanedTo, end);
  log.tombstoneHorizon = horizon;
  stats.partitions++;
}

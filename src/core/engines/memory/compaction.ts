import { BatchPos } from '../../../../protocol/records/batch-header.js';
import type { CompactionSettings } from '../../core.js';
import { compactBatch, mapBatch, planCompaction, type CompactionStats, type LatestOffsets } from '../../rules/compaction.js';
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
  /** False once the partition was deleted during the pass: its result is dropped. */
  isCurrent(): boolean;
}

/** Batches between yields: small enough that a pass never holds the event loop for long. */
const BATCHES_PER_SLICE = 64;

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Compacts the partition when it is due; adds what it did to `stats`. */
export async function compactPartition(partition: CompactablePartition, now: number, maxBytes: number, stats: CompactionStats): Promise<void> {
  const { log, settings } = partition;
  const plan = planCompaction(log.batches.slice(), log.cleanedTo, partition.lastStableOffset, settings, now);
  if (!plan) return;
  let end = plan.end;
  const { range, dirty } = plan;

  const latest: LatestOffsets = new Map();
  for (const [i, batch] of dirty.entries()) {
    if (!mapBatch(latest, batch.bytes, batch.baseOffset, maxBytes)) {
      end = batch.baseOffset;
      break;
    }
    if (i % BATCHES_PER_SLICE === BATCHES_PER_SLICE - 1) await yieldToEventLoop();
  }

  const replacement: StoredBatch[] = [];
  for (const [i, batch] of range.entries()) {
    if (batch.baseOffset >= end) break;
    stats.recordsScanned += batch.bytes.readInt32BE(BatchPos.RecordCount);
    const outcome = compactBatch(batch.bytes, batch.baseOffset, latest, settings.deleteRetentionMs, now, maxBytes);
    if (outcome.kind === 'keep') replacement.push(batch);
    else if (outcome.kind === 'drop') {
      stats.batchesRemoved++;
      stats.recordsRemoved += outcome.records;
    } else {
      replacement.push({ ...batch, bytes: outcome.bytes, size: outcome.bytes.length, maxTimestamp: outcome.maxTimestamp });
      stats.batchesRewritten++;
      stats.recordsRemoved += outcome.removed;
    }
    if (i % BATCHES_PER_SLICE === BATCHES_PER_SLICE - 1) await yieldToEventLoop();
  }
  if (!partition.isCurrent()) return;
  log.replaceBefore(end, replacement);
  log.cleanedTo = Math.max(log.cleanedTo, end);
  stats.partitions++;
}

import type { AppendAtPartition, AppendAtPartitionResult } from '../../core.js';
import { gapBatch, planCopy, storedCopy, type ParsedCopy } from '../../rules/copied-batches.js';
import type { PartitionLog } from './partition-log.js';

/**
 * appendAt on one partition of the memory engine: the copied batches go in at
 * the offsets they carry, or nothing does (already_there). Synchronous, so it
 * is atomic against every other call, as the partition lock makes it in
 * PostgreSQL. True in `wrote` when records went in (long-polls to wake).
 */
export function appendCopies(log: PartitionLog, p: AppendAtPartition, parsed: ParsedCopy, now: number): { result: AppendAtPartitionResult; wrote: boolean } {
  const where = { queue: p.queue, partition: p.partition };
  if (!parsed.ok) return { result: { ...where, error: parsed.error, errorMessage: parsed.message, nextOffset: log.highWatermark }, wrote: false };
  const plan = planCopy(parsed, log.highWatermark);
  if (plan.kind === 'already_there') return { result: { ...where, error: 'already_there', errorMessage: plan.message, nextOffset: log.highWatermark }, wrote: false };
  for (const batch of parsed.batches) log.append(storedCopy(p.records, batch), batch.nextOffset - batch.baseOffset, batch.maxTimestamp, now, batch.baseOffset);
  const gap = plan.trailingGap;
  if (gap) log.append(gapBatch(gap), gap.nextOffset - gap.baseOffset, gap.maxTimestamp, now, gap.baseOffset);
  log.highWatermark = plan.nextOffset;
  return { result: { ...where, error: null, nextOffset: log.highWatermark }, wrote: parsed.batches.length > 0 || gap !== null };
}

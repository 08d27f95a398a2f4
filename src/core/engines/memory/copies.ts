import type { AppendAtPartition, AppendAtPartitionResult, AppendAtRequest, AppendAtResult } from '../../core.js';
import { copiedProducers, copiedWindows, gapBatch, parseCopies, planCopy, storedCopy, type ParsedCopy } from '../../rules/copied-batches.js';
import { copiedTransactionState } from '../../rules/copied-transactions.js';
import type { MemoryTransactions } from './kafka-transactions.js';
import type { MemoryStore, PartitionState } from './store.js';

/**
 * appendAt on one partition of the memory engine: the copied batches go in at
 * the offsets they carry, or nothing does (already_there). Synchronous, so it
 * is atomic against every other call, as the partition lock makes it in
 * PostgreSQL; the producer windows the copied batches leave are stored with
 * them. True in `wrote` when records went in (long-polls to wake).
 */
export function appendCopies(
  partition: PartitionState,
  p: AppendAtPartition,
  parsed: ParsedCopy,
  now: number,
  txns: MemoryTransactions<PartitionState>,
): { result: AppendAtPartitionResult; wrote: boolean } {
  const { log } = partition;
  const where = { queue: p.queue, partition: p.partition };
  if (!parsed.ok) return { result: { ...where, error: parsed.error, errorMessage: parsed.message, nextOffset: log.highWatermark }, wrote: false };
  const plan = planCopy(parsed, log.highWatermark);
  if (plan.kind === 'already_there') return { result: { ...where, error: 'already_there', errorMessage: plan.message, nextOffset: log.highWatermark }, wrote: false };
  for (const batch of parsed.batches) log.append(storedCopy(p.records, batch), batch.nextOffset - batch.baseOffset, batch.maxTimestamp, now, batch.baseOffset);
  for (const window of copiedWindows(parsed.batches, (producerId) => partition.producers.get(producerId) ?? null).values()) partition.producers.set(window.producerId, window);
  txns.applyCopied(partition, copiedTransactionState(parsed.batches, (producerId) => first(txns.openFirstOffset(partition, producerId))));
  const gap = plan.trailingGap;
  if (gap) log.append(gapBatch(gap), gap.nextOffset - gap.baseOffset, gap.maxTimestamp, now, gap.baseOffset);
  log.highWatermark = plan.nextOffset;
  return { result: { ...where, error: null, nextOffset: log.highWatermark }, wrote: parsed.batches.length > 0 || gap !== null };
}

/** appendAt: copied batches stored at the offsets they carry (the migration bridge). */
export class MemoryCopies {
  constructor(private readonly store: MemoryStore) {}

  async appendAt(req: AppendAtRequest): Promise<AppendAtResult> {
    const parts = req.partitions;
    this.store.checkRoom(parts.reduce((n, p) => n + p.records.length, 0));
    const parsed = parseCopies(parts, this.store.appendLimits);
    const now = this.store.clock();
    const results = parts.map((p, i): AppendAtPartitionResult => {
      const found = this.store.lookupPartition(p);
      if ('error' in found) {
        const error = found.error === 'unknown_queue' ? 'unknown_queue' : 'unknown_partition';
        return { queue: p.queue, partition: p.partition, error, errorMessage: `Queue "${p.queue}" does not exist or has no partition ${p.partition}.`, nextOffset: -1 };
      }
      const { result, wrote } = appendCopies(found.partition, p, parsed[i]!, now, this.store.kafkaTxns);
      if (wrote) this.store.wakePartition(this.store.queues.get(p.queue)!, found.partition);
      return result;
    });
    for (const [producerId, epoch] of copiedProducers(parsed)) this.store.noteCopiedProducer(producerId, epoch);
    return { partitions: results };
  }
}

function first(offset: number): number | undefined {
  return offset < 0 ? undefined : offset;
}

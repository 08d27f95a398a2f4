import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP } from '../../core.js';
import { recordAtOrAfter, type StoredBatchRead } from '../../rules/timestamps.js';
import { retentionStartOffset } from '../../rules/retention.js';

/**
 * One partition's log in memory: stored batches in offset order, each the
 * verbatim bytes with baseOffset already rewritten. Lookups by offset are a
 * binary search; nothing here decodes a record.
 */

export interface StoredBatch {
  baseOffset: number;
  /** The offset after the batch's last record. */
  nextOffset: number;
  bytes: Buffer;
  size: number;
  maxTimestamp: number;
  appendedAt: number;
}

/** Bytes stored across every partition log of one engine, for its size limit. */
export interface StorageUsage {
  bytes: number;
}

export class PartitionLog {
  readonly batches: StoredBatch[] = [];
  logStartOffset = 0;
  highWatermark = 0;
  bytes = 0;
  /** Compaction: offsets below this have been compacted (Kafka's cleaner checkpoint); the rest is dirty. */
  cleanedTo = 0;
  /** Compaction: the earliest delete horizon of a tombstone the last pass kept, or null. */
  tombstoneHorizon: number | null = null;

  constructor(private readonly usage: StorageUsage) {}

  /** Appends at the high watermark, or at `baseOffset` past it (a copy keeping its source's offsets leaves the gap). */
  append(bytes: Buffer, offsetCount: number, maxTimestamp: number, appendedAt: number, baseOffset = this.highWatermark): StoredBatch {
    const batch: StoredBatch = {
      baseOffset,
      nextOffset: baseOffset + offsetCount,
      bytes,
      size: bytes.length,
      maxTimestamp,
      appendedAt,
    };
    this.batches.push(batch);
    this.highWatermark = batch.nextOffset;
    this.bytes += batch.size;
    this.usage.bytes += batch.size;
    return batch;
  }

  /** Index of the batch holding `offset`, or of the first batch after it; batches.length when none. */
  private indexFor(offset: number): number {
    let lo = 0;
    let hi = this.batches.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.batches[mid]!.nextOffset <= offset) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Batches from `fetchOffset` while they fit `maxBytes`; the first is taken
   * whenever `takeFirst` says so, whatever its size, so a consumer always
   * progresses past a batch larger than its limit.
   */
  collect(fetchOffset: number, maxBytes: number, takeFirst: (size: number) => boolean): StoredBatch[] {
    const out: StoredBatch[] = [];
    let used = 0;
    for (let i = this.indexFor(fetchOffset); i < this.batches.length; i++) {
      const batch = this.batches[i]!;
      if (out.length === 0 ? !takeFirst(batch.size) : used + batch.size > maxBytes) break;
      out.push(batch);
      used += batch.size;
    }
    return out;
  }

  bytesFrom(fetchOffset: number): number {
    let n = 0;
    for (let i = this.indexFor(fetchOffset); i < this.batches.length; i++) n += this.batches[i]!.size;
    return n;
  }

  /** Batches at or after `offset`, lazily, for native readers. */
  *batchesFrom(offset: number): Generator<StoredBatch> {
    for (let i = this.indexFor(offset); i < this.batches.length; i++) yield this.batches[i]!;
  }

  /**
   * Kafka's ListOffsets: -1 the high watermark, -2 the log start, -3 the
   * record with the largest timestamp; otherwise the first record whose
   * timestamp is at or after the one asked for. Batches are found by their max
   * timestamp; only the one batch that holds the answer is decoded.
   */
  offsetForTimestamp(timestamp: number, lastStableOffset: number, read: StoredBatchRead): { offset: number; timestamp: number } {
    if (timestamp === LATEST_TIMESTAMP) return { offset: lastStableOffset, timestamp: -1 };
    if (timestamp === EARLIEST_TIMESTAMP) return { offset: this.logStartOffset, timestamp: -1 };
    if (timestamp === MAX_TIMESTAMP) {
      let best: StoredBatch | null = null;
      for (const batch of this.batches) if (!best || batch.maxTimestamp > best.maxTimestamp) best = batch;
      return (best && recordAtOrAfter(best.bytes, best.maxTimestamp, this.logStartOffset, read)) ?? { offset: -1, timestamp: -1 };
    }
    for (const batch of this.batches) {
      if (batch.nextOffset <= this.logStartOffset || batch.baseOffset >= lastStableOffset) continue;
      if (batch.maxTimestamp < timestamp) continue;
      const found = recordAtOrAfter(batch.bytes, timestamp, this.logStartOffset, read);
      if (found) return found;
    }
    return { offset: -1, timestamp: -1 };
  }

  /** Moves the log start forward; whole batches below it go. */
  truncateBefore(offset: number): void {
    if (offset <= this.logStartOffset) return;
    this.logStartOffset = offset;
    let drop = 0;
    while (drop < this.batches.length && this.batches[drop]!.nextOffset <= offset) {
      this.bytes -= this.batches[drop]!.size;
      this.usage.bytes -= this.batches[drop]!.size;
      drop++;
    }
    if (drop > 0) this.batches.splice(0, drop);
  }

  /**
   * Compaction's swap: the batches below `end` become `replacement`, in one
   * step, so no reader sees half of it. Batches retention or DeleteRecords
   * removed meanwhile stay removed.
   */
  replaceBefore(end: number, replacement: readonly StoredBatch[]): void {
    let count = 0;
    while (count < this.batches.length && this.batches[count]!.baseOffset < end) count++;
    const rest = this.batches.splice(count);
    const removed = this.batches.splice(0);
    const kept = replacement.filter((b) => b.nextOffset > this.logStartOffset);
    for (const batch of kept) this.batches.push(batch);
    for (const batch of rest) this.batches.push(batch);
    const delta = kept.reduce((n, b) => n + b.size, 0) - removed.reduce((n, b) => n + b.size, 0);
    this.bytes += delta;
    this.usage.bytes += delta;
  }

  /** The partition is deleted: its bytes no longer count. */
  discard(): void {
    this.usage.bytes -= this.bytes;
    this.bytes = 0;
  }

  applyRetention(config: { retentionMs: number; retentionBytes: number }, nowMs: number): void {
    this.truncateBefore(retentionStartOffset(this.batches, config, this.logStartOffset, nowMs));
  }
}

import { createHash } from 'node:crypto';
import { exactBytes, textForColumn } from '../../rules/exact-text.js';
import type { ProducerWindow } from '../../rules/producer-window.js';

/**
 * Everything one database transaction appends, gathered in memory while the
 * rules decide, then written by the single `append-write` statement: stored
 * batches, partitions' new high watermarks, producer windows, append-ledger
 * entries and native-push dedup rows. Kafka appends and native pushes both
 * end here, so there is one write path for the log.
 */

export interface StoredBatchRow {
  partitionId: number;
  baseOffset: number;
  nextOffset: number;
  maxTimestamp: number;
  appendedAt: number;
  bytes: Buffer;
}

export interface DedupRow {
  partitionId: number;
  transactionId: string;
  messageId: string;
  offset: number;
  storedAt: number;
}

/** The dedup index keys on a digest: a transactionId may be 65,535 bytes, far past a btree entry's limit. */
export function transactionIdHash(transactionId: string): Buffer {
  // Of the exact id: UTF-8 would make "x\ud800y" and "x\uFFFDy" one id.
  return createHash('sha256').update(exactBytes(transactionId)).digest();
}

export class LogWrites {
  readonly batches: StoredBatchRow[] = [];
  readonly highWatermarks = new Map<number, number>();
  readonly windows = new Map<string, { partitionId: number; window: ProducerWindow }>();
  readonly ledger: { requestId: string; result: unknown; createdAt: number }[] = [];
  readonly dedup: DedupRow[] = [];
  /** Partitions that got records, for the wake-ups after commit. */
  readonly touched = new Map<string, { queue: string; index: number }>();
  /** Whether the transaction NOTIFIED the other cores itself (else the wake-up relay tells them after commit). */
  notified = false;

  addBatch(row: StoredBatchRow, where: { queue: string; index: number }): void {
    this.batches.push(row);
    this.highWatermarks.set(row.partitionId, row.nextOffset);
    this.touched.set(`${where.queue}\u0000${where.index}`, where);
  }

  setWindow(partitionId: number, window: ProducerWindow): void {
    this.windows.set(`${partitionId}:${window.producerId}`, { partitionId, window });
  }

  get isEmpty(): boolean {
    return this.batches.length === 0 && this.highWatermarks.size === 0 && this.windows.size === 0 && this.ledger.length === 0 && this.dedup.length === 0;
  }

  /** Parameters of `append-write`, in its order. */
  parameters(channel: string, payload: string): unknown[] {
    const windows = [...this.windows.values()];
    const notify = this.batches.length > 0 ? channel : '';
    return [
      this.batches.map((b) => b.partitionId),
      this.batches.map((b) => b.baseOffset),
      this.batches.map((b) => b.nextOffset),
      this.batches.map((b) => b.maxTimestamp),
      this.batches.map((b) => b.appendedAt),
      this.batches.map((b) => b.bytes.length),
      // One batch goes as it is: Buffer.concat copies even a single buffer.
      this.batches.length === 1 ? this.batches[0]!.bytes : Buffer.concat(this.batches.map((b) => b.bytes)),
      [...this.highWatermarks.keys()],
      [...this.highWatermarks.values()],
      windows.map((w) => w.partitionId),
      windows.map((w) => w.window.producerId),
      windows.map((w) => w.window.producerEpoch),
      windows.map((w) => JSON.stringify(w.window.batches)),
      windows.map((w) => w.window.lastTimestamp),
      this.ledger.map((l) => l.requestId),
      this.ledger.map((l) => JSON.stringify(l.result)),
      this.ledger.map((l) => l.createdAt),
      this.dedup.map((d) => d.partitionId),
      this.dedup.map((d) => transactionIdHash(d.transactionId)),
      this.dedup.map((d) => textForColumn(d.transactionId)),
      this.dedup.map((d) => d.messageId),
      this.dedup.map((d) => d.offset),
      this.dedup.map((d) => d.storedAt),
      notify,
      notify ? payload : '',
    ];
  }
}

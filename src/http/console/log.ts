/**
 * Walking a partition's stored batches through the core's read, for the two
 * console views that look inside the log: a partition's size in bytes and
 * the message browser. Kafka keeps a log's size beside it (DescribeLogDirs);
 * the core does not, so the console measures it by reading, within a budget.
 */
import { readBatchHeader, type BatchHeader } from '../../../protocol/records/batch-header.js';
import { decodeBatch, TimestampType } from '../../../protocol/records/record-batch.js';
import type { Core, PartitionRef } from '../../core/core.js';

/** Bytes one read asks the core for. */
const READ_BYTES = 1024 * 1024;

export interface PartitionEnds {
  logStartOffset: number;
  highWatermark: number;
  lastStableOffset: number;
}

/**
 * Hands `visit` each stored batch from `fromOffset` on, until it answers
 * false, the log ends, or `budgetBytes` have been read. Answers the
 * partition's offsets and whether the walk reached the end of the log.
 */
export async function walkBatches(
  core: Core,
  ref: PartitionRef,
  fromOffset: number,
  budgetBytes: number,
  visit: (batch: Buffer, header: BatchHeader) => boolean,
): Promise<PartitionEnds & { reachedEnd: boolean }> {
  let fetchOffset = fromOffset;
  let read = 0;
  for (;;) {
    const { partitions } = await core.read({
      partitions: [{ ...ref, fetchOffset, maxBytes: READ_BYTES }],
      minBytes: 0,
      maxWaitMs: 0,
      maxBytes: READ_BYTES,
      isolation: 'read_uncommitted',
    });
    const result = partitions[0]!;
    const ends = { logStartOffset: result.logStartOffset, highWatermark: result.highWatermark, lastStableOffset: result.lastStableOffset };
    if (result.error === 'offset_out_of_range' && fetchOffset < result.logStartOffset) {
      fetchOffset = result.logStartOffset; // retention moved the start while we looked
      continue;
    }
    if (result.error || result.batches.length === 0) return { ...ends, reachedEnd: true };
    for (const batch of result.batches) {
      const header = readBatchHeader(batch);
      read += batch.length;
      if (!visit(batch, header)) return { ...ends, reachedEnd: false };
      fetchOffset = Number(header.baseOffset) + header.lastOffsetDelta + 1;
    }
    if (fetchOffset >= result.highWatermark) return { ...ends, reachedEnd: true };
    if (read >= budgetBytes) return { ...ends, reachedEnd: false };
  }
}

/** A record as the browser shows it; bytes as base64, rendered by the page as text, JSON or hex. */
export interface BrowsedRecord {
  offset: number;
  timestamp: number;
  key: string | null;
  value: string | null;
  headers: { key: string; value: string | null }[];
  /** Written inside a Kafka transaction. */
  transactional: boolean;
  /** The producer that wrote it (-1: not an idempotent producer). */
  producerId: number;
}

const base64 = (bytes: Buffer | null) => (bytes === null ? null : bytes.toString('base64'));

/** Up to `limit` records from `fromOffset`, skipping control batches (transaction markers). */
export async function browseRecords(core: Core, ref: PartitionRef, fromOffset: number, limit: number, budgetBytes: number): Promise<{ records: BrowsedRecord[] } & PartitionEnds> {
  const records: BrowsedRecord[] = [];
  const ends = await walkBatches(core, ref, fromOffset, budgetBytes, (batch, header) => {
    const decoded = decodeBatch(batch, 0, { maxBytes: budgetBytes });
    if (decoded.isControl) return true;
    const base = Number(header.baseOffset);
    const logAppendTime = decoded.timestampType === TimestampType.LogAppendTime ? Number(header.maxTimestamp) : null;
    for (const record of decoded.records) {
      const offset = base + record.offsetDelta;
      if (offset < fromOffset) continue;
      records.push({
        offset,
        timestamp: logAppendTime ?? Number(header.baseTimestamp) + record.timestampDelta,
        key: base64(record.key),
        value: base64(record.value),
        headers: record.headers.map((h) => ({ key: h.key, value: base64(h.value) })),
        transactional: decoded.isTransactional,
        producerId: Number(header.producerId),
      });
      if (records.length >= limit) return false;
    }
    return true;
  });
  return { records, logStartOffset: ends.logStartOffset, highWatermark: ends.highWatermark, lastStableOffset: ends.lastStableOffset };
}

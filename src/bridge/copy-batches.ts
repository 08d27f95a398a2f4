import { CompressionCodec } from '../../protocol/records/compression.js';
import { buildBatch, TimestampType, type RecordInput } from '../../protocol/records/record-batch.js';

/**
 * Records read from the source, re-encoded as RecordBatch v2 batches that
 * carry their source offsets: each batch's baseOffset is its first record's
 * offset and every record's offset delta is its distance from it, so the
 * gaps the source log has (compaction, aborted transactions, markers) stay
 * gaps. librdkafka hands out records, not the source's batches, so batch
 * boundaries, the source's compression codec and producer ids are not kept
 * (the core's appendAt stores what this builds).
 */

export interface SourceRecord {
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  timestamp: number;
}

export interface CopyEncoding {
  /**
   * The source topic stamps LogAppendTime: batches say so and carry the
   * broker's time as their max timestamp, as the source's did (librdkafka
   * reports that time as each record's timestamp).
   */
  logAppendTime: boolean;
  compression: CompressionCodec;
}

/** Uncompressed record bytes per built batch: well inside the core's 16 MiB inflation limit and Kafka's default max.message.bytes. */
const MAX_BATCH_RECORD_BYTES = 512 * 1024;

function recordBytes(r: SourceRecord): number {
  return 24 + (r.key?.length ?? 0) + (r.value?.length ?? 0) + r.headers.reduce((n, h) => n + h.key.length + (h.value?.length ?? 0) + 8, 0);
}

/** One partition's records (ascending offsets) as back-to-back batches. */
export function encodeCopy(records: readonly SourceRecord[], encoding: CopyEncoding): Buffer {
  const batches: Buffer[] = [];
  let start = 0;
  let bytes = 0;
  const close = (end: number) => {
    if (end > start) batches.push(encodeBatch(records.slice(start, end), encoding));
    start = end;
    bytes = 0;
  };
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    // A LogAppendTime batch has one time for all its records: a record stamped otherwise starts a new batch.
    const otherTime = encoding.logAppendTime && i > start && r.timestamp !== records[start]!.timestamp;
    if (i > start && (otherTime || bytes + recordBytes(r) > MAX_BATCH_RECORD_BYTES)) close(i);
    bytes += recordBytes(r);
  }
  close(records.length);
  return batches.length === 1 ? batches[0]! : Buffer.concat(batches);
}

function encodeBatch(records: readonly SourceRecord[], encoding: CopyEncoding): Buffer {
  const base = records[0]!.offset;
  const inputs: RecordInput[] = records.map((r) => ({ offsetDelta: r.offset - base, key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp }));
  return buildBatch({
    records: inputs,
    baseOffset: base,
    compression: encoding.compression,
    ...(encoding.logAppendTime ? { timestampType: TimestampType.LogAppendTime, maxTimestamp: records[0]!.timestamp } : {}),
  });
}

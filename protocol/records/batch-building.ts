/** Building v2 batches: from records (producers, tests, the bridge) and from a stored batch's kept records (compaction). */
import { Writer } from '../primitives/writer.js';
import { BATCH_HEADER_SIZE, BATCH_LENGTH_PREFIX, BatchAttr, BatchPos, CRC_START } from './batch-header.js';
import {
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  RECORD_BATCH_MAGIC,
  TimestampType,
  joinAttributes,
  type BatchAttributes,
} from './batch-attributes.js';
import { CompressionCodec, compress } from './compression.js';
import { crc32c } from './crc32c.js';
import type { ValidBatch } from './invalid-batch.js';
import type { BatchRecord } from './record-walk.js';

export type Bytes = Uint8Array | string;

export interface RecordInput {
  key?: Bytes | null;
  value?: Bytes | null;
  headers?: readonly { key: string; value: Bytes | null }[];
  /** Milliseconds since the epoch; the batch's build time when absent. */
  timestamp?: bigint | number;
  /**
   * The record's offset delta; default its position. Given rising with gaps,
   * the batch is one copied from a compacted log (a producer never writes one).
   */
  offsetDelta?: number;
}

export interface BuildBatchOptions extends Partial<BatchAttributes> {
  records: readonly RecordInput[];
  baseOffset?: bigint | number;
  partitionLeaderEpoch?: number;
  producerId?: bigint | number;
  producerEpoch?: number;
  baseSequence?: number;
  /** Overrides the maximum of the record timestamps (a broker stamping LogAppendTime). */
  maxTimestamp?: bigint | number;
  compressionLevel?: number;
}

/**
 * Encodes records into one v2 batch with offset deltas 0..n-1 (or as given), the first
 * record's timestamp as the base (as Kafka's producer does) and the CRC filled in.
 */
export function buildBatch(options: BuildBatchOptions): Buffer {
  const { records } = options;
  if (records.length === 0) throw new RangeError('a record batch needs at least one record');
  const now = BigInt(Date.now());
  const timestamps = records.map((r) => (r.timestamp === undefined ? now : BigInt(r.timestamp)));
  const baseTimestamp = timestamps[0]!;
  const maxTimestamp = options.maxTimestamp === undefined ? timestamps.reduce((a, b) => (b > a ? b : a)) : BigInt(options.maxTimestamp);
  const compression = options.compression ?? CompressionCodec.None;

  const w = new Writer(BATCH_HEADER_SIZE + 64 * records.length);
  w.int64(BigInt(options.baseOffset ?? 0));
  w.int32(0); // batchLength, filled in below
  w.int32(options.partitionLeaderEpoch ?? NO_PARTITION_LEADER_EPOCH);
  w.int8(RECORD_BATCH_MAGIC);
  w.uint32(0); // CRC, filled in below
  w.int16(joinAttributes({ ...options, compression }));
  w.int32(records[records.length - 1]!.offsetDelta ?? records.length - 1);
  w.int64(baseTimestamp);
  w.int64(maxTimestamp);
  w.int64(BigInt(options.producerId ?? NO_PRODUCER_ID));
  w.int16(options.producerEpoch ?? NO_PRODUCER_EPOCH);
  w.int32(options.baseSequence ?? NO_SEQUENCE);
  w.int32(records.length);
  if (compression === CompressionCodec.None) {
    writeRecords(w, records, timestamps, baseTimestamp);
  } else {
    const plain = new Writer(64 * records.length);
    writeRecords(plain, records, timestamps, baseTimestamp);
    w.raw(compress(compression, plain.toBuffer(), { level: options.compressionLevel }));
  }
  const batch = w.toBuffer();
  batch.writeInt32BE(batch.length - BATCH_LENGTH_PREFIX, BatchPos.BatchLength);
  batch.writeUInt32BE(crc32c(batch.subarray(CRC_START)), BatchPos.Crc);
  return batch;
}

function writeRecords(w: Writer, records: readonly RecordInput[], timestamps: bigint[], baseTimestamp: bigint): void {
  records.forEach((record, i) =>
    writeRecord(w, {
      attributes: 0, // record attributes: unused by Kafka
      timestampDelta: timestamps[i]! - baseTimestamp,
      offsetDelta: record.offsetDelta ?? i,
      key: toBytes(record.key),
      value: toBytes(record.value),
      headers: (record.headers ?? []).map((h) => ({ key: h.key, value: toBytes(h.value) })),
    }),
  );
}

/** One record's fields as they are written: its deltas count from its batch's base offset and base timestamp. */
interface RecordFields {
  attributes: number;
  timestampDelta: bigint | number;
  offsetDelta: number;
  key: Uint8Array | null;
  value: Uint8Array | null;
  headers: readonly { key: string; value: Uint8Array | null }[];
}

function writeRecord(w: Writer, record: RecordFields): void {
  const headers = record.headers.map((h) => ({ key: Buffer.from(h.key, 'utf8'), value: h.value }));
  const bodySize =
    1 +
    varlongSize(record.timestampDelta) +
    varintSize(record.offsetDelta) +
    bytesFieldSize(record.key) +
    bytesFieldSize(record.value) +
    varintSize(headers.length) +
    headers.reduce((sum, h) => sum + bytesFieldSize(h.key) + bytesFieldSize(h.value), 0);
  w.varint(bodySize);
  w.int8(record.attributes);
  w.varlong(BigInt(record.timestampDelta));
  w.varint(record.offsetDelta);
  w.varintBytes(record.key);
  w.varintBytes(record.value);
  w.varint(headers.length);
  for (const h of headers) {
    w.varintBytes(h.key);
    w.varintBytes(h.value);
  }
}

/**
 * A stored batch with only `kept` of its records, as Kafka's log cleaner
 * rewrites one: the same base offset, last offset delta, producer fields,
 * sequence and attributes, so the surviving records keep their offsets and
 * the batch still spans the offsets it did (gaps stay gaps, no offset is
 * reused); compressed again with the batch's codec; the record count, max
 * timestamp (a CreateTime batch's now the largest kept) and CRC computed
 * anew. With `deleteHorizon` (KIP-534) the batch carries it as its
 * baseTimestamp under the DeleteHorizon attribute, and the records' timestamp
 * deltas count from it, so every record's timestamp stays what it was.
 */
export function rebuildBatch(buf: Buffer, batch: ValidBatch, kept: readonly BatchRecord[], deleteHorizon?: bigint): Buffer {
  const originalBase = batch.header.baseTimestamp;
  const base = deleteHorizon ?? originalBase;
  const shift = originalBase - base;
  const plain = new Writer(64 * Math.max(1, kept.length));
  for (const record of kept) writeRecord(plain, shift === 0n ? record : { ...record, timestampDelta: BigInt(record.timestampDelta) + shift });
  const records = compress(batch.compression, plain.toBuffer());
  const rebuilt = Buffer.allocUnsafe(BATCH_HEADER_SIZE + records.length);
  buf.copy(rebuilt, 0, batch.start, batch.start + BATCH_HEADER_SIZE);
  records.copy(rebuilt, BATCH_HEADER_SIZE);
  rebuilt.writeInt32BE(rebuilt.length - BATCH_LENGTH_PREFIX, BatchPos.BatchLength);
  rebuilt.writeInt32BE(kept.length, BatchPos.RecordCount);
  if (deleteHorizon !== undefined) {
    rebuilt.writeInt16BE(batch.header.attributes | BatchAttr.DeleteHorizon, BatchPos.Attributes);
    rebuilt.writeBigInt64BE(deleteHorizon, BatchPos.BaseTimestamp);
  }
  if (batch.timestampType === TimestampType.CreateTime && kept.length > 0) {
    const largest = kept.reduce((max, r) => (r.timestampDelta > max ? r.timestampDelta : max), kept[0]!.timestampDelta);
    rebuilt.writeBigInt64BE(originalBase + BigInt(largest), BatchPos.MaxTimestamp);
  }
  rebuilt.writeUInt32BE(crc32c(rebuilt.subarray(CRC_START)), BatchPos.Crc);
  return rebuilt;
}

function toBytes(v: Bytes | null | undefined): Uint8Array | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? Buffer.from(v, 'utf8') : v;
}

/** Bytes a zig-zag varint or varlong of `n` takes on the wire. */
function varlongSize(n: bigint | number): number {
  let u = BigInt.asUintN(64, (BigInt(n) << 1n) ^ (BigInt(n) >> 63n));
  let size = 1;
  while (u >= 0x80n) {
    u >>= 7n;
    size++;
  }
  return size;
}

function varintSize(n: number): number {
  let u = ((n << 1) ^ (n >> 31)) >>> 0;
  let size = 1;
  while (u >= 0x80) {
    u >>>= 7;
    size++;
  }
  return size;
}

function bytesFieldSize(v: Uint8Array | null): number {
  return v === null ? varintSize(-1) : varintSize(v.length) + v.length;
}

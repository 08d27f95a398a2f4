/**
 * RecordBatch v2 (magic 2): validate, decode and build.
 *
 * Validation is the Produce path, and it checks what Kafka's broker checks
 * (LogValidator) before anything is stored: the fixed header, the framing,
 * the CRC-32C, the header's rules, and then every record: its length, the
 * varint lengths of key, value and headers inside it, offset deltas 0..n-1,
 * the record count, no bytes after the last record. A compressed batch is
 * inflated to do so, within an InflationBudget. So whatever is stored can be
 * decoded by every reader. The walk allocates nothing per record: the batch
 * is stored as received, never re-encoded.
 *
 * Decoding (for native readers, tests and the bridge) runs the same record
 * walk and keeps what it reads: key, value and header values are views into
 * the input or the inflated buffer.
 */
import { DecodeError } from '../primitives/decode-error.js';
import { Reader } from '../primitives/reader.js';
import { Writer } from '../primitives/writer.js';
import {
  BATCH_HEADER_SIZE,
  BATCH_LENGTH_PREFIX,
  BatchAttr,
  BatchPos,
  CRC_START,
  readBatchHeader,
  type BatchHeader,
} from './batch-header.js';
import {
  CompressionCodec,
  DEFAULT_DECOMPRESSION_BUDGET,
  InflationLimitError,
  compress,
  inflationBudget,
  decompress,
  isCompressionCodec,
  type InflationBudget,
} from './compression.js';
import { crc32c } from './crc32c.js';

export const RECORD_BATCH_MAGIC = 2;
/** Smallest record on the wire: length, attributes, timestamp and offset deltas, key, value, header count. */
export const MIN_RECORD_SIZE = 7;
/** Kafka's "no timestamp" and "no producer" values. */
export const NO_TIMESTAMP = -1n;
export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;

export const TimestampType = {
  CreateTime: 0,
  LogAppendTime: 1,
} as const;
export type TimestampType = (typeof TimestampType)[keyof typeof TimestampType];

/** The attribute bits of a batch, split into what they mean. */
export interface BatchAttributes {
  compression: CompressionCodec;
  timestampType: TimestampType;
  isTransactional: boolean;
  isControl: boolean;
  /** Set by compaction on batches whose baseTimestamp is a delete horizon. */
  hasDeleteHorizon: boolean;
}

export function splitAttributes(attributes: number): BatchAttributes {
  const codec = attributes & BatchAttr.CompressionMask;
  return {
    // Codecs 5-7 do not exist; callers that care check with isCompressionCodec first.
    compression: codec as CompressionCodec,
    timestampType: attributes & BatchAttr.TimestampLogAppend ? TimestampType.LogAppendTime : TimestampType.CreateTime,
    isTransactional: (attributes & BatchAttr.Transactional) !== 0,
    isControl: (attributes & BatchAttr.Control) !== 0,
    hasDeleteHorizon: (attributes & BatchAttr.DeleteHorizon) !== 0,
  };
}

export function joinAttributes(a: Partial<BatchAttributes>): number {
  return (
    (a.compression ?? CompressionCodec.None) |
    (a.timestampType === TimestampType.LogAppendTime ? BatchAttr.TimestampLogAppend : 0) |
    (a.isTransactional ? BatchAttr.Transactional : 0) |
    (a.isControl ? BatchAttr.Control : 0) |
    (a.hasDeleteHorizon ? BatchAttr.DeleteHorizon : 0)
  );
}

// ---------------------------------------------------------------- validation

/** Which check a batch failed, so a Produce handler can pick Kafka's error code. */
export type BatchRule =
  | 'header' // too short to hold the fixed header
  | 'magic' // not a v2 batch
  | 'length' // batchLength disagrees with the bytes present
  | 'crc' // CRC-32C mismatch (Kafka: CORRUPT_MESSAGE)
  | 'compression' // unknown codec
  | 'record-count' // count negative, zero, or more than the bytes can hold
  | 'offset-range' // lastOffsetDelta disagrees with the count
  | 'control' // a client sent a control batch
  | 'sequence' // an idempotent batch without a base sequence
  | 'producer' // a transactional batch without a producer id
  | 'compressed' // the compressed records do not inflate (Kafka: CORRUPT_MESSAGE)
  | 'inflated-size' // the records inflate past the budget (Kafka's nearest: MESSAGE_TOO_LARGE)
  | 'record'; // a record breaks Kafka's record rules (Kafka: INVALID_RECORD); recordIndex says which

export class InvalidBatchError extends DecodeError {
  readonly rule: BatchRule;
  /** The refused batch's ordinal among back-to-back batches (validateBatches), or -1. */
  batchIndex = -1;
  /** For rule 'record': the failing record's ordinal inside its batch (Kafka's RecordError batch_index). */
  readonly recordIndex: number;

  constructor(rule: BatchRule, message: string, position: number, recordIndex = -1) {
    super(message, position);
    this.rule = rule;
    this.recordIndex = recordIndex;
  }
}

export interface BatchRules {
  /**
   * Apply Kafka's rules for batches a producer sends (LogValidator): at least
   * one record, lastOffsetDelta + 1 equal to the count, no control batches, a
   * base sequence when there is a producer id. Default true. Turn off for
   * batches copied from a Kafka log, where compaction leaves fewer records than
   * the offset range and control batches are legitimate.
   */
  fromClient?: boolean;
  /**
   * Walk every record too (Kafka's per-record rules), inflating a compressed
   * batch within this budget and drawing what it inflated from the request's
   * share. Absent: the header and CRC only.
   */
  records?: InflationBudget;
}

export interface ValidBatch extends BatchAttributes {
  /** The batch occupies [start, end) of the buffer. */
  start: number;
  end: number;
  header: BatchHeader;
  /**
   * The largest record timestamp, when the records were walked: what Kafka's
   * broker stores as the batch's maxTimestamp, whatever the producer wrote there.
   */
  recordsMaxTimestamp: bigint | null;
  /** When the records were walked: the ordinal of the first record without a key, or -1 when every record has one. */
  firstKeylessRecord: number;
}

/**
 * Checks the batch at `at` (its records too when `rules.records` is given) and
 * returns its span, header and attributes, or throws InvalidBatchError naming
 * the broken rule.
 */
export function validateBatch(buf: Buffer, at = 0, rules: BatchRules = {}): ValidBatch {
  const left = buf.length - at;
  if (left < BATCH_HEADER_SIZE) {
    throw new InvalidBatchError('header', `record batch needs a ${BATCH_HEADER_SIZE}-byte header, ${left} bytes left`, at);
  }
  const magic = buf.readInt8(at + BatchPos.Magic);
  if (magic !== RECORD_BATCH_MAGIC) {
    throw new InvalidBatchError('magic', `record batch magic is ${magic}; only magic 2 (RecordBatch v2) is accepted here`, at);
  }
  const header = readBatchHeader(buf, at);
  const end = at + BATCH_LENGTH_PREFIX + header.batchLength;
  if (header.batchLength < BATCH_HEADER_SIZE - BATCH_LENGTH_PREFIX) {
    throw new InvalidBatchError('length', `record batch length ${header.batchLength} is shorter than the v2 header`, at);
  }
  if (end > buf.length) {
    throw new InvalidBatchError('length', `record batch length ${header.batchLength} runs past the ${left - BATCH_LENGTH_PREFIX} bytes left`, at);
  }
  const crc = crc32c(buf.subarray(at + CRC_START, end));
  if (crc !== header.crc) {
    throw new InvalidBatchError('crc', `record batch CRC-32C is 0x${hex(header.crc)} but the bytes give 0x${hex(crc)}; the batch is corrupt`, at);
  }
  const codec = header.attributes & BatchAttr.CompressionMask;
  if (!isCompressionCodec(codec)) {
    throw new InvalidBatchError('compression', `record batch names compression codec ${codec}, which does not exist`, at);
  }
  const fromClient = rules.fromClient ?? true;
  checkCounts(header, at, end, fromClient);
  const batch: ValidBatch = { start: at, end, header, ...splitAttributes(header.attributes), recordsMaxTimestamp: null, firstKeylessRecord: -1 };
  if (rules.records) {
    const walked = readBatchRecords(buf, batch, rules.records, fromClient, false);
    batch.recordsMaxTimestamp = header.baseTimestamp + BigInt(walked.maxTimestampDelta);
    batch.firstKeylessRecord = walked.firstKeylessRecord;
  }
  return batch;
}

function checkCounts(h: BatchHeader, at: number, end: number, fromClient: boolean): void {
  const count = h.recordCount;
  if (count < 0) throw new InvalidBatchError('record-count', `record count ${count} is negative`, at);
  if (h.lastOffsetDelta < 0) throw new InvalidBatchError('offset-range', `lastOffsetDelta ${h.lastOffsetDelta} is negative`, at);
  if (count > h.lastOffsetDelta + 1) {
    throw new InvalidBatchError('offset-range', `${count} records cannot fit the offset range 0..${h.lastOffsetDelta}`, at);
  }
  const recordBytes = end - at - BATCH_HEADER_SIZE;
  if ((h.attributes & BatchAttr.CompressionMask) === CompressionCodec.None && count > recordBytes / MIN_RECORD_SIZE) {
    throw new InvalidBatchError('record-count', `record count ${count} cannot fit in ${recordBytes} bytes of records`, at);
  }
  if (!fromClient) return;
  // Kafka's broker rules for produced batches (LogValidator.validateBatch).
  if (count === 0) throw new InvalidBatchError('record-count', 'record batch holds no records', at);
  if (h.lastOffsetDelta + 1 !== count) {
    throw new InvalidBatchError('offset-range', `lastOffsetDelta ${h.lastOffsetDelta} does not match the record count ${count} (it must be count - 1)`, at);
  }
  if (h.attributes & BatchAttr.Control) throw new InvalidBatchError('control', 'clients may not write control batches', at);
  if (h.producerId >= 0n && h.baseSequence < 0) {
    throw new InvalidBatchError('sequence', `base sequence ${h.baseSequence} is invalid for producer id ${h.producerId}`, at);
  }
  if (h.producerId < 0n && h.attributes & BatchAttr.Transactional) {
    throw new InvalidBatchError('producer', 'a transactional batch needs a producer id', at);
  }
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** Validates back-to-back batches covering the whole buffer (a Produce partition's records). */
export function validateBatches(buf: Buffer, rules: BatchRules = {}): ValidBatch[] {
  const batches: ValidBatch[] = [];
  for (let at = 0; at < buf.length; ) {
    let batch: ValidBatch;
    try {
      batch = validateBatch(buf, at, rules);
    } catch (e) {
      if (e instanceof InvalidBatchError) e.batchIndex = batches.length;
      throw e;
    }
    batches.push(batch);
    at = batch.end;
  }
  return batches;
}

// ---------------------------------------------------------------- decoding

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface BatchRecord {
  attributes: number;
  timestampDelta: number;
  offsetDelta: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

export interface DecodedBatch extends ValidBatch {
  records: BatchRecord[];
}

export interface DecodeBatchOptions extends BatchRules {
  /** Ceiling on the decompressed records of one batch. */
  maxBytes?: number;
}

/**
 * Fully decodes the batch at `at`: validation as above (with `fromClient`
 * false unless asked, since decoded batches usually come from storage), then
 * every record. Key, value and header values are views into the input or the
 * decompressed buffer.
 */
export function decodeBatch(buf: Buffer, at = 0, options: DecodeBatchOptions = {}): DecodedBatch {
  const fromClient = options.fromClient ?? false;
  const batch = validateBatch(buf, at, { fromClient });
  const maxBytes = options.maxBytes ?? DEFAULT_DECOMPRESSION_BUDGET;
  const { records, maxTimestampDelta } = readBatchRecords(buf, batch, inflationBudget(maxBytes, maxBytes), fromClient, true);
  return { ...batch, recordsMaxTimestamp: batch.header.baseTimestamp + BigInt(maxTimestampDelta), records: records! };
}

/** Decodes back-to-back batches covering the whole buffer. */
export function decodeBatches(buf: Buffer, options: DecodeBatchOptions = {}): DecodedBatch[] {
  const batches: DecodedBatch[] = [];
  for (let at = 0; at < buf.length; ) {
    const batch = decodeBatch(buf, at, options);
    batches.push(batch);
    at = batch.end;
  }
  return batches;
}

interface RecordsRead {
  /** The records, when asked to keep them. */
  records: BatchRecord[] | null;
  /** The largest timestampDelta (0 for an empty batch). */
  maxTimestampDelta: number;
  /** The ordinal of the first record with a null key, or -1. */
  firstKeylessRecord: number;
}

/** The records of a header-checked batch, inflated first when compressed. */
function readBatchRecords(buf: Buffer, batch: ValidBatch, budget: InflationBudget, fromClient: boolean, keep: boolean): RecordsRead {
  const at = batch.start;
  const count = batch.header.recordCount;
  const recordsAt = at + BATCH_HEADER_SIZE;
  const rules: RecordRules = { count, lastOffsetDelta: batch.header.lastOffsetDelta, contiguous: fromClient };
  if (batch.compression === CompressionCodec.None) return readRecords(buf, recordsAt, batch.end, rules, keep);
  const maxBytes = Math.min(budget.maxBatchBytes, budget.requestBytesLeft);
  const limit =
    maxBytes < budget.maxBatchBytes
      ? `the ${budget.maxRequestBytes}-byte inflation limit for all batches of one request`
      : `the ${budget.maxBatchBytes}-byte inflation limit for one batch`;
  if (count > maxBytes / MIN_RECORD_SIZE) {
    throw new InvalidBatchError('inflated-size', `record count ${count} cannot fit in ${limit}`, at);
  }
  let plain: Buffer;
  try {
    plain = decompress(batch.compression, buf.subarray(recordsAt, batch.end), maxBytes, recordsAt);
  } catch (e) {
    if (e instanceof InflationLimitError) throw new InvalidBatchError('inflated-size', `the records inflate past ${limit} (${e.message})`, at);
    if (e instanceof DecodeError) throw new InvalidBatchError('compressed', e.message, at);
    throw e;
  }
  budget.requestBytesLeft -= plain.length;
  try {
    return readRecords(plain, 0, plain.length, rules, keep);
  } catch (e) {
    if (!(e instanceof InvalidBatchError)) throw e;
    // Positions inside decompressed bytes mean nothing to the sender; name the batch instead.
    throw new InvalidBatchError(e.rule, `in the decompressed records of the batch: ${e.message.replace(/ \(at byte \d+\)$/, '')}`, at, e.recordIndex);
  }
}

interface RecordRules {
  count: number;
  lastOffsetDelta: number;
  /** Offset deltas must be exactly 0..count-1 (a producer's batch), not merely increasing (a compacted log's). */
  contiguous: boolean;
}

/**
 * Reads the records in buf[start, end) by Kafka's record rules (DefaultRecord
 * and LogValidator): `count` records, each filling exactly the length it
 * declares, key and value lengths -1 (null) or inside the record, a header
 * count that fits, no null header key, offset deltas as `rules` says, no
 * bytes after the last one. Keeps the records only when `keep`; otherwise
 * nothing is allocated per record.
 */
function readRecords(buf: Buffer, start: number, end: number, rules: RecordRules, keep: boolean): RecordsRead {
  const { count } = rules;
  const r = new Reader(buf, start, end);
  if (count > r.remaining / MIN_RECORD_SIZE) {
    throw new InvalidBatchError('record', `record count ${count} cannot fit in ${r.remaining} bytes of records`, start);
  }
  const records: BatchRecord[] | null = keep ? [] : null;
  let maxTimestampDelta = count > 0 ? -Infinity : 0;
  let lastOffsetDelta = -1;
  let firstKeylessRecord = -1;
  for (let i = 0; i < count; i++) {
    const recordAt = r.pos;
    try {
      const record = readRecord(r, keep);
      const delta = lastRead.offsetDelta;
      if (rules.contiguous ? delta !== i : delta <= lastOffsetDelta || delta > rules.lastOffsetDelta) {
        const expected = rules.contiguous ? `${i} (offset deltas run 0..n-1)` : `above ${lastOffsetDelta} and at most ${rules.lastOffsetDelta}`;
        throw new DecodeError(`offset delta ${delta} where ${expected}`, recordAt);
      }
      lastOffsetDelta = delta;
      if (lastRead.timestampDelta > maxTimestampDelta) maxTimestampDelta = lastRead.timestampDelta;
      if (lastRead.keyless && firstKeylessRecord < 0) firstKeylessRecord = i;
      if (records) records.push(record!);
    } catch (e) {
      if (e instanceof DecodeError && !(e instanceof InvalidBatchError)) {
        throw new InvalidBatchError('record', `record ${i}: ${e.message.replace(/ \(at byte \d+\)$/, '')}`, e.position, i);
      }
      throw e;
    }
  }
  if (r.remaining !== 0) {
    throw new InvalidBatchError('record', `${r.remaining} bytes remain after the ${count} records the batch declares`, r.pos, count);
  }
  return { records, maxTimestampDelta, firstKeylessRecord };
}

/** The deltas of the record readRecord read last: the walk keeps no record object. */
const lastRead = { timestampDelta: 0, offsetDelta: 0, keyless: false };

/**
 * Reads one record, leaving the cursor after it. The fields must fill exactly
 * the length the record declares; they are read with the batch's cursor and
 * checked against that length afterwards, which spares a bounded cursor per
 * record (a field that runs past the record's end fails the same check, and no
 * read can pass the end of the records).
 */
function readRecord(r: Reader, keep: boolean): BatchRecord | null {
  const length = r.varint();
  if (length < 0 || length > r.remaining) r.fail(`record length ${length} is invalid with ${r.remaining} bytes left`);
  const end = r.pos + length;
  const attributes = r.int8();
  const timestampDelta = r.varlongNumber();
  const offsetDelta = r.varint();
  let key: Buffer | null = null;
  let value: Buffer | null = null;
  let keyless: boolean;
  if (keep) {
    key = r.varintBytes();
    value = r.varintBytes();
    keyless = key === null;
  } else {
    keyless = r.skipVarintBytes();
    r.skipVarintBytes();
  }
  const headerCount = r.varint();
  // Each header takes at least two bytes (two length varints).
  if (headerCount < 0 || headerCount > (end - r.pos) / 2) r.fail(`record header count ${headerCount} is invalid with ${end - r.pos} bytes left`);
  const headers: RecordHeader[] | null = keep ? [] : null;
  for (let i = 0; i < headerCount; i++) {
    const keyLength = r.varint();
    // Kafka: "Invalid negative header key size".
    if (keyLength < 0) r.fail(keyLength === -1 ? 'record header key is null' : `record header key length ${keyLength} is invalid`);
    r.skip(keyLength);
    if (headers) headers.push({ key: r.buf.toString('utf8', r.pos - keyLength, r.pos), value: r.varintBytes() });
    else r.skipVarintBytes();
  }
  if (r.pos !== end) {
    r.fail(r.pos < end ? `record declares ${length} bytes but its fields end ${end - r.pos} bytes early` : `record declares ${length} bytes but its fields run ${r.pos - end} bytes past them`);
  }
  lastRead.timestampDelta = timestampDelta;
  lastRead.offsetDelta = offsetDelta;
  lastRead.keyless = keyless;
  return headers ? { attributes, timestampDelta, offsetDelta, key, value, headers } : null;
}

// ---------------------------------------------------------------- building

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

// ---------------------------------------------------------------- control records

/** Control record types (the key's second int16). */
export const ControlRecordType = {
  Abort: 0,
  Commit: 1,
} as const;
export type ControlRecordType = (typeof ControlRecordType)[keyof typeof ControlRecordType];

export interface ControlBatchOptions {
  type: ControlRecordType;
  producerId: bigint | number;
  producerEpoch: number;
  coordinatorEpoch: number;
  timestamp?: bigint | number;
  baseOffset?: bigint | number;
  partitionLeaderEpoch?: number;
}

/**
 * A transaction marker: a transactional control batch with one record whose
 * key is (version 0, type) and whose value is (version 0, coordinatorEpoch).
 */
export function buildControlBatch(options: ControlBatchOptions): Buffer {
  const key = Buffer.alloc(4);
  key.writeInt16BE(0, 0);
  key.writeInt16BE(options.type, 2);
  const value = Buffer.alloc(6);
  value.writeInt16BE(0, 0);
  value.writeInt32BE(options.coordinatorEpoch, 2);
  return buildBatch({
    records: [{ key, value, timestamp: options.timestamp }],
    isControl: true,
    isTransactional: true,
    producerId: options.producerId,
    producerEpoch: options.producerEpoch,
    baseSequence: NO_SEQUENCE,
    baseOffset: options.baseOffset,
    partitionLeaderEpoch: options.partitionLeaderEpoch,
  });
}

export interface ControlRecord {
  version: number;
  /** Abort (0) and Commit (1) are transaction markers; other types exist (KRaft) and are passed through. */
  type: number;
  /** The transaction coordinator's epoch, for Abort and Commit markers. */
  coordinatorEpoch: number | null;
}

/** Reads the record of a control batch. */
export function decodeControlRecord(record: BatchRecord): ControlRecord {
  const key = record.key;
  if (key === null || key.length < 4) throw new DecodeError(`control record key needs 4 bytes, has ${key?.length ?? 'null'}`, 0);
  const version = key.readInt16BE(0);
  const type = key.readInt16BE(2);
  if (type !== ControlRecordType.Abort && type !== ControlRecordType.Commit) return { version, type, coordinatorEpoch: null };
  const value = record.value;
  if (value === null || value.length < 6) throw new DecodeError(`transaction marker value needs 6 bytes, has ${value?.length ?? 'null'}`, 0);
  return { version, type, coordinatorEpoch: value.readInt32BE(2) };
}

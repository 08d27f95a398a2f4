/**
 * The record walk both validation and decoding run: a compressed batch is
 * inflated within an InflationBudget, then every record is checked by Kafka's
 * record rules. Without `keep` it allocates nothing per record; with it, key,
 * value and header values are views into the input or the inflated buffer.
 */
import { DecodeError } from '../primitives/decode-error.js';
import { Reader } from '../primitives/reader.js';
import { BATCH_HEADER_SIZE } from './batch-header.js';
import { MIN_RECORD_SIZE } from './batch-attributes.js';
import { CompressionCodec, InflationLimitError, decompress, type InflationBudget } from './compression.js';
import { InvalidBatchError, type ValidBatch } from './invalid-batch.js';

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

interface RecordsRead {
  /** The records, when asked to keep them. */
  records: BatchRecord[] | null;
  /** The largest timestampDelta (0 for an empty batch). */
  maxTimestampDelta: number;
  /** The ordinal of the first record with a null key, or -1. */
  firstKeylessRecord: number;
}

/** The records of a header-checked batch, inflated first when compressed. */
export function readBatchRecords(buf: Buffer, batch: ValidBatch, budget: InflationBudget, fromClient: boolean, keep: boolean): RecordsRead {
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

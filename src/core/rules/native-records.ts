import { crc32c } from '@node-rs/crc32';
import { BATCH_HEADER_SIZE, BatchAttr, BatchPos, CRC_START, readBatchHeader } from '../../../protocol/records/batch-header.js';
import type { QueenMessage } from '../core.js';
import type { PlannedPush } from './dedup.js';
import { kafkaRecordMessageId } from './uuidv7.js';

/**
 * How a native push becomes a Kafka record and back, so one log serves both
 * worlds: value = the payload as JSON, and two headers carry what Kafka has no
 * field for. A Kafka consumer sees the JSON and the headers; a Queen consumer
 * popping a record a Kafka producer wrote gets the position-derived message id
 * and, as transactionId, that same id (a push without an id does the same).
 */

export const TRANSACTION_ID_HEADER = 'queen-transaction-id';
export const MESSAGE_ID_HEADER = 'queen-message-id';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface DecodedRecord {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** One uncompressed v2 batch (baseOffset 0; the engine sets it) holding the given pushes in order. */
export function encodePushBatch(items: readonly Pick<PlannedPush, 'transactionId' | 'messageId' | 'payloadJson'>[], timestampMs: number): Buffer {
  return buildRecordBatch(
    items.map((item) => ({
      key: null,
      value: Buffer.from(item.payloadJson, 'utf8'),
      headers: [
        { key: TRANSACTION_ID_HEADER, value: Buffer.from(item.transactionId, 'utf8') },
        { key: MESSAGE_ID_HEADER, value: Buffer.from(item.messageId, 'utf8') },
      ],
    })),
    timestampMs,
  );
}

export interface RecordLocation {
  queue: string;
  queueId: string;
  partition: string;
  partitionIndex: number;
}

/** A stored record as a native consumer sees it. */
export function toQueenMessage(record: DecodedRecord, where: RecordLocation): QueenMessage {
  let transactionId: string | null = null;
  let messageId: string | null = null;
  const headers: RecordHeader[] = [];
  for (const header of record.headers) {
    if (header.key === TRANSACTION_ID_HEADER && header.value) transactionId = header.value.toString('utf8');
    else if (header.key === MESSAGE_ID_HEADER && header.value) messageId = header.value.toString('utf8');
    else headers.push(header);
  }
  messageId ??= kafkaRecordMessageId(where.queueId, where.partitionIndex, record.offset);
  return {
    queue: where.queue,
    partition: where.partition,
    partitionIndex: where.partitionIndex,
    offset: record.offset,
    messageId,
    transactionId: transactionId ?? messageId,
    payload: payloadOf(record.value),
    key: record.key,
    headers,
    timestamp: record.timestamp,
  };
}

/** JSON when the value is JSON (every native push is), else its text; null stays null. */
function payloadOf(value: Buffer | null): unknown {
  if (value === null) return null;
  const text = value.toString('utf8');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

// ─── Interim record-batch codec ───────────────────────────────────────────────
// protocol/records/record-batch.ts (buildBatch/decodeBatch, with compression)
// is being written alongside this file; these two functions are replaced by it
// when it lands. Until then native batches are uncompressed, and a compressed
// batch from a Kafka producer cannot be popped natively.

function varintSize(v: number): number {
  let z = ((v << 1) ^ (v >> 31)) >>> 0;
  let n = 1;
  while (z >= 0x80) {
    z >>>= 7;
    n++;
  }
  return n;
}

function writeVarint(buf: Buffer, at: number, v: number): number {
  let z = ((v << 1) ^ (v >> 31)) >>> 0;
  while (z >= 0x80) {
    buf[at++] = (z & 0x7f) | 0x80;
    z >>>= 7;
  }
  buf[at++] = z;
  return at;
}

function readVarint(buf: Buffer, cursor: { at: number }): number {
  let z = 0;
  let shift = 0;
  for (;;) {
    if (cursor.at >= buf.length) throw new RangeError('record runs past the end of its batch');
    const b = buf[cursor.at++]!;
    z |= (b & 0x7f) << shift;
    if ((b & 0x80) === 0) break;
    shift += 7;
    if (shift > 28) throw new RangeError('varint longer than 5 bytes');
  }
  return (z >>> 1) ^ -(z & 1);
}

function readBytes(buf: Buffer, cursor: { at: number }): Buffer | null {
  const length = readVarint(buf, cursor);
  if (length < 0) return null;
  if (cursor.at + length > buf.length) throw new RangeError('record field runs past the end of its batch');
  const out = buf.subarray(cursor.at, cursor.at + length);
  cursor.at += length;
  return out;
}

interface NewRecord {
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

function buildRecordBatch(records: NewRecord[], timestampMs: number): Buffer {
  const bodies = records.map((record, offsetDelta) => {
    const headerKeys = record.headers.map((h) => Buffer.from(h.key, 'utf8'));
    let size = 1 + varintSize(0) + varintSize(offsetDelta);
    size += varintSize(record.key ? record.key.length : -1) + (record.key?.length ?? 0);
    size += varintSize(record.value ? record.value.length : -1) + (record.value?.length ?? 0);
    size += varintSize(record.headers.length);
    record.headers.forEach((h, i) => {
      size += varintSize(headerKeys[i]!.length) + headerKeys[i]!.length;
      size += varintSize(h.value ? h.value.length : -1) + (h.value?.length ?? 0);
    });
    const body = Buffer.allocUnsafe(varintSize(size) + size);
    let at = writeVarint(body, 0, size);
    body[at++] = 0; // record attributes: unused
    at = writeVarint(body, at, 0); // timestamp delta: one timestamp for the whole push
    at = writeVarint(body, at, offsetDelta);
    const putBytes = (b: Buffer | null): void => {
      at = writeVarint(body, at, b ? b.length : -1);
      if (b) at += b.copy(body, at);
    };
    putBytes(record.key);
    putBytes(record.value);
    at = writeVarint(body, at, record.headers.length);
    record.headers.forEach((h, i) => {
      putBytes(headerKeys[i]!);
      putBytes(h.value);
    });
    return body;
  });
  const recordsSize = bodies.reduce((n, b) => n + b.length, 0);
  const batch = Buffer.alloc(BATCH_HEADER_SIZE + recordsSize);
  batch.writeBigInt64BE(0n, BatchPos.BaseOffset);
  batch.writeInt32BE(batch.length - 12, BatchPos.BatchLength);
  batch.writeInt32BE(-1, BatchPos.PartitionLeaderEpoch);
  batch.writeInt8(2, BatchPos.Magic);
  batch.writeInt16BE(0, BatchPos.Attributes);
  batch.writeInt32BE(records.length - 1, BatchPos.LastOffsetDelta);
  batch.writeBigInt64BE(BigInt(timestampMs), BatchPos.BaseTimestamp);
  batch.writeBigInt64BE(BigInt(timestampMs), BatchPos.MaxTimestamp);
  batch.writeBigInt64BE(-1n, BatchPos.ProducerId);
  batch.writeInt16BE(-1, BatchPos.ProducerEpoch);
  batch.writeInt32BE(-1, BatchPos.BaseSequence);
  batch.writeInt32BE(records.length, BatchPos.RecordCount);
  let at = BATCH_HEADER_SIZE;
  for (const body of bodies) at += body.copy(batch, at);
  batch.writeUInt32BE(crc32c(batch.subarray(CRC_START)) >>> 0, BatchPos.Crc);
  return batch;
}

/** The records of one stored batch, with absolute offsets and timestamps. */
export function decodeStoredBatch(batch: Buffer): DecodedRecord[] {
  const header = readBatchHeader(batch, 0);
  if ((header.attributes & BatchAttr.CompressionMask) !== 0) {
    throw new RangeError('compressed batches cannot be decoded until protocol/records/record-batch.ts lands');
  }
  if (header.attributes & BatchAttr.Control) return [];
  const baseOffset = Number(header.baseOffset);
  const baseTimestamp = Number(header.baseTimestamp);
  const logAppendTime = header.attributes & BatchAttr.TimestampLogAppend ? Number(header.maxTimestamp) : null;
  const cursor = { at: BATCH_HEADER_SIZE };
  const out: DecodedRecord[] = [];
  for (let i = 0; i < header.recordCount; i++) {
    const length = readVarint(batch, cursor);
    const end = cursor.at + length;
    cursor.at += 1; // attributes
    const timestampDelta = readVarint(batch, cursor);
    const offsetDelta = readVarint(batch, cursor);
    const key = readBytes(batch, cursor);
    const value = readBytes(batch, cursor);
    const headerCount = readVarint(batch, cursor);
    const headers: RecordHeader[] = [];
    for (let h = 0; h < headerCount; h++) {
      const headerKey = readBytes(batch, cursor);
      headers.push({ key: headerKey ? headerKey.toString('utf8') : '', value: readBytes(batch, cursor) });
    }
    cursor.at = end;
    out.push({ offset: baseOffset + offsetDelta, timestamp: logAppendTime ?? baseTimestamp + timestampDelta, key, value, headers });
  }
  return out;
}

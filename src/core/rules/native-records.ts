import { buildBatch, decodeBatch, TimestampType, type RecordHeader } from '../../../protocol/records/record-batch.js';
import type { QueenMessage } from '../core.js';
import type { PlannedPush } from './dedup.js';
import { exactBytes, textFromExactBytes } from './exact-text.js';
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
export const TRACE_ID_HEADER = 'queen-trace-id';

export interface DecodedRecord {
  offset: number;
  timestamp: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: RecordHeader[];
}

/** One uncompressed v2 batch (baseOffset 0; the engine sets it) holding the given pushes in order. */
export function encodePushBatch(items: readonly Pick<PlannedPush, 'transactionId' | 'messageId' | 'payloadJson' | 'traceId'>[], timestampMs: number): Buffer {
  return buildBatch({
    records: items.map((item) => ({
      key: null,
      value: item.payloadJson,
      headers: [
        { key: TRANSACTION_ID_HEADER, value: exactBytes(item.transactionId) },
        { key: MESSAGE_ID_HEADER, value: item.messageId },
        ...(item.traceId === undefined ? [] : [{ key: TRACE_ID_HEADER, value: item.traceId }]),
      ],
      timestamp: timestampMs,
    })),
  });
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
  let traceId: string | null = null;
  const headers: RecordHeader[] = [];
  for (const header of record.headers) {
    if (header.key === TRANSACTION_ID_HEADER && header.value) transactionId = textFromExactBytes(header.value);
    else if (header.key === MESSAGE_ID_HEADER && header.value) messageId = header.value.toString('utf8');
    else if (header.key === TRACE_ID_HEADER && header.value) traceId = header.value.toString('utf8');
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
    traceId,
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

/** The records of one stored batch, with absolute offsets and timestamps (decompressed when need be). */
export function decodeStoredBatch(batch: Buffer): DecodedRecord[] {
  const decoded = decodeBatch(batch, 0);
  if (decoded.isControl) return [];
  const baseOffset = Number(decoded.header.baseOffset);
  const baseTimestamp = Number(decoded.header.baseTimestamp);
  const logAppendTime = decoded.timestampType === TimestampType.LogAppendTime ? Number(decoded.header.maxTimestamp) : null;
  return decoded.records.map((record) => ({
    offset: baseOffset + record.offsetDelta,
    timestamp: logAppendTime ?? baseTimestamp + record.timestampDelta,
    key: record.key,
    value: record.value,
    headers: record.headers,
  }));
}

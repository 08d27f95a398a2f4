import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import { buildBatch, decodeBatch, TimestampType, type RecordHeader } from '../../../protocol/records/record-batch.js';
import type { QueenMessage, UnreadableRange } from '../core.js';
import type { PlannedPush } from './dedup.js';
import { exactBytes, textFromExactBytes } from './exact-text.js';
import { kafkaRecordMessageId } from './uuidv7.js';
import { BATCH_HEADER_SIZE } from '../../../protocol/records/batch-header.js';
import { transactionalFlags } from './kafka-transactions.js';

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

/**
 * A stored record as a native consumer sees it. Key and header values are
 * copied out of the decoded batch, so a message kept across awaits does not
 * pin the whole stored or inflated batch it came from (up to the read limit).
 */
export function toQueenMessage(record: DecodedRecord, where: RecordLocation): QueenMessage {
  let transactionId: string | null = null;
  let messageId: string | null = null;
  let traceId: string | null = null;
  const headers: RecordHeader[] = [];
  for (const header of record.headers) {
    if (header.key === TRANSACTION_ID_HEADER && header.value) transactionId = textFromExactBytes(header.value);
    else if (header.key === MESSAGE_ID_HEADER && header.value) messageId = header.value.toString('utf8');
    else if (header.key === TRACE_ID_HEADER && header.value) traceId = header.value.toString('utf8');
    else headers.push({ key: header.key, value: header.value && Buffer.from(header.value) });
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
    key: record.key && Buffer.from(record.key),
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

/**
 * The records of one stored batch, with absolute offsets and timestamps
 * (inflated within `maxBytes` when compressed). Throws a DecodeError for a
 * batch that cannot be read.
 */
export function decodeStoredBatch(batch: Buffer, maxBytes: number): DecodedRecord[] {
  const decoded = decodeBatch(batch, 0, { maxBytes });
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

/**
 * Record bytes (keys, values, header values) one pop hands out at most; the
 * first message goes out whatever its size, so a pop always progresses. A
 * pop's JSON answer can be several times its record bytes (a binary value
 * escapes to up to six bytes a byte), so this keeps one pop's answer to tens
 * of megabytes rather than whatever `batch` times the largest record is.
 */
export const POP_MAX_RECORD_BYTES = 4 * 1024 * 1024;

/** A stored batch as a native reader walks the log. */
export interface StoredBatchRef {
  nextOffset: number;
  bytes: Buffer;
}

/**
 * One pop's messages from a partition, collected batch by batch from the
 * group's position, up to `limit` messages and POP_MAX_RECORD_BYTES. A batch nobody can decode is never a wall: met first, it
 * is passed over (recorded in `unreadable`, `position` moved past it, so the
 * engine moves the group there); met after some messages, it ends the pop, so
 * those go out first and the next pop passes over it. Produce refuses such
 * batches, so only an older version's writes or a disk fault leave one.
 */
export class PopCollector {
  readonly messages: QueenMessage[] = [];
  readonly unreadable: UnreadableRange[] = [];
  private recordBytes = 0;

  constructor(
    /** Where the group's records start; past any unreadable batch passed over. */
    public position: number,
    private readonly limit: number,
    private readonly where: RecordLocation,
    private readonly maxBytes: number,
    /** Records stamped later than this are not visible yet (Queen's delayed processing); the pop ends before them. */
    private readonly visibleUntil: number = Number.POSITIVE_INFINITY,
    /** Records the pop passes over without delivering (Queen's maxWaitTimeSeconds, completedRetentionSeconds). */
    private readonly expired: (offset: number, timestamp: number) => boolean = () => false,
  ) {}

  /** How many records were passed over as expired; the engine then stores the group's new position. */
  evicted = 0;

  /**
   * Takes the next stored batch; false once the pop is complete. A Kafka
   * transaction's marker (a control batch) and the batches of an aborted
   * transaction (`isAborted`, asked with the batch's producer id) hold no
   * message: met first, they are passed over like an unreadable batch; met
   * after some messages, they end the pop, so a lease always covers
   * consecutive offsets and its acks move the group's position over it.
   */
  take(batch: StoredBatchRef, isAborted?: (producerId: number) => boolean): boolean {
    if (batch.nextOffset <= this.position) return true;
    if (batch.bytes.length >= BATCH_HEADER_SIZE) {
      const flags = transactionalFlags(batch.bytes);
      if (flags.control || (flags.transactional && isAborted?.(flags.producerId) === true)) {
        if (this.messages.length > 0) return false;
        this.position = batch.nextOffset;
        return true;
      }
    }
    let records: DecodedRecord[];
    try {
      records = decodeStoredBatch(batch.bytes, this.maxBytes);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      if (this.messages.length > 0) return false;
      this.unreadable.push({ partition: this.where.partition, fromOffset: this.position, toOffset: batch.nextOffset, reason: e.message });
      this.position = batch.nextOffset;
      return true;
    }
    for (const record of records) {
      if (record.offset < this.position) continue;
      if (record.timestamp > this.visibleUntil) return false;
      if (this.expired(record.offset, record.timestamp)) {
        // After some messages it ends the pop, so a lease covers consecutive offsets; the next pop passes it over.
        if (this.messages.length > 0) return false;
        this.position = record.offset + 1;
        this.evicted += 1;
        continue;
      }
      this.messages.push(toQueenMessage(record, this.where));
      this.recordBytes += (record.key?.length ?? 0) + (record.value?.length ?? 0) + record.headers.reduce((n, h) => n + h.key.length + (h.value?.length ?? 0), 0);
      if (this.messages.length === this.limit || this.recordBytes >= POP_MAX_RECORD_BYTES) return false;
    }
    return true;
  }
}

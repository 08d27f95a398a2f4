import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import { BatchAttr, BatchPos, CRC_START, setBaseOffset } from '../../../protocol/records/batch-header.js';
import { InvalidBatchError, validateBatches, type BatchRule, type ValidBatch } from '../../../protocol/records/record-batch.js';
import { crc32c } from '../../../protocol/records/crc32c.js';
import type { AppendError, QueueConfig } from '../core.js';
import type { SequencedBatch } from './producer-window.js';

/**
 * What the core needs from an append's record batches, read from their
 * headers alone: the records are never decoded here. The gateway has already
 * checked them; the core checks again, because the RPC transport or a bug
 * upstream could hand it anything, and a stored batch is forever.
 */

export interface IncomingBatch extends SequencedBatch {
  /** Where the batch lies in the append's `records` buffer. */
  start: number;
  end: number;
  size: number;
  /** Offsets the batch takes: lastOffsetDelta + 1. */
  offsetCount: number;
  recordCount: number;
  baseTimestamp: number;
  maxTimestamp: number;
  attributes: number;
  isTransactional: boolean;
}

export type ParsedAppend =
  | { ok: true; batches: IncomingBatch[] }
  | { ok: false; error: AppendError; message: string; batchIndex?: number };

const CORRUPT_RULES: ReadonlySet<BatchRule> = new Set(['header', 'magic', 'length', 'crc']);

function ruleError(rule: BatchRule): AppendError {
  if (rule === 'compression') return 'unsupported_compression';
  return CORRUPT_RULES.has(rule) ? 'corrupt_message' : 'invalid_record';
}

/**
 * Checks an append's batches by Kafka's rules for produced batches (one
 * validator for the gateway and the core: protocol/records) and reads what
 * decides offsets and producer state from their headers.
 */
/** The queue settings an append is checked against. */
export type AppendRules = Pick<QueueConfig, 'maxMessageBytes' | 'timestampType' | 'timestampBeforeMaxMs' | 'timestampAfterMaxMs'>;

/** Kafka's "no timestamp" (-1), which the timestamp rules let through. */
const NO_TIMESTAMP = -1;

/**
 * Kafka's timestamp rules (message.timestamp.before.max.ms and
 * .after.max.ms) for a CreateTime queue, held to the batch's first and
 * largest timestamps as its header gives them: the records are not decoded
 * here, so a record inside a batch with an earlier timestamp than the first
 * is not seen (producers write records in time order).
 */
function timestampProblem(batch: { baseTimestamp: number; maxTimestamp: number }, rules: AppendRules, now: number): string | null {
  if (rules.timestampType !== 'CreateTime') return null;
  for (const ts of [batch.baseTimestamp, batch.maxTimestamp]) {
    if (ts === NO_TIMESTAMP) continue;
    if (now - ts > rules.timestampBeforeMaxMs || ts - now > rules.timestampAfterMaxMs) {
      return `Timestamp ${ts} is out of range: the topic takes timestamps from ${now - rules.timestampBeforeMaxMs} to ${now + rules.timestampAfterMaxMs} (message.timestamp.before.max.ms, message.timestamp.after.max.ms). Fix the producer's clock or timestamps, or widen those topic configs.`;
    }
  }
  return null;
}

export function parseAppendRecords(records: Buffer, rules: AppendRules, now: number): ParsedAppend {
  const { maxMessageBytes } = rules;
  if (!Buffer.isBuffer(records) || records.length === 0) {
    return { ok: false, error: 'corrupt_message', message: 'The append carries no record batch.' };
  }
  let valid: ValidBatch[];
  try {
    valid = validateBatches(records);
  } catch (e) {
    if (e instanceof InvalidBatchError) {
      return { ok: false, error: ruleError(e.rule), message: `Record batch ${e.batchIndex} was refused: ${e.message}.`, batchIndex: e.batchIndex };
    }
    if (e instanceof DecodeError) return { ok: false, error: 'corrupt_message', message: `The record batches do not hold together: ${e.message}.` };
    throw e;
  }
  const batches: IncomingBatch[] = [];
  for (const { start, end, header, isTransactional } of valid) {
    const size = end - start;
    if (size > maxMessageBytes) {
      return { ok: false, error: 'message_too_large', message: `A record batch of ${size} bytes exceeds the queue's maxMessageBytes of ${maxMessageBytes}.` };
    }
    const timestamps = { baseTimestamp: Number(header.baseTimestamp), maxTimestamp: Number(header.maxTimestamp) };
    const outOfRange = timestampProblem(timestamps, rules, now);
    if (outOfRange) return { ok: false, error: 'invalid_timestamp', message: outOfRange, batchIndex: batches.length };
    batches.push({
      start,
      end,
      size,
      offsetCount: header.lastOffsetDelta + 1,
      recordCount: header.recordCount,
      lastOffsetDelta: header.lastOffsetDelta,
      baseTimestamp: Number(header.baseTimestamp),
      maxTimestamp: Number(header.maxTimestamp),
      attributes: header.attributes,
      isTransactional,
      producerId: Number(header.producerId),
      producerEpoch: header.producerEpoch,
      baseSequence: header.baseSequence,
    });
  }
  return { ok: true, batches };
}

/**
 * One incoming batch as it is stored, with its baseOffset set. For a
 * LogAppendTime queue Kafka also stamps the append time as the batch's max
 * timestamp and flags it in the attributes; both lie inside the CRC, so the
 * CRC is recomputed. With `inPlace` (bytes handed over, see
 * AppendRequest.recordsHandedOver) the batch is rewritten where it lies and
 * a view of it returned, as Kafka's broker assigns offsets in the request's
 * own buffer; otherwise it is a copy that shares no memory with the caller's.
 */
export function prepareForStorage(records: Buffer, batch: IncomingBatch, baseOffset: number, logAppendTime: number | null, inPlace: boolean): Buffer {
  let stored: Buffer;
  if (inPlace) stored = records.subarray(batch.start, batch.end);
  else {
    stored = Buffer.allocUnsafe(batch.size);
    records.copy(stored, 0, batch.start, batch.end);
  }
  setBaseOffset(stored, 0, baseOffset);
  if (logAppendTime !== null) {
    stored.writeInt16BE(batch.attributes | BatchAttr.TimestampLogAppend, BatchPos.Attributes);
    stored.writeBigInt64BE(BigInt(logAppendTime), BatchPos.MaxTimestamp);
    stored.writeUInt32BE(crc32c(stored.subarray(CRC_START)), BatchPos.Crc);
  }
  return stored;
}

/**
 * Whether an append's handed-over records may be kept where they lie: only
 * when they fill at least half of the memory they sit in, so a few small
 * batches never pin a large read buffer (they are copied instead).
 */
export function keepInPlace(request: { partitions: { records: Buffer }[]; recordsHandedOver?: boolean }): boolean {
  if (request.recordsHandedOver !== true) return false;
  let records = 0;
  const backing = new Set<ArrayBufferLike>();
  let memory = 0;
  for (const { records: r } of request.partitions) {
    records += r.length;
    if (!backing.has(r.buffer)) {
      backing.add(r.buffer);
      memory += r.buffer.byteLength;
    }
  }
  return records * 2 >= memory;
}

/** The offset after a batch: its baseOffset plus the offsets it takes. */
export function nextOffsetOf(baseOffset: number, batch: Pick<IncomingBatch, 'offsetCount'>): number {
  return baseOffset + batch.offsetCount;
}

import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import { BatchAttr, BatchPos, CRC_START, setBaseOffset } from '../../../protocol/records/batch-header.js';
import { InvalidBatchError, validateBatches, type BatchRule, type ValidBatch } from '../../../protocol/records/record-batch.js';
import { crc32c } from '../../../protocol/records/crc32c.js';
import type { AppendError } from '../core.js';
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
export function parseAppendRecords(records: Buffer, maxMessageBytes: number): ParsedAppend {
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
 * The leader epoch of every partition here: one leader, never re-elected
 * (Metadata and ListOffsets answer 0 too). Kafka's leader stamps its epoch
 * into each batch it appends, whatever the producer put there.
 */
export const PARTITION_LEADER_EPOCH = 0;

/**
 * One incoming batch as it is stored, with its baseOffset and partition
 * leader epoch set (both outside the CRC). For a
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
  stored.writeInt32BE(PARTITION_LEADER_EPOCH, BatchPos.PartitionLeaderEpoch);
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

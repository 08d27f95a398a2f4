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
 * A copy of one incoming batch for storage, with its baseOffset set. For a
 * LogAppendTime queue Kafka also stamps the append time as the batch's max
 * timestamp and flags it in the attributes; both lie inside the CRC, so the
 * CRC is recomputed. The copy never shares memory with the caller's buffer,
 * which the gateway reuses.
 */
export function copyForStorage(records: Buffer, batch: IncomingBatch, baseOffset: number, logAppendTime: number | null): Buffer {
  const stored = Buffer.allocUnsafe(batch.size);
  records.copy(stored, 0, batch.start, batch.end);
  setBaseOffset(stored, 0, baseOffset);
  if (logAppendTime !== null) {
    stored.writeInt16BE(batch.attributes | BatchAttr.TimestampLogAppend, BatchPos.Attributes);
    stored.writeBigInt64BE(BigInt(logAppendTime), BatchPos.MaxTimestamp);
    stored.writeUInt32BE(crc32c(stored.subarray(CRC_START)), BatchPos.Crc);
  }
  return stored;
}

/** The offset after a batch: its baseOffset plus the offsets it takes. */
export function nextOffsetOf(baseOffset: number, batch: Pick<IncomingBatch, 'offsetCount'>): number {
  return baseOffset + batch.offsetCount;
}

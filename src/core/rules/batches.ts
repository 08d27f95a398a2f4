import { crc32c } from '@node-rs/crc32';
import {
  BATCH_HEADER_SIZE,
  BatchAttr,
  BatchPos,
  CRC_START,
  readBatchHeader,
  setBaseOffset,
  splitBatches,
} from '../../../protocol/records/batch-header.js';
import type { AppendError } from '../core.js';
import type { SequencedBatch } from './producer-window.js';

/**
 * What the core needs from an append's record batches, read from their
 * headers alone: the records are never decoded here. The gateway has already
 * checked framing and CRC; the core re-checks only what decides offsets and
 * producer state, because the RPC transport or a bug upstream could hand it
 * anything.
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
  | { ok: false; error: AppendError; message: string };

export function parseAppendRecords(records: Buffer, maxMessageBytes: number): ParsedAppend {
  if (!Buffer.isBuffer(records) || records.length === 0) {
    return { ok: false, error: 'corrupt_message', message: 'The append carries no record batch.' };
  }
  let spans: { start: number; end: number }[];
  try {
    spans = splitBatches(records);
  } catch (e) {
    return { ok: false, error: 'corrupt_message', message: `The record batches do not hold together: ${(e as Error).message}.` };
  }
  const batches: IncomingBatch[] = [];
  for (const { start, end } of spans) {
    const size = end - start;
    if (size < BATCH_HEADER_SIZE) {
      return { ok: false, error: 'corrupt_message', message: `A record batch of ${size} bytes is shorter than the ${BATCH_HEADER_SIZE}-byte v2 header.` };
    }
    const header = readBatchHeader(records, start);
    if (header.magic !== 2) {
      return { ok: false, error: 'corrupt_message', message: `Record batch magic ${header.magic} is not supported; only v2 (magic 2) batches are accepted.` };
    }
    if (size > maxMessageBytes) {
      return { ok: false, error: 'message_too_large', message: `A record batch of ${size} bytes exceeds the queue's maxMessageBytes of ${maxMessageBytes}.` };
    }
    if (header.lastOffsetDelta < 0 || header.recordCount < 1) {
      return { ok: false, error: 'invalid_record', message: `A record batch claims ${header.recordCount} records and last offset delta ${header.lastOffsetDelta}; a batch needs at least one record.` };
    }
    if (header.attributes & BatchAttr.Control) {
      return { ok: false, error: 'invalid_record', message: 'Producers may not write control batches; the core writes transaction markers itself.' };
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
      isTransactional: (header.attributes & BatchAttr.Transactional) !== 0,
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
    stored.writeUInt32BE(crc32c(stored.subarray(CRC_START)) >>> 0, BatchPos.Crc);
  }
  return stored;
}

/** The offset after a batch: its baseOffset plus the offsets it takes. */
export function nextOffsetOf(baseOffset: number, batch: Pick<IncomingBatch, 'offsetCount'>): number {
  return baseOffset + batch.offsetCount;
}

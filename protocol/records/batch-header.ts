import { DecodeError } from '../primitives/decode-error.js';

/**
 * The fixed 61-byte header of a RecordBatch v2 (magic 2), read at known
 * positions without touching the records. This is all Produce and Fetch look
 * at on the hot path.
 *
 *   0 baseOffset int64        8 batchLength int32      12 partitionLeaderEpoch int32
 *  16 magic int8             17 crc uint32             21 attributes int16
 *  23 lastOffsetDelta int32  27 baseTimestamp int64    35 maxTimestamp int64
 *  43 producerId int64       51 producerEpoch int16    53 baseSequence int32
 *  57 recordCount int32      61 records...
 *
 * batchLength counts the bytes after itself; the CRC-32C covers attributes to the end.
 */
export const BATCH_HEADER_SIZE = 61;
/** Bytes before batchLength's count begins (baseOffset + batchLength). */
export const BATCH_LENGTH_PREFIX = 12;
export const CRC_START = 21;

export const BatchPos = {
  BaseOffset: 0,
  BatchLength: 8,
  PartitionLeaderEpoch: 12,
  Magic: 16,
  Crc: 17,
  Attributes: 21,
  LastOffsetDelta: 23,
  BaseTimestamp: 27,
  MaxTimestamp: 35,
  ProducerId: 43,
  ProducerEpoch: 51,
  BaseSequence: 53,
  RecordCount: 57,
} as const;

export const BatchAttr = {
  CompressionMask: 0x07,
  TimestampLogAppend: 0x08,
  Transactional: 0x10,
  Control: 0x20,
  DeleteHorizon: 0x40,
} as const;

export interface BatchHeader {
  baseOffset: bigint;
  batchLength: number;
  partitionLeaderEpoch: number;
  magic: number;
  crc: number;
  attributes: number;
  lastOffsetDelta: number;
  baseTimestamp: bigint;
  maxTimestamp: bigint;
  producerId: bigint;
  producerEpoch: number;
  baseSequence: number;
  recordCount: number;
}

export function readBatchHeader(buf: Buffer, at = 0): BatchHeader {
  if (buf.length - at < BATCH_HEADER_SIZE) {
    throw new DecodeError(`record batch header needs ${BATCH_HEADER_SIZE} bytes, ${buf.length - at} left`, at);
  }
  return {
    baseOffset: buf.readBigInt64BE(at + BatchPos.BaseOffset),
    batchLength: buf.readInt32BE(at + BatchPos.BatchLength),
    partitionLeaderEpoch: buf.readInt32BE(at + BatchPos.PartitionLeaderEpoch),
    magic: buf.readInt8(at + BatchPos.Magic),
    crc: buf.readUInt32BE(at + BatchPos.Crc),
    attributes: buf.readInt16BE(at + BatchPos.Attributes),
    lastOffsetDelta: buf.readInt32BE(at + BatchPos.LastOffsetDelta),
    baseTimestamp: buf.readBigInt64BE(at + BatchPos.BaseTimestamp),
    maxTimestamp: buf.readBigInt64BE(at + BatchPos.MaxTimestamp),
    producerId: buf.readBigInt64BE(at + BatchPos.ProducerId),
    producerEpoch: buf.readInt16BE(at + BatchPos.ProducerEpoch),
    baseSequence: buf.readInt32BE(at + BatchPos.BaseSequence),
    recordCount: buf.readInt32BE(at + BatchPos.RecordCount),
  };
}

/**
 * Rewrites a stored batch's baseOffset in place. baseOffset lies outside the
 * CRC, so the batch stays valid.
 */
export function setBaseOffset(buf: Buffer, at: number, baseOffset: number | bigint): void {
  buf.writeBigInt64BE(BigInt(baseOffset), at + BatchPos.BaseOffset);
}

/** Total size of the batch starting at `at` (header included), from its batchLength. */
export function batchSize(buf: Buffer, at = 0): number {
  return BATCH_LENGTH_PREFIX + buf.readInt32BE(at + BatchPos.BatchLength);
}

/**
 * Splits back-to-back batches into [start, end) spans without decoding them.
 * Throws a DecodeError when a length runs past the end or a batch is shorter
 * than its header.
 */
export function splitBatches(buf: Buffer): { start: number; end: number }[] {
  const spans: { start: number; end: number }[] = [];
  let at = 0;
  while (at < buf.length) {
    if (buf.length - at < BATCH_LENGTH_PREFIX + 5) {
      throw new DecodeError(`trailing ${buf.length - at} bytes are too short to hold a record batch`, at);
    }
    const length = buf.readInt32BE(at + BatchPos.BatchLength);
    const end = at + BATCH_LENGTH_PREFIX + length;
    if (length < BATCH_HEADER_SIZE - BATCH_LENGTH_PREFIX && buf.readInt8(at + BatchPos.Magic) === 2) {
      throw new DecodeError(`record batch length ${length} is shorter than a v2 batch header`, at);
    }
    if (length < 0 || end > buf.length) {
      throw new DecodeError(`record batch length ${length} runs past the ${buf.length - at} bytes left`, at);
    }
    spans.push({ start: at, end });
    at = end;
  }
  return spans;
}

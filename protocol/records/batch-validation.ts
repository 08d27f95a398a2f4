/**
 * Validation is the Produce path: it checks what Kafka's broker checks
 * (LogValidator) before anything is stored: the fixed header, the framing,
 * the CRC-32C, the header's rules, and then (record-walk.ts) every record.
 */
import { BATCH_HEADER_SIZE, BATCH_LENGTH_PREFIX, BatchAttr, BatchPos, CRC_START, readBatchHeader, type BatchHeader } from './batch-header.js';
import { MIN_RECORD_SIZE, RECORD_BATCH_MAGIC, splitAttributes } from './batch-attributes.js';
import { CompressionCodec, isCompressionCodec } from './compression.js';
import { crc32c } from './crc32c.js';
import { InvalidBatchError, type BatchRules, type ValidBatch } from './invalid-batch.js';
import { readBatchRecords } from './record-walk.js';

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

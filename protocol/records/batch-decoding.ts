/** Decoding (for native readers, tests and the bridge): validation, then the record walk keeping what it reads. */
import { DEFAULT_DECOMPRESSION_BUDGET, inflationBudget } from './compression.js';
import type { BatchRules, ValidBatch } from './invalid-batch.js';
import { readBatchRecords, type BatchRecord } from './record-walk.js';
import { validateBatch } from './batch-validation.js';

export interface DecodedBatch extends ValidBatch {
  records: BatchRecord[];
}

export interface DecodeBatchOptions extends BatchRules {
  /** Ceiling on the decompressed records of one batch. */
  maxBytes?: number;
}

/**
 * Fully decodes the batch at `at`: validation as above (with `fromClient`
 * false unless asked, since decoded batches usually come from storage), then
 * every record. Key, value and header values are views into the input or the
 * decompressed buffer.
 */
export function decodeBatch(buf: Buffer, at = 0, options: DecodeBatchOptions = {}): DecodedBatch {
  const fromClient = options.fromClient ?? false;
  const batch = validateBatch(buf, at, { fromClient });
  const maxBytes = options.maxBytes ?? DEFAULT_DECOMPRESSION_BUDGET;
  const { records, maxTimestampDelta } = readBatchRecords(buf, batch, inflationBudget(maxBytes, maxBytes), fromClient, true);
  return { ...batch, recordsMaxTimestamp: batch.header.baseTimestamp + BigInt(maxTimestampDelta), records: records! };
}

/** Decodes back-to-back batches covering the whole buffer. */
export function decodeBatches(buf: Buffer, options: DecodeBatchOptions = {}): DecodedBatch[] {
  const batches: DecodedBatch[] = [];
  for (let at = 0; at < buf.length; ) {
    const batch = decodeBatch(buf, at, options);
    batches.push(batch);
    at = batch.end;
  }
  return batches;
}

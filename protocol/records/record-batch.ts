/**
 * RecordBatch v2 (magic 2): validate, decode and build.
 *
 * Validation is the Produce path, and it checks what Kafka's broker checks
 * (LogValidator) before anything is stored: the fixed header, the framing,
 * the CRC-32C, the header's rules, and then every record: its length, the
 * varint lengths of key, value and headers inside it, offset deltas 0..n-1,
 * the record count, no bytes after the last record. A compressed batch is
 * inflated to do so, within an InflationBudget. So whatever is stored can be
 * decoded by every reader. The walk allocates nothing per record: the batch
 * is stored as received, never re-encoded.
 *
 * Decoding (for native readers, tests and the bridge) runs the same record
 * walk and keeps what it reads: key, value and header values are views into
 * the input or the inflated buffer.
 *
 * The pieces live in files by job, re-exported here as one module:
 * batch-attributes.ts (constants and attribute bits), invalid-batch.ts (the
 * rules a batch can break), batch-validation.ts, record-walk.ts (the record
 * rules), batch-decoding.ts, batch-building.ts, control-batch.ts.
 */
export {
  MIN_RECORD_SIZE,
  NO_PARTITION_LEADER_EPOCH,
  NO_PRODUCER_EPOCH,
  NO_PRODUCER_ID,
  NO_SEQUENCE,
  NO_TIMESTAMP,
  RECORD_BATCH_MAGIC,
  TimestampType,
  joinAttributes,
  splitAttributes,
  type BatchAttributes,
} from './batch-attributes.js';
export { InvalidBatchError, type BatchRule, type BatchRules, type ValidBatch } from './invalid-batch.js';
export { validateBatch, validateBatches } from './batch-validation.js';
export type { BatchRecord, RecordHeader } from './record-walk.js';
export { decodeBatch, decodeBatches, type DecodeBatchOptions, type DecodedBatch } from './batch-decoding.js';
export { buildBatch, rebuildBatch, type BuildBatchOptions, type Bytes, type RecordInput } from './batch-building.js';
export { ControlRecordType, buildControlBatch, decodeControlRecord, type ControlBatchOptions, type ControlRecord } from './control-batch.js';

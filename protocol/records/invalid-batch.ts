/** How a batch fails its checks, and what a batch that passed them is. */
import { DecodeError } from '../primitives/decode-error.js';
import type { BatchHeader } from './batch-header.js';
import type { BatchAttributes } from './batch-attributes.js';
import type { InflationBudget } from './compression.js';

/** Which check a batch failed, so a Produce handler can pick Kafka's error code. */
export type BatchRule =
  | 'header' // too short to hold the fixed header
  | 'magic' // not a v2 batch
  | 'length' // batchLength disagrees with the bytes present
  | 'crc' // CRC-32C mismatch (Kafka: CORRUPT_MESSAGE)
  | 'compression' // unknown codec
  | 'record-count' // count negative, zero, or more than the bytes can hold
  | 'offset-range' // lastOffsetDelta disagrees with the count
  | 'control' // a client sent a control batch
  | 'sequence' // an idempotent batch without a base sequence
  | 'producer' // a transactional batch without a producer id
  | 'compressed' // the compressed records do not inflate (Kafka: CORRUPT_MESSAGE)
  | 'inflated-size' // the records inflate past the budget (Kafka's nearest: MESSAGE_TOO_LARGE)
  | 'record'; // a record breaks Kafka's record rules (Kafka: INVALID_RECORD); recordIndex says which

export class InvalidBatchError extends DecodeError {
  readonly rule: BatchRule;
  /** The refused batch's ordinal among back-to-back batches (validateBatches), or -1. */
  batchIndex = -1;
  /** For rule 'record': the failing record's ordinal inside its batch (Kafka's RecordError batch_index). */
  readonly recordIndex: number;

  constructor(rule: BatchRule, message: string, position: number, recordIndex = -1) {
    super(message, position);
    this.rule = rule;
    this.recordIndex = recordIndex;
  }
}

export interface BatchRules {
  /**
   * Apply Kafka's rules for batches a producer sends (LogValidator): at least
   * one record, lastOffsetDelta + 1 equal to the count, no control batches, a
   * base sequence when there is a producer id. Default true. Turn off for
   * batches copied from a Kafka log, where compaction leaves fewer records than
   * the offset range and control batches are legitimate.
   */
  fromClient?: boolean;
  /**
   * Walk every record too (Kafka's per-record rules), inflating a compressed
   * batch within this budget and drawing what it inflated from the request's
   * share. Absent: the header and CRC only.
   */
  records?: InflationBudget;
}

export interface ValidBatch extends BatchAttributes {
  /** The batch occupies [start, end) of the buffer. */
  start: number;
  end: number;
  header: BatchHeader;
  /**
   * The largest record timestamp, when the records were walked: what Kafka's
   * broker stores as the batch's maxTimestamp, whatever the producer wrote there.
   */
  recordsMaxTimestamp: bigint | null;
  /** When the records were walked: the ordinal of the first record without a key, or -1 when every record has one. */
  firstKeylessRecord: number;
}

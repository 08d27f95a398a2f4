/** The Core interface (../core.ts), copies at given offsets (the migration bridge): requests and results, plain data. */
import type { PartitionRef } from './log.js';

export interface AppendAtPartition extends PartitionRef {
  /**
   * Kafka RecordBatch v2 batches, back to back, each carrying its own
   * absolute baseOffset in ascending order: records copied from another log,
   * stored at exactly those offsets. Offset deltas inside a batch may leave
   * gaps and batches may leave gaps between them (compaction, aborted
   * transactions in the source); control batches are refused. May be empty
   * when only `endOffset` is given.
   */
  records: Buffer;
  /**
   * After the records the partition's next offset is at least this: the
   * source's end, when it ends in offsets no record holds (a transaction
   * marker, a compacted tail), so a consumer's position there is valid here.
   */
  endOffset?: number;
}

export interface AppendAtRequest {
  partitions: AppendAtPartition[];
}

export type AppendAtError =
  | 'unknown_queue'
  | 'unknown_partition'
  /** The first offset is below the partition's next offset: that part of the log is written already; nothing was written. */
  | 'already_there'
  | 'message_too_large'
  | 'corrupt_message'
  | 'unsupported_compression'
  | 'invalid_record';

export interface AppendAtPartitionResult extends PartitionRef {
  error: AppendAtError | null;
  errorMessage?: string;
  /** The partition's next offset (high watermark) after the call, written or not. */
  nextOffset: number;
}

export interface AppendAtResult {
  partitions: AppendAtPartitionResult[];
}

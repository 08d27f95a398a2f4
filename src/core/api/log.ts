/** The Core interface (../core.ts), the log: append, read, offsets, timestamps, deleting records: requests and results, plain data. */

export interface PartitionRef {
  queue: string;
  partition: number;
}

export interface AppendPartition extends PartitionRef {
  /**
   * One or more Kafka RecordBatch v2 (magic 2) batches, back to back, as the
   * producer sent them. The core checks them (framing, CRC and every record:
   * rules/batches.ts; the gateway checks nothing of them), assigns offsets,
   * rewrites baseOffset and the partition leader epoch (0, the only one here;
   * both outside the CRC), corrects a wrong maxTimestamp as Kafka's broker
   * does (recomputing the CRC), and stores the bytes otherwise verbatim.
   */
  records: Buffer;
}

export interface AppendRequest {
  partitions: AppendPartition[];
  /**
   * Identifies this call for non-idempotent producers so that a retry of the
   * same call (after an RPC timeout) answers the first result and appends
   * nothing. Recorded in a bounded ledger in the same transaction as the append.
   */
  requestId?: string;
  /**
   * The caller hands the partitions' `records` over: it will never read,
   * reuse or change those bytes again, and no two partitions share them. An
   * engine may then keep them as they are, writing the assigned offsets in
   * place, instead of copying each batch (the gateway's Produce frames and
   * the RPC server's request frames qualify; a caller that keeps its Buffer
   * must leave this unset).
   */
  recordsHandedOver?: boolean;
}

export type AppendError =
  | 'unknown_queue'
  | 'unknown_partition'
  | 'out_of_order_sequence'   // Kafka 45: a gap in the producer's sequence
  | 'invalid_producer_epoch'  // Kafka 47: a lower epoch than the partition has seen
  | 'unknown_producer_id'     // Kafka 59
  | 'message_too_large'       // Kafka 10
  | 'corrupt_message'         // Kafka 2: the batch framing does not hold together
  | 'unsupported_compression' // Kafka 76: a codec that does not exist
  | 'invalid_record'          // Kafka 87
  | 'invalid_timestamp'       // Kafka 32: a CreateTime outside the queue's timestamp rules
  | 'invalid_txn_state';      // Kafka 48: a transactional batch for a partition not in the producer's open transaction

export interface AppendPartitionResult extends PartitionRef {
  error: AppendError | null;
  /** Human-readable detail when `error` is set. */
  errorMessage?: string;
  /**
   * When one record broke a rule: its ordinal inside its batch (Kafka's
   * RecordError batch_index, which counts records) and what was wrong with it.
   */
  recordError?: { index: number; message: string };
  /** Offset of the first record appended, or of the original append for an exact resend. */
  baseOffset: number;
  /** Broker time of the append for LogAppendTime queues, else -1. */
  logAppendTime: number;
  logStartOffset: number;
  /** True when the batch was an exact resend and nothing was written. */
  duplicate: boolean;
}

export interface AppendResult {
  partitions: AppendPartitionResult[];
}

export type IsolationLevel = 'read_uncommitted' | 'read_committed';

export interface ReadPartition extends PartitionRef {
  fetchOffset: number;
  /** Byte limit for this partition; at least one whole batch is returned regardless. */
  maxBytes: number;
}

export interface ReadRequest {
  partitions: ReadPartition[];
  /** Resolve as soon as this many bytes are available across all partitions. */
  minBytes: number;
  /** Resolve by this long after the call even when minBytes is not reached. */
  maxWaitMs: number;
  /** Byte limit for the whole answer; the first batch is returned regardless. */
  maxBytes: number;
  isolation: IsolationLevel;
}

export type ReadError = 'unknown_queue' | 'unknown_partition' | 'offset_out_of_range';

export interface AbortedTransaction {
  producerId: number;
  firstOffset: number;
}

export interface ReadPartitionResult extends PartitionRef {
  error: ReadError | null;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  /** Stored batches, each verbatim with its assigned baseOffset and leader epoch 0. */
  batches: Buffer[];
  abortedTransactions: AbortedTransaction[];
}

export interface ReadResult {
  partitions: ReadPartitionResult[];
}

export interface PartitionOffsets extends PartitionRef {
  logStartOffset: number;
  highWatermark: number;
  lastStableOffset: number;
}

/** Bytes a partition's log holds: its stored batches, as written (Kafka's DescribeLogDirs size); -1 with an error. */
export interface PartitionSize extends PartitionRef {
  error: ReadError | null;
  bytes: number;
}

/** Kafka's special timestamps for ListOffsets. */
export const LATEST_TIMESTAMP = -1;
export const EARLIEST_TIMESTAMP = -2;
export const MAX_TIMESTAMP = -3;

export interface OffsetForTimestampRequest extends PartitionRef {
  /** A time in ms, or LATEST_TIMESTAMP, EARLIEST_TIMESTAMP, MAX_TIMESTAMP. */
  timestamp: number;
  isolation: IsolationLevel;
}

export interface OffsetForTimestampResult extends PartitionRef {
  /** -1 when no record has a timestamp at or after the one asked for. */
  offset: number;
  timestamp: number;
}

export interface DeleteRecordsRequest extends PartitionRef {
  /** Records before this offset go; -1 means the high watermark. */
  beforeOffset: number;
}

export interface DeleteRecordsResult extends PartitionRef {
  lowWatermark: number;
}

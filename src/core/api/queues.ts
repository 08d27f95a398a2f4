/** The Core interface (../core.ts), queues: creating, describing and configuring them: requests and results, plain data. */

export type TimestampType = 'CreateTime' | 'LogAppendTime';

export interface QueueConfig {
  /** Dedup window for native pushes; 0 turns the check off. Default 3600. */
  dedupWindowSeconds: number;
  /** -1 = keep forever. */
  retentionMs: number;
  /** Per partition; -1 = no limit. */
  retentionBytes: number;
  /**
   * Largest record batch (and native payload) accepted, in bytes. Kafka's
   * 1,048,588 for Kafka topics; no limit in practice for a queue made
   * natively without one (rules/config.ts, NATIVE_MAX_MESSAGE_BYTES).
   */
  maxMessageBytes: number;
  timestampType: TimestampType;
  /**
   * Kafka's timestamp rules for CreateTime queues: a batch whose timestamps lie
   * more than this far before (after) the time of append is refused with
   * invalid_timestamp. Kafka 4's defaults: no limit before, one hour after.
   */
  timestampBeforeMaxMs: number;
  timestampAfterMaxMs: number;
  /** Lease length for native pops. */
  leaseMs: number;
  /**
   * Kafka topic configs set on the topic, by name, as the gateway normalized
   * them. The core keeps them (so DescribeConfigs can tell a set value from a
   * default) and acts on none: keys that take effect are mirrored into the
   * settings above by the gateway.
   */
  topicConfigs: Readonly<Record<string, string>>;
  /**
   * Native consume: how many times a message acked `failed` is delivered
   * again before it moves to the dead-letter queue (Queen's retryLimit).
   */
  retryLimit: number;
  /** Native consume: a message is popped only once it is this old (Queen's delayedProcessing). */
  delayedProcessingMs: number;
  /** Native consume: a partition is popped only once it has had no new record for this long (Queen's windowBuffer). */
  windowBufferMs: number;
  /**
   * Native consume: a message that has waited longer than this since it was
   * stored (its record timestamp) is passed over by a pop, never delivered
   * (Queen's maxWaitTimeSeconds); 0: no limit. Kafka readers still see it.
   */
  maxWaitMs: number;
  /**
   * Native consume: a group with no position yet on a partition starts past
   * the records older than this that every other group has consumed (Queen's
   * completedRetentionSeconds deletes them); 0: it starts at the log start.
   */
  completedRetentionMs: number;
  /**
   * A Kafka topic: its producers pick partitions by count, so a native push
   * never adds one (../core/rules/push-routing.ts). Set for the topics the
   * gateway creates.
   */
  fixedPartitionCount: boolean;
  /**
   * Log compaction (Kafka's cleanup.policy=compact): a background compactor
   * keeps the latest record per key. Null: no compaction.
   */
  compaction: CompactionSettings | null;
}

/** How a compacted queue is compacted: Kafka's topic configs of the same names. */
export interface CompactionSettings {
  /** How long a tombstone (null value) stays once compaction has kept it as its key's latest record. */
  deleteRetentionMs: number;
  /** A record younger than this (by its batch's append time) is not compacted yet. */
  minCompactionLagMs: number;
  /** A record older than this is compacted whatever the dirty ratio (and leaves the active tail). */
  maxCompactionLagMs: number;
  /** Compaction runs once this share of the cleanable log's bytes has not been compacted yet. */
  minCleanableDirtyRatio: number;
  /**
   * The active tail, Kafka's active segment, is never compacted: the newest
   * batches, at most segmentBytes of them, appended within segmentMs.
   */
  segmentBytes: number;
  segmentMs: number;
}

export const DEFAULT_QUEUE_CONFIG: Readonly<QueueConfig> = Object.freeze({
  dedupWindowSeconds: 3600,
  retentionMs: 7 * 24 * 3600 * 1000,
  retentionBytes: -1,
  maxMessageBytes: 1024 * 1024 + 12,
  timestampType: 'CreateTime',
  timestampBeforeMaxMs: Number.MAX_SAFE_INTEGER,
  timestampAfterMaxMs: 3_600_000,
  leaseMs: 30_000,
  topicConfigs: Object.freeze({}),
  retryLimit: 3,
  delayedProcessingMs: 0,
  windowBufferMs: 0,
  maxWaitMs: 0,
  completedRetentionMs: 0,
  fixedPartitionCount: false,
  compaction: null,
});

export interface PartitionInfo {
  /** The partition's index: Kafka's partition number. */
  index: number;
  /** Its name: "0".."N-1" for Kafka-created partitions, or a native name such as "customer-42". */
  name: string;
}

export interface QueueInfo {
  name: string;
  /** A stable id (UUID), Kafka's topic id. */
  id: string;
  config: QueueConfig;
  partitions: PartitionInfo[];
  createdAt: number;
}

export interface CreateQueueRequest {
  name: string;
  partitions: number;
  /**
   * The partitions' names, one per partition; default "0".."N-1" (Kafka's
   * numbering). Queen's own queues start with one partition named "Default".
   */
  partitionNames?: string[];
  config?: Partial<QueueConfig>;
  /** When true, an existing queue is returned unchanged instead of an error. */
  ifNotExists?: boolean;
}

export interface AlterQueueRequest {
  name: string;
  /** Only the keys present change. */
  config: Partial<QueueConfig>;
}

export interface AddPartitionsRequest {
  name: string;
  /** The new total, Kafka's CreatePartitions count. Must exceed the current count. */
  totalCount: number;
}

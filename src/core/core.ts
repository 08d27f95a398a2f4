/**
 * The Queen core's one interface. Everything durable lives behind it; the
 * gateway, the HTTP API and the bridge only call it. It is also the internal
 * RPC surface (src/rpc), so every request and result is plain data: numbers,
 * strings, booleans, arrays, plain objects, Buffers for record batches. No
 * callbacks, no class instances, no shared objects. Each method takes one
 * request object and resolves to one result object.
 *
 * Offsets, producer ids and timestamps are JS numbers (safe integers: 2^53 is
 * far beyond any offset a partition reaches). Per-partition failures come back
 * as `error` fields in results so one bad partition does not fail its
 * neighbours; a whole-call failure (a bad name, an unknown queue, a malformed
 * request) is thrown as a CoreError (./errors.ts) and changes nothing.
 *
 * Long-polls (read, pop) take an optional AbortSignal in `CallOptions`; that is
 * not part of the request: the RPC client turns it into a cancel message.
 */

// ─── Queues ───────────────────────────────────────────────────────────────────

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

// ─── The log ──────────────────────────────────────────────────────────────────

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

// ─── Copies at given offsets (the migration bridge) ───────────────────────────

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

// ─── Idempotent producer ──────────────────────────────────────────────────────

export interface InitProducerRequest {
  /** Null for an idempotent (non-transactional) producer. */
  transactionalId: string | null;
  transactionTimeoutMs: number;
  /** A producer asking to bump its own epoch (KIP-360); -1 when new. */
  producerId: number;
  producerEpoch: number;
}

export interface InitProducerResult {
  producerId: number;
  producerEpoch: number;
}

export interface ProducerState {
  producerId: number;
  producerEpoch: number;
  lastSequence: number;
  lastTimestamp: number;
  coordinatorEpoch: number;
  currentTxnStartOffset: number;
}

// ─── Kafka transactions ───────────────────────────────────────────────────────
// Kafka's transaction coordinator, durable in the engine: per transactional id
// its producer id and epoch, state, partitions and groups, timeout and start.
// Transactional batches are appended when produced; ending a transaction
// writes a commit or abort marker (a control batch) to each of its
// partitions. Whole-call refusals are CoreErrors: producer_fenced (an older
// epoch), invalid_producer_id_mapping (another producer id, or no
// InitProducerId yet), invalid_txn_state, invalid_transaction_timeout.

export type KafkaTxnState = 'Empty' | 'Ongoing' | 'PrepareCommit' | 'PrepareAbort' | 'CompleteCommit' | 'CompleteAbort' | 'Dead' | 'PrepareEpochFence';

/** The producer a transactional call speaks for. */
export interface TxnProducer {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
}

export interface AddPartitionsToTxnRequest extends TxnProducer {
  partitions: PartitionRef[];
  /** Only answer whether each partition is in the open transaction (AddPartitionsToTxn v4+ VerifyOnly); add nothing. */
  verifyOnly?: boolean;
}

export interface AddPartitionsToTxnResult {
  /** When any partition has an error nothing was added. */
  partitions: (PartitionRef & { error: 'unknown_queue' | 'unknown_partition' | 'invalid_txn_state' | null })[];
}

export interface AddOffsetsToTxnRequest extends TxnProducer {
  group: string;
}

export interface TxnOffsetCommitRequest extends TxnProducer {
  group: string;
  /** Pending with the transaction; written to the group's committed offsets at commit, dropped at abort. */
  offsets: CommittedOffset[];
}

export interface EndTxnRequest extends TxnProducer {
  commit: boolean;
}

export interface TransactionDescription {
  transactionalId: string;
  state: KafkaTxnState;
  producerId: number;
  producerEpoch: number;
  timeoutMs: number;
  /** When the open transaction began (epoch ms), -1 when none is open. */
  startedAt: number;
  partitions: PartitionRef[];
}

export interface ListTransactionsRequest {
  /** Empty: every state. */
  states: KafkaTxnState[];
  /** Empty: every producer. */
  producerIds: number[];
  /** Only transactions open longer than this (ms); -1: no filter. */
  minDurationMs?: number;
}

// ─── Consumer-group offsets ───────────────────────────────────────────────────
// A Kafka consumer group's committed offsets and a Queen consumer group's
// position are one thing here.

export interface CommittedOffset extends PartitionRef {
  offset: number;
  leaderEpoch: number;
  metadata: string | null;
}

export interface CommitOffsetsRequest {
  group: string;
  offsets: CommittedOffset[];
  /**
   * Set by the group coordinator: the group's coordinator lease the commit
   * was decided under. An engine shared by several cores refuses the commit
   * (CoreError not_coordinator) unless the lease is still held by that owner
   * at that epoch, checked in the commit's own transaction; one alone ignores it.
   */
  fence?: { owner: string; epoch: number };
}

export interface FetchOffsetsRequest {
  group: string;
  /** Null means every partition the group has an offset for. */
  partitions: PartitionRef[] | null;
}

export interface FetchOffsetsResult {
  /** Partitions without a committed offset answer offset -1. */
  offsets: CommittedOffset[];
}

export interface DeleteOffsetsRequest {
  group: string;
  partitions: PartitionRef[];
}

export interface GroupSummary {
  group: string;
  /** 'consumer' for Kafka-style groups; later the coordinator adds state. */
  protocolType: string;
}

// The group coordinator (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// DescribeGroups, DeleteGroups) joins this interface with the consumer-groups
// issue, as methods on `Core` beside the offsets above.

// ─── KV and once ──────────────────────────────────────────────────────────────

export interface KvEntry {
  ns: string;
  key: string;
  /** Any JSON value. */
  value: unknown;
  /** Increases by one with every write; optimistic updates compare it. */
  version: number;
  /** Epoch ms, or null for forever. */
  expiresAt: number | null;
}

/** A lifetime: `ttlMs` or `forever`. Exactly one. */
export type Lifetime = { ttlMs: number } | { forever: true };

export interface KvPutRequest {
  ns: string;
  key: string;
  value: unknown;
  lifetime?: Lifetime;
  /** When set, the put applies only if the entry's current version equals it (0 = absent). */
  expectedVersion?: number;
}

export interface KvPutResult {
  /** False when expectedVersion did not match (putIfAbsent: the key existed). */
  applied: boolean;
  entry: KvEntry | null;
}

export interface KvIncrRequest {
  ns: string;
  key: string;
  by: number;
  lifetime?: Lifetime;
}

export interface OnceRequest {
  ns: string;
  key: string;
  lifetime: Lifetime;
}

// ─── Native push, consume, transactions ───────────────────────────────────────

export interface PushItem {
  queue: string;
  /** A partition name; default "Default". A new name gets the next free index. */
  partition?: string;
  /** At most 65,535 bytes. When absent the message id is used, so nothing dedups. */
  transactionId?: string;
  /** Any JSON value; stored as the record's value. */
  payload: unknown;
  /** Queen's trace id, kept with the message (at most 255 characters). */
  traceId?: string;
}

export interface PushRequest {
  items: PushItem[];
}

export interface PushItemResult {
  status: 'queued' | 'duplicate';
  /** UUIDv7; for a duplicate, the original message's id. */
  messageId: string;
  transactionId: string;
  queue: string;
  partition: string;
  partitionIndex: number;
  /** For a duplicate, the original message's offset. */
  offset: number;
}

export interface PushResult {
  items: PushItemResult[];
}

export interface PopRequest {
  queue: string;
  /** A partition name; absent means any partition whose lease is free. */
  partition?: string;
  consumerGroup: string;
  /** Who holds the lease (a worker id). */
  owner: string;
  batch: number;
  /** Long-poll: wait up to this long for a message. 0 returns at once. */
  waitMs: number;
  /** Lease length; default the queue's leaseMs. */
  leaseMs?: number;
}

export interface QueenMessage {
  queue: string;
  partition: string;
  partitionIndex: number;
  offset: number;
  messageId: string;
  transactionId: string;
  /** The trace id it was pushed with, or null. */
  traceId: string | null;
  payload: unknown;
  /** Kafka record key and headers, when the message came from Kafka. */
  key: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  timestamp: number;
}

export interface Lease {
  id: string;
  queue: string;
  partition: string;
  consumerGroup: string;
  owner: string;
  /** Epoch ms. */
  deadline: number;
}

export interface PopResult {
  messages: QueenMessage[];
  /** Null when nothing was popped. */
  lease: Lease | null;
  /**
   * Stored batches this pop could not read (written by an older version, or
   * damaged on disk): the group's position moved past them, so the records
   * after them flow. Absent when there were none.
   */
  unreadable?: UnreadableRange[];
}

/** Offsets [fromOffset, toOffset) of a partition that no reader can decode, and why. */
export interface UnreadableRange {
  partition: string;
  fromOffset: number;
  toOffset: number;
  reason: string;
}

export interface AckRequest {
  queue: string;
  partition: string;
  consumerGroup: string;
  offset: number;
  status: 'completed' | 'failed';
  /** The lease the message was popped under; required to be current when given. */
  leaseId?: string;
}

export interface RenewLeaseRequest {
  leaseId: string;
  extendMs: number;
}

export type TransactionOperation =
  /**
   * ifStored: what an id the partition already stores does to the
   * transaction: 'rollback' (the default: nothing is written, reason
   * `duplicate`) or 'answer' (the item is answered `duplicate`, as a plain
   * push answers it, and the rest commits).
   */
  | ({ op: 'push'; ifStored?: 'rollback' | 'answer' } & PushItem)
  /**
   * required: the transaction rolls back (reason `not_acked`) unless the
   * group's lease holds the offset when the transaction starts; without it an
   * ack that does not apply answers `acked: false` and the rest commits.
   */
  | ({ op: 'ack'; required?: boolean } & AckRequest)
  | { op: 'kv.put'; ns: string; key: string; value: unknown; lifetime?: Lifetime; expectedVersion?: number; required?: boolean }
  | { op: 'kv.putIfAbsent'; ns: string; key: string; value: unknown; lifetime?: Lifetime; required?: boolean }
  | { op: 'kv.delete'; ns: string; key: string }
  | { op: 'kv.incr'; ns: string; key: string; by: number; lifetime?: Lifetime }
  | { op: 'once'; ns: string; key: string; lifetime: Lifetime };

export interface TransactionRequest {
  operations: TransactionOperation[];
}

export type TransactionResult =
  | { success: true; results: unknown[] }
  | { success: false; reason: 'duplicate' | 'kv_precondition' | 'not_acked'; failedIndex: number; message: string };

// ─── ACLs and client quotas ───────────────────────────────────────────────────
// Kept here so every gateway in front of one store authorizes alike; the core
// stores them and decides nothing (the gateway's authorizer does).

/** Kafka's ACL resource types (ANY only in filters). */
export const ACL_RESOURCE_TYPES = ['TOPIC', 'GROUP', 'CLUSTER', 'TRANSACTIONAL_ID', 'DELEGATION_TOKEN', 'USER'] as const;
export type AclResourceType = (typeof ACL_RESOURCE_TYPES)[number];
export const ACL_PATTERN_TYPES = ['LITERAL', 'PREFIXED'] as const;
export type AclPatternType = (typeof ACL_PATTERN_TYPES)[number];
/** Kafka's ACL operations (ANY only in filters). */
export const ACL_OPERATIONS = [
  'ALL', 'READ', 'WRITE', 'CREATE', 'DELETE', 'ALTER', 'DESCRIBE', 'CLUSTER_ACTION',
  'DESCRIBE_CONFIGS', 'ALTER_CONFIGS', 'IDEMPOTENT_WRITE', 'CREATE_TOKENS', 'DESCRIBE_TOKENS', 'TWO_PHASE_COMMIT',
] as const;
export type AclOperation = (typeof ACL_OPERATIONS)[number];
export type AclPermission = 'ALLOW' | 'DENY';

/** One ACL: `principal` from `host` may (ALLOW) or may not (DENY) do `operation` on the resources the pattern names. */
export interface AclBinding {
  resourceType: AclResourceType;
  /** A name, a prefix (PREFIXED), or "*" (LITERAL: every resource of the type). */
  resourceName: string;
  patternType: AclPatternType;
  /** "User:alice", or "User:*" for everyone. */
  principal: string;
  /** An IP address, or "*" for any. */
  host: string;
  operation: AclOperation;
  permission: AclPermission;
}

/**
 * Selects bindings, as Kafka's DescribeAcls and DeleteAcls filters do: ANY and
 * null match everything; pattern MATCH selects every binding that applies to
 * the named resource (its literal, the wildcard and the prefixes of the name).
 */
export interface AclBindingFilter {
  resourceType: AclResourceType | 'ANY';
  resourceName: string | null;
  patternType: AclPatternType | 'ANY' | 'MATCH';
  principal: string | null;
  host: string | null;
  operation: AclOperation | 'ANY';
  permission: AclPermission | 'ANY';
}

/**
 * Whom a client quota applies to, as Kafka names it: a component absent is not
 * part of the entity; present and null is the default for that kind
 * ("<default>" in kafka-configs).
 */
export interface QuotaEntity {
  user?: string | null;
  clientId?: string | null;
}

/** The quota keys Kafka defines for users and client ids, in bytes/s and percent of one thread's time. */
export const QUOTA_KEYS = ['producer_byte_rate', 'consumer_byte_rate', 'request_percentage', 'controller_mutation_rate'] as const;
export type QuotaKey = (typeof QUOTA_KEYS)[number];

export interface ClientQuotaEntry {
  entity: QuotaEntity;
  values: Partial<Record<QuotaKey, number>>;
}

export interface AlterClientQuotasRequest {
  alterations: {
    entity: QuotaEntity;
    /** Keys to set to these values. */
    set: Partial<Record<QuotaKey, number>>;
    /** Keys to remove. */
    remove: QuotaKey[];
  }[];
}
// ─── SCRAM credentials (rules: ./rules/scram-credentials.ts) ───────────────────

export const SCRAM_MECHANISMS = ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
export type ScramMechanism = (typeof SCRAM_MECHANISMS)[number];

export interface ScramCredential {
  user: string;
  mechanism: ScramMechanism;
  iterations: number;
  salt: Buffer;
  storedKey: Buffer;
  serverKey: Buffer;
}

export interface ScramCredentialRef {
  user: string;
  mechanism: ScramMechanism;
}

export interface ScramUser {
  user: string;
  credentials: Array<{ mechanism: ScramMechanism; iterations: number }>;
}

export interface AlterScramCredentialsRequest {
  deletions: ScramCredentialRef[];
  upsertions: ScramCredential[];
}

/** Per deletion then per upsertion, in request order: null, or why nothing was done for it. */
export interface AlterScramCredentialsResult {
  results: Array<{ user: string; mechanism: ScramMechanism; error: 'not_found' | null }>;
}

import type { GroupCoordinatorApi } from './groups/types.js';
import type { ConsumerGroupApi } from './groups/consumer/types.js';
import type { ShareGroupApi } from './groups/share/types.js';

// ─── The interface ────────────────────────────────────────────────────────────

export interface CallOptions {
  signal?: AbortSignal;
}

/**
 * The whole core as its callers hold it: the storage calls (served by the
 * engine behind the front, ./front.ts) and the group coordinator's calls
 * (./groups). The engine contract is ./engine.ts.
 */
export interface Core extends GroupCoordinatorApi, ConsumerGroupApi, ShareGroupApi {
  createQueue(req: CreateQueueRequest): Promise<QueueInfo>;
  listQueues(): Promise<QueueInfo[]>;
  /** Null when the queue does not exist. */
  describeQueue(req: { name: string }): Promise<QueueInfo | null>;
  deleteQueue(req: { name: string }): Promise<void>;
  addPartitions(req: AddPartitionsRequest): Promise<QueueInfo>;
  alterQueue(req: AlterQueueRequest): Promise<QueueInfo>;

  append(req: AppendRequest): Promise<AppendResult>;
  read(req: ReadRequest, options?: CallOptions): Promise<ReadResult>;
  offsets(req: { partitions: PartitionRef[] }): Promise<{ partitions: (PartitionOffsets & { error: ReadError | null })[] }>;
  partitionSizes(req: { partitions: PartitionRef[] }): Promise<{ partitions: PartitionSize[] }>;
  offsetForTimestamp(req: OffsetForTimestampRequest): Promise<OffsetForTimestampResult>;
  deleteRecords(req: DeleteRecordsRequest): Promise<DeleteRecordsResult>;

  initProducer(req: InitProducerRequest): Promise<InitProducerResult>;
  describeProducers(req: PartitionRef): Promise<{ producers: ProducerState[] }>;

  commitOffsets(req: CommitOffsetsRequest): Promise<void>;
  fetchOffsets(req: FetchOffsetsRequest): Promise<FetchOffsetsResult>;
  deleteOffsets(req: DeleteOffsetsRequest): Promise<void>;
  listGroups(): Promise<{ groups: GroupSummary[] }>;

  addPartitionsToTxn(req: AddPartitionsToTxnRequest): Promise<AddPartitionsToTxnResult>;
  addOffsetsToTxn(req: AddOffsetsToTxnRequest): Promise<void>;
  txnOffsetCommit(req: TxnOffsetCommitRequest): Promise<void>;
  /** Writes the markers and applies or drops the pending offsets; answers the producer's id and epoch. */
  endTxn(req: EndTxnRequest): Promise<{ producerId: number; producerEpoch: number }>;
  /** One entry per id asked for; null when the id is unknown. */
  describeTransactions(req: { transactionalIds: string[] }): Promise<{ transactions: (TransactionDescription | null)[] }>;
  listTransactions(req: ListTransactionsRequest): Promise<{ transactions: { transactionalId: string; producerId: number; state: KafkaTxnState }[] }>;
  /** Of these partitions (null: all the group has), those with offsets pending in an open transaction (OffsetFetch require_stable). */
  unstableOffsets(req: { group: string; partitions: PartitionRef[] | null }): Promise<{ partitions: PartitionRef[] }>;

  kvGet(req: { ns: string; key: string }): Promise<KvEntry | null>;
  kvGetMany(req: { ns: string; keys: string[] }): Promise<(KvEntry | null)[]>;
  kvGetPrefix(req: { ns: string; prefix: string; limit?: number }): Promise<KvEntry[]>;
  kvPut(req: KvPutRequest): Promise<KvPutResult>;
  kvPutIfAbsent(req: Omit<KvPutRequest, 'expectedVersion'>): Promise<KvPutResult>;
  kvDelete(req: { ns: string; key: string }): Promise<{ deleted: boolean }>;
  kvIncr(req: KvIncrRequest): Promise<KvEntry>;
  once(req: OnceRequest): Promise<{ won: boolean }>;

  push(req: PushRequest): Promise<PushResult>;
  pop(req: PopRequest, options?: CallOptions): Promise<PopResult>;
  ack(req: AckRequest): Promise<{ acked: boolean }>;
  renewLease(req: RenewLeaseRequest): Promise<Lease>;
  transaction(req: TransactionRequest): Promise<TransactionResult>;

  /** Adds ACL bindings; one already stored is left as it is. All or none are added (a bad binding fails the call). */
  createAcls(req: { bindings: AclBinding[] }): Promise<void>;
  /** Every stored ACL binding. */
  listAcls(): Promise<{ bindings: AclBinding[] }>;
  /** Deletes, in one step, the bindings each filter matches; per filter, the bindings it deleted. */
  deleteAcls(req: { filters: AclBindingFilter[] }): Promise<{ results: { deleted: AclBinding[] }[] }>;
  /** Sets and removes client quota values; an entity left with no values is gone. All or none apply. */
  alterClientQuotas(req: AlterClientQuotasRequest): Promise<void>;
  /** Every entity with a quota, and its values. */
  listClientQuotas(): Promise<{ entries: ClientQuotaEntry[] }>;
  /**
   * SCRAM credentials (rules/scram-credentials.ts): salted, iterated, never
   * the password. `users` absent or null lists every user with a credential;
   * a named user without one comes back with an empty list.
   */
  describeScramCredentials(req: { users?: string[] | null }): Promise<{ users: ScramUser[] }>;
  /** Deletions, then upsertions, in one step; a deletion of a credential that does not exist answers not_found for it. */
  alterScramCredentials(req: AlterScramCredentialsRequest): Promise<AlterScramCredentialsResult>;
  /** One credential, to check a client's proof against; null when the user has none for the mechanism. */
  scramCredential(req: ScramCredentialRef): Promise<ScramCredential | null>;
  /**
   * Stores copied batches at the offsets they carry (the migration bridge:
   * target offset = source offset). Atomic per partition under its lock: a
   * first offset below the partition's next offset is answered already_there
   * and writes nothing, so a repeat can never write a record twice. Producer
   * state, the queue's timestamp rules and LogAppendTime stamping do not
   * apply: the records keep what the source log gave them.
   */
  appendAt(req: AppendAtRequest): Promise<AppendAtResult>;

  /** Releases connections and timers. Pending long-polls resolve empty. */
  close(): Promise<void>;
}

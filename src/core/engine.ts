import type { CoordinationStore } from './coordination/leases.js';
import type {
  AckRequest,
  CallOptions,
  CommitOffsetsRequest,
  CommittedOffset,
  Core,
  InitProducerResult,
  ListTransactionsRequest,
  Lifetime,
  PartitionInfo,
  PartitionRef,
  PopResult,
  PushResult,
  QueueConfig,
  TransactionDescription,
  TransactionResult,
} from './core.js';
import type { TxnDecision, TxnUnitRequest, TxnView } from './kafka-transactions/unit.js';
import type { AppendCall, DecideAppends } from './log/append.js';
import type { DecidePush, PushCall } from './native/push.js';
import type { DecideAck } from './native/ack.js';
import type { DecideTransaction, TransactionCall } from './native/transaction.js';
import type { IdempotentInit } from './rules/init-producer.js';
import type { StoredTransaction } from './rules/kafka-transactions.js';
import type { ProducerWindow } from './rules/producer-window.js';
import type { AppendLimits } from './rules/batches.js';
import type { CompactionStats } from './rules/compaction.js';
import type { KvWrite } from './rules/kv.js';
import type { SharePartitionKey, SharePartitionState } from './groups/share/partition-state.js';

/**
 * The storage engine contract: what an engine (engines/memory,
 * engines/postgres) implements, one object per domain, each matching a SQL
 * file of the PostgreSQL engine (sql/queues.sql, log.sql, producers.sql,
 * groups.sql, kv.sql, native.sql, maintenance.sql, kafka-transactions.sql,
 * access.sql, scram-credentials.sql, shares.sql).
 *
 * Requests reach an engine through the core front (./front.ts), which has
 * checked every field a request carries (names, numbers and their ranges,
 * arrays, lifetimes) and refuses calls once the core is closed. The core
 * decides; engines store: Kafka's append (./log/append.ts), its transactions
 * (./kafka-transactions/coordinator.ts) and InitProducerId
 * (rules/init-producer.ts) are decided by the core, inside an atomic unit the
 * engine opens, over the state the engine loaded for it; the engine then
 * stores what was decided. What only storage can answer (does the queue
 * exist, is the lease still held, is the id stored) stays with the engine.
 * Queen's native push, ack and transaction are decided the same way
 * (./native/): the core plans and checks them before the engine sees them,
 * and decides inside the unit the engine opens over what it loaded.
 *
 * A call may answer at once or with a promise: the memory engine answers at
 * once, so that each call is atomic without a lock.
 */

type Awaitable<T> = T | Promise<T>;
/** A Core call as an engine may implement it: same arguments, answered at once or later. */
type EngineCall<F> = F extends (...args: infer A) => Promise<infer R> ? (...args: A) => Awaitable<R> : never;

/** A new queue's request with its defaults filled in and its partition names decided (rules/names.ts, rules/config.ts). */
export interface NewQueue {
  name: string;
  partitionNames: string[];
  config: QueueConfig;
  ifNotExists: boolean;
}

/** A pop's request, checked (rules/requests.ts checkPopRequest). */
export interface CheckedPop {
  queue: string;
  partitionName: string | undefined;
  group: string;
  owner: string;
  batch: number;
  waitMs: number;
  leaseMs: number | undefined;
}

export interface EngineQueues {
  create(req: NewQueue): Awaitable<import('./core.js').QueueInfo>;
  list: EngineCall<Core['listQueues']>;
  describe: EngineCall<Core['describeQueue']>;
  delete: EngineCall<Core['deleteQueue']>;
  addPartitions: EngineCall<Core['addPartitions']>;
  alter: EngineCall<Core['alterQueue']>;
}

export interface EngineLog {
  /** How far produced batches may inflate while the core checks them (the engine's options). */
  readonly appendLimits: AppendLimits;
  /**
   * Kafka's append (./log/append.ts): opens the engine's atomic unit for the
   * call (PostgreSQL gathers concurrent calls into one transaction that locks
   * their partitions in id order), reads what the calls' `reads` name, lets
   * `decide` decide them in arrival order, and stores its writes in the same
   * unit (the memory engine all at once, without yielding).
   */
  append(call: AppendCall, decide: DecideAppends): Awaitable<import('./core.js').AppendResult>;
  read: EngineCall<Core['read']>;
  offsets: EngineCall<Core['offsets']>;
  sizes: EngineCall<Core['partitionSizes']>;
  offsetForTimestamp: EngineCall<Core['offsetForTimestamp']>;
  deleteRecords: EngineCall<Core['deleteRecords']>;
}

export interface EngineCopies {
  appendAt: EngineCall<Core['appendAt']>;
}

export interface EngineProducers {
  /**
   * InitProducerId without a transactional id, as one unit: the named
   * producer id's recorded epoch (null when none, or for id -1), `decide`'s
   * answer (rules/init-producer.ts), then a new id allocated at epoch 0 or
   * the bumped epoch recorded. Transactional ids go to the transaction
   * coordinator (./kafka-transactions/coordinator.ts).
   */
  init(producerId: number, decide: (recordedEpoch: number | null) => IdempotentInit): Awaitable<InitProducerResult>;
  /** The producer windows a partition keeps, and each producer's open transaction's first offset there (-1: none). */
  describe(ref: PartitionRef): Awaitable<{ windows: ProducerWindow[]; transactionStartOf: (producerId: number) => number }>;
}

export interface EngineOffsets {
  /**
   * Offsets with every field checked and filled (leaderEpoch -1, metadata
   * null when absent). An engine with a coordination store refuses a commit
   * whose fence no longer holds the group's lease (not_coordinator).
   */
  commit(req: { group: string; offsets: CommittedOffset[]; fence?: CommitOffsetsRequest['fence'] }): Awaitable<void>;
  fetch: EngineCall<Core['fetchOffsets']>;
  delete: EngineCall<Core['deleteOffsets']>;
  listGroups: EngineCall<Core['listGroups']>;
}

/**
 * Kafka transactions' storage; the coordinator that decides is the core's
 * (./kafka-transactions/coordinator.ts).
 */
export interface EngineKafkaTransactions {
  /**
   * One atomic unit on a transactional id: hold the id (PostgreSQL: its
   * coordinator lease when `coordinator`, then its row lock), load what the
   * request names, let `decide` decide, and store its writes in the same
   * unit. Answers the decision's answer and the transaction as saved (with
   * the producer id allocated for it, if any).
   */
  transact<R>(req: TxnUnitRequest, decide: (view: TxnView) => TxnDecision<R>): Awaitable<{ answer: R; saved: StoredTransaction | null }>;
  /** The ids of the transactions open past their timeout now (the core aborts each in its own unit). */
  expired(): Awaitable<string[]>;
  describe(ids: string[]): Awaitable<(TransactionDescription | null)[]>;
  /** The transactions in these states of these producers (empty: any), by id, with the engine's time now. */
  list(req: Pick<ListTransactionsRequest, 'states' | 'producerIds'>): Awaitable<{ now: number; transactions: StoredTransaction[] }>;
  /** The partitions with offsets of the group pending in an open transaction. */
  pendingOffsets(group: string): Awaitable<PartitionRef[]>;
}

export interface EngineKv {
  get: EngineCall<Core['kvGet']>;
  getMany: EngineCall<Core['kvGetMany']>;
  /** `limit` filled in (default 1000). */
  getPrefix(req: { ns: string; prefix: string; limit: number }): Awaitable<import('./core.js').KvEntry[]>;
  put(write: KvWrite): Awaitable<import('./core.js').KvPutResult>;
  putIfAbsent(write: Omit<KvWrite, 'expectedVersion'>): Awaitable<import('./core.js').KvPutResult>;
  delete: EngineCall<Core['kvDelete']>;
  incr(req: { ns: string; key: string; by: number; lifetime: Lifetime | undefined }): Awaitable<import('./core.js').KvEntry>;
  once: EngineCall<Core['once']>;
}

/**
 * Queen's native calls' storage; the core decides push, ack and the native
 * transaction (../native/push.ts, ack.ts, transaction.ts).
 */
export interface EngineNative {
  /** The engine's clock: pushed messages' ids and timestamps, and the leases' deadlines. */
  now(): number;
  /** The partitions of those of these queues whose partition count is fixed (Kafka topics), for routing pushes. */
  fixedPartitions(queues: string[]): Awaitable<Map<string, readonly PartitionInfo[]>>;
  /**
   * A push as one atomic unit: load what `call.reads` names (PostgreSQL: the
   * partitions locked in id order, their dedup entries inside the window),
   * let `decide` decide, store its writes in the same unit, wake the poppers.
   */
  push(call: PushCall, decide: DecidePush): Awaitable<PushResult>;
  pop(req: CheckedPop, options?: CallOptions): Awaitable<PopResult>;
  /** An ack as one unit: the group's lease and position under the consumer lock, `decide`'s answer, its write stored. */
  ack(req: AckRequest, decide: DecideAck): Awaitable<{ acked: boolean }>;
  renewLease: EngineCall<Core['renewLease']>;
  /** A native transaction as one unit, as `push` (and with the consumer and KV locks its reads name). */
  transaction(call: TransactionCall, decide: DecideTransaction): Awaitable<TransactionResult>;
}

export interface EngineAccess {
  createAcls: EngineCall<Core['createAcls']>;
  listAcls: EngineCall<Core['listAcls']>;
  deleteAcls: EngineCall<Core['deleteAcls']>;
  alterClientQuotas: EngineCall<Core['alterClientQuotas']>;
  listClientQuotas: EngineCall<Core['listClientQuotas']>;
}

export interface EngineScramCredentials {
  describe: EngineCall<Core['describeScramCredentials']>;
  alter: EngineCall<Core['alterScramCredentials']>;
  get: EngineCall<Core['scramCredential']>;
}

/** A share-partition's state as loaded, with the version a store must name to replace it (0: none stored). */
export interface LoadedSharePartition {
  state: SharePartitionState | null;
  version: number;
}

/** A state to store in place of the version loaded (state null: forget the share-partition). */
export interface ShareWrite {
  key: SharePartitionKey;
  expected: number;
  state: SharePartitionState | null;
}

/**
 * Share groups' storage (KIP-932): each share-partition's start offset and
 * in-flight records with their locks (./groups/share/partition-state.ts).
 * The core decides between a load and a store; a store names the versions
 * it loaded and is refused for a share-partition that changed since, so two
 * cores deciding on one share-partition never overwrite each other (the
 * loser loads again and decides again).
 */
export interface EngineShares {
  /**
   * The states of these share-partitions (in the order asked) and the
   * engine's time now (epoch ms; the database's clock for PostgreSQL, so every
   * core agrees on lock deadlines). One round trip for all of them.
   */
  load(keys: SharePartitionKey[]): Awaitable<{ now: number; partitions: LoadedSharePartition[] }>;
  /**
   * Stores each write whose share-partition is still at its expected
   * version, all in one atomic, durable step; answers, per write in order,
   * whether it was stored.
   */
  store(writes: ShareWrite[]): Awaitable<boolean[]>;
  /** Every share-partition the group has state for (group null: every group's). */
  list(group: string | null): Awaitable<(SharePartitionKey & SharePartitionState)[]>;
}

/** What runs on the engine's timers; tests and benchmarks call it directly after moving the clock. */
export interface EngineMaintenance {
  /** Retention and expiry (batches past retention, expired KV entries, dedup entries outside their window). */
  runMaintenance(): Awaitable<void>;
  /** One compactor round over every compacted queue. */
  runCompaction(): Promise<CompactionStats>;
  /** Aborts the Kafka transactions open past their timeout. */
  abortExpiredTransactions(): Awaitable<void>;
}

export interface Engine {
  readonly queues: EngineQueues;
  readonly log: EngineLog;
  readonly copies: EngineCopies;
  readonly producers: EngineProducers;
  readonly offsets: EngineOffsets;
  readonly kafkaTransactions: EngineKafkaTransactions;
  readonly kv: EngineKv;
  readonly native: EngineNative;
  readonly access: EngineAccess;
  readonly scramCredentials: EngineScramCredentials;
  readonly shares: EngineShares;
  readonly maintenance: EngineMaintenance;
  /**
   * Coordinator leases, for an engine several cores share (PostgreSQL): the
   * front serves a group only while its core holds the group's lease. Absent:
   * this core is alone and coordinates everything (coordination/leases.ts).
   */
  readonly coordination?: CoordinationStore;
  /** Stops the timers, answers pending long-polls empty and releases connections. */
  close(): Promise<void>;
}

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

export * from './api/queues.js';
export * from './api/log.js';
export * from './api/copies.js';
export * from './api/producers.js';
export * from './api/kafka-transactions.js';
export * from './api/offsets.js';
export * from './api/kv.js';
export * from './api/native.js';
export * from './api/access.js';
export * from './api/scram.js';
export * from './api/streams.js';

import type { AclBinding, AclBindingFilter, AlterClientQuotasRequest, ClientQuotaEntry } from './api/access.js';
import type { AppendAtRequest, AppendAtResult } from './api/copies.js';
import type { AddOffsetsToTxnRequest, AddPartitionsToTxnRequest, AddPartitionsToTxnResult, EndTxnRequest, KafkaTxnState, ListTransactionsRequest, TransactionDescription, TxnOffsetCommitRequest } from './api/kafka-transactions.js';
import type { KvEntry, KvIncrRequest, KvPutRequest, KvPutResult, OnceRequest } from './api/kv.js';
import type { AppendRequest, AppendResult, DeleteRecordsRequest, DeleteRecordsResult, OffsetForTimestampRequest, OffsetForTimestampResult, PartitionOffsets, PartitionRef, PartitionSize, ReadError, ReadRequest, ReadResult } from './api/log.js';
import type { AckRequest, Lease, PopRequest, PopResult, PushRequest, PushResult, RenewLeaseRequest, TransactionRequest, TransactionResult } from './api/native.js';
import type { CommitOffsetsRequest, DeleteOffsetsRequest, FetchOffsetsRequest, FetchOffsetsResult, GroupSummary } from './api/offsets.js';
import type { InitProducerRequest, InitProducerResult, ProducerState } from './api/producers.js';
import type { AddPartitionsRequest, AlterQueueRequest, CreateQueueRequest, QueueInfo } from './api/queues.js';
import type { StreamsCycleRequest, StreamsCycleResult, StreamsRegisterRequest, StreamsRegisterResult, StreamsStateGetRequest, StreamsStateRow } from './api/streams.js';
import type { AlterScramCredentialsRequest, AlterScramCredentialsResult, ScramCredential, ScramCredentialRef, ScramUser } from './api/scram.js';
import type { GroupCoordinatorApi } from './groups/types.js';
import type { ConsumerGroupApi } from './groups/consumer/types.js';
import type { ShareGroupApi } from './groups/share/types.js';
import type { StreamsGroupApi } from './groups/streams/types.js';

// ─── The interface ────────────────────────────────────────────────────────────

export interface CallOptions {
  signal?: AbortSignal;
}

/**
 * The whole core as its callers hold it: the storage calls (served by the
 * engine behind the front, ./front.ts) and the group coordinator's calls
 * (./groups). The engine contract is ./engine.ts.
 */
export interface Core extends GroupCoordinatorApi, ConsumerGroupApi, ShareGroupApi, StreamsGroupApi {
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

  /** Queen streams (../streams): a query's registration; a changed configHash is refused unless `reset` drops its state. */
  streamsRegisterQuery(req: StreamsRegisterRequest): Promise<StreamsRegisterResult>;
  /** One cycle: state writes, output pushes and source acks, all or nothing; a committed cycle repeated is answered `replayed`. */
  streamsCycle(req: StreamsCycleRequest): Promise<StreamsCycleResult>;
  /** A query's state rows on one source partition, by key. */
  streamsStateGet(req: StreamsStateGetRequest): Promise<{ rows: StreamsStateRow[] }>;

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

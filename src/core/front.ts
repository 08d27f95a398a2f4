import type { Core } from './core.js';
import type { Engine } from './engine.js';
import { CoreError } from './errors.js';
import { LeasedGroups } from './coordination/leased-groups.js';
import { LocalCoordination } from './coordination/leases.js';
import type { CoordinatorOptions } from './groups/coordinator.js';
import type { ConsumerCoordinatorOptions } from './groups/consumer/coordinator.js';
import type { TopicMetadata } from './groups/consumer/types.js';
import { ClassicMembers } from './groups/consumer/classic-members.js';
import { ShareGroupCalls } from './groups/share/calls.js';
import { ShareGroups } from './groups/share/service.js';
import type { ShareGroupApi, ShareGroupError } from './groups/share/types.js';
import { StreamsGroupCalls } from './groups/streams/calls.js';
import type { StreamsGroupApi, StreamsGroupError } from './groups/streams/types.js';
import { KafkaTransactionCoordinator } from './kafka-transactions/coordinator.js';
import { GroupAdminCalls } from './front/group-admin.js';
import { GroupCalls, type GroupParts } from './front/groups.js';
import { KafkaTransactionCalls } from './front/kafka-transactions.js';
import { KvAccessCalls } from './front/kv-access.js';
import { NativeCalls } from './front/native.js';
import { QueenStreamsCalls } from './front/queen-streams.js';
import { StorageCalls } from './front/storage.js';

/**
 * The core front: the `Core` every caller holds (the gateway, the HTTP API,
 * the RPC server, the bridge). It checks each request once, before any
 * engine sees it (names, numbers and their ranges, arrays, lifetimes:
 * src/core/rules), refuses calls once closed, sends group membership calls
 * to the group coordinators (./groups) and everything else to the engine's
 * domain objects (./engine.ts). A request refused here changes nothing,
 * whatever the engine.
 *
 * The calls are served by domain, one file each under ./front/: storage
 * (queues, the log, producers, offsets), KV and access control, native
 * messaging, Kafka transactions, group membership and group administration;
 * share groups by ./groups/share/calls.ts. This class builds them and lists
 * every call of `Core` with the one that serves it.
 *
 * Several cores on one PostgreSQL database share groups through coordinator
 * leases (./coordination/leases.ts): a group call is served only by the core
 * holding the group's lease, which it takes when the lease is free or ran
 * out (loading the group's stored membership); the others answer
 * not_coordinator, and the client asks FindCoordinator again, as with Kafka.
 * ./coordination/leased-groups.ts ties the coordinators to their leases.
 */
export class CoreFront<E extends Engine = Engine> implements Core {
  private readonly groups: LeasedGroups;
  private readonly storage: StorageCalls<E>;
  private readonly kvAccess: KvAccessCalls<E>;
  private readonly native: NativeCalls<E>;
  private readonly queenStreams: QueenStreamsCalls<E>;
  private readonly kafkaTransactions: KafkaTransactionCalls<E>;
  private readonly membership: GroupCalls<E>;
  private readonly groupAdmin: GroupAdminCalls<E>;
  private readonly shares: ShareGroupCalls;
  /** Kafka Streams groups (KIP-1071), beside the others under the same leases. */
  private readonly streams: StreamsGroupCalls;
  private closed = false;

  constructor(
    /** The storage engine; tests and benchmarks reach its maintenance through it. */
    readonly engine: E,
    coordinatorOptions: Partial<CoordinatorOptions> = {},
    consumerGroupOptions: Partial<ConsumerCoordinatorOptions> = {},
  ) {
    const open = () => this.open();
    const shared = engine.coordination !== undefined;
    const coordination = engine.coordination ?? new LocalCoordination();
    const transactions = new KafkaTransactionCoordinator(engine.kafkaTransactions);
    this.groups = new LeasedGroups(coordination, shared, coordinatorOptions, consumerGroupOptions);
    const { coordinator, consumerGroups, streamsGroups } = this.groups;
    const topicMetadata = () => this.topicMetadata();
    const shareGroups = new ShareGroups(engine, topicMetadata);
    this.storage = new StorageCalls(open, transactions, (queue) => shareGroups.forgetQueue(queue));
    this.kvAccess = new KvAccessCalls(open);
    this.native = new NativeCalls(open, this);
    this.queenStreams = new QueenStreamsCalls(open, this);
    this.kafkaTransactions = new KafkaTransactionCalls(open, transactions);
    const classicMembers = new ClassicMembers(consumerGroups);
    const parts: GroupParts<E> = { groups: this.groups, coordinator, consumerGroups, streamsGroups, classicMembers, shareGroups, coordination, shared, storage: this.storage, topicMetadata };
    this.membership = new GroupCalls(parts);
    this.groupAdmin = new GroupAdminCalls(parts);
    const own = async (group: string) => (await this.groups.own(group)) as { error: ShareGroupError } | object;
    const otherKind = (group: string) => coordinator.hasMembers(group) || consumerGroups.isConsumerGroup(group) || streamsGroups.hasMembers(group);
    this.shares = new ShareGroupCalls(shareGroups, own, topicMetadata, otherKind);
    const otherThanStreams = (group: string) => coordinator.hasMembers(group) || consumerGroups.hasMembers(group) || shareGroups.hasMembers(group);
    const forgetOthers = async (group: string) => {
      if (coordinator.knows(group)) void coordinator.remove(group);
      if (consumerGroups.isConsumerGroup(group)) await this.groups.forgetConsumerGroup(group);
    };
    const ownStreams = async (group: string) => (await this.groups.own(group)) as { error: StreamsGroupError } | object;
    this.streams = new StreamsGroupCalls(streamsGroups, ownStreams, topicMetadata, otherThanStreams, forgetOthers, (group) => this.groups.saveStreamsGroup(group));
  }

  /** The engine, while the core is open. */
  private open(): E {
    if (this.closed) throw new CoreError('closed', 'The core is closed; open a new one.');
    return this.engine;
  }

  // ─── Queues, the log, producers, offsets (./front/storage.ts) ──────────────

  createQueue: Core['createQueue'] = (req) => this.storage.createQueue(req);
  listQueues: Core['listQueues'] = () => this.storage.listQueues();
  describeQueue: Core['describeQueue'] = (req) => this.storage.describeQueue(req);
  deleteQueue: Core['deleteQueue'] = (req) => this.storage.deleteQueue(req);
  addPartitions: Core['addPartitions'] = (req) => this.storage.addPartitions(req);
  alterQueue: Core['alterQueue'] = (req) => this.storage.alterQueue(req);
  append: Core['append'] = (req) => this.storage.append(req);
  read: Core['read'] = (req, options) => this.storage.read(req, options);
  offsets: Core['offsets'] = (req) => this.storage.offsets(req);
  partitionSizes: Core['partitionSizes'] = (req) => this.storage.partitionSizes(req);
  offsetForTimestamp: Core['offsetForTimestamp'] = (req) => this.storage.offsetForTimestamp(req);
  deleteRecords: Core['deleteRecords'] = (req) => this.storage.deleteRecords(req);
  appendAt: Core['appendAt'] = (req) => this.storage.appendAt(req);
  initProducer: Core['initProducer'] = (req) => this.storage.initProducer(req);
  describeProducers: Core['describeProducers'] = (req) => this.storage.describeProducers(req);
  commitOffsets: Core['commitOffsets'] = (req) => this.storage.commitOffsets(req);
  fetchOffsets: Core['fetchOffsets'] = (req) => this.storage.fetchOffsets(req);
  deleteOffsets: Core['deleteOffsets'] = (req) => this.storage.deleteOffsets(req);
  listGroups: Core['listGroups'] = () => this.storage.listGroups();

  // ─── Kafka transactions (./front/kafka-transactions.ts) ────────────────────

  addPartitionsToTxn: Core['addPartitionsToTxn'] = (req) => this.kafkaTransactions.addPartitionsToTxn(req);
  addOffsetsToTxn: Core['addOffsetsToTxn'] = (req) => this.kafkaTransactions.addOffsetsToTxn(req);
  txnOffsetCommit: Core['txnOffsetCommit'] = (req) => this.kafkaTransactions.txnOffsetCommit(req);
  endTxn: Core['endTxn'] = (req) => this.kafkaTransactions.endTxn(req);
  describeTransactions: Core['describeTransactions'] = (req) => this.kafkaTransactions.describeTransactions(req);
  listTransactions: Core['listTransactions'] = (req) => this.kafkaTransactions.listTransactions(req);
  unstableOffsets: Core['unstableOffsets'] = (req) => this.kafkaTransactions.unstableOffsets(req);

  // ─── KV, once, ACLs, client quotas, SCRAM credentials (./front/kv-access.ts)

  kvGet: Core['kvGet'] = (req) => this.kvAccess.kvGet(req);
  kvGetMany: Core['kvGetMany'] = (req) => this.kvAccess.kvGetMany(req);
  kvGetPrefix: Core['kvGetPrefix'] = (req) => this.kvAccess.kvGetPrefix(req);
  kvPut: Core['kvPut'] = (req) => this.kvAccess.kvPut(req);
  kvPutIfAbsent: Core['kvPutIfAbsent'] = (req) => this.kvAccess.kvPutIfAbsent(req);
  kvDelete: Core['kvDelete'] = (req) => this.kvAccess.kvDelete(req);
  kvIncr: Core['kvIncr'] = (req) => this.kvAccess.kvIncr(req);
  once: Core['once'] = (req) => this.kvAccess.once(req);
  createAcls: Core['createAcls'] = (req) => this.kvAccess.createAcls(req);
  listAcls: Core['listAcls'] = () => this.kvAccess.listAcls();
  deleteAcls: Core['deleteAcls'] = (req) => this.kvAccess.deleteAcls(req);
  alterClientQuotas: Core['alterClientQuotas'] = (req) => this.kvAccess.alterClientQuotas(req);
  listClientQuotas: Core['listClientQuotas'] = () => this.kvAccess.listClientQuotas();
  describeScramCredentials: Core['describeScramCredentials'] = (req) => this.kvAccess.describeScramCredentials(req);
  alterScramCredentials: Core['alterScramCredentials'] = (req) => this.kvAccess.alterScramCredentials(req);
  scramCredential: Core['scramCredential'] = (req) => this.kvAccess.scramCredential(req);

  // ─── Native push, consume, transaction (./front/native.ts) ─────────────────

  push: Core['push'] = (req) => this.native.push(req);
  pop: Core['pop'] = (req, options) => this.native.pop(req, options);
  ack: Core['ack'] = (req) => this.native.ack(req);
  renewLease: Core['renewLease'] = (req) => this.native.renewLease(req);
  transaction: Core['transaction'] = (req) => this.native.transaction(req);

  // ─── Queen streams (./front/queen-streams.ts) ──────────────────────────────

  streamsRegisterQuery: Core['streamsRegisterQuery'] = (req) => this.queenStreams.streamsRegisterQuery(req);
  streamsCycle: Core['streamsCycle'] = (req) => this.queenStreams.streamsCycle(req);
  streamsStateGet: Core['streamsStateGet'] = (req) => this.queenStreams.streamsStateGet(req);

  // ─── Groups (./front/groups.ts, ./front/group-admin.ts), offsets in the engine

  joinGroup: Core['joinGroup'] = (req, options) => this.membership.joinGroup(req, options);
  syncGroup: Core['syncGroup'] = (req, options) => this.membership.syncGroup(req, options);
  heartbeat: Core['heartbeat'] = (req) => this.membership.heartbeat(req);
  leaveGroup: Core['leaveGroup'] = (req) => this.membership.leaveGroup(req);
  commitGroupOffsets: Core['commitGroupOffsets'] = (req) => this.membership.commitGroupOffsets(req);
  consumerGroupHeartbeat: Core['consumerGroupHeartbeat'] = (req) => this.membership.consumerGroupHeartbeat(req);
  consumerGroupDescribe: Core['consumerGroupDescribe'] = (req) => this.membership.consumerGroupDescribe(req);
  checkOffsetFetchMember: Core['checkOffsetFetchMember'] = (req) => this.membership.checkOffsetFetchMember(req);
  findCoordinators: Core['findCoordinators'] = (req) => this.groupAdmin.findCoordinators(req);
  describeGroups: Core['describeGroups'] = (req) => this.groupAdmin.describeGroups(req);
  listGroupStates: Core['listGroupStates'] = (req) => this.groupAdmin.listGroupStates(req);
  deleteGroups: Core['deleteGroups'] = (req) => this.groupAdmin.deleteGroups(req);
  deleteGroupOffsets: Core['deleteGroupOffsets'] = (req) => this.groupAdmin.deleteGroupOffsets(req);

  // ─── Streams groups (./groups/streams) ─────────────────────────────────────

  streamsGroupHeartbeat: StreamsGroupApi['streamsGroupHeartbeat'] = (req) => this.streams.streamsGroupHeartbeat(req);
  streamsGroupDescribe: StreamsGroupApi['streamsGroupDescribe'] = (req) => this.streams.streamsGroupDescribe(req);

  // ─── Share groups (./groups/share) ─────────────────────────────────────────

  shareGroupHeartbeat: ShareGroupApi['shareGroupHeartbeat'] = (req) => this.shares.shareGroupHeartbeat(req);
  shareGroupDescribe: ShareGroupApi['shareGroupDescribe'] = (req) => this.shares.shareGroupDescribe(req);
  shareFetch: ShareGroupApi['shareFetch'] = (req, options) => (this.open(), this.shares.shareFetch(req, options));
  shareAcknowledge: ShareGroupApi['shareAcknowledge'] = (req) => (this.open(), this.shares.shareAcknowledge(req));
  describeShareGroupOffsets: ShareGroupApi['describeShareGroupOffsets'] = (req) => this.shares.describeShareGroupOffsets(req);
  alterShareGroupOffsets: ShareGroupApi['alterShareGroupOffsets'] = (req) => this.shares.alterShareGroupOffsets(req);
  deleteShareGroupOffsets: ShareGroupApi['deleteShareGroupOffsets'] = (req) => this.shares.deleteShareGroupOffsets(req);
  describeShareGroupConfig: ShareGroupApi['describeShareGroupConfig'] = (req) => this.shares.describeShareGroupConfig(req);
  alterShareGroupConfig: ShareGroupApi['alterShareGroupConfig'] = (req) => this.shares.alterShareGroupConfig(req);

  /** Every topic as subscriptions are resolved against it: the queues, by name, id and partition count. */
  private async topicMetadata(): Promise<TopicMetadata[]> {
    return (await this.open().queues.list()).map((q) => ({ name: q.name, id: q.id, partitions: q.partitions.length }));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.groups.close();
    await this.engine.close();
  }
}

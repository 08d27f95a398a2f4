import type { CallOptions, CommittedOffset, Core, PartitionRef } from './core.js';
import type { Engine } from './engine.js';
import { CoreError, isCoreError } from './errors.js';
import { LeasedGroups } from './coordination/leased-groups.js';
import { LocalCoordination, type CoordinationStore } from './coordination/leases.js';
import { joinError, syncError, type CoordinatorOptions, type GroupCoordinator } from './groups/coordinator.js';
import type { FindCoordinatorsResult, GroupDescription, GroupError, GroupListing, OffsetDeletePartitionResult } from './groups/types.js';
import type { ConsumerCoordinatorOptions, ConsumerGroupCoordinator } from './groups/consumer/coordinator.js';
import type { ConsumerGroupDescription, ConsumerGroupError, ConsumerGroupHeartbeatResult, TopicMetadata } from './groups/consumer/types.js';
import { ClassicMembers, upgradedClassicGroup } from './groups/consumer/classic-members.js';
import { storedGroupState } from './groups/consumer/persistence.js';
import { ShareGroupCalls } from './groups/share/calls.js';
import { ShareGroups } from './groups/share/service.js';
import type { ShareGroupApi, ShareGroupError } from './groups/share/types.js';
import { KafkaTransactionCoordinator } from './kafka-transactions/coordinator.js';
import { decideAppends, prepareAppend } from './log/append.js';
import { decideAck } from './native/ack.js';
import { checkCreateQueues, pushCreatingQueues } from './native/create-queues.js';
import { decidePush, preparePush } from './native/push.js';
import { decideTransaction, prepareTransaction } from './native/transaction.js';
import { runCycle } from './streams/cycle.js';
import { FlushGuard } from './streams/flush-guard.js';
import { registerQuery } from './streams/registry.js';
import { getState } from './streams/state.js';
import { requireArray, requireCommittedOffset, requireInteger, requirePartitionCount } from './rules/arguments.js';
import { resolveQueueConfig } from './rules/config.js';
import { checkInitProducer, decideIdempotentInit } from './rules/init-producer.js';
import { describeProducerWindows } from './rules/producer-window.js';
import { checkKvWrite, validateExpectedVersion, validateLifetime, validateOptionalLifetime } from './rules/kv.js';
import { newQueuePartitionNames, validateGroupName, validateKvKey, validateKvNamespace, validateKvPrefix, validateQueueName } from './rules/names.js';
import { checkAckRequest, checkAppendRequest, checkPopRequest, checkReadRequest, requirePartitionRefs } from './rules/requests.js';
import { checkAppendAtRequest } from './rules/copied-batches.js';
import { checkAclBindings, checkAclFilters } from './rules/acls.js';
import { checkTransactionStates, checkTxnGroup, checkTxnProducer } from './rules/kafka-transactions.js';
import { checkQuotaAlterations } from './rules/quotas.js';
import { checkAlterScramCredentials, checkScramUsers, validateScramMechanism, validateScramUser } from './rules/scram-credentials.js';

/** Most entries one kvGetPrefix answers. */
const MAX_PREFIX_LIMIT = 10_000;

/**
 * The core front: the `Core` every caller holds (the gateway, the HTTP API,
 * the RPC server, the bridge). It checks each request once, before any
 * engine sees it (names, numbers and their ranges, arrays, lifetimes:
 * src/core/rules), refuses calls once closed, sends group membership calls
 * to the group coordinator (./groups) and everything else to the engine's
 * domain objects (./engine.ts). A request refused here changes nothing,
 * whatever the engine.
 *
 * Several cores on one PostgreSQL database share groups through coordinator
 * leases (./coordination/leases.ts): a group call is served only by the core
 * holding the group's lease, which it takes when the lease is free or ran
 * out (loading the group's stored membership); the others answer
 * not_coordinator, and the client asks FindCoordinator again, as with Kafka.
 * ./coordination/leased-groups.ts ties the coordinator to its leases; this
 * front only asks it.
 */
export class CoreFront<E extends Engine = Engine> implements Core {
  private readonly coordinator: GroupCoordinator;
  /** KIP-848 consumer groups, beside the classic ones under the same leases. */
  private readonly consumerGroups: ConsumerGroupCoordinator;
  /** Classic members of consumer groups (KIP-848's migration): their JoinGroup, SyncGroup, Heartbeat and LeaveGroup. */
  private readonly classicMembers: ClassicMembers;
  /** Share groups (KIP-932): membership here, records' locks in the engine. */
  private readonly shareGroups: ShareGroups;
  private readonly shares: ShareGroupCalls;
  private readonly transactions: KafkaTransactionCoordinator;
  /** Orders Queen streams' flushes after the main loops' cycles (./streams/flush-guard.ts). */
  private readonly flushGuard: FlushGuard;
  private readonly coordination: CoordinationStore;
  private readonly groups: LeasedGroups;
  /** Whether the engine is shared (commits carry their lease to be checked). */
  private readonly shared: boolean;
  private closed = false;

  constructor(
    /** The storage engine; tests and benchmarks reach its maintenance through it. */
    readonly engine: E,
    coordinatorOptions: Partial<CoordinatorOptions> = {},
    consumerGroupOptions: Partial<ConsumerCoordinatorOptions> = {},
  ) {
    this.shared = engine.coordination !== undefined;
    this.transactions = new KafkaTransactionCoordinator(engine.kafkaTransactions);
    this.flushGuard = new FlushGuard(() => engine.native.now());
    this.coordination = engine.coordination ?? new LocalCoordination();
    this.groups = new LeasedGroups(this.coordination, this.shared, coordinatorOptions, consumerGroupOptions);
    this.coordinator = this.groups.coordinator;
    this.consumerGroups = this.groups.consumerGroups;
    this.classicMembers = new ClassicMembers(this.consumerGroups);
    this.shareGroups = new ShareGroups(engine, () => this.topicMetadata());
    const own = async (group: string) => (await this.groups.own(group)) as { error: ShareGroupError } | object;
    const otherKind = (group: string) => this.coordinator.hasMembers(group) || this.consumerGroups.isConsumerGroup(group);
    this.shares = new ShareGroupCalls(this.shareGroups, own, () => this.topicMetadata(), otherKind);
  }

  /** The partitions of the Kafka topics among these queues, for routing native pushes. */
  private readonly fixedPartitions = (queues: string[]) => this.engine.native.fixedPartitions(queues);

  /** The engine, while the core is open. */
  private open(): E {
    if (this.closed) throw new CoreError('closed', 'The core is closed; open a new one.');
    return this.engine;
  }

  // ─── Queues ────────────────────────────────────────────────────────────────

  async createQueue(req: Parameters<Core['createQueue']>[0]) {
    const engine = this.open();
    const name = validateQueueName(req?.name);
    return engine.queues.create({ name, partitionNames: newQueuePartitionNames(req), config: resolveQueueConfig(req.config), ifNotExists: req.ifNotExists === true });
  }

  async listQueues() {
    return this.open().queues.list();
  }

  async describeQueue(req: { name: string }) {
    const engine = this.open();
    return engine.queues.describe({ name: validateQueueName(req?.name) });
  }

  async deleteQueue(req: { name: string }) {
    const engine = this.open();
    const name = validateQueueName(req?.name);
    await engine.queues.delete({ name });
    // Share groups forget the queue, so a queue created again under its name starts afresh.
    await this.shareGroups.forgetQueue(name);
  }

  async addPartitions(req: Parameters<Core['addPartitions']>[0]) {
    const engine = this.open();
    const name = validateQueueName(req?.name);
    return engine.queues.addPartitions({ name, totalCount: requirePartitionCount(req.totalCount, 'totalCount') });
  }

  async alterQueue(req: Parameters<Core['alterQueue']>[0]) {
    const engine = this.open();
    validateQueueName(req?.name);
    return engine.queues.alter(req);
  }

  // ─── The log ───────────────────────────────────────────────────────────────

  async append(req: Parameters<Core['append']>[0]) {
    const engine = this.open();
    checkAppendRequest(req);
    return engine.log.append(prepareAppend(req, engine.log.appendLimits), decideAppends);
  }

  async read(req: Parameters<Core['read']>[0], options?: CallOptions) {
    const engine = this.open();
    checkReadRequest(req);
    return engine.log.read(req, options);
  }

  async offsets(req: { partitions: PartitionRef[] }) {
    const engine = this.open();
    return engine.log.offsets({ partitions: requirePartitionRefs(req?.partitions) });
  }

  async partitionSizes(req: { partitions: PartitionRef[] }) {
    const engine = this.open();
    return engine.log.sizes({ partitions: requirePartitionRefs(req?.partitions) });
  }

  async offsetForTimestamp(req: Parameters<Core['offsetForTimestamp']>[0]) {
    const engine = this.open();
    requirePartitionRef(req);
    requireInteger(req.timestamp, 'timestamp', -3);
    return engine.log.offsetForTimestamp(req);
  }

  async deleteRecords(req: Parameters<Core['deleteRecords']>[0]) {
    const engine = this.open();
    requirePartitionRef(req);
    requireInteger(req.beforeOffset, 'beforeOffset', -1);
    return engine.log.deleteRecords(req);
  }

  async appendAt(req: Parameters<Core['appendAt']>[0]) {
    const engine = this.open();
    return engine.copies.appendAt({ partitions: checkAppendAtRequest(req) });
  }

  // ─── Producers ─────────────────────────────────────────────────────────────

  async initProducer(req: Parameters<Core['initProducer']>[0]) {
    const engine = this.open();
    const checked = checkInitProducer(req);
    if (checked.transactionalId !== null) return this.transactions.initTransactional({ ...checked, transactionalId: checked.transactionalId });
    return engine.producers.init(checked.producerId, (recordedEpoch) => decideIdempotentInit(checked, recordedEpoch));
  }

  async describeProducers(req: PartitionRef) {
    const engine = this.open();
    requirePartitionRef(req);
    const { windows, transactionStartOf } = await engine.producers.describe(req);
    return { producers: describeProducerWindows(windows, transactionStartOf) };
  }

  // ─── Consumer-group offsets ────────────────────────────────────────────────

  async commitOffsets(req: Parameters<Core['commitOffsets']>[0]) {
    const engine = this.open();
    const group = validateGroupName(req?.group);
    const offsets = checkCommittedOffsets(req.offsets);
    return engine.offsets.commit(req.fence === undefined ? { group, offsets } : { group, offsets, fence: checkFence(req.fence) });
  }

  async fetchOffsets(req: Parameters<Core['fetchOffsets']>[0]) {
    const engine = this.open();
    const group = validateGroupName(req?.group);
    return engine.offsets.fetch({ group, partitions: req.partitions === null || req.partitions === undefined ? null : requirePartitionRefs(req.partitions) });
  }

  async deleteOffsets(req: Parameters<Core['deleteOffsets']>[0]) {
    const engine = this.open();
    const group = validateGroupName(req?.group);
    return engine.offsets.delete({ group, partitions: requirePartitionRefs(req.partitions) });
  }

  async listGroups() {
    return this.open().offsets.listGroups();
  }

  // ─── Kafka transactions (./kafka-transactions/coordinator.ts) ────────────────

  async addPartitionsToTxn(req: Parameters<Core['addPartitionsToTxn']>[0]) {
    this.open();
    const partitions = requirePartitionRefs(req?.partitions);
    return this.transactions.addPartitions({ ...checkTxnProducer(req), partitions, ...(req.verifyOnly === true ? { verifyOnly: true } : {}) });
  }

  async addOffsetsToTxn(req: Parameters<Core['addOffsetsToTxn']>[0]) {
    this.open();
    return this.transactions.addOffsets({ ...checkTxnProducer(req), group: checkTxnGroup(req.group) });
  }

  async txnOffsetCommit(req: Parameters<Core['txnOffsetCommit']>[0]) {
    this.open();
    const who = checkTxnProducer(req);
    return this.transactions.txnOffsetCommit({ ...who, group: checkTxnGroup(req.group), offsets: checkCommittedOffsets(req.offsets), addsGroup: req.addsGroup === true });
  }

  async endTxn(req: Parameters<Core['endTxn']>[0]) {
    this.open();
    const who = checkTxnProducer(req);
    if (typeof req.commit !== 'boolean') throw new CoreError('invalid_argument', 'commit must be true or false.');
    return this.transactions.endTxn({ ...who, commit: req.commit, bumpsEpoch: req.bumpsEpoch === true });
  }

  async describeTransactions(req: { transactionalIds: string[] }) {
    const engine = this.open();
    return { transactions: await engine.kafkaTransactions.describe(requireArray<string>(req?.transactionalIds, 'transactionalIds')) };
  }

  async listTransactions(req: Parameters<Core['listTransactions']>[0]) {
    this.open();
    const states = checkTransactionStates(req?.states);
    const producerIds = requireArray<number>(req.producerIds ?? [], 'producerIds');
    return { transactions: await this.transactions.list({ states, producerIds, ...(req.minDurationMs === undefined ? {} : { minDurationMs: req.minDurationMs }) }) };
  }

  async unstableOffsets(req: { group: string; partitions: PartitionRef[] | null }) {
    this.open();
    const group = validateGroupName(req?.group);
    const partitions = req.partitions === null || req.partitions === undefined ? null : requirePartitionRefs(req.partitions);
    return { partitions: await this.transactions.unstableOffsets(group, partitions) };
  }

  // ─── KV and once ───────────────────────────────────────────────────────────

  async kvGet(req: { ns: string; key: string }) {
    const engine = this.open();
    return engine.kv.get(kvRef(req));
  }

  async kvGetMany(req: { ns: string; keys: string[] }) {
    const engine = this.open();
    const ns = validateKvNamespace(req?.ns);
    return engine.kv.getMany({ ns, keys: requireArray<string>(req.keys, 'keys').map((k) => validateKvKey(k)) });
  }

  async kvGetPrefix(req: { ns: string; prefix: string; limit?: number }) {
    const engine = this.open();
    const ns = validateKvNamespace(req?.ns);
    const prefix = validateKvPrefix(req.prefix);
    return engine.kv.getPrefix({ ns, prefix, limit: req.limit === undefined ? 1000 : requireInteger(req.limit, 'limit', 1, MAX_PREFIX_LIMIT) });
  }

  async kvPut(req: Parameters<Core['kvPut']>[0]) {
    const engine = this.open();
    const write = checkKvWrite(req);
    return engine.kv.put({ ...write, expectedVersion: validateExpectedVersion(req.expectedVersion) });
  }

  async kvPutIfAbsent(req: Parameters<Core['kvPutIfAbsent']>[0]) {
    const engine = this.open();
    return engine.kv.putIfAbsent(checkKvWrite(req));
  }

  async kvDelete(req: { ns: string; key: string }) {
    const engine = this.open();
    return engine.kv.delete(kvRef(req));
  }

  async kvIncr(req: Parameters<Core['kvIncr']>[0]) {
    const engine = this.open();
    const { ns, key } = kvRef(req);
    // `by` is checked where it is added (rules/kv.ts decideIncr): a bigint counter takes any integer.
    return engine.kv.incr({ ns, key, by: req.by, lifetime: validateOptionalLifetime(req.lifetime) });
  }

  async once(req: Parameters<Core['once']>[0]) {
    const engine = this.open();
    const { ns, key } = kvRef(req);
    return engine.kv.once({ ns, key, lifetime: validateLifetime(req.lifetime) });
  }

  // ─── Native push, consume, transaction (./native) ──────────────────────────

  async push(req: Parameters<Core['push']>[0]) {
    const native = this.open().native;
    const push = async () => {
      const call = preparePush(req, native.now(), this.fixedPartitions);
      return native.push(call instanceof Promise ? await call : call, decidePush);
    };
    return checkCreateQueues(req?.createQueues) ? pushCreatingQueues(this, req.items, push) : push();
  }

  async pop(req: Parameters<Core['pop']>[0], options?: CallOptions) {
    const engine = this.open();
    const queue = validateQueueName(req?.queue);
    return engine.native.pop({ queue, owner: req.owner, ...checkPopRequest(req) }, options);
  }

  async ack(req: Parameters<Core['ack']>[0]) {
    const engine = this.open();
    validateQueueName(req?.queue);
    checkAckRequest(req);
    return engine.native.ack(req, decideAck);
  }

  async renewLease(req: Parameters<Core['renewLease']>[0]) {
    const engine = this.open();
    requireInteger(req?.extendMs, 'extendMs', 1);
    return engine.native.renewLease(req);
  }

  async transaction(req: Parameters<Core['transaction']>[0]) {
    const native = this.open().native;
    const transact = async () => {
      const call = prepareTransaction(req, native.now(), this.fixedPartitions);
      return native.transaction(call instanceof Promise ? await call : call, decideTransaction);
    };
    return checkCreateQueues(req?.createQueues) ? pushCreatingQueues(this, req.operations, transact) : transact();
  }

  // ─── Queen streams (./streams), over KV and the native transaction ──────────

  async streamsRegisterQuery(req: Parameters<Core['streamsRegisterQuery']>[0]) {
    this.open();
    return registerQuery(this, req);
  }

  async streamsCycle(req: Parameters<Core['streamsCycle']>[0]) {
    const native = this.open().native;
    return runCycle(this, this.flushGuard, req, native.now());
  }

  async streamsStateGet(req: Parameters<Core['streamsStateGet']>[0]) {
    this.open();
    return { rows: await getState(this, this.flushGuard, req) };
  }

  // ─── ACLs, client quotas, SCRAM credentials ────────────────────────────────

  async createAcls(req: Parameters<Core['createAcls']>[0]) {
    const engine = this.open();
    return engine.access.createAcls({ bindings: checkAclBindings(req?.bindings) });
  }

  async listAcls() {
    return this.open().access.listAcls();
  }

  async deleteAcls(req: Parameters<Core['deleteAcls']>[0]) {
    const engine = this.open();
    return engine.access.deleteAcls({ filters: checkAclFilters(req?.filters) });
  }

  async alterClientQuotas(req: Parameters<Core['alterClientQuotas']>[0]) {
    const engine = this.open();
    return engine.access.alterClientQuotas({ alterations: checkQuotaAlterations(req) });
  }

  async listClientQuotas() {
    return this.open().access.listClientQuotas();
  }

  async describeScramCredentials(req: Parameters<Core['describeScramCredentials']>[0]) {
    const engine = this.open();
    return engine.scramCredentials.describe({ users: checkScramUsers(req?.users) });
  }

  async alterScramCredentials(req: Parameters<Core['alterScramCredentials']>[0]) {
    const engine = this.open();
    return engine.scramCredentials.alter(checkAlterScramCredentials(req));
  }

  async scramCredential(req: Parameters<Core['scramCredential']>[0]) {
    const engine = this.open();
    return engine.scramCredentials.get({ user: validateScramUser(req?.user), mechanism: validateScramMechanism(req.mechanism) });
  }

  // ─── Consumer groups: the coordinator (./groups), offsets in the engine ────

  async joinGroup(req: Parameters<Core['joinGroup']>[0], options?: CallOptions) {
    const held = await this.groups.own(req?.group);
    if ('error' in held) return joinError(held.error, req.memberId);
    // A consumer group with members takes a classic member as one of its own (KIP-848's migration, as Kafka 4 does); an empty one becomes classic.
    if (this.consumerGroups.hasMembers(req.group)) {
      const joined = this.classicMembers.join(req, await this.topicMetadata());
      return (await this.groups.saveConsumerGroup(req.group)) ? joined : joinError('not_coordinator', req.memberId);
    }
    if (this.consumerGroups.isConsumerGroup(req.group)) await this.groups.forgetConsumerGroup(req.group);
    return this.coordinator.join(req, options?.signal);
  }

  async syncGroup(req: Parameters<Core['syncGroup']>[0], options?: CallOptions) {
    const held = await this.groups.own(req?.group);
    if ('error' in held) return syncError(held.error);
    if (this.classicMembers.isClassicMember(req.group, req.memberId)) {
      const synced = this.classicMembers.sync(req, await this.topicMetadata());
      return (await this.groups.saveConsumerGroup(req.group)) ? synced : syncError('not_coordinator');
    }
    return this.coordinator.sync(req, options?.signal);
  }

  async heartbeat(req: Parameters<Core['heartbeat']>[0]) {
    const held = await this.groups.own(req?.group);
    if ('error' in held) return { error: held.error };
    if (this.classicMembers.isClassicMember(req.group, req.memberId)) {
      const answer = this.classicMembers.heartbeat(req, await this.topicMetadata());
      return (await this.groups.saveConsumerGroup(req.group)) ? answer : { error: 'not_coordinator' as const };
    }
    return this.coordinator.heartbeat(req);
  }

  async leaveGroup(req: Parameters<Core['leaveGroup']>[0]) {
    const held = await this.groups.own(req?.group);
    if ('error' in held) return { error: held.error, members: [] };
    if (req.members.length > 0 && req.members.every((m) => this.classicMembers.isClassicMember(req.group, m.memberId))) {
      const left = this.classicMembers.leave(req, await this.topicMetadata());
      return (await this.groups.saveConsumerGroup(req.group)) ? left : { error: 'not_coordinator' as const, members: [] };
    }
    return this.coordinator.leave(req);
  }

  async findCoordinators(req: Parameters<Core['findCoordinators']>[0]) {
    const reachable = Array.isArray(req?.reachable) ? req.reachable : null;
    const node = this.coordination.nodeId;
    const coordinators: FindCoordinatorsResult['coordinators'] = [];
    for (const key of req.keys) {
      if (typeof key !== 'string' || key === '') {
        coordinators.push({ key, owner: node });
      } else if (req.kind === 'transaction') {
        const taken = await this.coordination.take('transaction', key, reachable);
        coordinators.push({ key, owner: taken.held ? node : taken.owner });
      } else {
        const held = await this.groups.own(key, reachable);
        coordinators.push({ key, owner: 'error' in held ? held.owner ?? null : node });
      }
    }
    return { node, coordinators };
  }

  async describeGroups(req: { groups: string[] }) {
    const elsewhere = new Set<string>();
    for (const group of req.groups) if ('error' in (await this.groups.own(group))) elsewhere.add(group);
    const described: GroupDescription[] = this.coordinator
      .describe(req.groups)
      .map((d) => (elsewhere.has(d.group) ? { ...d, error: 'not_coordinator' as const } : d));
    // A group known only by its committed offsets is Empty, not Dead, with no
    // protocol type: Kafka's "simple" group of commits made from outside a group.
    const withOffsets = await this.groupsWithOffsets();
    return {
      groups: described.map((d) =>
        d.state === 'Dead' && withOffsets.has(d.group) && !this.consumerGroups.isConsumerGroup(d.group) ? { ...d, state: 'Empty' as const, protocolType: '', generationId: 0 } : d,
      ),
    };
  }

  async listGroupStates(req: Parameters<Core['listGroupStates']>[0]) {
    const live = new Map<string, GroupListing>(this.coordinator.list().map((g) => [g.group, g]));
    for (const { group, state } of this.consumerGroups.list()) live.set(group, { group, protocolType: 'consumer', state, groupType: 'consumer' });
    for (const { group, state } of await this.shareGroups.listWithStored()) live.set(group, { group, protocolType: 'share', state, groupType: 'share' });
    // Groups other cores coordinate, as they last stored them.
    for (const { group, stored } of await this.coordination.storedConsumerGroups()) {
      if (!live.has(group) && stored.members.length > 0) live.set(group, { group, protocolType: 'consumer', state: storedGroupState(stored), groupType: 'consumer' });
    }
    for (const { group, stored } of await this.coordination.storedGroups()) {
      if (!live.has(group)) live.set(group, { group, protocolType: stored.protocolType ?? '', state: stored.state });
    }
    for (const group of await this.groupsWithOffsets()) {
      if (!live.has(group)) live.set(group, { group, protocolType: '', state: 'Empty' });
    }
    const wanted = req.states && req.states.length > 0 ? new Set<string>(req.states) : null;
    return { groups: [...live.values()].filter((g) => !wanted || wanted.has(g.state)) };
  }

  async deleteGroups(req: { groups: string[] }) {
    const withOffsets = await this.groupsWithOffsets();
    const results: { group: string; error: GroupError | null }[] = [];
    for (const group of req.groups) {
      if ('error' in (await this.groups.own(group))) {
        results.push({ group, error: 'not_coordinator' });
        continue;
      }
      if (this.coordinator.hasMembers(group) || this.consumerGroups.hasMembers(group) || this.shareGroups.hasMembers(group)) {
        results.push({ group, error: 'non_empty_group' });
        continue;
      }
      if (this.shareGroups.isShareGroup(group) || (await this.shareGroups.hasState(group))) {
        await this.shareGroups.deleteOffsets(group, null);
        this.shareGroups.drop(group);
        results.push({ group, error: null });
        continue;
      }
      if (!withOffsets.has(group) && !this.coordinator.knows(group) && !this.consumerGroups.isConsumerGroup(group)) {
        results.push({ group, error: 'group_id_not_found' });
        continue;
      }
      const { offsets } = await this.fetchOffsets({ group, partitions: null });
      if (offsets.length > 0) await this.deleteOffsets({ group, partitions: offsets.map(({ queue, partition }) => ({ queue, partition })) });
      this.coordinator.remove(group);
      await this.groups.forgetConsumerGroup(group);
      await this.coordination.deleteGroup(group);
      await this.groups.release(group);
      results.push({ group, error: null });
    }
    return { groups: results };
  }

  async commitGroupOffsets(req: Parameters<Core['commitGroupOffsets']>[0]) {
    const held = await this.groups.own(req?.group);
    if ('error' in held) return { error: held.error };
    const error = this.consumerGroups.isConsumerGroup(req.group)
      ? this.consumerGroups.checkMember(req.group, req.memberId, req.generationId)
      : this.coordinator.checkCommit(req);
    if (error) return { error: commitError(error) };
    try {
      await this.commitOffsets({
        group: req.group,
        offsets: req.offsets,
        ...(this.shared ? { fence: { owner: this.coordination.nodeId, epoch: held.epoch } } : {}),
      });
    } catch (e) {
      // Another node took the group while this one decided: the commit is refused whole, as Kafka's stale coordinator's would be.
      if (isCoreError(e) && e.code === 'not_coordinator') {
        this.groups.lost(req.group);
        return { error: 'not_coordinator' as const };
      }
      throw e;
    }
    return { error: null };
  }

  async deleteGroupOffsets(req: Parameters<Core['deleteGroupOffsets']>[0]) {
    const held = await this.groups.own(req?.group);
    if ('error' in held) return { error: held.error, partitions: [] };
    const withOffsets = await this.groupsWithOffsets();
    if (!withOffsets.has(req.group) && !this.coordinator.knows(req.group) && !this.consumerGroups.isConsumerGroup(req.group)) {
      return { error: 'group_id_not_found' as const, partitions: [] };
    }
    const subscribed = this.coordinator.hasMembers(req.group)
      ? this.coordinator.subscribedTopics(req.group)
      : this.consumerGroups.subscribedTopicNames(req.group, await this.topicMetadata());
    const partitions: OffsetDeletePartitionResult[] = req.partitions.map((p) => ({
      ...p,
      error: subscribed.has(p.queue) ? 'group_subscribed_to_topic' : null,
    }));
    const deletable = partitions.filter((p) => p.error === null).map(({ queue, partition }) => ({ queue, partition }));
    if (deletable.length > 0) await this.deleteOffsets({ group: req.group, partitions: deletable });
    return { error: null, partitions };
  }

  // ─── KIP-848 consumer groups (./groups/consumer) ───────────────────────────

  async consumerGroupHeartbeat(req: Parameters<Core['consumerGroupHeartbeat']>[0]): Promise<ConsumerGroupHeartbeatResult> {
    const failed = (error: ConsumerGroupError, errorMessage: string | null = null) => ({ error, errorMessage, memberId: req.memberId, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null });
    const held = await this.groups.own(req?.group);
    if ('error' in held) return failed(held.error);
    const topics = await this.topicMetadata();
    if (this.coordinator.hasMembers(req.group)) {
      // KIP-848's online upgrade: a Stable classic group of the consumer protocol becomes a consumer group, its members classic members of it.
      const upgraded = upgradedClassicGroup(this.coordinator.snapshot(req.group)!, topics);
      if (upgraded === null) return failed('group_id_not_found', `Group ${req.group} is not a consumer group: it has members of the classic protocol.`);
      this.coordinator.remove(req.group);
      this.consumerGroups.drop(req.group);
      this.consumerGroups.restore(req.group, upgraded);
    }
    // An empty classic group becomes a consumer group, as Kafka converts it.
    if (this.coordinator.knows(req.group)) this.coordinator.remove(req.group);
    const result = this.consumerGroups.heartbeat(req, topics);
    // What the heartbeat changed is stored under the group's lease before it is answered, as Kafka writes it before answering.
    if (!(await this.groups.saveConsumerGroup(req.group))) return failed('not_coordinator');
    return result;
  }

  async consumerGroupDescribe(req: { groups: string[] }): Promise<{ groups: ConsumerGroupDescription[] }> {
    const topics = await this.topicMetadata();
    const groups: ConsumerGroupDescription[] = [];
    for (const group of req.groups) {
      const held = await this.groups.own(group);
      const [described] = this.consumerGroups.describe([group], topics);
      if ('error' in held) groups.push({ ...described!, error: held.error, errorMessage: null });
      else if (!this.consumerGroups.isConsumerGroup(group) && this.coordinator.knows(group)) {
        groups.push({ ...described!, errorMessage: `Group ${group} is not a consumer group.` });
      } else groups.push(described!);
    }
    return { groups };
  }

  async checkOffsetFetchMember(req: { group: string; memberId: string; memberEpoch: number }) {
    const held = await this.groups.own(req?.group);
    if ('error' in held) return { error: held.error };
    if (!this.consumerGroups.isConsumerGroup(req.group)) return { error: null };
    return { error: this.consumerGroups.checkMember(req.group, req.memberId, req.memberEpoch) };
  }

  // ─── Share groups (./groups/share) ─────────────────────────────────────────

  shareGroupHeartbeat: ShareGroupApi['shareGroupHeartbeat'] = (req) => this.shares.shareGroupHeartbeat(req);
  shareGroupDescribe: ShareGroupApi['shareGroupDescribe'] = (req) => this.shares.shareGroupDescribe(req);
  shareFetch = (req: Parameters<ShareGroupApi['shareFetch']>[0], options?: CallOptions) => (this.open(), this.shares.shareFetch(req, options));
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

  private async groupsWithOffsets(): Promise<Set<string>> {
    return new Set((await this.listGroups()).groups.map((g) => g.group));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.groups.close();
    await this.engine.close();
  }
}

/** A consumer group's refusal of a commit, in the classic commit's terms (both answer OffsetCommit). */
function commitError(error: GroupError | ConsumerGroupError): GroupError {
  return error === 'fenced_member_epoch' ? 'stale_member_epoch' : (error as GroupError);
}

/** A commit's fence: the lease (owner, epoch) its group coordinator decided under. */
function checkFence(fence: unknown): { owner: string; epoch: number } {
  const f = fence as { owner?: unknown; epoch?: unknown } | null;
  if (typeof f !== 'object' || f === null || typeof f.owner !== 'string' || f.owner === '') {
    throw new CoreError('invalid_argument', 'fence must be an object with the lease owner (a non-empty string) and its epoch.');
  }
  return { owner: f.owner, epoch: requireInteger(f.epoch, 'fence.epoch', 0) };
}

/** A (queue, partition) reference for a call that fails whole. */
function requirePartitionRef(ref: PartitionRef): void {
  validateQueueName(ref?.queue);
  requireInteger(ref.partition, 'partition');
}

/**
 * Committed offsets, every field checked and filled (leaderEpoch -1 and
 * metadata null when absent): OffsetCommit's and TxnOffsetCommit's alike.
 * Everything is checked before anything is written.
 */
function checkCommittedOffsets(value: unknown): CommittedOffset[] {
  return requireArray<CommittedOffset>(value, 'offsets').map((o, i) => {
    const queue = validateQueueName(o?.queue);
    const partition = requireInteger(o.partition, `offsets[${i}].partition`);
    const offset = requireCommittedOffset(o.offset, `offsets[${i}].offset`);
    const leaderEpoch = o.leaderEpoch === undefined ? -1 : requireInteger(o.leaderEpoch, `offsets[${i}].leaderEpoch`, -1);
    if (o.metadata !== null && o.metadata !== undefined && typeof o.metadata !== 'string') {
      throw new CoreError('invalid_argument', `offsets[${i}].metadata must be a string or null.`);
    }
    return { queue, partition, offset, leaderEpoch, metadata: o.metadata ?? null };
  });
}

function kvRef(req: { ns: string; key: string }): { ns: string; key: string } {
  return { ns: validateKvNamespace(req?.ns), key: validateKvKey(req.key) };
}

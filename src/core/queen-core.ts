import type { CallOptions, Core } from './core.js';
import { isCoreError } from './errors.js';
import { GroupLeases, LocalCoordination, type CoordinationStore } from './coordination/leases.js';
import { GroupCoordinator, joinError, syncError, type CoordinatorOptions } from './groups/coordinator.js';
import type {
  CommitMembership,
  FindCoordinatorsRequest,
  FindCoordinatorsResult,
  GroupDescription,
  GroupCoordinatorApi,
  GroupError,
  GroupListing,
  GroupState,
  HeartbeatRequest,
  JoinGroupRequest,
  JoinGroupResult,
  LeaveGroupRequest,
  LeaveGroupResult,
  OffsetDeletePartitionResult,
  SyncGroupRequest,
  SyncGroupResult,
} from './groups/types.js';

/**
 * The whole core as the gateway, the HTTP API and the RPC see it: an engine
 * (memory or PostgreSQL: queues, the log, offsets, KV, native messaging) plus
 * the group coordinator. The engine's calls pass straight through; group calls
 * go to the coordinator, which uses the engine for the durable part (offsets).
 *
 * Several cores on one PostgreSQL database share groups through coordinator
 * leases (./coordination/leases.ts): a group call is served only by the core
 * holding the group's lease, which it takes when the lease is free or ran
 * out (loading the group's stored membership); the others answer
 * not_coordinator, and the client asks FindCoordinator again, as with Kafka.
 */
export interface QueenCore extends Core, GroupCoordinatorApi {}

/** An engine that several cores can share brings its own coordination store. */
export type CoordinatedEngine = Core & { coordination?: CoordinationStore };

type Held = { epoch: number } | { error: 'not_coordinator' | 'coordinator_not_available' };

export class CoordinatedCore implements QueenCore {
  private readonly coordinator: GroupCoordinator;
  private readonly coordination: CoordinationStore;
  private readonly leases: GroupLeases;
  /** Whether the engine is shared (commits carry their lease to be checked). */
  private readonly shared: boolean;

  constructor(
    private readonly engine: CoordinatedEngine,
    coordinatorOptions: Partial<CoordinatorOptions> = {},
  ) {
    this.shared = engine.coordination !== undefined;
    this.coordination = engine.coordination ?? new LocalCoordination();
    const store = this.shared
      ? {
          save: (group: string, stored: Parameters<CoordinationStore['saveGroup']>[2]) => {
            const epoch = this.leases.epochOf(group);
            if (epoch === null) return Promise.resolve(false);
            return this.coordination.saveGroup(group, epoch, stored).then((owned) => {
              if (!owned) this.leases.forget(group);
              return owned;
            });
          },
        }
      : null;
    this.coordinator = new GroupCoordinator(coordinatorOptions, store);
    this.leases = new GroupLeases(this.coordination, {
      active: () => this.coordinator.activeGroups(),
      lost: (group) => this.coordinator.drop(group),
    });
  }

  /**
   * Holds the group's lease before a group call is answered (loading the
   * group when the lease is newly this node's). An id the coordinator will
   * refuse anyway (empty) takes no lease.
   */
  private async own(group: string, reachable: readonly string[] | null = null): Promise<Held & { owner?: string }> {
    if (typeof group !== 'string' || group === '') return { epoch: 0 };
    let hold;
    try {
      hold = await this.leases.hold(group, reachable, async () => {
        const stored = await this.coordination.loadGroup(group);
        if (stored) this.coordinator.restore(group, stored);
      });
    } catch (e) {
      // The store is away: a retriable answer, as Kafka's coordinator gives while it loads a group.
      if (isCoreError(e) && (e.code === 'unavailable' || e.code === 'closed')) return { error: 'coordinator_not_available' };
      throw e;
    }
    return hold.held ? { epoch: hold.epoch } : { error: 'not_coordinator', owner: hold.owner };
  }

  // ─── The engine's calls, unchanged ────────────────────────────────────────

  createQueue: Core['createQueue'] = (req) => this.engine.createQueue(req);
  listQueues: Core['listQueues'] = () => this.engine.listQueues();
  describeQueue: Core['describeQueue'] = (req) => this.engine.describeQueue(req);
  deleteQueue: Core['deleteQueue'] = (req) => this.engine.deleteQueue(req);
  addPartitions: Core['addPartitions'] = (req) => this.engine.addPartitions(req);
  alterQueue: Core['alterQueue'] = (req) => this.engine.alterQueue(req);
  append: Core['append'] = (req) => this.engine.append(req);
  read: Core['read'] = (req, options) => this.engine.read(req, options);
  offsets: Core['offsets'] = (req) => this.engine.offsets(req);
  offsetForTimestamp: Core['offsetForTimestamp'] = (req) => this.engine.offsetForTimestamp(req);
  deleteRecords: Core['deleteRecords'] = (req) => this.engine.deleteRecords(req);
  initProducer: Core['initProducer'] = (req) => this.engine.initProducer(req);
  describeProducers: Core['describeProducers'] = (req) => this.engine.describeProducers(req);
  commitOffsets: Core['commitOffsets'] = (req) => this.engine.commitOffsets(req);
  fetchOffsets: Core['fetchOffsets'] = (req) => this.engine.fetchOffsets(req);
  deleteOffsets: Core['deleteOffsets'] = (req) => this.engine.deleteOffsets(req);
  listGroups: Core['listGroups'] = () => this.engine.listGroups();
  kvGet: Core['kvGet'] = (req) => this.engine.kvGet(req);
  kvGetMany: Core['kvGetMany'] = (req) => this.engine.kvGetMany(req);
  kvGetPrefix: Core['kvGetPrefix'] = (req) => this.engine.kvGetPrefix(req);
  kvPut: Core['kvPut'] = (req) => this.engine.kvPut(req);
  kvPutIfAbsent: Core['kvPutIfAbsent'] = (req) => this.engine.kvPutIfAbsent(req);
  kvDelete: Core['kvDelete'] = (req) => this.engine.kvDelete(req);
  kvIncr: Core['kvIncr'] = (req) => this.engine.kvIncr(req);
  once: Core['once'] = (req) => this.engine.once(req);
  push: Core['push'] = (req) => this.engine.push(req);
  pop: Core['pop'] = (req, options) => this.engine.pop(req, options);
  ack: Core['ack'] = (req) => this.engine.ack(req);
  renewLease: Core['renewLease'] = (req) => this.engine.renewLease(req);
  transaction: Core['transaction'] = (req) => this.engine.transaction(req);
  addPartitionsToTxn: Core['addPartitionsToTxn'] = (req) => this.engine.addPartitionsToTxn(req);
  addOffsetsToTxn: Core['addOffsetsToTxn'] = (req) => this.engine.addOffsetsToTxn(req);
  txnOffsetCommit: Core['txnOffsetCommit'] = (req) => this.engine.txnOffsetCommit(req);
  endTxn: Core['endTxn'] = (req) => this.engine.endTxn(req);
  describeTransactions: Core['describeTransactions'] = (req) => this.engine.describeTransactions(req);
  listTransactions: Core['listTransactions'] = (req) => this.engine.listTransactions(req);
  unstableOffsets: Core['unstableOffsets'] = (req) => this.engine.unstableOffsets(req);
  createAcls: Core['createAcls'] = (req) => this.engine.createAcls(req);
  listAcls: Core['listAcls'] = () => this.engine.listAcls();
  deleteAcls: Core['deleteAcls'] = (req) => this.engine.deleteAcls(req);
  alterClientQuotas: Core['alterClientQuotas'] = (req) => this.engine.alterClientQuotas(req);
  listClientQuotas: Core['listClientQuotas'] = () => this.engine.listClientQuotas();
  describeScramCredentials: Core['describeScramCredentials'] = (req) => this.engine.describeScramCredentials(req);
  alterScramCredentials: Core['alterScramCredentials'] = (req) => this.engine.alterScramCredentials(req);
  scramCredential: Core['scramCredential'] = (req) => this.engine.scramCredential(req);
  appendAt: Core['appendAt'] = (req) => this.engine.appendAt(req);

  async close(): Promise<void> {
    this.leases.close();
    this.coordinator.close();
    await this.engine.close();
  }

  // ─── The coordinator ──────────────────────────────────────────────────────

  async joinGroup(req: JoinGroupRequest, options?: CallOptions): Promise<JoinGroupResult> {
    const held = await this.own(req?.group);
    if ('error' in held) return joinError(held.error, req.memberId);
    return this.coordinator.join(req, options?.signal);
  }

  async syncGroup(req: SyncGroupRequest, options?: CallOptions): Promise<SyncGroupResult> {
    const held = await this.own(req?.group);
    if ('error' in held) return syncError(held.error);
    return this.coordinator.sync(req, options?.signal);
  }

  async heartbeat(req: HeartbeatRequest): Promise<{ error: GroupError | null }> {
    const held = await this.own(req?.group);
    if ('error' in held) return { error: held.error };
    return this.coordinator.heartbeat(req);
  }

  async leaveGroup(req: LeaveGroupRequest): Promise<LeaveGroupResult> {
    const held = await this.own(req?.group);
    if ('error' in held) return { error: held.error, members: [] };
    return this.coordinator.leave(req);
  }

  async findCoordinators(req: FindCoordinatorsRequest): Promise<FindCoordinatorsResult> {
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
        const held = await this.own(key, reachable);
        coordinators.push({ key, owner: 'error' in held ? held.owner ?? null : node });
      }
    }
    return { node, coordinators };
  }

  async describeGroups(req: { groups: string[] }) {
    const elsewhere = new Set<string>();
    for (const group of req.groups) if ('error' in (await this.own(group))) elsewhere.add(group);
    const described: GroupDescription[] = this.coordinator
      .describe(req.groups)
      .map((d) => (elsewhere.has(d.group) ? { ...d, error: 'not_coordinator' as const } : d));
    // A group known only by its committed offsets is Empty, not Dead, with no
    // protocol type: Kafka's "simple" group of commits made from outside a group.
    const withOffsets = new Set((await this.engine.listGroups()).groups.map((g) => g.group));
    return {
      groups: described.map((d) =>
        d.state === 'Dead' && withOffsets.has(d.group) ? { ...d, state: 'Empty' as const, protocolType: '', generationId: 0 } : d,
      ),
    };
  }

  async listGroupStates(req: { states?: GroupState[] }): Promise<{ groups: GroupListing[] }> {
    const live = new Map(this.coordinator.list().map((g) => [g.group, g]));
    // Groups other cores coordinate, as they last stored them.
    for (const { group, stored } of await this.coordination.storedGroups()) {
      if (!live.has(group)) live.set(group, { group, protocolType: stored.protocolType ?? '', state: stored.state });
    }
    for (const g of (await this.engine.listGroups()).groups) {
      if (!live.has(g.group)) live.set(g.group, { group: g.group, protocolType: '', state: 'Empty' });
    }
    const wanted = req.states && req.states.length > 0 ? new Set(req.states) : null;
    return { groups: [...live.values()].filter((g) => !wanted || wanted.has(g.state)) };
  }

  async deleteGroups(req: { groups: string[] }) {
    const withOffsets = new Set((await this.engine.listGroups()).groups.map((g) => g.group));
    const results: { group: string; error: GroupError | null }[] = [];
    for (const group of req.groups) {
      if ('error' in (await this.own(group))) {
        results.push({ group, error: 'not_coordinator' });
        continue;
      }
      if (this.coordinator.hasMembers(group)) {
        results.push({ group, error: 'non_empty_group' });
        continue;
      }
      if (!withOffsets.has(group) && !this.coordinator.knows(group)) {
        results.push({ group, error: 'group_id_not_found' });
        continue;
      }
      const { offsets } = await this.engine.fetchOffsets({ group, partitions: null });
      if (offsets.length > 0) await this.engine.deleteOffsets({ group, partitions: offsets.map(({ queue, partition }) => ({ queue, partition })) });
      this.coordinator.remove(group);
      await this.coordination.deleteGroup(group);
      await this.leases.release(group);
      results.push({ group, error: null });
    }
    return { groups: results };
  }

  async commitGroupOffsets(req: CommitMembership & Parameters<GroupCoordinatorApi['commitGroupOffsets']>[0]) {
    const held = await this.own(req?.group);
    if ('error' in held) return { error: held.error };
    const error = this.coordinator.checkCommit(req);
    if (error) return { error };
    try {
      await this.engine.commitOffsets({
        group: req.group,
        offsets: req.offsets,
        ...(this.shared ? { fence: { owner: this.coordination.nodeId, epoch: held.epoch } } : {}),
      });
    } catch (e) {
      // Another node took the group while this one decided: the commit is refused whole, as Kafka's stale coordinator's would be.
      if (isCoreError(e) && e.code === 'not_coordinator') {
        this.leases.forget(req.group);
        this.coordinator.drop(req.group);
        return { error: 'not_coordinator' as const };
      }
      throw e;
    }
    return { error: null };
  }

  async deleteGroupOffsets(req: { group: string; partitions: { queue: string; partition: number }[] }) {
    const held = await this.own(req?.group);
    if ('error' in held) return { error: held.error, partitions: [] };
    const withOffsets = new Set((await this.engine.listGroups()).groups.map((g) => g.group));
    if (!withOffsets.has(req.group) && !this.coordinator.knows(req.group)) {
      return { error: 'group_id_not_found' as const, partitions: [] };
    }
    const subscribed = this.coordinator.hasMembers(req.group) ? this.coordinator.subscribedTopics(req.group) : new Set<string>();
    const partitions: OffsetDeletePartitionResult[] = req.partitions.map((p) => ({
      ...p,
      error: subscribed.has(p.queue) ? 'group_subscribed_to_topic' : null,
    }));
    const deletable = partitions.filter((p) => p.error === null).map(({ queue, partition }) => ({ queue, partition }));
    if (deletable.length > 0) await this.engine.deleteOffsets({ group: req.group, partitions: deletable });
    return { error: null, partitions };
  }
}

/** Puts the group coordinator in front of an engine. */
export function withGroupCoordinator(engine: Core, options: Partial<CoordinatorOptions> = {}): QueenCore {
  return new CoordinatedCore(engine, options);
}


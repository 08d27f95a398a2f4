import { uniformAssignor } from '../consumer/assignors.js';
import { reconcile } from '../consumer/reconciliation.js';
import { ConsumerTimers, stopTimers } from '../consumer/timers.js';
import { JOIN_EPOCH, LEAVE_EPOCH, STATIC_LEAVE_EPOCH, type TopicMetadata } from '../consumer/types.js';
import { describeStreamsGroup, newStreamsGroup, streamsGroupState, toTaskIds, type StreamsGroup, type StreamsMember } from './group.js';
import { restoredStreamsGroup, storedStreamsGroup, type StoredStreamsGroup } from './persistence.js';
import { configureTopology } from './topology.js';
import { checkStreamsHeartbeat } from './validation.js';
import {
  STREAMS_STATUS,
  type StreamsGroupDescription,
  type StreamsGroupError,
  type StreamsGroupHeartbeatRequest,
  type StreamsGroupHeartbeatResult,
  type StreamsGroupState,
  type StreamsGroupStatus,
  type TaskIds,
} from './types.js';

/**
 * Kafka Streams' group protocol (KIP-1071), in the core beside the consumer
 * group coordinator. Members join with their application's topology; the
 * coordinator checks it against the topics (./topology.ts: source topics,
 * repartition counts, copartitioning, internal topics to create), turns it
 * into tasks (a subtopology's partitions), and assigns active tasks with a
 * sticky, even assignor (the consumer groups' uniform one, a subtopology in
 * place of a topic). Each member moves to its target one heartbeat at a time
 * with the consumer groups' reconciliation: a task is revoked before anyone
 * else is given it. Group and member epochs, session and rebalance timeouts
 * work as in a consumer group (../consumer/coordinator.ts).
 *
 * Standby and warm-up tasks are not assigned (Kafka's group config
 * streams.num.standby.replicas defaults to 0); static membership is not
 * kept: an instance id is described, and a member leaving with epoch -2
 * leaves like one with -1.
 */

export interface StreamsCoordinatorOptions {
  /** Kafka's streams.heartbeat.interval.ms. */
  heartbeatIntervalMs: number;
  /** Kafka's streams.session.timeout.ms. */
  sessionTimeoutMs: number;
  maxGroupSize: number;
  /** Kafka's streams.initial.rebalance.delay.ms: a group's first assignment waits this long after its first member joins, so members starting together share it. */
  initialRebalanceDelayMs: number;
}

export const DEFAULT_STREAMS_COORDINATOR_OPTIONS: Readonly<StreamsCoordinatorOptions> = Object.freeze({ heartbeatIntervalMs: 5000, sessionTimeoutMs: 45_000, maxGroupSize: 1000, initialRebalanceDelayMs: 3000 });

/** Kafka 4.4's answers for what it does not tune here: a warm-up's acceptable lag and how often members report task offsets. */
const ACCEPTABLE_RECOVERY_LAG = 10_000;
const TASK_OFFSET_INTERVAL_MS = 60_000;

function failed(error: StreamsGroupError, message: string | null, memberId: string): StreamsGroupHeartbeatResult {
  // Kafka answers an error with the response's defaults: epoch 0, no interval, an empty status list.
  return {
    error, errorMessage: message, memberId, memberEpoch: 0, heartbeatIntervalMs: 0, acceptableRecoveryLag: -1, taskOffsetIntervalMs: 0,
    status: [], activeTasks: null, standbyTasks: null, warmupTasks: null, endpointInformationEpoch: 0, partitionsByUserEndpoint: null, internalTopicsToCreate: [],
  };
}

const asOwned = (tasks: TaskIds[] | null) => tasks && tasks.map((t) => ({ topicId: t.subtopologyId, partitions: t.partitions }));

export class StreamsGroupCoordinator {
  private readonly groups = new Map<string, StreamsGroup>();
  private readonly options: StreamsCoordinatorOptions;
  /** Each member's session and revocation timers, as a consumer group's (../consumer/timers.ts). */
  private readonly timers: ConsumerTimers<StreamsMember, StreamsGroup>;

  constructor(
    options: Partial<StreamsCoordinatorOptions> = {},
    /** A group changed on a timer (a member removed). */
    private readonly changed: (groupId: string) => void = () => {},
  ) {
    this.options = { ...DEFAULT_STREAMS_COORDINATOR_OPTIONS, ...options };
    this.timers = new ConsumerTimers(this.options.sessionTimeoutMs, (group, member) => this.expire(group, member));
  }

  /** The group as it is stored, or null when this coordinator does not hold it. */
  snapshot(groupId: string): StoredStreamsGroup | null {
    const group = this.groups.get(groupId);
    return group ? storedStreamsGroup(group) : null;
  }

  /** Takes over a stored group (this node newly holds its lease): members keep their epochs and tasks, their sessions start now. */
  restore(groupId: string, stored: StoredStreamsGroup): void {
    if (this.groups.has(groupId)) return;
    const group = restoredStreamsGroup(groupId, stored);
    this.groups.set(groupId, group);
    for (const member of group.members.values()) {
      this.timers.touchSession(group, member);
      this.timers.watchRevocation(group, member, 'stable');
    }
  }

  // Long because it is the heartbeat's whole order: checks, membership, topology, target, reconciliation, answer.
  heartbeat(req: StreamsGroupHeartbeatRequest, topics: readonly TopicMetadata[]): StreamsGroupHeartbeatResult {
    const invalid = checkStreamsHeartbeat(req);
    if (invalid) return failed(invalid.error, invalid.message, req.memberId);
    if (req.memberEpoch === LEAVE_EPOCH || req.memberEpoch === STATIC_LEAVE_EPOCH) return this.leave(req);
    const group = req.memberEpoch === JOIN_EPOCH ? this.groupFor(req.group) : this.groups.get(req.group);
    if (!group) return failed('unknown_member_id', `Member ${req.memberId} is not a member of group ${req.group}.`, req.memberId);
    const topologyBefore = group.topology;
    // A group's first member starts the initial rebalance delay: no assignment until it has passed.
    if (group.members.size === 0 && req.memberEpoch === JOIN_EPOCH) group.assignmentDelayedUntil = Date.now() + this.options.initialRebalanceDelayMs;
    const joined = req.memberEpoch === JOIN_EPOCH ? this.join(group, req) : this.knownMember(group, req);
    if ('error' in joined) return failed(joined.error, joined.message, req.memberId);
    const member = joined;
    const isNew = member.memberEpoch === JOIN_EPOCH && member.lastAnswered === null;
    this.update(member, req);
    if (req.shutdownApplication) group.shutdownRequested = true;
    group.configured = group.topology && configureTopology(group.topology, topics);
    const taskCountsKey = JSON.stringify(Object.fromEntries(group.configured?.taskCounts ?? []));
    // A new member, a new topology and changed task counts are one change of the group: one epoch.
    // The initial delay over, the tasks it held back are assigned at a new epoch.
    const delayOver = group.assignmentDelayedUntil > 0 && !this.delayed(group);
    if (delayOver) group.assignmentDelayedUntil = 0;
    if (isNew || delayOver || topologyBefore !== group.topology || taskCountsKey !== group.taskCountsKey) group.groupEpoch++;
    group.taskCountsKey = taskCountsKey;
    // While delayed, members move to the group epoch with no tasks (Kafka answers them ASSIGNMENT_DELAYED).
    if (group.groupEpoch > group.assignmentEpoch) this.computeTarget(group, this.delayed(group));
    const before = member.state;
    Object.assign(member, reconcile(member, group.target.get(member.memberId) ?? new Map(), group.assignmentEpoch, asOwned(req.activeTasks), (s, p) => this.heldByOther(group, member, s, p)));
    this.timers.watchRevocation(group, member, before);
    this.timers.touchSession(group, member);
    const activeTasks = toTaskIds(member.assigned);
    const answered = JSON.stringify(activeTasks);
    const tell = req.memberEpoch === JOIN_EPOCH || answered !== member.lastAnswered;
    member.lastAnswered = answered;
    return {
      error: null,
      errorMessage: null,
      memberId: member.memberId,
      memberEpoch: member.memberEpoch,
      heartbeatIntervalMs: this.options.heartbeatIntervalMs,
      acceptableRecoveryLag: ACCEPTABLE_RECOVERY_LAG,
      taskOffsetIntervalMs: TASK_OFFSET_INTERVAL_MS,
      status: this.statusFor(group, member),
      activeTasks: tell ? activeTasks : null,
      standbyTasks: tell ? [] : null,
      warmupTasks: tell ? [] : null,
      endpointInformationEpoch: group.endpointEpoch,
      internalTopicsToCreate: group.configured?.toCreate ?? [],
      partitionsByUserEndpoint: req.endpointInformationEpoch < group.endpointEpoch ? this.endpoints(group) : null,
    };
  }

  private delayed(group: StreamsGroup): boolean {
    return Date.now() < group.assignmentDelayedUntil;
  }

  private statusFor(group: StreamsGroup, member: StreamsMember): StreamsGroupStatus[] {
    const status: StreamsGroupStatus[] = [];
    if (this.delayed(group)) {
      status.push({ statusCode: STREAMS_STATUS.ASSIGNMENT_DELAYED, statusDetail: 'Assignment delayed due to the configured initial rebalance delay.' });
    }
    status.push(...(group.configured?.status ?? []));
    if (group.topology && member.topologyEpoch !== group.topology.epoch) {
      status.push({ statusCode: STREAMS_STATUS.STALE_TOPOLOGY, statusDetail: `The member's topology epoch ${member.topologyEpoch} is behind the group's topology epoch ${group.topology.epoch}.` });
    }
    if (group.shutdownRequested) status.push({ statusCode: STREAMS_STATUS.SHUTDOWN_APPLICATION, statusDetail: 'A KafkaStreams instance encountered a fatal error and requested a shutdown for the entire application.' });
    return status;
  }

  /** Every member with an endpoint and the input partitions of its active tasks (Interactive Queries). */
  private endpoints(group: StreamsGroup): StreamsGroupHeartbeatResult['partitionsByUserEndpoint'] {
    const inputs = group.configured?.inputs ?? new Map<string, string[]>();
    return [...group.members.values()]
      .filter((m) => m.userEndpoint !== null)
      .map((m) => {
        const byTopic = new Map<string, Set<number>>();
        for (const t of toTaskIds(m.assigned)) {
          for (const topic of inputs.get(t.subtopologyId) ?? []) for (const p of t.partitions) (byTopic.get(topic) ?? byTopic.set(topic, new Set()).get(topic)!).add(p);
        }
        const activePartitions = [...byTopic].sort(([a], [b]) => (a < b ? -1 : 1)).map(([topic, set]) => ({ topic, partitions: [...set].sort((a, b) => a - b) }));
        return { userEndpoint: m.userEndpoint!, activePartitions, standbyPartitions: [] };
      });
  }

  private join(group: StreamsGroup, req: StreamsGroupHeartbeatRequest): StreamsMember | { error: StreamsGroupError; message: string } {
    const topology = req.topology!;
    const others = [...group.members.keys()].filter((id) => id !== req.memberId).length;
    if (group.topology === null || others === 0) {
      if (group.topology === null || JSON.stringify(group.topology) !== JSON.stringify(topology)) group.topology = topology;
    } else if (topology.epoch > group.topology.epoch) {
      return { error: 'streams_invalid_topology_epoch', message: `Topology updates are not supported yet: the group's topology epoch is ${group.topology.epoch}, the member's ${topology.epoch}.` };
    }
    const existing = group.members.get(req.memberId);
    if (existing) {
      existing.topologyEpoch = topology.epoch;
      return existing;
    }
    if (group.members.size >= this.options.maxGroupSize) return { error: 'group_max_size_reached', message: `The streams group has reached its maximum size of ${this.options.maxGroupSize} members.` };
    const member: StreamsMember = {
      memberId: req.memberId, instanceId: req.instanceId, rackId: req.rackId, clientId: req.clientId, clientHost: req.clientHost,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs, topologyEpoch: topology.epoch, processId: req.processId!, userEndpoint: req.userEndpoint, clientTags: req.clientTags ?? [],
      state: 'stable', memberEpoch: 0, previousMemberEpoch: -1, assigned: new Map(), pendingRevocation: new Map(),
      lastAnswered: null, sessionTimer: null, revocationTimer: null,
    };
    group.members.set(member.memberId, member);
    return member;
  }

  private knownMember(group: StreamsGroup, req: StreamsGroupHeartbeatRequest): StreamsMember | { error: StreamsGroupError; message: string } {
    const member = group.members.get(req.memberId);
    if (!member) return { error: 'unknown_member_id', message: `Member ${req.memberId} is not a member of group ${group.id}.` };
    const than = req.memberEpoch > member.memberEpoch ? 'greater' : 'smaller';
    const fenced = { error: 'fenced_member_epoch' as const, message: `The streams group member has a ${than} member epoch (${req.memberEpoch}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.` };
    if (req.memberEpoch > member.memberEpoch) return fenced;
    if (req.memberEpoch < member.memberEpoch) {
      // The answer that moved the member on may have been lost: its previous epoch is still taken while it owns nothing it should not.
      const owned = req.activeTasks;
      const ownsOnlyAssigned = owned !== null && owned.every((t) => t.partitions.every((p) => member.assigned.get(t.subtopologyId)?.has(p) === true));
      if (req.memberEpoch !== member.previousMemberEpoch || !ownsOnlyAssigned) return fenced;
    }
    return member;
  }

  private update(member: StreamsMember, req: StreamsGroupHeartbeatRequest): void {
    if (req.rebalanceTimeoutMs !== -1) member.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
    if (req.rackId !== null) member.rackId = req.rackId;
    if (req.instanceId !== null) member.instanceId = req.instanceId;
    if (req.processId !== null) member.processId = req.processId;
    if (req.userEndpoint !== null) member.userEndpoint = req.userEndpoint;
    if (req.clientTags !== null) member.clientTags = req.clientTags;
    member.clientId = req.clientId;
    member.clientHost = req.clientHost;
  }

  private computeTarget(group: StreamsGroup, delayed: boolean): void {
    const counts = delayed ? new Map<string, number>() : group.configured?.taskCounts ?? new Map<string, number>();
    const subtopologies = new Set(counts.keys());
    // Members of a stale topology get no tasks, as Kafka assigns only the group's topology's members.
    const members = [...group.members.values()].map((m) => ({ memberId: m.memberId, topicIds: m.topologyEpoch === group.topology?.epoch ? subtopologies : new Set<string>() }));
    group.target = uniformAssignor({ members, topics: counts, previous: group.target });
    group.assignmentEpoch = group.groupEpoch;
    group.endpointEpoch++;
  }

  private heldByOther(group: StreamsGroup, member: StreamsMember, subtopologyId: string, partition: number): boolean {
    for (const other of group.members.values()) {
      if (other === member) continue;
      if (other.assigned.get(subtopologyId)?.has(partition) || other.pendingRevocation.get(subtopologyId)?.has(partition)) return true;
    }
    return false;
  }

  // ─── Leaving and liveness ─────────────────────────────────────────────────

  private leave(req: StreamsGroupHeartbeatRequest): StreamsGroupHeartbeatResult {
    const group = this.groups.get(req.group);
    const member = group?.members.get(req.memberId);
    if (group && member) this.removeMember(group, member);
    // Kafka answers a leave with the response's defaults but for the member and its epoch.
    return { ...failed('unknown_member_id', null, req.memberId), error: null, memberEpoch: req.memberEpoch };
  }

  private removeMember(group: StreamsGroup, member: StreamsMember): void {
    stopTimers(member);
    group.members.delete(member.memberId);
    group.target.delete(member.memberId);
    group.groupEpoch++;
    if (group.members.size === 0) {
      group.assignmentEpoch = group.groupEpoch;
      group.shutdownRequested = false;
    }
  }

  private expire(group: StreamsGroup, member: StreamsMember): void {
    this.removeMember(group, member);
    this.changed(group.id);
  }

  // ─── Commits, descriptions, listings ──────────────────────────────────────

  /** An offset commit or fetch by a member (Kafka's check, as for consumer groups): from outside only while the group has no members. */
  checkMember(groupId: string, memberId: string, memberEpoch: number): 'unknown_member_id' | 'stale_member_epoch' | null {
    const group = this.groups.get(groupId);
    if (!group) return null;
    if (memberEpoch < 0 && memberId === '' && group.members.size === 0) return null;
    const member = group.members.get(memberId);
    if (!member) return 'unknown_member_id';
    if (memberEpoch !== member.memberEpoch) return 'stale_member_epoch';
    return null;
  }

  isStreamsGroup(groupId: string): boolean {
    return this.groups.has(groupId);
  }

  hasMembers(groupId: string): boolean {
    return (this.groups.get(groupId)?.members.size ?? 0) > 0;
  }

  state(groupId: string): StreamsGroupState {
    const group = this.groups.get(groupId);
    return group ? streamsGroupState(group) : 'Dead';
  }

  describe(groupIds: string[]): StreamsGroupDescription[] {
    return groupIds.map((id) => {
      const group = this.groups.get(id);
      if (group) return describeStreamsGroup(group);
      return { group: id, error: 'group_id_not_found', errorMessage: `Group ${id} not found.`, state: 'Dead', groupEpoch: 0, assignmentEpoch: 0, topology: null, members: [] };
    });
  }

  list(): { group: string; state: StreamsGroupState }[] {
    return [...this.groups.keys()].map((group) => ({ group, state: this.state(group) }));
  }

  /** The source topics of the group's topology (OffsetDelete refuses those while it has members). */
  sourceTopics(groupId: string): Set<string> {
    return new Set(this.groups.get(groupId)?.topology?.subtopologies.flatMap((s) => s.sourceTopics) ?? []);
  }

  activeGroups(): string[] {
    return [...this.groups.values()].filter((g) => g.members.size > 0).map((g) => g.id);
  }

  drop(groupId: string): void {
    const group = this.groups.get(groupId);
    if (!group) return;
    for (const m of group.members.values()) stopTimers(m);
    this.groups.delete(groupId);
  }

  close(): void {
    for (const id of [...this.groups.keys()]) this.drop(id);
  }

  private groupFor(id: string): StreamsGroup {
    let group = this.groups.get(id);
    if (!group) this.groups.set(id, (group = newStreamsGroup(id)));
    return group;
  }
}


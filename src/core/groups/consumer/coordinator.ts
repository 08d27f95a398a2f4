import { randomUUID } from 'node:crypto';
import { ASSIGNORS, DEFAULT_ASSIGNOR } from './assignors.js';
import { describeGroup, groupState, type Group, type Member } from './group.js';
import { restoredConsumerGroup, storedConsumerGroup, type StoredConsumerGroup } from './persistence.js';
import { reconcile, toTopicPartitions, type MemberProgress } from './reconciliation.js';
import { subscribedTopics } from './subscriptions.js';
import { checkHeartbeat } from './validation.js';
import {
  JOIN_EPOCH,
  LEAVE_EPOCH,
  STATIC_LEAVE_EPOCH,
  type ConsumerGroupDescription,
  type ConsumerGroupError,
  type ConsumerGroupHeartbeatRequest,
  type ConsumerGroupHeartbeatResult,
  type ConsumerGroupState,
  type TopicMetadata,
} from './types.js';

/**
 * Kafka's consumer group protocol (KIP-848), in the core beside the classic
 * coordinator so that any gateway can serve any group.
 *
 * The coordinator decides everything; members only heartbeat. The group has
 * an epoch, bumped whenever what the assignment depends on changes: a member
 * joins or leaves, a subscription changes, a subscribed topic appears or
 * gains partitions. When the group epoch is ahead of the assignment epoch the
 * server-side assignor computes a new target assignment; each member then
 * moves towards its share one heartbeat at a time (reconciliation.ts),
 * giving partitions up before anyone else is given them.
 *
 * Liveness: a member not heard from within the session timeout is removed
 * (the group epoch moves on); a member that does not show it released
 * revoked partitions within its rebalance timeout is removed too, so its
 * partitions go to others. A static member (InstanceId) that leaves with
 * epoch -2 keeps its assignment for its session timeout; coming back under
 * the same instance id it takes it over.
 *
 * The coordinator decides in memory; the core stores each change of a group
 * (snapshot, ./persistence.ts) under the group's lease before it answers, and
 * a core that takes the group over restores it, so members carry on at their
 * epochs (docs/consumer-groups.md). A change no heartbeat asked for (a
 * session or rebalance timeout removing a member) is reported to `changed`.
 */

export interface ConsumerCoordinatorOptions {
  /** Kafka's group.consumer.heartbeat.interval.ms. */
  heartbeatIntervalMs: number;
  /** Kafka's group.consumer.session.timeout.ms. */
  sessionTimeoutMs: number;
  /** Kafka's group.consumer.max.size. */
  maxGroupSize: number;
}

export const DEFAULT_CONSUMER_COORDINATOR_OPTIONS: Readonly<ConsumerCoordinatorOptions> = Object.freeze({
  heartbeatIntervalMs: 5000,
  sessionTimeoutMs: 45_000,
  maxGroupSize: 1000,
});

type Failure = { error: ConsumerGroupError; message: string | null };

function failed(error: ConsumerGroupError, message: string | null = null, memberId: string | null = null): ConsumerGroupHeartbeatResult {
  // Kafka answers an error with the response's defaults: epoch 0, no interval.
  return { error, errorMessage: message, memberId, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
}

export class ConsumerGroupCoordinator {
  private readonly groups = new Map<string, Group>();
  private readonly options: ConsumerCoordinatorOptions;

  constructor(
    options: Partial<ConsumerCoordinatorOptions> = {},
    /** A group changed on a timer (a member removed): the core stores it. */
    private readonly changed: (groupId: string) => void = () => {},
  ) {
    this.options = { ...DEFAULT_CONSUMER_COORDINATOR_OPTIONS, ...options };
  }

  /** The group as it is stored, or null when this coordinator does not hold it. */
  snapshot(groupId: string): StoredConsumerGroup | null {
    const group = this.groups.get(groupId);
    return group ? storedConsumerGroup(group) : null;
  }

  /** Takes over a stored group (this node newly holds its lease): members keep their epochs and assignments, their sessions start now. */
  restore(groupId: string, stored: StoredConsumerGroup): void {
    if (this.groups.has(groupId)) return;
    const group = restoredConsumerGroup(groupId, stored);
    this.groups.set(groupId, group);
    for (const member of group.members.values()) {
      this.touchSession(group, member);
      this.watchRevocation(group, member, 'stable');
    }
  }

  /**
   * One heartbeat. `topics` is every topic as it is now: subscriptions are
   * resolved against it, and a change in what they resolve to moves the
   * group epoch on (Kafka's metadata refresh).
   */
  heartbeat(req: ConsumerGroupHeartbeatRequest, topics: readonly TopicMetadata[]): ConsumerGroupHeartbeatResult {
    const invalid = checkHeartbeat(req);
    if (invalid) return failed(invalid.error, invalid.message, req.memberId);
    if (req.memberEpoch === LEAVE_EPOCH || req.memberEpoch === STATIC_LEAVE_EPOCH) return this.leave(req);
    // A heartbeat at an epoch to a group this node does not know (it never had it, or took it over): the member rejoins.
    const group = req.memberEpoch === JOIN_EPOCH ? this.groupFor(req.group) : this.groups.get(req.group);
    if (!group) return failed('unknown_member_id', `Member ${req.memberId} is not a member of group ${req.group}.`, req.memberId);
    const joined = req.memberEpoch === JOIN_EPOCH ? this.join(group, req) : this.knownMember(group, req);
    if ('error' in joined) return failed(joined.error, joined.message, req.memberId);
    const member = joined;
    // A new member, a changed subscription and changed topics are one change of the group: one epoch.
    const isNew = member.memberEpoch === JOIN_EPOCH && member.lastAnswered === null;
    const subscriptionChanged = this.updateSubscription(member, req);
    if (this.refreshMetadata(group, topics) || subscriptionChanged || isNew) group.groupEpoch++;
    if (group.groupEpoch > group.assignmentEpoch) this.computeTarget(group, topics);
    const before = member.state;
    Object.assign(member, reconcile(member, group.target.get(member.memberId) ?? new Map(), group.assignmentEpoch, req.topicPartitions, (t, p) => this.heldByOther(group, member, t, p)));
    this.watchRevocation(group, member, before);
    this.touchSession(group, member);
    const assignment = toTopicPartitions(member.assigned);
    const answered = JSON.stringify(assignment);
    // As Kafka: the assignment is answered to a joining member and when it changed, not on every full heartbeat.
    const tell = req.memberEpoch === JOIN_EPOCH || answered !== member.lastAnswered;
    member.lastAnswered = answered;
    return {
      error: null,
      errorMessage: null,
      memberId: member.memberId,
      memberEpoch: member.memberEpoch,
      heartbeatIntervalMs: this.options.heartbeatIntervalMs,
      assignment: tell ? assignment : null,
    };
  }

  private join(group: Group, req: ConsumerGroupHeartbeatRequest): Member | Failure {
    if (req.instanceId !== null) {
      const heldBy = group.staticMembers.get(req.instanceId);
      const holder = heldBy === undefined ? undefined : group.members.get(heldBy);
      if (holder && holder.memberId !== req.memberId) {
        if (holder.memberEpoch !== STATIC_LEAVE_EPOCH) {
          return { error: 'unreleased_instance_id', message: `Static member ${holder.memberId} with instance id ${req.instanceId} is not released yet; leave the group with it first, or wait for its session to time out.` };
        }
        return this.replaceStaticMember(group, holder, req);
      }
    }
    const existing = group.members.get(req.memberId);
    // A member joining again with its id: it has dropped what it owned and is told its assignment afresh.
    if (existing) return existing;
    if (group.members.size >= this.options.maxGroupSize) {
      return { error: 'group_max_size_reached', message: `The consumer group has reached its maximum size of ${this.options.maxGroupSize} members.` };
    }
    const member = this.newMember(req);
    group.members.set(member.memberId, member);
    if (member.instanceId !== null) group.staticMembers.set(member.instanceId, member.memberId);
    return member;
  }

  private newMember(req: ConsumerGroupHeartbeatRequest): Member {
    return {
      // Before v1 the coordinator names a member that joins without an id (KIP-1082 moved this to the client).
      memberId: req.memberId === '' ? randomUUID() : req.memberId,
      instanceId: req.instanceId,
      rackId: req.rackId,
      clientId: req.clientId,
      clientHost: req.clientHost,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs,
      subscribedTopicNames: [],
      subscribedTopicRegex: null,
      serverAssignor: null,
      state: 'stable',
      memberEpoch: 0,
      previousMemberEpoch: -1,
      assigned: new Map(),
      pendingRevocation: new Map(),
      lastAnswered: null,
      sessionTimer: null,
      revocationTimer: null,
      classic: null,
    };
  }

  /** A static member back under its instance id takes its predecessor's place, epoch and assignment (KIP-848, as KIP-345). */
  private replaceStaticMember(group: Group, old: Member, req: ConsumerGroupHeartbeatRequest): Member {
    this.stopTimers(old);
    group.members.delete(old.memberId);
    const member: Member = { ...this.newMember(req), ...progressOf(old), subscribedTopicNames: old.subscribedTopicNames, subscribedTopicRegex: old.subscribedTopicRegex, serverAssignor: old.serverAssignor };
    member.memberEpoch = old.previousMemberEpoch;
    group.members.set(member.memberId, member);
    group.staticMembers.set(req.instanceId!, member.memberId);
    const target = group.target.get(old.memberId);
    group.target.delete(old.memberId);
    if (target) group.target.set(member.memberId, target);
    return member;
  }

  private knownMember(group: Group, req: ConsumerGroupHeartbeatRequest): Member | Failure {
    const member = group.members.get(req.memberId);
    if (!member) return { error: 'unknown_member_id', message: `Member ${req.memberId} is not a member of group ${group.id}.` };
    if (req.instanceId !== null && group.staticMembers.get(req.instanceId) !== member.memberId) {
      return { error: 'fenced_instance_id', message: `Instance id ${req.instanceId} is held by another member of group ${group.id}.` };
    }
    if (req.memberEpoch > member.memberEpoch) {
      return { error: 'fenced_member_epoch', message: `The consumer group member has a greater member epoch (${req.memberEpoch}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.` };
    }
    if (req.memberEpoch < member.memberEpoch) {
      // The answer that moved the member on may have been lost: its previous epoch is still taken while it owns nothing it should not.
      const owned = req.topicPartitions;
      const ownsOnlyAssigned = owned !== null && owned.every((t) => t.partitions.every((p) => member.assigned.get(t.topicId)?.has(p) === true));
      if (req.memberEpoch !== member.previousMemberEpoch || !ownsOnlyAssigned) {
        return { error: 'fenced_member_epoch', message: `The consumer group member has a smaller member epoch (${req.memberEpoch}) than the one known by the group coordinator (${member.memberEpoch}). The member must abandon all its partitions and rejoin.` };
      }
    }
    return member;
  }

  /** Takes what the heartbeat changed; true when the assignment depends on it (the group epoch moves on). */
  private updateSubscription(member: Member, req: ConsumerGroupHeartbeatRequest): boolean {
    let changed = false;
    if (req.rebalanceTimeoutMs !== -1) member.rebalanceTimeoutMs = req.rebalanceTimeoutMs;
    if (req.rackId !== null) member.rackId = req.rackId;
    member.clientId = req.clientId;
    member.clientHost = req.clientHost;
    if (req.subscribedTopicNames !== null) {
      const names = [...new Set(req.subscribedTopicNames)].sort();
      if (names.join('\u0000') !== member.subscribedTopicNames.join('\u0000')) changed = true;
      member.subscribedTopicNames = names;
    }
    if (req.subscribedTopicRegex !== null) {
      const regex = req.subscribedTopicRegex === '' ? null : req.subscribedTopicRegex;
      if (regex !== member.subscribedTopicRegex) changed = true;
      member.subscribedTopicRegex = regex;
    }
    if (req.serverAssignor !== null && req.serverAssignor !== member.serverAssignor) {
      member.serverAssignor = req.serverAssignor;
      changed = true;
    }
    return changed;
  }

  /** Whether what the subscriptions resolve to changed (a topic appeared, went, or gained partitions). */
  private refreshMetadata(group: Group, topics: readonly TopicMetadata[]): boolean {
    const subscribed = new Map<string, TopicMetadata>();
    for (const m of group.members.values()) {
      for (const t of subscribedTopics(m.subscribedTopicNames, m.subscribedTopicRegex, topics)) subscribed.set(t.name, t);
    }
    const metadata = JSON.stringify([...subscribed.values()].sort((a, b) => (a.name < b.name ? -1 : 1)));
    if (metadata === group.subscriptionMetadata) return false;
    group.subscriptionMetadata = metadata;
    return true;
  }

  private computeTarget(group: Group, topics: readonly TopicMetadata[]): void {
    group.assignorName = this.preferredAssignor(group);
    const counts = new Map(topics.map((t) => [t.id, t.partitions]));
    const members = [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      topicIds: new Set(subscribedTopics(m.subscribedTopicNames, m.subscribedTopicRegex, topics).map((t) => t.id)),
    }));
    const subscribedIds = new Set(members.flatMap((m) => [...m.topicIds]));
    const spec = { members, topics: new Map([...counts].filter(([id]) => subscribedIds.has(id))), previous: group.target };
    group.target = ASSIGNORS.get(group.assignorName)!(spec);
    group.assignmentEpoch = group.groupEpoch;
  }

  /** The assignor most members ask for (Kafka's choice); the default when none asks. */
  private preferredAssignor(group: Group): string {
    const votes = new Map<string, number>();
    for (const m of group.members.values()) if (m.serverAssignor !== null) votes.set(m.serverAssignor, (votes.get(m.serverAssignor) ?? 0) + 1);
    let best = DEFAULT_ASSIGNOR;
    let most = 0;
    for (const [name, n] of votes) if (n > most) [best, most] = [name, n];
    return best;
  }

  private heldByOther(group: Group, member: Member, topicId: string, partition: number): boolean {
    for (const other of group.members.values()) {
      if (other === member) continue;
      if (other.assigned.get(topicId)?.has(partition) || other.pendingRevocation.get(topicId)?.has(partition)) return true;
    }
    return false;
  }

  // ─── Leaving and liveness ─────────────────────────────────────────────────

  private leave(req: ConsumerGroupHeartbeatRequest): ConsumerGroupHeartbeatResult {
    const answer = { error: null, errorMessage: null, memberId: req.memberId, memberEpoch: req.memberEpoch, heartbeatIntervalMs: 0, assignment: null };
    const group = this.groups.get(req.group);
    const memberId = req.instanceId !== null ? group?.staticMembers.get(req.instanceId) ?? req.memberId : req.memberId;
    const member = group?.members.get(memberId);
    if (!group || !member) {
      if (req.memberEpoch === STATIC_LEAVE_EPOCH) return failed('unknown_member_id', `Instance id ${req.instanceId} is not a member of group ${req.group}.`, req.memberId);
      return answer;
    }
    if (member.memberId !== req.memberId) return failed('fenced_instance_id', `Instance id ${req.instanceId} is held by another member of group ${req.group}.`, req.memberId);
    if (req.memberEpoch === STATIC_LEAVE_EPOCH) {
      // It keeps its partitions and its place until its session runs out; its session timer keeps running.
      member.previousMemberEpoch = member.memberEpoch;
      member.memberEpoch = STATIC_LEAVE_EPOCH;
      return answer;
    }
    this.removeMember(group, member);
    return answer;
  }

  /** A member removed on a timer: the group changed without a heartbeat to store it. */
  private expire(group: Group, member: Member): void {
    this.removeMember(group, member);
    this.changed(group.id);
  }

  private removeMember(group: Group, member: Member): void {
    this.stopTimers(member);
    group.members.delete(member.memberId);
    group.target.delete(member.memberId);
    if (member.instanceId !== null && group.staticMembers.get(member.instanceId) === member.memberId) group.staticMembers.delete(member.instanceId);
    group.groupEpoch++;
    // An empty group has nothing to assign: its (empty) target is current at once, as Kafka describes it.
    if (group.members.size === 0) group.assignmentEpoch = group.groupEpoch;
  }

  private touchSession(group: Group, member: Member): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    member.sessionTimer = setTimeout(() => {
      if (group.members.get(member.memberId) === member) this.expire(group, member);
    }, member.classic?.sessionTimeoutMs ?? this.options.sessionTimeoutMs);
    member.sessionTimer.unref();
  }

  /** A member that entered revocation has its rebalance timeout to finish it, or it is removed. */
  private watchRevocation(group: Group, member: Member, before: Member['state']): void {
    if (member.state !== 'unrevoked_partitions') {
      if (member.revocationTimer) clearTimeout(member.revocationTimer);
      member.revocationTimer = null;
      return;
    }
    if (before === 'unrevoked_partitions' && member.revocationTimer) return;
    const epoch = member.memberEpoch;
    member.revocationTimer = setTimeout(() => {
      member.revocationTimer = null;
      if (group.members.get(member.memberId) === member && member.state === 'unrevoked_partitions' && member.memberEpoch === epoch) this.expire(group, member);
    }, member.rebalanceTimeoutMs);
    member.revocationTimer.unref();
  }

  private stopTimers(member: Member): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    if (member.revocationTimer) clearTimeout(member.revocationTimer);
    member.sessionTimer = null;
    member.revocationTimer = null;
  }

  // ─── Commits, descriptions, listings ──────────────────────────────────────

  /**
   * Kafka's check of an offset commit or fetch by a consumer group member:
   * epoch -1 with no member id is a commit from outside, taken while the
   * group has no members; anyone else must be a member at its current epoch.
   */
  checkMember(groupId: string, memberId: string, memberEpoch: number): ConsumerGroupError | null {
    const group = this.groups.get(groupId);
    if (!group) return null;
    if (memberEpoch < 0 && memberId === '' && group.members.size === 0) return null;
    const member = group.members.get(memberId);
    if (!member) return 'unknown_member_id';
    if (memberEpoch !== member.memberEpoch) return 'stale_member_epoch';
    return null;
  }

  /** A member of the group as this coordinator holds it (./classic-members.ts reads and marks classic members). */
  member(groupId: string, memberId: string): Member | undefined {
    return this.groups.get(groupId)?.members.get(memberId);
  }

  /** Whether the group is a consumer group (KIP-848) this coordinator knows. */
  isConsumerGroup(groupId: string): boolean {
    return this.groups.has(groupId);
  }

  state(groupId: string): ConsumerGroupState {
    const group = this.groups.get(groupId);
    return group ? groupState(group) : 'Dead';
  }

  describe(groupIds: string[], topics: readonly TopicMetadata[]): ConsumerGroupDescription[] {
    return groupIds.map((id) => {
      const group = this.groups.get(id);
      if (group) return describeGroup(group, topics);
      return { group: id, error: 'group_id_not_found', errorMessage: `Group ${id} not found.`, state: 'Dead', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [] };
    });
  }

  list(): { group: string; state: ConsumerGroupState }[] {
    return [...this.groups.keys()].map((group) => ({ group, state: this.state(group) }));
  }

  hasMembers(groupId: string): boolean {
    return (this.groups.get(groupId)?.members.size ?? 0) > 0;
  }

  /** Topics the group's members subscribe to by name (OffsetDelete refuses those). */
  subscribedTopicNames(groupId: string, topics: readonly TopicMetadata[]): Set<string> {
    const names = new Set<string>();
    for (const m of this.groups.get(groupId)?.members.values() ?? []) {
      for (const t of subscribedTopics(m.subscribedTopicNames, m.subscribedTopicRegex, topics)) names.add(t.name);
    }
    return names;
  }

  /** Groups with members: the leases worth keeping. */
  activeGroups(): string[] {
    return [...this.groups.values()].filter((g) => g.members.size > 0).map((g) => g.id);
  }

  /** Forgets a group: DeleteGroups of an empty one, or a lease this node lost (its members then rejoin wherever the group went). */
  drop(groupId: string): void {
    const group = this.groups.get(groupId);
    if (!group) return;
    for (const m of group.members.values()) this.stopTimers(m);
    this.groups.delete(groupId);
  }

  close(): void {
    for (const id of [...this.groups.keys()]) this.drop(id);
  }

  private groupFor(id: string): Group {
    let group = this.groups.get(id);
    if (!group) {
      group = { id, groupEpoch: 0, assignmentEpoch: 0, assignorName: DEFAULT_ASSIGNOR, members: new Map(), staticMembers: new Map(), target: new Map(), subscriptionMetadata: '[]' };
      this.groups.set(id, group);
    }
    return group;
  }
}

function progressOf(m: MemberProgress): MemberProgress {
  return { state: m.state, memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, assigned: m.assigned, pendingRevocation: m.pendingRevocation };
}

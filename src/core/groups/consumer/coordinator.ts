import { DEFAULT_ASSIGNOR } from './assignors.js';
import { describeGroup, groupState, type Group, type Member } from './group.js';
import { joinMember, knownMember, updateSubscription } from './membership.js';
import { restoredConsumerGroup, storedConsumerGroup, type StoredConsumerGroup } from './persistence.js';
import { reconcile, toTopicPartitions } from './reconciliation.js';
import { computeTarget, heldByOther, refreshMetadata, subscribedTopicNames } from './target.js';
import { ConsumerTimers, stopTimers } from './timers.js';
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
 *
 * By job: who a heartbeat is from and what it changes (./membership.ts), the
 * target assignment (./target.ts), reconciliation (./reconciliation.ts), the
 * members' timers (./timers.ts), the stored form (./persistence.ts) and the
 * descriptions (./group.ts); this class holds the groups and runs a
 * heartbeat through them.
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

function failed(error: ConsumerGroupError, message: string | null = null, memberId: string | null = null): ConsumerGroupHeartbeatResult {
  // Kafka answers an error with the response's defaults: epoch 0, no interval.
  return { error, errorMessage: message, memberId, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
}

export class ConsumerGroupCoordinator {
  private readonly groups = new Map<string, Group>();
  private readonly options: ConsumerCoordinatorOptions;
  private readonly timers: ConsumerTimers<Member, Group>;

  constructor(
    options: Partial<ConsumerCoordinatorOptions> = {},
    /** A group changed on a timer (a member removed): the core stores it. */
    private readonly changed: (groupId: string) => void = () => {},
  ) {
    this.options = { ...DEFAULT_CONSUMER_COORDINATOR_OPTIONS, ...options };
    this.timers = new ConsumerTimers(this.options.sessionTimeoutMs, (group, member) => this.expire(group, member));
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
      this.timers.touchSession(group, member);
      this.timers.watchRevocation(group, member, 'stable');
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
    const joined = req.memberEpoch === JOIN_EPOCH ? joinMember(group, req, this.options.maxGroupSize) : knownMember(group, req);
    if ('error' in joined) return failed(joined.error, joined.message, req.memberId);
    const member = joined;
    // A new member, a changed subscription and changed topics are one change of the group: one epoch.
    const isNew = member.memberEpoch === JOIN_EPOCH && member.lastAnswered === null;
    const subscriptionChanged = updateSubscription(member, req);
    if (refreshMetadata(group, topics) || subscriptionChanged || isNew) group.groupEpoch++;
    if (group.groupEpoch > group.assignmentEpoch) computeTarget(group, topics);
    const before = member.state;
    Object.assign(member, reconcile(member, group.target.get(member.memberId) ?? new Map(), group.assignmentEpoch, req.topicPartitions, (t, p) => heldByOther(group, member, t, p)));
    this.timers.watchRevocation(group, member, before);
    this.timers.touchSession(group, member);
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
    stopTimers(member);
    group.members.delete(member.memberId);
    group.target.delete(member.memberId);
    if (member.instanceId !== null && group.staticMembers.get(member.instanceId) === member.memberId) group.staticMembers.delete(member.instanceId);
    group.groupEpoch++;
    // An empty group has nothing to assign: its (empty) target is current at once, as Kafka describes it.
    if (group.members.size === 0) group.assignmentEpoch = group.groupEpoch;
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
    return subscribedTopicNames(this.groups.get(groupId), topics);
  }

  /** Groups with members: the leases worth keeping. */
  activeGroups(): string[] {
    return [...this.groups.values()].filter((g) => g.members.size > 0).map((g) => g.id);
  }

  /** Forgets a group: DeleteGroups of an empty one, or a lease this node lost (its members then rejoin wherever the group went). */
  drop(groupId: string): void {
    const group = this.groups.get(groupId);
    if (!group) return;
    for (const m of group.members.values()) stopTimers(m);
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

import { checkCommit } from './commits.js';
import { GroupJoins } from './join.js';
import { answerHeldCalls, DEFAULT_COORDINATOR_OPTIONS, hasLiveMembers, joinError, type CoordinatorOptions } from './model.js';
import { restoreInto, storedForm, type GroupStore } from './persistence.js';
import { groupSubscriptions } from './protocols.js';
import { GroupStateMachine } from './state-machine.js';
import { GroupCalls } from './sync.js';
import type {
  CommitMembership,
  GroupDescription,
  GroupError,
  GroupListing,
  HeartbeatRequest,
  JoinGroupRequest,
  JoinGroupResult,
  LeaveGroupRequest,
  LeaveGroupResult,
  StoredGroup,
  SyncGroupRequest,
  SyncGroupResult,
} from './types.js';
import { describeGroup, listGroups, activeGroupIds } from './views.js';

export { DEFAULT_COORDINATOR_OPTIONS, joinError, syncError, type CoordinatorOptions } from './model.js';
export type { GroupStore } from './persistence.js';

/**
 * Kafka's classic group protocol, in the core so that gateways stay stateless
 * and any of them can serve any group. This class is the coordinator's one
 * face; the work is split by job beside it:
 *
 * - ./state-machine.ts: the state machine (Empty → PreparingRebalance →
 *   CompletingRebalance → Stable) and the groups held;
 * - ./join.ts: JoinGroup (new, known and static members, KIP-394, KIP-345);
 * - ./sync.ts: SyncGroup, Heartbeat, LeaveGroup;
 * - ./timers.ts: sessions, pending ids, the rebalance with its initial delay
 *   (`initialRebalanceDelayMs`, so a fleet starting together rebalances
 *   once), the wait for the leader's SyncGroup;
 * - ./persistence.ts: membership stored where Kafka stores group metadata
 *   (given a GroupStore), restored by the core that takes a group over, and
 *   the group dropped when the store says another node owns it;
 * - ./commits.ts: the checks before an offset commit;
 * - ./views.ts: descriptions and listings;
 * - ./protocols.ts: the protocol vote, and the consumer protocol's
 *   subscription read out of member metadata;
 * - ./model.ts: the group and member held in memory, and shared answers.
 *
 * Deliberately not built: the KIP-848 consumer protocol (ConsumerGroupHeartbeat).
 */
export class GroupCoordinator {
  private readonly machine: GroupStateMachine;
  private readonly joins: GroupJoins;
  private readonly calls: GroupCalls;
  private closed = false;

  constructor(options: Partial<CoordinatorOptions> = {}, store: GroupStore | null = null) {
    const settled = { ...DEFAULT_COORDINATOR_OPTIONS, ...options };
    this.machine = new GroupStateMachine(settled, store);
    this.joins = new GroupJoins(this.machine, settled);
    this.calls = new GroupCalls(this.machine);
  }

  join(req: JoinGroupRequest, signal?: AbortSignal): Promise<JoinGroupResult> {
    if (this.closed) return Promise.resolve(joinError('coordinator_not_available', req.memberId));
    return this.joins.join(req, signal);
  }

  sync(req: SyncGroupRequest, signal?: AbortSignal): Promise<SyncGroupResult> {
    return this.calls.sync(req, signal);
  }

  heartbeat(req: HeartbeatRequest): { error: GroupError | null } {
    return this.calls.heartbeat(req);
  }

  leave(req: LeaveGroupRequest): LeaveGroupResult {
    return this.calls.leave(req);
  }

  /** Kafka's checks before an offset commit; null when the commit may proceed. */
  checkCommit(req: CommitMembership): GroupError | null {
    return checkCommit(this.machine, req);
  }

  describe(groupIds: string[]): GroupDescription[] {
    return groupIds.map((id) => describeGroup(id, this.machine.groups.get(id)));
  }

  list(): GroupListing[] {
    return listGroups(this.machine.groups.values());
  }

  /** Whether the group has live members; DeleteGroups refuses such groups. */
  hasMembers(groupId: string): boolean {
    const group = this.machine.groups.get(groupId);
    return group !== undefined && hasLiveMembers(group);
  }

  /** Topics the group's live consumer members subscribe to (OffsetDelete refuses those). */
  subscribedTopics(groupId: string): Set<string> {
    const group = this.machine.groups.get(groupId);
    return group ? groupSubscriptions(group) : new Set<string>();
  }

  /**
   * Forgets an empty group (DeleteGroups). Answers when the group's stores
   * queued before now have landed, so a caller deleting its stored state
   * after that is not overtaken by one of them.
   */
  remove(groupId: string): Promise<unknown> {
    const group = this.machine.groups.get(groupId);
    if (!group) return Promise.resolve();
    group.state = 'Dead';
    this.machine.timers.stopGroup(group);
    this.machine.groups.delete(groupId);
    return group.saving;
  }

  /** The group as it would be stored (a group converting to a consumer group hands its members over from it). */
  snapshot(groupId: string): StoredGroup | null {
    const group = this.machine.groups.get(groupId);
    return group ? storedForm(group) : null;
  }

  knows(groupId: string): boolean {
    return this.machine.groups.has(groupId);
  }

  /** Groups this coordinator holds with members, joining or not: the leases worth keeping. */
  activeGroups(): string[] {
    return activeGroupIds(this.machine.groups.values());
  }

  /**
   * Lets go of a group whose lease this node lost (or that another node may
   * have changed): held calls answer NOT_COORDINATOR, timers stop, nothing is
   * stored. The next owner restores the group from the store.
   */
  drop(groupId: string): void {
    this.machine.drop(groupId);
  }

  /**
   * Takes a group over as it was stored: members keep their ids, generation
   * and assignments, and each gets a fresh session timeout to show it is
   * still there (as Kafka schedules every loaded member's expiry).
   */
  restore(groupId: string, stored: StoredGroup): void {
    this.machine.drop(groupId);
    const group = this.machine.groupFor(groupId);
    for (const member of restoreInto(group, stored)) this.machine.timers.touchSession(group, member);
    if (group.state === 'CompletingRebalance') this.machine.timers.startSync(group);
    if (group.members.size === 0 && group.state !== 'Empty') group.state = 'Empty';
  }

  /**
   * Takes over a consumer group downgraded to classic (./consumer/downgrade.ts):
   * restored as given, stored, then rebalanced, so every member rejoins and
   * the leader they elect assigns.
   */
  adoptDowngraded(groupId: string, stored: StoredGroup): void {
    this.restore(groupId, stored);
    const group = this.machine.groups.get(groupId)!;
    void this.machine.save(group);
    this.machine.prepareRebalance(group);
  }

  close(): void {
    this.closed = true;
    for (const group of this.machine.groups.values()) {
      this.machine.timers.stopGroup(group);
      for (const m of group.members.values()) this.machine.timers.stopSession(m);
      answerHeldCalls(group, 'coordinator_not_available');
    }
    this.machine.groups.clear();
  }
}

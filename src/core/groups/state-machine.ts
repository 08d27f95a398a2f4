import { answerHeldCalls, EMPTY, joinError, joinResult, newGroup, syncError, type CoordinatorOptions, type Group, type Member } from './model.js';
import { GroupSaver, type GroupStore } from './persistence.js';
import { selectProtocol } from './protocols.js';
import { GroupTimers, type TimerEvents } from './timers.js';

/**
 * The classic group's state machine, and the groups it holds.
 *
 * A group moves Empty → PreparingRebalance (members rejoin; JoinGroup is held)
 * → CompletingRebalance (the leader got every member's metadata and computes
 * assignments; followers wait in SyncGroup) → Stable (assignments handed out;
 * heartbeats keep members alive). A member whose session timeout passes
 * without a heartbeat is removed and the group rebalances; members that do not
 * rejoin within the rebalance timeout are dropped. The calls that drive it
 * are in ./join.ts and ./sync.ts; the timers in ./timers.ts tell it when time
 * ran out.
 */
export class GroupStateMachine implements TimerEvents {
  readonly groups = new Map<string, Group>();
  readonly timers: GroupTimers;
  private readonly saver: GroupSaver;

  constructor(options: CoordinatorOptions, store: GroupStore | null) {
    this.timers = new GroupTimers(options.initialRebalanceDelayMs, this);
    this.saver = new GroupSaver(store, (group) => this.holds(group), (groupId) => this.drop(groupId));
  }

  /** The group of that id, made Empty when this coordinator holds none. */
  groupFor(id: string): Group {
    let group = this.groups.get(id);
    if (!group) {
      group = newGroup(id);
      this.groups.set(id, group);
    }
    return group;
  }

  /** Whether `group` is still the one held under its id (not dropped, deleted or replaced meanwhile). */
  holds(group: Group): boolean {
    return this.groups.get(group.id) === group;
  }

  save(group: Group): Promise<boolean> {
    return this.saver.save(group);
  }

  /**
   * Lets go of a group whose lease this node lost (or that another node may
   * have changed): held calls answer NOT_COORDINATOR, timers stop, nothing is
   * stored. The next owner restores the group from the store.
   */
  drop(groupId: string): void {
    const group = this.groups.get(groupId);
    if (!group) return;
    this.timers.stopGroup(group);
    for (const m of group.members.values()) this.timers.stopSession(m);
    answerHeldCalls(group, 'not_coordinator');
    this.groups.delete(groupId);
  }

  /** A group that never had a generation and has nobody left is not kept. */
  private forgetIfUnused(group: Group): void {
    if (group.state === 'Empty' && group.members.size === 0 && group.pendingMembers.size === 0 && group.generationId === 0) {
      this.timers.stopGroup(group);
      this.groups.delete(group.id);
    }
  }

  // ─── Transitions ──────────────────────────────────────────────────────────

  prepareRebalance(group: Group): void {
    if (group.state === 'CompletingRebalance') {
      for (const m of group.members.values()) {
        m.assignment = EMPTY;
        const waiter = m.syncWaiter;
        m.syncWaiter = null;
        waiter?.(syncError('rebalance_in_progress'));
      }
    }
    this.timers.stopSync(group);
    const wasEmpty = group.state === 'Empty';
    group.state = 'PreparingRebalance';
    if (this.timers.startRebalance(group, wasEmpty)) return;
    this.tryCompleteJoin(group);
  }

  /** Completes the join once every member rejoined and no id handed out is still awaited (never during the initial delay). */
  tryCompleteJoin(group: Group): void {
    if (group.state !== 'PreparingRebalance' || group.initialDelay) return;
    if (group.pendingMembers.size > 0) return;
    for (const m of group.members.values()) if (!m.joinWaiter) return;
    this.completeJoin(group);
  }

  private completeJoin(group: Group): void {
    if (group.state !== 'PreparingRebalance') return;
    this.timers.stopRebalance(group);
    group.initialDelay = null;
    // Members that did not rejoin within the rebalance timeout are out.
    for (const m of [...group.members.values()]) if (!m.joinWaiter) this.dropMember(group, m);
    group.generationId++;
    if (group.members.size === 0) {
      group.state = 'Empty';
      group.protocolName = null;
      group.leaderId = null;
      void this.save(group);
      return;
    }
    group.protocolName = selectProtocol(group);
    if (group.leaderId === null || !group.members.has(group.leaderId)) {
      group.leaderId = group.members.keys().next().value!;
    }
    group.state = 'CompletingRebalance';
    for (const m of group.members.values()) {
      const waiter = m.joinWaiter!;
      m.joinWaiter = null;
      m.assignment = EMPTY;
      this.timers.touchSession(group, m);
      waiter(joinResult(group, m));
    }
    void this.save(group);
    this.timers.startSync(group);
  }

  /** Takes a member out: its session stops, its static id is freed, its held calls answer UNKNOWN_MEMBER_ID. */
  dropMember(group: Group, member: Member): void {
    this.timers.stopSession(member);
    group.members.delete(member.memberId);
    if (member.groupInstanceId !== null && group.staticMembers.get(member.groupInstanceId) === member.memberId) {
      group.staticMembers.delete(member.groupInstanceId);
    }
    member.joinWaiter?.(joinError('unknown_member_id', member.memberId));
    member.syncWaiter?.(syncError('unknown_member_id'));
    member.joinWaiter = null;
    member.syncWaiter = null;
  }

  /** After members left or expired: rebalance the rest, or go Empty. */
  afterMembershipChange(group: Group): void {
    switch (group.state) {
      case 'PreparingRebalance':
        if (group.members.size === 0 && group.pendingMembers.size === 0) this.completeJoin(group);
        else this.tryCompleteJoin(group);
        break;
      case 'CompletingRebalance':
      case 'Stable':
        if (group.members.size === 0) {
          this.timers.stopSync(group);
          group.state = 'PreparingRebalance';
          this.completeJoin(group);
        } else {
          this.prepareRebalance(group);
        }
        break;
      default:
        break;
    }
  }

  // ─── What the timers tell ─────────────────────────────────────────────────

  sessionExpired(group: Group, member: Member): void {
    this.dropMember(group, member);
    this.afterMembershipChange(group);
  }

  pendingMemberExpired(group: Group): void {
    this.tryCompleteJoin(group);
    this.forgetIfUnused(group);
  }

  rebalanceDue(group: Group): void {
    this.completeJoin(group);
  }

  syncTimedOut(group: Group): void {
    for (const m of [...group.members.values()]) if (!m.syncWaiter) this.dropMember(group, m);
    this.afterMembershipChange(group);
  }
}

import { groupRebalanceTimeoutMs, type Group, type Member } from './model.js';

/**
 * The coordinator's four timers: each member's session, an id handed out
 * with member_id_required and never used, the rebalance (with the initial
 * delay that lets a fleet starting together rebalance once), and the wait
 * for the leader's SyncGroup. This file decides when a timer has really
 * run out; what that does to the group is the state machine's
 * (./state-machine.ts), told through `TimerEvents`. Every timer is unref'd: a
 * group never keeps the process alive.
 */

export interface TimerEvents {
  /** The member sent nothing within its session timeout and holds no call: it is out. */
  sessionExpired(group: Group, member: Member): void;
  /** An id handed out with member_id_required was never used; it is gone from pendingMembers. */
  pendingMemberExpired(group: Group): void;
  /** The rebalance (or the initial delay) is over: complete the join with the members that rejoined. */
  rebalanceDue(group: Group): void;
  /** The leader's SyncGroup did not come within the rebalance timeout, for the generation still current. */
  syncTimedOut(group: Group): void;
}

export class GroupTimers {
  constructor(
    private readonly initialRebalanceDelayMs: number,
    private readonly events: TimerEvents,
  ) {}

  /** Restarts the member's session timeout: it showed it is alive. */
  touchSession(group: Group, member: Member): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    member.sessionTimer = setTimeout(() => this.sessionRanOut(group, member), member.sessionTimeoutMs);
    member.sessionTimer.unref();
  }

  stopSession(member: Member): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    member.sessionTimer = null;
  }

  private sessionRanOut(group: Group, member: Member): void {
    member.sessionTimer = null;
    if (group.members.get(member.memberId) !== member) return;
    // A member whose JoinGroup or SyncGroup is being held is alive by definition.
    if (member.joinWaiter || member.syncWaiter) {
      this.touchSession(group, member);
      return;
    }
    this.events.sessionExpired(group, member);
  }

  /** KIP-394: an id handed out first is kept for one session timeout, waiting for the member's second join. */
  holdPendingMember(group: Group, memberId: string, sessionTimeoutMs: number): void {
    const timer = setTimeout(() => {
      if (group.pendingMembers.delete(memberId)) this.events.pendingMemberExpired(group);
    }, sessionTimeoutMs);
    timer.unref();
    group.pendingMembers.set(memberId, timer);
  }

  /** Stops a pending id's timer and forgets the id; false when it was not pending. */
  releasePendingMember(group: Group, memberId: string): boolean {
    const timer = group.pendingMembers.get(memberId);
    if (timer === undefined) return false;
    clearTimeout(timer);
    group.pendingMembers.delete(memberId);
    return true;
  }

  /**
   * Starts the rebalance's wait for members to rejoin. The first rebalance of
   * an empty group waits the initial delay instead; answers whether it does
   * (joins then do not complete the rebalance early).
   */
  startRebalance(group: Group, wasEmpty: boolean): boolean {
    this.stopRebalance(group);
    const rebalanceTimeoutMs = groupRebalanceTimeoutMs(group);
    if (wasEmpty && this.initialRebalanceDelayMs > 0) {
      const delay = Math.min(this.initialRebalanceDelayMs, rebalanceTimeoutMs);
      group.initialDelay = { remainingMs: Math.max(rebalanceTimeoutMs - delay, 0), newMemberAdded: false };
      this.scheduleInitialDelay(group, delay);
      return true;
    }
    group.rebalanceTimer = setTimeout(() => this.events.rebalanceDue(group), rebalanceTimeoutMs);
    group.rebalanceTimer.unref();
    return false;
  }

  /** The initial delay, extended while members keep arriving, up to the rebalance timeout. */
  private scheduleInitialDelay(group: Group, delayMs: number): void {
    group.rebalanceTimer = setTimeout(() => {
      const delay = group.initialDelay;
      if (delay && delay.newMemberAdded && delay.remainingMs > 0) {
        const next = Math.min(this.initialRebalanceDelayMs, delay.remainingMs);
        group.initialDelay = { remainingMs: Math.max(delay.remainingMs - next, 0), newMemberAdded: false };
        this.scheduleInitialDelay(group, next);
        return;
      }
      group.initialDelay = null;
      this.events.rebalanceDue(group);
    }, delayMs);
    group.rebalanceTimer.unref();
  }

  stopRebalance(group: Group): void {
    if (group.rebalanceTimer) clearTimeout(group.rebalanceTimer);
    group.rebalanceTimer = null;
  }

  /** A leader that never sends its SyncGroup must not stall the group forever. */
  startSync(group: Group): void {
    const generation = group.generationId;
    group.syncTimer = setTimeout(() => {
      if (group.state !== 'CompletingRebalance' || group.generationId !== generation) return;
      this.events.syncTimedOut(group);
    }, groupRebalanceTimeoutMs(group));
    group.syncTimer.unref();
  }

  stopSync(group: Group): void {
    if (group.syncTimer) clearTimeout(group.syncTimer);
    group.syncTimer = null;
  }

  /** Stops the group's own timers (rebalance, sync, pending ids); sessions are the members'. */
  stopGroup(group: Group): void {
    if (group.rebalanceTimer) clearTimeout(group.rebalanceTimer);
    if (group.syncTimer) clearTimeout(group.syncTimer);
    for (const t of group.pendingMembers.values()) clearTimeout(t);
    group.rebalanceTimer = null;
    group.syncTimer = null;
  }
}

import type { Group, Member } from './group.js';

/**
 * A consumer group member's two timers (KIP-848): its session, restarted by
 * every heartbeat, and, while it has partitions to give up, its rebalance
 * timeout to show it did. This file decides when a timer has really run out
 * (the member is still the group's, still revoking at the same epoch); what
 * that does to the group is the coordinator's, told through `expired`. Every
 * timer is unref'd: a group never keeps the process alive.
 */
export class ConsumerTimers {
  constructor(
    private readonly sessionTimeoutMs: number,
    /** The member ran out of time and is to be removed. */
    private readonly expired: (group: Group, member: Member) => void,
  ) {}

  /** Restarts the member's session timeout (a classic member's own, else the group's setting). */
  touchSession(group: Group, member: Member): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    member.sessionTimer = setTimeout(() => {
      if (group.members.get(member.memberId) === member) this.expired(group, member);
    }, member.classic?.sessionTimeoutMs ?? this.sessionTimeoutMs);
    member.sessionTimer.unref();
  }

  /** A member that entered revocation has its rebalance timeout to finish it, or it is removed. */
  watchRevocation(group: Group, member: Member, before: Member['state']): void {
    if (member.state !== 'unrevoked_partitions') {
      if (member.revocationTimer) clearTimeout(member.revocationTimer);
      member.revocationTimer = null;
      return;
    }
    if (before === 'unrevoked_partitions' && member.revocationTimer) return;
    const epoch = member.memberEpoch;
    member.revocationTimer = setTimeout(() => {
      member.revocationTimer = null;
      if (group.members.get(member.memberId) === member && member.state === 'unrevoked_partitions' && member.memberEpoch === epoch) this.expired(group, member);
    }, member.rebalanceTimeoutMs);
    member.revocationTimer.unref();
  }
}

export function stopTimers(member: Member): void {
  if (member.sessionTimer) clearTimeout(member.sessionTimer);
  if (member.revocationTimer) clearTimeout(member.revocationTimer);
  member.sessionTimer = null;
  member.revocationTimer = null;
}

/** What the timers need of a member (a consumer group's, or a streams group's: ../streams). */
export interface TimedMember {
  memberId: string;
  memberEpoch: number;
  state: string;
  rebalanceTimeoutMs: number;
  sessionTimer: NodeJS.Timeout | null;
  revocationTimer: NodeJS.Timeout | null;
  /** A classic member's own session timeout (consumer groups only). */
  classic?: { sessionTimeoutMs: number } | null;
}

/**
 * A KIP-848 member's two timers (consumer and streams groups): its session, restarted by
 * every heartbeat, and, while it has partitions to give up, its rebalance
 * timeout to show it did. This file decides when a timer has really run out
 * (the member is still the group's, still revoking at the same epoch); what
 * that does to the group is the coordinator's, told through `expired`. Every
 * timer is unref'd: a group never keeps the process alive.
 */
export class ConsumerTimers<M extends TimedMember, G extends { members: Map<string, M> }> {
  constructor(
    private readonly sessionTimeoutMs: number,
    /** The member ran out of time and is to be removed. */
    private readonly expired: (group: G, member: M) => void,
  ) {}

  /** Restarts the member's session timeout (a classic member's own, else the group's setting). */
  touchSession(group: G, member: M): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    member.sessionTimer = setTimeout(() => {
      if (group.members.get(member.memberId) === member) this.expired(group, member);
    }, member.classic?.sessionTimeoutMs ?? this.sessionTimeoutMs);
    member.sessionTimer.unref();
  }

  /** A member that entered revocation has its rebalance timeout to finish it, or it is removed. */
  watchRevocation(group: G, member: M, before: M['state']): void {
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

export function stopTimers(member: TimedMember): void {
  if (member.sessionTimer) clearTimeout(member.sessionTimer);
  if (member.revocationTimer) clearTimeout(member.revocationTimer);
  member.sessionTimer = null;
  member.revocationTimer = null;
}

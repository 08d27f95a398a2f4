import { EMPTY, staticIdentityError, syncError, syncResult, type Group, type Member } from './model.js';
import type { GroupStateMachine } from './state-machine.js';
import type { GroupError, HeartbeatRequest, LeaveGroupRequest, LeaveGroupResult, SyncGroupRequest, SyncGroupResult } from './types.js';

/**
 * SyncGroup (followers wait for the leader's assignments, which are stored
 * before anyone is told them), Heartbeat (a member shows it is alive and
 * learns of a rebalance) and LeaveGroup (members leave by id, static ones by
 * instance id, and the rest rebalance).
 */
export class GroupCalls {
  constructor(private readonly machine: GroupStateMachine) {}

  sync(req: SyncGroupRequest, signal?: AbortSignal): Promise<SyncGroupResult> {
    const found = this.syncingMember(req);
    if ('error' in found) return Promise.resolve(syncError(found.error));
    const { group, member } = found;
    this.machine.timers.touchSession(group, member);
    if (group.state === 'PreparingRebalance') return Promise.resolve(syncError('rebalance_in_progress'));
    if (group.state === 'Stable') return Promise.resolve(syncResult(group, member));
    if (group.state !== 'CompletingRebalance') return Promise.resolve(syncError('unknown_member_id'));

    return new Promise<SyncGroupResult>((resolve) => {
      member.syncWaiter = resolve;
      if (signal) {
        const onAbort = () => {
          if (member.syncWaiter === resolve) member.syncWaiter = null;
          resolve(syncError('rebalance_in_progress'));
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      if (group.leaderId === member.memberId) this.completeSync(group, req.assignments);
    });
  }

  /** The member a SyncGroup comes from, or what it is refused for (identity, generation, protocol). */
  private syncingMember(req: SyncGroupRequest): { group: Group; member: Member } | { error: GroupError } {
    const group = this.machine.groups.get(req.group);
    if (!group) return { error: 'unknown_member_id' };
    const fenced = staticIdentityError(group, req.memberId, req.groupInstanceId);
    if (fenced) return { error: fenced };
    const member = group.members.get(req.memberId);
    if (!member) return { error: 'unknown_member_id' };
    if (req.generationId !== group.generationId) return { error: 'illegal_generation' };
    if ((req.protocolType !== null && req.protocolType !== group.protocolType) ||
        (req.protocolName !== null && req.protocolName !== group.protocolName)) {
      return { error: 'inconsistent_group_protocol' };
    }
    return { group, member };
  }

  /** The leader's assignments: the group is Stable, and every held SyncGroup is answered once they are stored. */
  private completeSync(group: Group, assignments: SyncGroupRequest['assignments']): void {
    const given = new Map(assignments.map((a) => [a.memberId, a.assignment]));
    for (const m of group.members.values()) m.assignment = given.get(m.memberId) ?? EMPTY;
    group.state = 'Stable';
    this.machine.timers.stopSync(group);
    // As Kafka, the assignments are stored before anyone is told them, so a
    // coordinator that takes over hands out the same ones.
    const generation = group.generationId;
    void this.machine.save(group).then((saved) => {
      if (!this.machine.holds(group) || group.generationId !== generation || group.state !== 'Stable') return;
      if (!saved) {
        // The store did not answer: members rejoin rather than hold what may not be stored.
        answerSyncs(group, () => syncError('coordinator_not_available'));
        this.machine.prepareRebalance(group);
        return;
      }
      answerSyncs(group, (m) => syncResult(group, m));
    });
  }

  heartbeat(req: HeartbeatRequest): { error: GroupError | null } {
    const group = this.machine.groups.get(req.group);
    if (!group) return { error: 'unknown_member_id' };
    if (group.state === 'Dead') return { error: 'coordinator_not_available' };
    // A static member's old incarnation is fenced before anything else is checked.
    const fenced = staticIdentityError(group, req.memberId, req.groupInstanceId);
    if (fenced) return { error: fenced };
    const member = group.members.get(req.memberId);
    if (!member) return { error: 'unknown_member_id' };
    this.machine.timers.touchSession(group, member);
    if (group.state === 'PreparingRebalance') return { error: 'rebalance_in_progress' };
    if (req.generationId !== group.generationId) return { error: 'illegal_generation' };
    return { error: null };
  }

  leave(req: LeaveGroupRequest): LeaveGroupResult {
    const group = this.machine.groups.get(req.group);
    if (!group) {
      return { error: null, members: req.members.map((m) => ({ ...m, error: 'unknown_member_id' as const })) };
    }
    let changed = false;
    // Each answer names the member as the request did (Kafka echoes it, an empty id included).
    const members = req.members.map((leaving) => {
      const error = this.leaveOne(group, leaving);
      if (error === null) changed = true;
      return { memberId: leaving.memberId, groupInstanceId: leaving.groupInstanceId, error };
    });
    if (changed) this.machine.afterMembershipChange(group);
    return { error: null, members };
  }

  /** Takes one leaving member out (or a pending id); null when it left, else why not. */
  private leaveOne(group: Group, leaving: LeaveGroupRequest['members'][number]): GroupError | null {
    let memberId = leaving.memberId;
    if (leaving.groupInstanceId !== null) {
      // A static member is found by its instance id; a member id beside it must be the one holding it.
      const holder = group.staticMembers.get(leaving.groupInstanceId);
      if (holder === undefined) return 'unknown_member_id';
      if (memberId !== '' && memberId !== holder) return 'fenced_instance_id';
      memberId = holder;
    }
    if (this.machine.timers.releasePendingMember(group, memberId)) return null;
    const member = group.members.get(memberId);
    if (!member) return 'unknown_member_id';
    this.machine.dropMember(group, member);
    return null;
  }
}

/** Answers every held SyncGroup of the group, each with what `result` gives for its member. */
function answerSyncs(group: Group, result: (member: Member) => SyncGroupResult): void {
  for (const m of group.members.values()) {
    const waiter = m.syncWaiter;
    m.syncWaiter = null;
    waiter?.(result(m));
  }
}

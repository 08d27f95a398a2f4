import { randomUUID } from 'node:crypto';
import { EMPTY, fencedStatic, joinError, joinResult, rebalanceTimeoutOf, syncError, type CoordinatorOptions, type Group, type Member } from './model.js';
import { sameProtocols, supportsGroupProtocols } from './protocols.js';
import type { GroupStateMachine } from './state-machine.js';
import type { GroupError, JoinGroupRequest, JoinGroupResult } from './types.js';

/**
 * JoinGroup: a new member gets an id (first, with KIP-394's
 * member_id_required, so a retried join leaves no ghost), a known member
 * rejoins, and a static member (group.instance.id) that comes back within its
 * session timeout replaces its old incarnation and, in a stable group with
 * unchanged protocols, gets its assignment back without a rebalance
 * (KIP-345). A join is held until the rebalance completes.
 */

type Answer = (result: JoinGroupResult) => void;

export class GroupJoins {
  constructor(
    private readonly machine: GroupStateMachine,
    private readonly options: CoordinatorOptions,
  ) {}

  join(req: JoinGroupRequest, signal?: AbortSignal): Promise<JoinGroupResult> {
    const refused = this.refusal(req);
    if (refused) return Promise.resolve(joinError(refused, req.memberId));
    const group = this.machine.groupFor(req.group);
    if (!supportsGroupProtocols(group, req)) {
      return Promise.resolve(joinError('inconsistent_group_protocol', req.memberId));
    }

    return new Promise<JoinGroupResult>((resolve) => {
      const answer = (result: JoinGroupResult) => resolve(result);
      if (req.memberId === '') this.joinUnknownMember(group, req, answer);
      else this.joinKnownMember(group, req, answer);
      if (signal) {
        // A client that goes away while its join is held is not waited for.
        const onAbort = () => {
          for (const m of group.members.values()) {
            if (m.joinWaiter === answer) m.joinWaiter = null;
          }
          resolve(joinError('unknown_member_id', req.memberId));
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
    });
  }

  /** What a join is refused for before the group is looked at: its group id, session timeout or protocols. */
  private refusal(req: JoinGroupRequest): GroupError | null {
    if (req.group === '' || Buffer.byteLength(req.group) > this.options.maxGroupIdBytes) return 'invalid_group_id';
    const { minSessionTimeoutMs, maxSessionTimeoutMs } = this.options;
    if (req.sessionTimeoutMs < minSessionTimeoutMs || req.sessionTimeoutMs > maxSessionTimeoutMs) return 'invalid_session_timeout';
    if (req.protocolType === '' || req.protocols.length === 0) return 'inconsistent_group_protocol';
    return null;
  }

  private joinUnknownMember(group: Group, req: JoinGroupRequest, answer: Answer): void {
    // Kafka names a static member after its instance id, any other after its client id.
    const memberId = `${req.groupInstanceId ?? (req.clientId || 'member')}-${randomUUID()}`;
    if (req.groupInstanceId !== null) {
      const oldId = group.staticMembers.get(req.groupInstanceId);
      if (oldId !== undefined && group.members.has(oldId)) {
        this.replaceStaticMember(group, oldId, memberId, req, answer);
        return;
      }
    } else if (req.requireKnownMemberId) {
      // KIP-394: hand out an id first, so a client that times out and retries
      // does not leave a ghost member behind.
      this.machine.timers.holdPendingMember(group, memberId, req.sessionTimeoutMs);
      answer(joinError('member_id_required', memberId));
      return;
    }
    if (group.members.size >= this.options.maxGroupSize) {
      answer(joinError('group_max_size_reached', memberId));
      return;
    }
    this.addMemberAndRebalance(group, memberId, req, answer);
  }

  private joinKnownMember(group: Group, req: JoinGroupRequest, answer: Answer): void {
    if (this.machine.timers.releasePendingMember(group, req.memberId)) {
      if (group.members.size >= this.options.maxGroupSize) {
        answer(joinError('group_max_size_reached', req.memberId));
        return;
      }
      this.addMemberAndRebalance(group, req.memberId, req, answer);
      return;
    }
    const fenced = fencedStatic(group, req.memberId, req.groupInstanceId);
    if (fenced) {
      answer(joinError(fenced, req.memberId));
      return;
    }
    const member = group.members.get(req.memberId);
    if (!member) {
      answer(joinError('unknown_member_id', req.memberId));
      return;
    }
    const unchanged = sameProtocols(member.protocols, req.protocols);
    updateMember(member, req);
    this.machine.timers.touchSession(group, member);
    if (answersWithoutRebalance(group, member, unchanged)) {
      answer(joinResult(group, member));
      return;
    }
    member.joinWaiter = answer;
    if (group.state === 'PreparingRebalance') this.machine.tryCompleteJoin(group);
    else this.machine.prepareRebalance(group);
  }

  private replaceStaticMember(group: Group, oldId: string, newId: string, req: JoinGroupRequest, answer: Answer): void {
    const old = group.members.get(oldId)!;
    this.machine.timers.stopSession(old);
    // The old incarnation's held calls answer fenced; its id is no longer valid.
    old.joinWaiter?.(joinError('fenced_instance_id', oldId));
    old.syncWaiter?.(syncError('fenced_instance_id'));
    group.members.delete(oldId);
    const unchanged = sameProtocols(old.protocols, req.protocols);
    const member: Member = { ...old, memberId: newId, joinWaiter: null, syncWaiter: null, sessionTimer: null };
    updateMember(member, req);
    group.members.set(newId, member);
    group.staticMembers.set(req.groupInstanceId!, newId);
    if (group.leaderId === oldId) group.leaderId = newId;
    this.machine.timers.touchSession(group, member);
    if (group.state === 'Stable' && unchanged) {
      // KIP-345: the member comes back to the same generation and assignment, no rebalance.
      void this.machine.save(group);
      const result = joinResult(group, member);
      if (group.leaderId !== newId) answer(result);
      else if (req.skipAssignmentSupported) answer({ ...result, skipAssignment: true });
      // KIP-814: a client before JoinGroup v9 would compute a new assignment if told it
      // leads; it is answered as a follower of its old id, as Kafka does, and syncs its own.
      else answer({ ...result, leader: oldId, members: [] });
      return;
    }
    member.joinWaiter = answer;
    if (group.state === 'PreparingRebalance') this.machine.tryCompleteJoin(group);
    else this.machine.prepareRebalance(group);
  }

  private addMemberAndRebalance(group: Group, memberId: string, req: JoinGroupRequest, answer: Answer): void {
    const member: Member = {
      memberId,
      groupInstanceId: req.groupInstanceId,
      clientId: req.clientId,
      clientHost: req.clientHost,
      sessionTimeoutMs: req.sessionTimeoutMs,
      rebalanceTimeoutMs: rebalanceTimeoutOf(req),
      protocolType: req.protocolType,
      protocols: req.protocols,
      assignment: EMPTY,
      joinWaiter: answer,
      syncWaiter: null,
      sessionTimer: null,
    };
    group.members.set(memberId, member);
    if (req.groupInstanceId !== null) group.staticMembers.set(req.groupInstanceId, memberId);
    if (group.protocolType === null) group.protocolType = req.protocolType;
    if (group.initialDelay) group.initialDelay.newMemberAdded = true;
    this.machine.timers.touchSession(group, member);
    if (group.state === 'PreparingRebalance') this.machine.tryCompleteJoin(group);
    else this.machine.prepareRebalance(group);
  }
}

/**
 * A known member's rejoin that changes nothing is answered at once: in
 * CompletingRebalance, or in Stable by a follower (a leader's rejoin means
 * it wants a new assignment computed).
 */
function answersWithoutRebalance(group: Group, member: Member, unchanged: boolean): boolean {
  if (!unchanged) return false;
  if (group.state === 'CompletingRebalance') return true;
  return group.state === 'Stable' && group.leaderId !== member.memberId;
}

function updateMember(member: Member, req: JoinGroupRequest): void {
  member.protocols = req.protocols;
  member.protocolType = req.protocolType;
  member.sessionTimeoutMs = req.sessionTimeoutMs;
  member.rebalanceTimeoutMs = rebalanceTimeoutOf(req);
  member.clientId = req.clientId;
  member.clientHost = req.clientHost;
}

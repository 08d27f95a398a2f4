import { staticIdentityError } from './model.js';
import type { GroupStateMachine } from './state-machine.js';
import type { CommitMembership, GroupError } from './types.js';

/**
 * Kafka's checks before an offset commit; null when the commit may proceed.
 * A group with members takes commits only from a member of the current
 * generation (a static member's identity checked first), and not while it
 * completes a rebalance; an empty or unknown group takes commits from
 * outside (assign-mode consumers, tools). A commit counts as the member's
 * heartbeat.
 */
export function checkCommit(machine: GroupStateMachine, req: CommitMembership): GroupError | null {
  const group = machine.groups.get(req.group);
  if (!group || group.members.size === 0) {
    if (req.generationId < 0 && req.memberId === '') return null;
    if (!group) return req.generationId < 0 ? null : 'illegal_generation';
    return 'unknown_member_id';
  }
  if (group.state === 'Dead') return 'coordinator_not_available';
  const fenced = staticIdentityError(group, req.memberId, req.groupInstanceId);
  if (fenced) return fenced;
  if (req.generationId < 0 && req.memberId === '') return 'unknown_member_id';
  const member = group.members.get(req.memberId);
  if (!member) return 'unknown_member_id';
  if (group.state === 'CompletingRebalance') return 'rebalance_in_progress';
  if (req.generationId !== group.generationId) return 'illegal_generation';
  machine.timers.touchSession(group, member);
  return null;
}

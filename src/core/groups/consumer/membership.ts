import { randomUUID } from 'node:crypto';
import type { Group, Member } from './group.js';
import type { MemberProgress } from './reconciliation.js';
import { stopTimers } from './timers.js';
import { STATIC_LEAVE_EPOCH, type ConsumerGroupError, type ConsumerGroupHeartbeatRequest } from './types.js';

/**
 * Who a consumer group heartbeat (KIP-848) is from: a member joining (new,
 * joining again with its id, or a static member back under its instance id
 * taking its predecessor's place), or a known member at an epoch the
 * coordinator accepts; and what of the heartbeat the member takes.
 */

export type Failure = { error: ConsumerGroupError; message: string | null };

/** A member joining at epoch 0, or why it cannot. */
export function joinMember(group: Group, req: ConsumerGroupHeartbeatRequest, maxGroupSize: number): Member | Failure {
  if (req.instanceId !== null) {
    const heldBy = group.staticMembers.get(req.instanceId);
    const holder = heldBy === undefined ? undefined : group.members.get(heldBy);
    if (holder && holder.memberId !== req.memberId) {
      if (holder.memberEpoch !== STATIC_LEAVE_EPOCH) {
        return { error: 'unreleased_instance_id', message: `Static member ${holder.memberId} with instance id ${req.instanceId} is not released yet; leave the group with it first, or wait for its session to time out.` };
      }
      return replaceStaticMember(group, holder, req);
    }
  }
  const existing = group.members.get(req.memberId);
  // A member joining again with its id: it has dropped what it owned and is told its assignment afresh.
  if (existing) return existing;
  if (group.members.size >= maxGroupSize) {
    return { error: 'group_max_size_reached', message: `The consumer group has reached its maximum size of ${maxGroupSize} members.` };
  }
  const member = newMember(req);
  group.members.set(member.memberId, member);
  if (member.instanceId !== null) group.staticMembers.set(member.instanceId, member.memberId);
  return member;
}

function newMember(req: ConsumerGroupHeartbeatRequest): Member {
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
function replaceStaticMember(group: Group, old: Member, req: ConsumerGroupHeartbeatRequest): Member {
  stopTimers(old);
  group.members.delete(old.memberId);
  const member: Member = { ...newMember(req), ...progressOf(old), subscribedTopicNames: old.subscribedTopicNames, subscribedTopicRegex: old.subscribedTopicRegex, serverAssignor: old.serverAssignor };
  member.memberEpoch = old.previousMemberEpoch;
  group.members.set(member.memberId, member);
  group.staticMembers.set(req.instanceId!, member.memberId);
  const target = group.target.get(old.memberId);
  group.target.delete(old.memberId);
  if (target) group.target.set(member.memberId, target);
  return member;
}

function progressOf(m: MemberProgress): MemberProgress {
  return { state: m.state, memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch, assigned: m.assigned, pendingRevocation: m.pendingRevocation };
}

/** A heartbeat from a member at its epoch (or at its previous one, when the answer that moved it on may have been lost), or why it is fenced. */
export function knownMember(group: Group, req: ConsumerGroupHeartbeatRequest): Member | Failure {
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
export function updateSubscription(member: Member, req: ConsumerGroupHeartbeatRequest): boolean {
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

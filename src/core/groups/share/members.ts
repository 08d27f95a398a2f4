/**
 * Share group membership (KIP-932), held by the core that coordinates the
 * group (the front takes the group's coordinator lease first, as for the
 * other kinds). A member joins at epoch 0 with the topics it subscribes to,
 * heartbeats at the epoch it was told, and leaves at -1; a member silent for
 * the session timeout is removed. The group epoch rises with each change of
 * membership or subscription.
 *
 * Assignment: in a share group several members may consume one partition
 * (records, not partitions, are what members hold), so every member is
 * assigned every partition of the topics it subscribes to. Kafka's simple
 * assignor spreads partitions when there are more partitions than members;
 * assigning all is also what it answers when members outnumber partitions,
 * and it is what lets a survivor take over a dead member's records at once.
 */
import type { TopicMetadata } from '../consumer/types.js';
import type { ShareGroupDescription, ShareGroupHeartbeatRequest, ShareGroupHeartbeatResult, ShareTopicPartitions } from './types.js';

export interface ShareMember {
  memberId: string;
  memberEpoch: number;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  subscribedTopicNames: string[];
  /** What the member was last told (a key of the assignment), to answer it again only when it changes. */
  told: string;
  lastSeen: number;
}

export interface ShareGroupMembers {
  groupEpoch: number;
  members: Map<string, ShareMember>;
}

export const LEAVE_EPOCH = -1;
export const ASSIGNOR_NAME = 'simple';

export function assignmentOf(subscribed: string[], topics: TopicMetadata[]): ShareTopicPartitions[] {
  const wanted = new Set(subscribed);
  return topics
    .filter((t) => wanted.has(t.name))
    .sort((a, b) => a.id.localeCompare(b.id))
    .map((t) => ({ topicId: t.id, partitions: Array.from({ length: t.partitions }, (_, i) => i) }));
}

export interface HeartbeatOutcome {
  result: ShareGroupHeartbeatResult;
  /** A member that left: its locks are to be released. */
  left: string | null;
}

function answer(member: ShareMember, assignment: ShareTopicPartitions[], heartbeatIntervalMs: number): ShareGroupHeartbeatResult {
  const key = JSON.stringify(assignment);
  const changed = member.told !== key;
  member.told = key;
  return { error: null, errorMessage: null, memberId: member.memberId, memberEpoch: member.memberEpoch, heartbeatIntervalMs, assignment: changed ? assignment : null };
}

/** One heartbeat on the group's members (created empty by the caller). */
export function heartbeat(group: ShareGroupMembers, req: ShareGroupHeartbeatRequest, topics: TopicMetadata[], now: number, heartbeatIntervalMs: number): HeartbeatOutcome {
  const refuse = (error: ShareGroupHeartbeatResult['error'], errorMessage: string | null): HeartbeatOutcome => ({
    result: { error, errorMessage, memberId: req.memberId, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null },
    left: null,
  });
  if (req.memberId === '') return refuse('invalid_request', 'MemberId can\'t be empty.');
  const known = group.members.get(req.memberId);
  if (req.memberEpoch === LEAVE_EPOCH) {
    if (known === undefined) return refuse('unknown_member_id', `Member ${req.memberId} is not a member of group ${req.group}.`);
    group.members.delete(req.memberId);
    group.groupEpoch += 1;
    return { result: { error: null, errorMessage: null, memberId: req.memberId, memberEpoch: LEAVE_EPOCH, heartbeatIntervalMs: 0, assignment: null }, left: req.memberId };
  }
  if (req.memberEpoch === 0) {
    if (req.subscribedTopicNames === null || req.subscribedTopicNames.length === 0) return refuse('invalid_request', 'SubscribedTopicNames must be set in first request.');
    group.groupEpoch += 1;
    const member: ShareMember = {
      memberId: req.memberId, memberEpoch: group.groupEpoch, rackId: req.rackId, clientId: req.clientId, clientHost: req.clientHost,
      subscribedTopicNames: [...req.subscribedTopicNames].sort(), told: '', lastSeen: now,
    };
    group.members.set(req.memberId, member);
    return { result: answer(member, assignmentOf(member.subscribedTopicNames, topics), heartbeatIntervalMs), left: null };
  }
  if (known === undefined) return refuse('unknown_member_id', `Member ${req.memberId} is not a member of group ${req.group}.`);
  if (req.memberEpoch > known.memberEpoch) return refuse('fenced_member_epoch', `The member epoch ${req.memberEpoch} is ahead of ${known.memberEpoch}.`);
  known.lastSeen = now;
  if (req.subscribedTopicNames !== null) {
    const subscribed = [...req.subscribedTopicNames].sort();
    if (subscribed.join('\0') !== known.subscribedTopicNames.join('\0')) {
      group.groupEpoch += 1;
      known.subscribedTopicNames = subscribed;
    }
  }
  known.memberEpoch = group.groupEpoch;
  return { result: answer(known, assignmentOf(known.subscribedTopicNames, topics), heartbeatIntervalMs), left: null };
}

/** Removes the members silent past the session timeout; answers their ids. */
export function expireMembers(group: ShareGroupMembers, now: number, sessionTimeoutMs: number): string[] {
  const gone = [...group.members.values()].filter((m) => now - m.lastSeen > sessionTimeoutMs).map((m) => m.memberId);
  for (const id of gone) group.members.delete(id);
  if (gone.length > 0) group.groupEpoch += 1;
  return gone;
}

export function describe(groupId: string, group: ShareGroupMembers | undefined, topics: TopicMetadata[]): ShareGroupDescription {
  if (group === undefined) {
    return { group: groupId, error: 'group_id_not_found', errorMessage: `Group ${groupId} not found.`, state: 'Dead', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [] };
  }
  const byId = new Map(topics.map((t) => [t.id, t.name]));
  return {
    group: groupId,
    error: null,
    errorMessage: null,
    state: group.members.size === 0 ? 'Empty' : 'Stable',
    groupEpoch: group.groupEpoch,
    assignmentEpoch: group.groupEpoch,
    assignorName: ASSIGNOR_NAME,
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId, rackId: m.rackId, memberEpoch: m.memberEpoch, clientId: m.clientId, clientHost: m.clientHost,
      subscribedTopicNames: m.subscribedTopicNames,
      assignment: assignmentOf(m.subscribedTopicNames, topics).map((a) => ({ ...a, topicName: byId.get(a.topicId) ?? '' })),
    })),
  };
}

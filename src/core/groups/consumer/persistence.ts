import type { MemberAssignment } from './assignors.js';
import { groupState, type Group, type Member, type MemberIdentity } from './group.js';
import type { MemberState } from './reconciliation.js';
import type { ConsumerGroupState } from './types.js';

/**
 * A consumer group as it is stored (PostgreSQL's consumer_group_states,
 * migration 010), so that a core that takes the group over (a coordinator
 * move, a restart) carries it on where its last coordinator left it: the
 * group and assignment epochs, the assignor, the target assignment, and each
 * member's subscription, epochs, reconciliation state and assignment. What is
 * kept is what Kafka writes to __consumer_offsets for the group (its
 * metadata, target assignment and current member assignments). Session and
 * revocation deadlines are not kept: the new coordinator starts each member's
 * session afresh, as Kafka's does when it loads a group.
 */

/** A MemberAssignment as JSON: [topicId, partitions][]. */
type StoredAssignment = [string, number[]][];

export interface StoredConsumerMember extends MemberIdentity {
  state: MemberState;
  memberEpoch: number;
  previousMemberEpoch: number;
  assigned: StoredAssignment;
  pendingRevocation: StoredAssignment;
  lastAnswered: string | null;
  /** A classic member's session timeout, protocol and last given partitions (absent in states stored before classic members). */
  classic?: { sessionTimeoutMs: number; protocolName: string; synced: StoredAssignment } | null;
}

export interface StoredConsumerGroup {
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  subscriptionMetadata: string;
  target: [string, StoredAssignment][];
  members: StoredConsumerMember[];
}

function storedAssignment(a: MemberAssignment): StoredAssignment {
  return [...a].map(([topicId, partitions]) => [topicId, [...partitions].sort((x, y) => x - y)]);
}

function assignmentOf(stored: StoredAssignment): MemberAssignment {
  return new Map(stored.map(([topicId, partitions]) => [topicId, new Set(partitions)]));
}

export function storedConsumerGroup(group: Group): StoredConsumerGroup {
  return {
    groupEpoch: group.groupEpoch,
    assignmentEpoch: group.assignmentEpoch,
    assignorName: group.assignorName,
    subscriptionMetadata: group.subscriptionMetadata,
    target: [...group.target].map(([memberId, a]) => [memberId, storedAssignment(a)]),
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      instanceId: m.instanceId,
      rackId: m.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      subscribedTopicNames: m.subscribedTopicNames,
      subscribedTopicRegex: m.subscribedTopicRegex,
      serverAssignor: m.serverAssignor,
      state: m.state,
      memberEpoch: m.memberEpoch,
      previousMemberEpoch: m.previousMemberEpoch,
      assigned: storedAssignment(m.assigned),
      pendingRevocation: storedAssignment(m.pendingRevocation),
      lastAnswered: m.lastAnswered,
      classic: m.classic && { sessionTimeoutMs: m.classic.sessionTimeoutMs, protocolName: m.classic.protocolName, synced: storedAssignment(m.classic.synced) },
    })),
  };
}

/** The group a stored one describes, its members without timers yet (the coordinator starts their sessions). */
export function restoredConsumerGroup(id: string, stored: StoredConsumerGroup): Group {
  const members = new Map<string, Member>(
    stored.members.map((m) => [
      m.memberId,
      {
        ...m,
        assigned: assignmentOf(m.assigned),
        pendingRevocation: assignmentOf(m.pendingRevocation),
        sessionTimer: null,
        revocationTimer: null,
        classic: m.classic ? { ...m.classic, synced: assignmentOf(m.classic.synced) } : null,
      },
    ]),
  );
  return {
    id,
    groupEpoch: stored.groupEpoch,
    assignmentEpoch: stored.assignmentEpoch,
    assignorName: stored.assignorName,
    members,
    staticMembers: new Map(stored.members.filter((m) => m.instanceId !== null).map((m) => [m.instanceId!, m.memberId])),
    target: new Map(stored.target.map(([memberId, a]) => [memberId, assignmentOf(a)])),
    subscriptionMetadata: stored.subscriptionMetadata,
  };
}

/** The state a stored group is in (what ListGroups shows of a group another core coordinates). */
export function storedGroupState(stored: StoredConsumerGroup): ConsumerGroupState {
  return groupState(restoredConsumerGroup('', stored));
}

import type { MemberAssignment } from './assignors.js';
import { toTopicPartitions, type MemberProgress } from './reconciliation.js';
import type { ConsumerGroupDescription, ConsumerGroupState, DescribedTopicPartitions, TopicMetadata } from './types.js';

/** A KIP-848 group and its members as the coordinator (./coordinator.ts) holds them, and how they are described. */

/** Who a member is and what it subscribes to: held and stored (./persistence.ts) alike. */
export interface MemberIdentity {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  subscribedTopicNames: string[];
  subscribedTopicRegex: string | null;
  serverAssignor: string | null;
}

export interface Member extends MemberProgress, MemberIdentity {
  /** The assignment the member was last answered, to answer it again only when it changes. */
  lastAnswered: string | null;
  sessionTimer: NodeJS.Timeout | null;
  revocationTimer: NodeJS.Timeout | null;
  /** Set for a member that speaks the classic protocol (./classic-members.ts); null for a ConsumerGroupHeartbeat member. */
  classic: ClassicMembership | null;
}

/** What the coordinator keeps of a classic member (./classic-members.ts). */
export interface ClassicMembership {
  sessionTimeoutMs: number;
  protocolName: string;
  /** What it was last given in SyncGroup (or reported owning at its last join): what it may still consume. */
  synced: MemberAssignment;
}

export interface Group {
  id: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignorName: string;
  members: Map<string, Member>;
  /** InstanceId → member id. */
  staticMembers: Map<string, string>;
  target: Map<string, MemberAssignment>;
  /** The subscribed topics' names, ids and partition counts the target was computed for. */
  subscriptionMetadata: string;
}

/** Kafka's consumer group state: Empty, Assigning (a new target is due), Reconciling (members moving to it), Stable. */
export function groupState(group: Group): ConsumerGroupState {
  if (group.members.size === 0) return 'Empty';
  if (group.groupEpoch > group.assignmentEpoch) return 'Assigning';
  for (const m of group.members.values()) {
    if (m.memberEpoch !== group.assignmentEpoch || m.state !== 'stable') return 'Reconciling';
  }
  return 'Stable';
}

/** ConsumerGroupDescribe's view: epochs, assignor, and each member's subscription, assignment and target, topics named. */
export function describeGroup(group: Group, topics: readonly TopicMetadata[]): ConsumerGroupDescription {
  const names = new Map(topics.map((t) => [t.id, t.name]));
  const described = (a: MemberAssignment): DescribedTopicPartitions[] => toTopicPartitions(a).map((t) => ({ ...t, topicName: names.get(t.topicId) ?? '' }));
  return {
    group: group.id,
    error: null,
    errorMessage: null,
    state: groupState(group),
    groupEpoch: group.groupEpoch,
    assignmentEpoch: group.assignmentEpoch,
    assignorName: group.assignorName,
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      instanceId: m.instanceId,
      rackId: m.rackId,
      memberEpoch: m.memberEpoch,
      clientId: m.clientId,
      clientHost: m.clientHost,
      subscribedTopicNames: m.subscribedTopicNames,
      subscribedTopicRegex: m.subscribedTopicRegex,
      assignment: described(m.assigned),
      targetAssignment: described(group.target.get(m.memberId) ?? new Map()),
    })),
  };
}

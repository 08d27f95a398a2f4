import type { MemberAssignment } from '../consumer/assignors.js';
import type { MemberProgress } from '../consumer/reconciliation.js';
import type { ConfiguredTopology } from './topology.js';
import type { Endpoint, KeyValue, StreamsGroupDescription, StreamsGroupState, TaskIds, Topology } from './types.js';

/** A streams group and its members as the coordinator (./coordinator.ts) holds them, and how they are described. */

/** A member: its active tasks move through the consumer groups' reconciliation (../consumer/reconciliation.ts), subtopology ids in place of topic ids. */
export interface StreamsMember extends MemberProgress {
  memberId: string;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  rebalanceTimeoutMs: number;
  topologyEpoch: number;
  processId: string;
  userEndpoint: Endpoint | null;
  clientTags: KeyValue[];
  /** The tasks the member was last answered, to answer them again only when they change. */
  lastAnswered: string | null;
  sessionTimer: NodeJS.Timeout | null;
  revocationTimer: NodeJS.Timeout | null;
}

export interface StreamsGroup {
  id: string;
  groupEpoch: number;
  assignmentEpoch: number;
  topology: Topology | null;
  /** The topology as the topics are now (recomputed at each heartbeat). */
  configured: ConfiguredTopology | null;
  /** Subtopology id → task count the target was computed for, as JSON. */
  taskCountsKey: string;
  members: Map<string, StreamsMember>;
  target: Map<string, MemberAssignment>;
  /** Moves on with each new target: members whose epoch is behind are told every endpoint's partitions. */
  endpointEpoch: number;
  /** A member asked the whole application to shut down: every member is told, until the group empties. */
  shutdownRequested: boolean;
  /** Date.now() until which the group's first assignment waits (the initial rebalance delay); 0 once the heartbeat after it assigned the tasks. Not stored. */
  assignmentDelayedUntil: number;
}

export function newStreamsGroup(id: string): StreamsGroup {
  return { id, groupEpoch: 0, assignmentEpoch: 0, topology: null, configured: null, taskCountsKey: '{}', members: new Map(), target: new Map(), endpointEpoch: 0, shutdownRequested: false, assignmentDelayedUntil: 0 };
}

export function toTaskIds(assignment: MemberAssignment): TaskIds[] {
  return [...assignment]
    .filter(([, set]) => set.size > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([subtopologyId, set]) => ({ subtopologyId, partitions: [...set].sort((a, b) => a - b) }));
}

/** Kafka's streams group state: Empty, NotReady (the topology cannot run yet), Assigning (a target due, or held back by the initial delay), Reconciling, Stable. */
export function streamsGroupState(group: StreamsGroup): StreamsGroupState {
  if (group.members.size === 0) return 'Empty';
  if (!group.configured || group.configured.status.length > 0) return 'NotReady';
  // Held back by the initial rebalance delay: the tasks are still to be assigned.
  if (group.groupEpoch > group.assignmentEpoch || group.assignmentDelayedUntil > 0) return 'Assigning';
  for (const m of group.members.values()) {
    if (m.memberEpoch !== group.assignmentEpoch || m.state !== 'stable') return 'Reconciling';
  }
  return 'Stable';
}

export function describeStreamsGroup(group: StreamsGroup): StreamsGroupDescription {
  const tasks = (active: MemberAssignment) => ({ activeTasks: toTaskIds(active), standbyTasks: [], warmupTasks: [] });
  return {
    group: group.id,
    error: null,
    errorMessage: null,
    state: streamsGroupState(group),
    groupEpoch: group.groupEpoch,
    assignmentEpoch: group.assignmentEpoch,
    topology: group.topology && {
      epoch: group.topology.epoch,
      subtopologies: group.topology.subtopologies.map((s) => ({
        subtopologyId: s.subtopologyId,
        sourceTopics: s.sourceTopics,
        repartitionSinkTopics: s.repartitionSinkTopics,
        stateChangelogTopics: s.stateChangelogTopics,
        repartitionSourceTopics: s.repartitionSourceTopics,
      })),
    },
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId,
      memberEpoch: m.memberEpoch,
      instanceId: m.instanceId,
      rackId: m.rackId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      topologyEpoch: m.topologyEpoch,
      processId: m.processId,
      userEndpoint: m.userEndpoint,
      clientTags: m.clientTags,
      assignment: tasks(m.assigned),
      targetAssignment: tasks(group.target.get(m.memberId) ?? new Map()),
    })),
  };
}

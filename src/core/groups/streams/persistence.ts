import type { MemberAssignment } from '../consumer/assignors.js';
import type { MemberState } from '../consumer/reconciliation.js';
import { newStreamsGroup, streamsGroupState, type StreamsGroup, type StreamsMember } from './group.js';
import type { Endpoint, KeyValue, StreamsGroupState, Topology } from './types.js';

/**
 * A streams group as it is stored (PostgreSQL's streams_group_states,
 * migration 016), so that a core that takes the group over (a coordinator
 * move, a restart) carries it on where its last coordinator left it: the
 * epochs, the topology, the target assignment, and each member's process,
 * endpoint, epochs, reconciliation state and tasks, what Kafka writes to
 * __consumer_offsets for a streams group. Session and revocation deadlines
 * are not kept: the new coordinator starts each member's session afresh. The
 * topology's fit to the topics is worked out again at the next heartbeat.
 */

/** A MemberAssignment as JSON: [subtopologyId, partitions][]. */
type StoredTasks = [string, number[]][];

export interface StoredStreamsMember {
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
  state: MemberState;
  memberEpoch: number;
  previousMemberEpoch: number;
  assigned: StoredTasks;
  pendingRevocation: StoredTasks;
  lastAnswered: string | null;
}

export interface StoredStreamsGroup {
  groupEpoch: number;
  assignmentEpoch: number;
  topology: Topology | null;
  taskCountsKey: string;
  endpointEpoch: number;
  shutdownRequested: boolean;
  target: [string, StoredTasks][];
  members: StoredStreamsMember[];
}

const storedTasks = (a: MemberAssignment): StoredTasks => [...a].map(([id, partitions]) => [id, [...partitions].sort((x, y) => x - y)]);
const tasksOf = (stored: StoredTasks): MemberAssignment => new Map(stored.map(([id, partitions]) => [id, new Set(partitions)]));

export function storedStreamsGroup(group: StreamsGroup): StoredStreamsGroup {
  return {
    groupEpoch: group.groupEpoch,
    assignmentEpoch: group.assignmentEpoch,
    topology: group.topology,
    taskCountsKey: group.taskCountsKey,
    endpointEpoch: group.endpointEpoch,
    shutdownRequested: group.shutdownRequested,
    target: [...group.target].map(([memberId, a]) => [memberId, storedTasks(a)]),
    members: [...group.members.values()].map((m) => ({
      memberId: m.memberId, instanceId: m.instanceId, rackId: m.rackId, clientId: m.clientId, clientHost: m.clientHost,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs, topologyEpoch: m.topologyEpoch, processId: m.processId, userEndpoint: m.userEndpoint, clientTags: m.clientTags,
      state: m.state, memberEpoch: m.memberEpoch, previousMemberEpoch: m.previousMemberEpoch,
      assigned: storedTasks(m.assigned), pendingRevocation: storedTasks(m.pendingRevocation), lastAnswered: m.lastAnswered,
    })),
  };
}

/** The group a stored one describes, its members without timers yet (the coordinator starts their sessions). */
export function restoredStreamsGroup(id: string, stored: StoredStreamsGroup): StreamsGroup {
  const members = new Map<string, StreamsMember>(
    stored.members.map((m) => [m.memberId, { ...m, assigned: tasksOf(m.assigned), pendingRevocation: tasksOf(m.pendingRevocation), sessionTimer: null, revocationTimer: null }]),
  );
  return {
    ...newStreamsGroup(id),
    groupEpoch: stored.groupEpoch,
    assignmentEpoch: stored.assignmentEpoch,
    topology: stored.topology,
    taskCountsKey: stored.taskCountsKey,
    endpointEpoch: stored.endpointEpoch,
    shutdownRequested: stored.shutdownRequested,
    target: new Map(stored.target.map(([memberId, a]) => [memberId, tasksOf(a)])),
    members,
  };
}

/** The state a stored group is in (what ListGroups shows of a group another core coordinates); NotReady is decided at a heartbeat, so a stored group with members is listed by its epochs. */
export function storedStreamsGroupState(stored: StoredStreamsGroup): StreamsGroupState {
  const group = restoredStreamsGroup('', stored);
  group.configured = { status: [], toCreate: [], taskCounts: new Map(), inputs: new Map() };
  return streamsGroupState(group);
}

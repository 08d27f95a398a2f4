/**
 * Kafka Streams' group protocol (KIP-1071): its requests and results as
 * plain data, so they cross the internal RPC like every other core call.
 * A task is a subtopology's partition; tasks are named by subtopology id.
 */

/** Kafka's StreamsGroupState names, as ListGroups and StreamsGroupDescribe answer them. */
export type StreamsGroupState = 'Empty' | 'NotReady' | 'Assigning' | 'Reconciling' | 'Stable' | 'Dead';

export type StreamsGroupError =
  | 'invalid_request'
  | 'unknown_member_id'
  | 'fenced_member_epoch'
  | 'unreleased_instance_id'
  | 'fenced_instance_id'
  | 'group_max_size_reached'
  | 'group_id_not_found'
  | 'streams_invalid_topology'
  | 'streams_invalid_topology_epoch'
  | 'streams_topology_fenced'
  | 'coordinator_not_available'
  | 'not_coordinator';

/** A subtopology's partitions a member runs (or owns, or is to run). */
export interface TaskIds {
  subtopologyId: string;
  partitions: number[];
}

export interface KeyValue {
  key: string;
  value: string;
}

/** An internal topic the topology needs: a changelog or a repartition topic. Partitions 0: as the topology implies. */
export interface TopicInfo {
  name: string;
  partitions: number;
  replicationFactor: number;
  topicConfigs: KeyValue[];
}

export interface Subtopology {
  subtopologyId: string;
  sourceTopics: string[];
  sourceTopicRegex: string[];
  stateChangelogTopics: TopicInfo[];
  repartitionSinkTopics: string[];
  repartitionSourceTopics: TopicInfo[];
  /** Indexes into sourceTopics, sourceTopicRegex and repartitionSourceTopics of topics that must have as many partitions. */
  copartitionGroups: { sourceTopics: number[]; sourceTopicRegex: number[]; repartitionSourceTopics: number[] }[];
}

export interface Topology {
  epoch: number;
  subtopologies: Subtopology[];
}

export interface Endpoint {
  host: string;
  port: number;
}

export interface StreamsGroupHeartbeatRequest {
  group: string;
  memberId: string;
  memberEpoch: number;
  endpointInformationEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  /** -1: unchanged since the last heartbeat. */
  rebalanceTimeoutMs: number;
  /** Sent on joining only. */
  topology: Topology | null;
  /** What the member owns now; null: unchanged since the last heartbeat. */
  activeTasks: TaskIds[] | null;
  standbyTasks: TaskIds[] | null;
  warmupTasks: TaskIds[] | null;
  processId: string | null;
  userEndpoint: Endpoint | null;
  clientTags: KeyValue[] | null;
  shutdownApplication: boolean;
  clientId: string;
  clientHost: string;
}

/** A status of the group the member is told (Kafka's StreamsGroupHeartbeatResponse.Status codes). */
export interface StreamsGroupStatus {
  statusCode: number;
  statusDetail: string;
}

export const STREAMS_STATUS = {
  STALE_TOPOLOGY: 0,
  MISSING_SOURCE_TOPICS: 1,
  INCORRECTLY_PARTITIONED_TOPICS: 2,
  MISSING_INTERNAL_TOPICS: 3,
  SHUTDOWN_APPLICATION: 4,
  ASSIGNMENT_DELAYED: 5,
} as const;

export interface StreamsGroupHeartbeatResult {
  error: StreamsGroupError | null;
  errorMessage: string | null;
  memberId: string;
  memberEpoch: number;
  heartbeatIntervalMs: number;
  acceptableRecoveryLag: number;
  taskOffsetIntervalMs: number;
  status: StreamsGroupStatus[] | null;
  /** Null when unchanged since the member was last told. */
  activeTasks: TaskIds[] | null;
  standbyTasks: TaskIds[] | null;
  warmupTasks: TaskIds[] | null;
  endpointInformationEpoch: number;
  /**
   * Not on the wire: internal topics the topology needs that do not exist.
   * The gateway creates them as CreateTopics would (their configs are Kafka
   * topic configs, which it normalizes) and asks again, as Kafka's
   * coordinator has them created while members are told MISSING_INTERNAL_TOPICS.
   */
  internalTopicsToCreate: InternalTopicToCreate[];
  /** Null when the member's endpoint information is current. */
  partitionsByUserEndpoint: { userEndpoint: Endpoint; activePartitions: { topic: string; partitions: number[] }[]; standbyPartitions: { topic: string; partitions: number[] }[] }[] | null;
}

/** An internal topic the coordinator needs created (changelog or repartition), with its partitions and configs. */
export interface InternalTopicToCreate {
  name: string;
  partitions: number;
  configs: KeyValue[];
}

export interface StreamsGroupMemberDescription {
  memberId: string;
  memberEpoch: number;
  instanceId: string | null;
  rackId: string | null;
  clientId: string;
  clientHost: string;
  topologyEpoch: number;
  processId: string;
  userEndpoint: Endpoint | null;
  clientTags: KeyValue[];
  assignment: { activeTasks: TaskIds[]; standbyTasks: TaskIds[]; warmupTasks: TaskIds[] };
  targetAssignment: { activeTasks: TaskIds[]; standbyTasks: TaskIds[]; warmupTasks: TaskIds[] };
}

export interface StreamsGroupDescription {
  group: string;
  error: StreamsGroupError | null;
  errorMessage: string | null;
  state: StreamsGroupState;
  groupEpoch: number;
  assignmentEpoch: number;
  topology: { epoch: number; subtopologies: Pick<Subtopology, 'subtopologyId' | 'sourceTopics' | 'repartitionSinkTopics' | 'stateChangelogTopics' | 'repartitionSourceTopics'>[] } | null;
  members: StreamsGroupMemberDescription[];
}

/** The streams group coordinator's calls on the core. */
export interface StreamsGroupApi {
  /** StreamsGroupHeartbeat (KIP-1071): join with a topology, stay, reconcile tasks, leave. */
  streamsGroupHeartbeat(req: StreamsGroupHeartbeatRequest): Promise<StreamsGroupHeartbeatResult>;
  /** StreamsGroupDescribe: a group that is not a streams group answers group_id_not_found. */
  streamsGroupDescribe(req: { groups: string[] }): Promise<{ groups: StreamsGroupDescription[] }>;
}

import type { ConsumerGroupState } from './consumer/types.js';
import type { StreamsGroupState } from './streams/types.js';

/**
 * The group coordinator's requests and results: Kafka's classic consumer-group
 * protocol, as plain data so it crosses the internal RPC like every other
 * core call. Member metadata and assignments are opaque bytes (the client's
 * ConsumerProtocol encoding); the coordinator only reads subscriptions out of
 * them to answer OffsetDelete.
 */

export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead';

export type GroupError =
  | 'invalid_group_id'
  | 'unknown_member_id'
  | 'member_id_required'
  | 'illegal_generation'
  | 'rebalance_in_progress'
  | 'fenced_instance_id'
  | 'inconsistent_group_protocol'
  | 'invalid_session_timeout'
  | 'group_max_size_reached'
  | 'group_id_not_found'
  | 'non_empty_group'
  | 'group_subscribed_to_topic'
  | 'coordinator_not_available'
  // A KIP-848 consumer group's commit at an epoch other than the member's (groups/consumer).
  | 'stale_member_epoch'
  // Another core node holds the group's coordinator lease: the client asks FindCoordinator again.
  | 'not_coordinator';

export interface GroupProtocol {
  name: string;
  metadata: Buffer;
}

export interface JoinGroupRequest {
  group: string;
  /** Empty on a member's first join. */
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: GroupProtocol[];
  /** JoinGroup v4+: a first join answers member_id_required with an id to rejoin with. */
  requireKnownMemberId: boolean;
  /**
   * JoinGroup v9+: the client understands SkipAssignment, so a static leader
   * that comes back to a stable group may be told it leads without a
   * rebalance. Before v9 it is answered as a follower (KIP-814). Default false.
   */
  skipAssignmentSupported?: boolean;
  reason: string | null;
}

export interface JoinGroupResult {
  error: GroupError | null;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leader: string;
  memberId: string;
  /** For the leader only: every member with its metadata for the chosen protocol. */
  members: { memberId: string; groupInstanceId: string | null; metadata: Buffer }[];
  /** True when a static member got its old assignment back without a rebalance. */
  skipAssignment: boolean;
}

export interface SyncGroupRequest {
  group: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
  protocolType: string | null;
  protocolName: string | null;
  /** Sent by the leader: every member's assignment. */
  assignments: { memberId: string; assignment: Buffer }[];
}

export interface SyncGroupResult {
  error: GroupError | null;
  protocolType: string | null;
  protocolName: string | null;
  assignment: Buffer;
}

export interface HeartbeatRequest {
  group: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

export interface LeaveGroupRequest {
  group: string;
  members: { memberId: string; groupInstanceId: string | null; reason: string | null }[];
}

export interface LeaveGroupResult {
  error: GroupError | null;
  members: { memberId: string; groupInstanceId: string | null; error: GroupError | null }[];
}

export interface GroupMemberDescription {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  metadata: Buffer;
  assignment: Buffer;
}

export interface GroupDescription {
  group: string;
  error: GroupError | null;
  state: GroupState;
  protocolType: string;
  protocolName: string;
  generationId: number;
  members: GroupMemberDescription[];
}

export interface GroupListing {
  group: string;
  protocolType: string;
  /** A classic group's state, or a KIP-848 consumer group's (groups/consumer). */
  state: GroupState | ConsumerGroupState | StreamsGroupState;
  /** Absent: classic. */
  groupType?: 'classic' | 'consumer' | 'share' | 'streams';
}

/** Checks a commit against group membership (generation fencing). */
export interface CommitMembership {
  group: string;
  /** -1 with an empty member id: a commit from outside the group (assign-mode consumers, admin tools). */
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

/**
 * A group's membership as its coordinator stores it, so that the next owner
 * of the group's lease (after a move or a restart) takes members back with
 * their ids, generation and assignments instead of making them rejoin.
 * Bytes are base64 (the store keeps JSON). A group in the middle of
 * PreparingRebalance is stored as it last stood outside of it: the held
 * JoinGroups belong to connections of the node that held them.
 */
/** What a member joined with and keeps across rebalances, as JoinGroup gave it (its protocols apart: they carry bytes). */
export const JOINED_MEMBER_FIELDS = ['memberId', 'groupInstanceId', 'clientId', 'clientHost', 'sessionTimeoutMs', 'rebalanceTimeoutMs', 'protocolType'] as const;
export type JoinedMember = Pick<JoinGroupRequest, (typeof JOINED_MEMBER_FIELDS)[number]>;

/** Those fields of a member, copied, so the stored and the live member never list them apart. */
export function joinedFields(member: JoinedMember): JoinedMember {
  return Object.fromEntries(JOINED_MEMBER_FIELDS.map((k) => [k, member[k]])) as unknown as JoinedMember;
}

export interface StoredGroup {
  state: 'Empty' | 'CompletingRebalance' | 'Stable';
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leaderId: string | null;
  /** Each member's joined fields, and its protocols' metadata and its assignment as base64 (stored as JSON). */
  members: (JoinedMember & { protocols: { name: string; metadata: string }[]; assignment: string })[];
}

/** FindCoordinator's question to the core: who coordinates these groups or transactional ids. */
export interface FindCoordinatorsRequest {
  kind: 'group' | 'transaction';
  keys: string[];
  /**
   * The core nodes that clients can reach now (those with a live gateway),
   * when the asking gateway knows them: a lease held by any other node is
   * taken over at once instead of when its deadline passes. Null or absent:
   * unknown, leases move only when they run out.
   */
  reachable?: string[] | null;
}

export interface FindCoordinatorsResult {
  /** The answering core node's id. */
  node: string;
  /**
   * Per key, the core node that holds its lease (the answering node took it
   * when it was free); null when the store did not answer.
   */
  coordinators: { key: string; owner: string | null }[];
}

/** Per-partition outcome of OffsetDelete. */
export interface OffsetDeletePartitionResult {
  queue: string;
  partition: number;
  error: GroupError | null;
}

/**
 * The coordinator's calls on the core. A held JoinGroup or SyncGroup is a call
 * that resolves later; its AbortSignal (the client went away) releases it.
 */
export interface GroupCoordinatorApi {
  joinGroup(req: JoinGroupRequest, options?: { signal?: AbortSignal }): Promise<JoinGroupResult>;
  syncGroup(req: SyncGroupRequest, options?: { signal?: AbortSignal }): Promise<SyncGroupResult>;
  heartbeat(req: HeartbeatRequest): Promise<{ error: GroupError | null }>;
  leaveGroup(req: LeaveGroupRequest): Promise<LeaveGroupResult>;
  describeGroups(req: { groups: string[] }): Promise<{ groups: GroupDescription[] }>;
  /** Groups with members or committed offsets, with their state; filtered by state when given. */
  listGroupStates(req: { states?: GroupState[] }): Promise<{ groups: GroupListing[] }>;
  /** Deletes groups and their offsets; a group with members is refused (non_empty_group). */
  deleteGroups(req: { groups: string[] }): Promise<{ groups: { group: string; error: GroupError | null }[] }>;
  /** An offset commit by a group member, checked against the generation (Kafka's OffsetCommit). */
  commitGroupOffsets(req: CommitMembership & {
    offsets: { queue: string; partition: number; offset: number; leaderEpoch: number; metadata: string | null }[];
  }): Promise<{ error: GroupError | null }>;
  /**
   * FindCoordinator: the core node coordinating each key. A key nobody holds
   * (or whose holder's lease ran out) is taken by the answering node.
   */
  findCoordinators(req: FindCoordinatorsRequest): Promise<FindCoordinatorsResult>;
  /** Kafka's OffsetDelete: refused per partition for topics a live member subscribes to. */
  deleteGroupOffsets(req: { group: string; partitions: { queue: string; partition: number }[] }): Promise<{
    error: GroupError | null;
    partitions: OffsetDeletePartitionResult[];
  }>;
}

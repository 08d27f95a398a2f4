import type { GroupError, GroupState, JoinedMember, JoinGroupRequest, JoinGroupResult, SyncGroupResult } from './types.js';

/**
 * What the classic group coordinator holds of a group in memory, and the
 * answers and checks every part of it shares: the state machine
 * (./state-machine.ts), the calls (./join.ts, ./sync.ts), the timers
 * (./timers.ts), persistence (./persistence.ts) and the views (./views.ts).
 */

export interface CoordinatorOptions {
  /** Kafka's group.initial.rebalance.delay.ms. */
  initialRebalanceDelayMs: number;
  /** Kafka's group.min.session.timeout.ms and group.max.session.timeout.ms. */
  minSessionTimeoutMs: number;
  maxSessionTimeoutMs: number;
  /** Kafka's group.max.size. */
  maxGroupSize: number;
  /** Longest group id accepted, in bytes. */
  maxGroupIdBytes: number;
}

export const DEFAULT_COORDINATOR_OPTIONS: Readonly<CoordinatorOptions> = Object.freeze({
  initialRebalanceDelayMs: 3000,
  minSessionTimeoutMs: 6000,
  maxSessionTimeoutMs: 1_800_000,
  maxGroupSize: 1000,
  maxGroupIdBytes: 255,
});

export const EMPTY = Buffer.alloc(0);

export interface Member extends JoinedMember, Pick<JoinGroupRequest, 'protocols'> {
  assignment: Buffer;
  joinWaiter: ((result: JoinGroupResult) => void) | null;
  syncWaiter: ((result: SyncGroupResult) => void) | null;
  sessionTimer: NodeJS.Timeout | null;
}

export interface Group {
  id: string;
  state: GroupState;
  generationId: number;
  protocolType: string | null;
  protocolName: string | null;
  leaderId: string | null;
  members: Map<string, Member>;
  /** group.instance.id → current member id. */
  staticMembers: Map<string, string>;
  /** Ids handed out with member_id_required, awaiting the member's second join. */
  pendingMembers: Map<string, NodeJS.Timeout>;
  rebalanceTimer: NodeJS.Timeout | null;
  syncTimer: NodeJS.Timeout | null;
  /** While the initial delay runs, joins do not complete the rebalance. */
  initialDelay: { remainingMs: number; newMemberAdded: boolean } | null;
  /** The group's stores, one after another, so the last one written is the latest state. */
  saving: Promise<boolean>;
}

export function newGroup(id: string): Group {
  return {
    id,
    state: 'Empty',
    generationId: 0,
    protocolType: null,
    protocolName: null,
    leaderId: null,
    members: new Map(),
    staticMembers: new Map(),
    pendingMembers: new Map(),
    rebalanceTimer: null,
    syncTimer: null,
    initialDelay: null,
    saving: Promise.resolve(true),
  };
}

export function joinError(error: GroupError, memberId = ''): JoinGroupResult {
  return { error, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId, members: [], skipAssignment: false };
}

export function syncError(error: GroupError): SyncGroupResult {
  return { error, protocolType: null, protocolName: null, assignment: EMPTY };
}

/** A member's metadata for the group's chosen protocol (empty when it lists none by that name). */
export function chosenMetadata(group: Group, member: Member): Buffer {
  return member.protocols.find((p) => p.name === group.protocolName)?.metadata ?? EMPTY;
}

/** The JoinGroup answer for a member of a group that completed its join: the leader also gets every member's metadata. */
export function joinResult(group: Group, member: Member): JoinGroupResult {
  const isLeader = group.leaderId === member.memberId;
  return {
    error: null,
    generationId: group.generationId,
    protocolType: group.protocolType,
    protocolName: group.protocolName,
    leader: group.leaderId ?? '',
    memberId: member.memberId,
    members: isLeader
      ? [...group.members.values()].map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, metadata: chosenMetadata(group, m) }))
      : [],
    skipAssignment: false,
  };
}

export function syncResult(group: Group, member: Member): SyncGroupResult {
  return { error: null, protocolType: group.protocolType, protocolName: group.protocolName, assignment: member.assignment };
}

/** The rebalance timeout a request gives, or its session timeout when it gives none (JoinGroup v0). */
export function rebalanceTimeoutOf(req: JoinGroupRequest): number {
  return req.rebalanceTimeoutMs > 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs;
}

/** The longest rebalance timeout of the group's members: how long a rebalance waits for them. */
export function groupRebalanceTimeoutMs(group: Group): number {
  let max = 0;
  for (const m of group.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
  return max;
}

/** A join by a static member's old incarnation: its instance id is held by another member id. (A join only fences.) */
export function fencedStatic(group: Group, memberId: string, groupInstanceId: string | null): GroupError | null {
  if (groupInstanceId === null) return null;
  const current = group.staticMembers.get(groupInstanceId);
  if (current !== undefined && current !== memberId) return 'fenced_instance_id';
  return null;
}

/**
 * Kafka's check of a static member's identity on heartbeat, sync and
 * commit: an instance id no member holds is UNKNOWN_MEMBER_ID, one held by
 * another member id FENCED_INSTANCE_ID. (A join only fences: fencedStatic.)
 */
export function staticIdentityError(group: Group, memberId: string, groupInstanceId: string | null): GroupError | null {
  if (groupInstanceId === null) return null;
  const current = group.staticMembers.get(groupInstanceId);
  if (current === undefined) return 'unknown_member_id';
  return current === memberId ? null : 'fenced_instance_id';
}

/** Members joined or joining (an id handed out with member_id_required): a group worth keeping. */
export function hasLiveMembers(group: Group): boolean {
  return group.members.size > 0 || group.pendingMembers.size > 0;
}

/** Answers every member's held JoinGroup and SyncGroup with `error` and lets go of them. */
export function answerHeldCalls(group: Group, error: GroupError): void {
  for (const m of group.members.values()) {
    m.joinWaiter?.(joinError(error, m.memberId));
    m.syncWaiter?.(syncError(error));
    m.joinWaiter = null;
    m.syncWaiter = null;
  }
}

import { randomUUID } from 'node:crypto';
import { Reader } from '../../../protocol/primitives/reader.js';
import type {
  CommitMembership,
  GroupDescription,
  GroupError,
  GroupListing,
  GroupProtocol,
  GroupState,
  HeartbeatRequest,
  JoinGroupRequest,
  JoinGroupResult,
  JoinedMember,
  LeaveGroupRequest,
  LeaveGroupResult,
  SyncGroupRequest,
  StoredGroup,
  SyncGroupResult,
} from './types.js';
import { joinedFields } from './types.js';

/**
 * Kafka's classic group protocol, in the core so that gateways stay stateless
 * and any of them can serve any group.
 *
 * A group moves Empty → PreparingRebalance (members rejoin; JoinGroup is held)
 * → CompletingRebalance (the leader got every member's metadata and computes
 * assignments; followers wait in SyncGroup) → Stable (assignments handed out;
 * heartbeats keep members alive). A member whose session timeout passes
 * without a heartbeat is removed and the group rebalances; members that do not
 * rejoin within the rebalance timeout are dropped. The first rebalance of an
 * empty group waits `initialRebalanceDelayMs` (extended while members keep
 * arriving, up to the rebalance timeout) so a fleet starting together
 * rebalances once. Static members (group.instance.id) that come back within
 * their session timeout get their assignment back without a rebalance.
 *
 * Membership lives in this process's memory and, given a GroupStore, is
 * stored where Kafka stores group metadata: when a rebalance completes (the
 * new generation, and again with the leader's assignments before SyncGroup is
 * answered) and when a static member's id changes. A core that takes the
 * group over (a coordinator move, a restart) restores it from there, so
 * members carry on with their ids and generation. A store that answers
 * "fenced" (another node took the group's lease) makes this coordinator drop
 * the group; its members are told NOT_COORDINATOR and find the new owner.
 *
 * Deliberately not built: the KIP-848 consumer protocol (ConsumerGroupHeartbeat).
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

const EMPTY = Buffer.alloc(0);

/** Where membership is stored; false from save means this node no longer owns the group. */
export interface GroupStore {
  save(groupId: string, stored: StoredGroup): Promise<boolean>;
}

interface Member extends JoinedMember, Pick<JoinGroupRequest, 'protocols'> {
  assignment: Buffer;
  joinWaiter: ((result: JoinGroupResult) => void) | null;
  syncWaiter: ((result: SyncGroupResult) => void) | null;
  sessionTimer: NodeJS.Timeout | null;
}

interface Group {
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

export function joinError(error: GroupError, memberId = ''): JoinGroupResult {
  return { error, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId, members: [], skipAssignment: false };
}

export function syncError(error: GroupError): SyncGroupResult {
  return { error, protocolType: null, protocolName: null, assignment: EMPTY };
}

function sameProtocols(a: GroupProtocol[], b: GroupProtocol[]): boolean {
  return a.length === b.length && a.every((p, i) => p.name === b[i]!.name && p.metadata.equals(b[i]!.metadata));
}

/** Topics a consumer-protocol member subscribes to, read from its metadata (ConsumerProtocolSubscription). */
export function subscribedTopics(metadata: Buffer): string[] {
  try {
    const r = new Reader(metadata);
    r.int16(); // version; topics come first in every version
    const count = r.arrayLength();
    const topics: string[] = [];
    for (let i = 0; i < count; i++) topics.push(r.string());
    return topics;
  } catch {
    return [];
  }
}

export class GroupCoordinator {
  private readonly groups = new Map<string, Group>();
  private readonly options: CoordinatorOptions;
  private closed = false;

  constructor(
    options: Partial<CoordinatorOptions> = {},
    private readonly store: GroupStore | null = null,
  ) {
    this.options = { ...DEFAULT_COORDINATOR_OPTIONS, ...options };
  }

  // ─── JoinGroup ────────────────────────────────────────────────────────────

  join(req: JoinGroupRequest, signal?: AbortSignal): Promise<JoinGroupResult> {
    if (this.closed) return Promise.resolve(joinError('coordinator_not_available', req.memberId));
    const invalid = this.validateGroupId(req.group);
    if (invalid) return Promise.resolve(joinError(invalid, req.memberId));
    const { minSessionTimeoutMs, maxSessionTimeoutMs } = this.options;
    if (req.sessionTimeoutMs < minSessionTimeoutMs || req.sessionTimeoutMs > maxSessionTimeoutMs) {
      return Promise.resolve(joinError('invalid_session_timeout', req.memberId));
    }
    if (req.protocolType === '' || req.protocols.length === 0) {
      return Promise.resolve(joinError('inconsistent_group_protocol', req.memberId));
    }
    const group = this.groupFor(req.group);
    if (!this.supportsGroupProtocols(group, req)) {
      return Promise.resolve(joinError('inconsistent_group_protocol', req.memberId));
    }

    return new Promise<JoinGroupResult>((resolve) => {
      const answer = (result: JoinGroupResult) => resolve(result);
      if (req.memberId === '') this.joinUnknownMember(group, req, answer);
      else this.joinKnownMember(group, req, answer);
      if (signal) {
        // A client that goes away while its join is held is not waited for.
        const onAbort = () => {
          for (const m of group.members.values()) {
            if (m.joinWaiter === answer) m.joinWaiter = null;
          }
          resolve(joinError('unknown_member_id', req.memberId));
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
    });
  }

  private joinUnknownMember(group: Group, req: JoinGroupRequest, answer: (r: JoinGroupResult) => void): void {
    // Kafka names a static member after its instance id, any other after its client id.
    const memberId = `${req.groupInstanceId ?? (req.clientId || 'member')}-${randomUUID()}`;
    if (req.groupInstanceId !== null) {
      const oldId = group.staticMembers.get(req.groupInstanceId);
      if (oldId !== undefined && group.members.has(oldId)) {
        this.replaceStaticMember(group, oldId, memberId, req, answer);
        return;
      }
    } else if (req.requireKnownMemberId) {
      // KIP-394: hand out an id first, so a client that times out and retries
      // does not leave a ghost member behind.
      const timer = setTimeout(() => this.expirePendingMember(group, memberId), req.sessionTimeoutMs);
      timer.unref();
      group.pendingMembers.set(memberId, timer);
      answer(joinError('member_id_required', memberId));
      return;
    }
    if (group.members.size >= this.options.maxGroupSize) {
      answer(joinError('group_max_size_reached', memberId));
      return;
    }
    this.addMemberAndRebalance(group, memberId, req, answer);
  }

  private joinKnownMember(group: Group, req: JoinGroupRequest, answer: (r: JoinGroupResult) => void): void {
    const pending = group.pendingMembers.get(req.memberId);
    if (pending !== undefined) {
      clearTimeout(pending);
      group.pendingMembers.delete(req.memberId);
      if (group.members.size >= this.options.maxGroupSize) {
        answer(joinError('group_max_size_reached', req.memberId));
        return;
      }
      this.addMemberAndRebalance(group, req.memberId, req, answer);
      return;
    }
    const fenced = this.fencedStatic(group, req.memberId, req.groupInstanceId);
    if (fenced) {
      answer(joinError(fenced, req.memberId));
      return;
    }
    const member = group.members.get(req.memberId);
    if (!member) {
      answer(joinError('unknown_member_id', req.memberId));
      return;
    }
    const unchanged = sameProtocols(member.protocols, req.protocols);
    this.updateMember(member, req);
    this.touchSession(group, member);
    switch (group.state) {
      case 'PreparingRebalance':
        member.joinWaiter = answer;
        this.tryCompleteJoin(group);
        return;
      case 'CompletingRebalance':
        if (unchanged) {
          answer(this.joinResult(group, member));
          return;
        }
        break;
      case 'Stable':
        if (unchanged && group.leaderId !== member.memberId) {
          answer(this.joinResult(group, member));
          return;
        }
        break;
      default:
        break;
    }
    member.joinWaiter = answer;
    this.prepareRebalance(group);
  }

  private replaceStaticMember(
    group: Group,
    oldId: string,
    newId: string,
    req: JoinGroupRequest,
    answer: (r: JoinGroupResult) => void,
  ): void {
    const old = group.members.get(oldId)!;
    if (old.sessionTimer) clearTimeout(old.sessionTimer);
    // The old incarnation's held calls answer fenced; its id is no longer valid.
    old.joinWaiter?.(joinError('fenced_instance_id', oldId));
    old.syncWaiter?.(syncError('fenced_instance_id'));
    group.members.delete(oldId);
    const unchanged = sameProtocols(old.protocols, req.protocols);
    const member: Member = { ...old, memberId: newId, joinWaiter: null, syncWaiter: null, sessionTimer: null };
    this.updateMember(member, req);
    group.members.set(newId, member);
    group.staticMembers.set(req.groupInstanceId!, newId);
    if (group.leaderId === oldId) group.leaderId = newId;
    this.touchSession(group, member);
    if (group.state === 'Stable' && unchanged) {
      // KIP-345: the member comes back to the same generation and assignment, no rebalance.
      void this.save(group);
      const result = this.joinResult(group, member);
      if (group.leaderId !== newId) answer(result);
      else if (req.skipAssignmentSupported) answer({ ...result, skipAssignment: true });
      // KIP-814: a client before JoinGroup v9 would compute a new assignment if told it
      // leads; it is answered as a follower of its old id, as Kafka does, and syncs its own.
      else answer({ ...result, leader: oldId, members: [] });
      return;
    }
    member.joinWaiter = answer;
    if (group.state === 'PreparingRebalance') this.tryCompleteJoin(group);
    else this.prepareRebalance(group);
  }

  private addMemberAndRebalance(group: Group, memberId: string, req: JoinGroupRequest, answer: (r: JoinGroupResult) => void): void {
    const member: Member = {
      memberId,
      groupInstanceId: req.groupInstanceId,
      clientId: req.clientId,
      clientHost: req.clientHost,
      sessionTimeoutMs: req.sessionTimeoutMs,
      rebalanceTimeoutMs: req.rebalanceTimeoutMs > 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs,
      protocolType: req.protocolType,
      protocols: req.protocols,
      assignment: EMPTY,
      joinWaiter: answer,
      syncWaiter: null,
      sessionTimer: null,
    };
    group.members.set(memberId, member);
    if (req.groupInstanceId !== null) group.staticMembers.set(req.groupInstanceId, memberId);
    if (group.protocolType === null) group.protocolType = req.protocolType;
    if (group.initialDelay) group.initialDelay.newMemberAdded = true;
    this.touchSession(group, member);
    if (group.state === 'PreparingRebalance') this.tryCompleteJoin(group);
    else this.prepareRebalance(group);
  }

  private updateMember(member: Member, req: JoinGroupRequest): void {
    member.protocols = req.protocols;
    member.protocolType = req.protocolType;
    member.sessionTimeoutMs = req.sessionTimeoutMs;
    member.rebalanceTimeoutMs = req.rebalanceTimeoutMs > 0 ? req.rebalanceTimeoutMs : req.sessionTimeoutMs;
    member.clientId = req.clientId;
    member.clientHost = req.clientHost;
  }

  private joinResult(group: Group, member: Member): JoinGroupResult {
    const isLeader = group.leaderId === member.memberId;
    return {
      error: null,
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leader: group.leaderId ?? '',
      memberId: member.memberId,
      members: isLeader
        ? [...group.members.values()].map((m) => ({
            memberId: m.memberId,
            groupInstanceId: m.groupInstanceId,
            metadata: m.protocols.find((p) => p.name === group.protocolName)?.metadata ?? EMPTY,
          }))
        : [],
      skipAssignment: false,
    };
  }

  // ─── Rebalancing ──────────────────────────────────────────────────────────

  private rebalanceTimeoutMs(group: Group): number {
    let max = 0;
    for (const m of group.members.values()) max = Math.max(max, m.rebalanceTimeoutMs);
    return max;
  }

  private prepareRebalance(group: Group): void {
    if (group.state === 'CompletingRebalance') {
      for (const m of group.members.values()) {
        m.assignment = EMPTY;
        const waiter = m.syncWaiter;
        m.syncWaiter = null;
        waiter?.(syncError('rebalance_in_progress'));
      }
    }
    if (group.syncTimer) {
      clearTimeout(group.syncTimer);
      group.syncTimer = null;
    }
    const wasEmpty = group.state === 'Empty';
    group.state = 'PreparingRebalance';
    if (group.rebalanceTimer) clearTimeout(group.rebalanceTimer);
    const rebalanceTimeoutMs = this.rebalanceTimeoutMs(group);
    if (wasEmpty && this.options.initialRebalanceDelayMs > 0) {
      const delay = Math.min(this.options.initialRebalanceDelayMs, rebalanceTimeoutMs);
      group.initialDelay = { remainingMs: Math.max(rebalanceTimeoutMs - delay, 0), newMemberAdded: false };
      this.scheduleInitialDelay(group, delay);
      return;
    }
    group.rebalanceTimer = setTimeout(() => this.completeJoin(group), rebalanceTimeoutMs);
    group.rebalanceTimer.unref();
    this.tryCompleteJoin(group);
  }

  private scheduleInitialDelay(group: Group, delayMs: number): void {
    group.rebalanceTimer = setTimeout(() => {
      const delay = group.initialDelay;
      if (delay && delay.newMemberAdded && delay.remainingMs > 0) {
        const next = Math.min(this.options.initialRebalanceDelayMs, delay.remainingMs);
        group.initialDelay = { remainingMs: Math.max(delay.remainingMs - next, 0), newMemberAdded: false };
        this.scheduleInitialDelay(group, next);
        return;
      }
      group.initialDelay = null;
      this.completeJoin(group);
    }, delayMs);
    group.rebalanceTimer.unref();
  }

  private tryCompleteJoin(group: Group): void {
    if (group.state !== 'PreparingRebalance' || group.initialDelay) return;
    if (group.pendingMembers.size > 0) return;
    for (const m of group.members.values()) if (!m.joinWaiter) return;
    this.completeJoin(group);
  }

  private completeJoin(group: Group): void {
    if (group.state !== 'PreparingRebalance') return;
    if (group.rebalanceTimer) {
      clearTimeout(group.rebalanceTimer);
      group.rebalanceTimer = null;
    }
    group.initialDelay = null;
    // Members that did not rejoin within the rebalance timeout are out.
    for (const m of [...group.members.values()]) if (!m.joinWaiter) this.dropMember(group, m);
    group.generationId++;
    if (group.members.size === 0) {
      group.state = 'Empty';
      group.protocolName = null;
      group.leaderId = null;
      void this.save(group);
      return;
    }
    group.protocolName = this.selectProtocol(group);
    if (group.leaderId === null || !group.members.has(group.leaderId)) {
      group.leaderId = group.members.keys().next().value!;
    }
    group.state = 'CompletingRebalance';
    for (const m of group.members.values()) {
      const waiter = m.joinWaiter!;
      m.joinWaiter = null;
      m.assignment = EMPTY;
      this.touchSession(group, m);
      waiter(this.joinResult(group, m));
    }
    void this.save(group);
    this.startSyncTimer(group);
  }

  /** A leader that never sends its SyncGroup must not stall the group forever. */
  private startSyncTimer(group: Group): void {
    const generation = group.generationId;
    group.syncTimer = setTimeout(() => {
      if (group.state !== 'CompletingRebalance' || group.generationId !== generation) return;
      for (const m of [...group.members.values()]) if (!m.syncWaiter) this.dropMember(group, m);
      this.afterMembershipChange(group);
    }, this.rebalanceTimeoutMs(group));
    group.syncTimer.unref();
  }

  /** The protocol every member supports that most members list first among those (Kafka's vote). */
  private selectProtocol(group: Group): string {
    const members = [...group.members.values()];
    const candidates = members[0]!.protocols
      .map((p) => p.name)
      .filter((name) => members.every((m) => m.protocols.some((p) => p.name === name)));
    const votes = new Map<string, number>();
    for (const m of members) {
      const choice = m.protocols.find((p) => candidates.includes(p.name))!.name;
      votes.set(choice, (votes.get(choice) ?? 0) + 1);
    }
    let best = candidates[0]!;
    for (const name of candidates) if ((votes.get(name) ?? 0) > (votes.get(best) ?? 0)) best = name;
    return best;
  }

  private supportsGroupProtocols(group: Group, req: JoinGroupRequest): boolean {
    const others = [...group.members.values()].filter((m) => m.memberId !== req.memberId);
    if (others.length === 0) return true;
    if (group.protocolType !== null && group.protocolType !== req.protocolType) return false;
    const names = new Set(req.protocols.map((p) => p.name));
    const common = others[0]!.protocols.map((p) => p.name).filter((n) => names.has(n) && others.every((m) => m.protocols.some((p) => p.name === n)));
    return common.length > 0;
  }

  // ─── Liveness ─────────────────────────────────────────────────────────────

  private touchSession(group: Group, member: Member): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    member.sessionTimer = setTimeout(() => this.expireSession(group, member), member.sessionTimeoutMs);
    member.sessionTimer.unref();
  }

  private expireSession(group: Group, member: Member): void {
    member.sessionTimer = null;
    if (group.members.get(member.memberId) !== member) return;
    // A member whose JoinGroup or SyncGroup is being held is alive by definition.
    if (member.joinWaiter || member.syncWaiter) {
      this.touchSession(group, member);
      return;
    }
    this.dropMember(group, member);
    this.afterMembershipChange(group);
  }

  private expirePendingMember(group: Group, memberId: string): void {
    if (!group.pendingMembers.delete(memberId)) return;
    this.tryCompleteJoin(group);
    this.forgetIfUnused(group);
  }

  private dropMember(group: Group, member: Member): void {
    if (member.sessionTimer) clearTimeout(member.sessionTimer);
    member.sessionTimer = null;
    group.members.delete(member.memberId);
    if (member.groupInstanceId !== null && group.staticMembers.get(member.groupInstanceId) === member.memberId) {
      group.staticMembers.delete(member.groupInstanceId);
    }
    member.joinWaiter?.(joinError('unknown_member_id', member.memberId));
    member.syncWaiter?.(syncError('unknown_member_id'));
    member.joinWaiter = null;
    member.syncWaiter = null;
  }

  /** After members left or expired: rebalance the rest, or go Empty. */
  private afterMembershipChange(group: Group): void {
    switch (group.state) {
      case 'PreparingRebalance':
        if (group.members.size === 0 && group.pendingMembers.size === 0) this.completeJoin(group);
        else this.tryCompleteJoin(group);
        break;
      case 'CompletingRebalance':
      case 'Stable':
        if (group.members.size === 0) {
          if (group.syncTimer) clearTimeout(group.syncTimer);
          group.syncTimer = null;
          group.state = 'PreparingRebalance';
          this.completeJoin(group);
        } else {
          this.prepareRebalance(group);
        }
        break;
      default:
        break;
    }
  }

  // ─── SyncGroup, Heartbeat, LeaveGroup ─────────────────────────────────────

  sync(req: SyncGroupRequest, signal?: AbortSignal): Promise<SyncGroupResult> {
    const group = this.groups.get(req.group);
    if (!group) return Promise.resolve(syncError('unknown_member_id'));
    const fenced = this.staticIdentityError(group, req.memberId, req.groupInstanceId);
    if (fenced) return Promise.resolve(syncError(fenced));
    const member = group.members.get(req.memberId);
    if (!member) return Promise.resolve(syncError('unknown_member_id'));
    if (req.generationId !== group.generationId) return Promise.resolve(syncError('illegal_generation'));
    if ((req.protocolType !== null && req.protocolType !== group.protocolType) ||
        (req.protocolName !== null && req.protocolName !== group.protocolName)) {
      return Promise.resolve(syncError('inconsistent_group_protocol'));
    }
    this.touchSession(group, member);
    if (group.state === 'PreparingRebalance') return Promise.resolve(syncError('rebalance_in_progress'));
    if (group.state === 'Stable') return Promise.resolve(this.syncResult(group, member));
    if (group.state !== 'CompletingRebalance') return Promise.resolve(syncError('unknown_member_id'));

    return new Promise<SyncGroupResult>((resolve) => {
      member.syncWaiter = resolve;
      if (signal) {
        const onAbort = () => {
          if (member.syncWaiter === resolve) member.syncWaiter = null;
          resolve(syncError('rebalance_in_progress'));
        };
        if (signal.aborted) onAbort();
        else signal.addEventListener('abort', onAbort, { once: true });
      }
      if (group.leaderId === member.memberId) {
        const given = new Map(req.assignments.map((a) => [a.memberId, a.assignment]));
        for (const m of group.members.values()) m.assignment = given.get(m.memberId) ?? EMPTY;
        group.state = 'Stable';
        if (group.syncTimer) clearTimeout(group.syncTimer);
        group.syncTimer = null;
        // As Kafka, the assignments are stored before anyone is told them, so a
        // coordinator that takes over hands out the same ones.
        const generation = group.generationId;
        void this.save(group).then((saved) => {
          if (this.groups.get(group.id) !== group || group.generationId !== generation || group.state !== 'Stable') return;
          if (!saved) {
            // The store did not answer: members rejoin rather than hold what may not be stored.
            for (const m of group.members.values()) {
              const waiter = m.syncWaiter;
              m.syncWaiter = null;
              waiter?.(syncError('coordinator_not_available'));
            }
            this.prepareRebalance(group);
            return;
          }
          for (const m of group.members.values()) {
            const waiter = m.syncWaiter;
            m.syncWaiter = null;
            waiter?.(this.syncResult(group, m));
          }
        });
      }
    });
  }

  private syncResult(group: Group, member: Member): SyncGroupResult {
    return { error: null, protocolType: group.protocolType, protocolName: group.protocolName, assignment: member.assignment };
  }

  heartbeat(req: HeartbeatRequest): { error: GroupError | null } {
    const group = this.groups.get(req.group);
    if (!group) return { error: 'unknown_member_id' };
    if (group.state === 'Dead') return { error: 'coordinator_not_available' };
    // A static member's old incarnation is fenced before anything else is checked.
    const fenced = this.staticIdentityError(group, req.memberId, req.groupInstanceId);
    if (fenced) return { error: fenced };
    const member = group.members.get(req.memberId);
    if (!member) return { error: 'unknown_member_id' };
    this.touchSession(group, member);
    if (group.state === 'PreparingRebalance') return { error: 'rebalance_in_progress' };
    if (req.generationId !== group.generationId) return { error: 'illegal_generation' };
    return { error: null };
  }

  leave(req: LeaveGroupRequest): LeaveGroupResult {
    const group = this.groups.get(req.group);
    if (!group) {
      return { error: null, members: req.members.map((m) => ({ ...m, error: 'unknown_member_id' as const })) };
    }
    const results: LeaveGroupResult['members'] = [];
    let changed = false;
    // Each answer names the member as the request did (Kafka echoes it, an empty id included).
    for (const leaving of req.members) {
      const answer = (error: GroupError | null) => results.push({ memberId: leaving.memberId, groupInstanceId: leaving.groupInstanceId, error });
      let memberId = leaving.memberId;
      if (leaving.groupInstanceId !== null) {
        // A static member is found by its instance id; a member id beside it must be the one holding it.
        const holder = group.staticMembers.get(leaving.groupInstanceId);
        if (holder === undefined) {
          answer('unknown_member_id');
          continue;
        }
        if (memberId !== '' && memberId !== holder) {
          answer('fenced_instance_id');
          continue;
        }
        memberId = holder;
      }
      if (group.pendingMembers.has(memberId)) {
        clearTimeout(group.pendingMembers.get(memberId));
        group.pendingMembers.delete(memberId);
        answer(null);
        changed = true;
        continue;
      }
      const member = group.members.get(memberId);
      if (!member) {
        answer('unknown_member_id');
        continue;
      }
      this.dropMember(group, member);
      answer(null);
      changed = true;
    }
    if (changed) this.afterMembershipChange(group);
    return { error: null, members: results };
  }

  // ─── Commits, descriptions, listings, deletion ────────────────────────────

  /** Kafka's checks before an offset commit; null when the commit may proceed. */
  checkCommit(req: CommitMembership): GroupError | null {
    const group = this.groups.get(req.group);
    if (!group || group.members.size === 0) {
      // An empty or unknown group takes commits from outside (assign-mode consumers, tools).
      if (req.generationId < 0 && req.memberId === '') return null;
      if (!group) return req.generationId < 0 ? null : 'illegal_generation';
      return 'unknown_member_id';
    }
    if (group.state === 'Dead') return 'coordinator_not_available';
    const fenced = this.staticIdentityError(group, req.memberId, req.groupInstanceId);
    if (fenced) return fenced;
    if (req.generationId < 0 && req.memberId === '') return 'unknown_member_id';
    const member = group.members.get(req.memberId);
    if (!member) return 'unknown_member_id';
    if (group.state === 'CompletingRebalance') return 'rebalance_in_progress';
    if (req.generationId !== group.generationId) return 'illegal_generation';
    this.touchSession(group, member);
    return null;
  }

  describe(groupIds: string[]): GroupDescription[] {
    return groupIds.map((id) => {
      const group = this.groups.get(id);
      if (!group) {
        return { group: id, error: null, state: 'Dead' as const, protocolType: '', protocolName: '', generationId: -1, members: [] };
      }
      const stable = group.state === 'Stable' || group.state === 'CompletingRebalance';
      return {
        group: id,
        error: null,
        state: group.state,
        protocolType: group.protocolType ?? '',
        protocolName: stable ? group.protocolName ?? '' : '',
        generationId: group.generationId,
        members: [...group.members.values()].map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          metadata: stable ? m.protocols.find((p) => p.name === group.protocolName)?.metadata ?? EMPTY : EMPTY,
          assignment: group.state === 'Stable' ? m.assignment : EMPTY,
        })),
      };
    });
  }

  list(): GroupListing[] {
    return [...this.groups.values()]
      .filter((g) => g.state !== 'Dead')
      .map((g) => ({ group: g.id, protocolType: g.protocolType ?? '', state: g.state }));
  }

  /** Whether the group has live members; DeleteGroups refuses such groups. */
  hasMembers(groupId: string): boolean {
    const group = this.groups.get(groupId);
    return group !== undefined && (group.members.size > 0 || group.pendingMembers.size > 0);
  }

  /** Topics the group's live consumer members subscribe to (OffsetDelete refuses those). */
  subscribedTopics(groupId: string): Set<string> {
    const topics = new Set<string>();
    const group = this.groups.get(groupId);
    if (!group || group.protocolType !== 'consumer') return topics;
    for (const m of group.members.values()) {
      const metadata = m.protocols.find((p) => p.name === group.protocolName)?.metadata ?? m.protocols[0]?.metadata;
      if (metadata) for (const t of subscribedTopics(metadata)) topics.add(t);
    }
    return topics;
  }

  /** Forgets an empty group (DeleteGroups). */
  remove(groupId: string): void {
    const group = this.groups.get(groupId);
    if (!group) return;
    group.state = 'Dead';
    this.clearTimers(group);
    this.groups.delete(groupId);
  }

  knows(groupId: string): boolean {
    return this.groups.has(groupId);
  }

  /** Groups this coordinator holds with members, joining or not: the leases worth keeping. */
  activeGroups(): string[] {
    return [...this.groups.values()].filter((g) => g.members.size > 0 || g.pendingMembers.size > 0).map((g) => g.id);
  }

  /**
   * Lets go of a group whose lease this node lost (or that another node may
   * have changed): held calls answer NOT_COORDINATOR, timers stop, nothing is
   * stored. The next owner restores the group from the store.
   */
  drop(groupId: string): void {
    const group = this.groups.get(groupId);
    if (!group) return;
    this.clearTimers(group);
    for (const m of group.members.values()) {
      if (m.sessionTimer) clearTimeout(m.sessionTimer);
      m.sessionTimer = null;
      m.joinWaiter?.(joinError('not_coordinator', m.memberId));
      m.syncWaiter?.(syncError('not_coordinator'));
      m.joinWaiter = null;
      m.syncWaiter = null;
    }
    this.groups.delete(groupId);
  }

  /**
   * Takes a group over as it was stored: members keep their ids, generation
   * and assignments, and each gets a fresh session timeout to show it is
   * still there (as Kafka schedules every loaded member's expiry).
   */
  restore(groupId: string, stored: StoredGroup): void {
    this.drop(groupId);
    const group = this.groupFor(groupId);
    group.state = stored.state;
    group.generationId = stored.generationId;
    group.protocolType = stored.protocolType;
    group.protocolName = stored.protocolName;
    group.leaderId = stored.leaderId;
    for (const m of stored.members) {
      const member: Member = {
        ...joinedFields(m),
        protocols: m.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata, 'base64') })),
        assignment: Buffer.from(m.assignment, 'base64'),
        joinWaiter: null,
        syncWaiter: null,
        sessionTimer: null,
      };
      group.members.set(m.memberId, member);
      if (m.groupInstanceId !== null) group.staticMembers.set(m.groupInstanceId, m.memberId);
      this.touchSession(group, member);
    }
    if (group.state === 'CompletingRebalance') this.startSyncTimer(group);
    if (group.members.size === 0 && group.state !== 'Empty') group.state = 'Empty';
  }

  private stored(group: Group): StoredGroup {
    return {
      state: group.state === 'Stable' || group.state === 'CompletingRebalance' ? group.state : 'Empty',
      generationId: group.generationId,
      protocolType: group.protocolType,
      protocolName: group.protocolName,
      leaderId: group.leaderId,
      members: [...group.members.values()].map((m) => ({
        ...joinedFields(m),
        protocols: m.protocols.map((p) => ({ name: p.name, metadata: p.metadata.toString('base64') })),
        assignment: m.assignment.toString('base64'),
      })),
    };
  }

  /**
   * Stores the group as it is now, after the stores before it. Answers false
   * when the store did not take it; when that is because another node owns
   * the group, the group is dropped here.
   */
  private save(group: Group): Promise<boolean> {
    const store = this.store;
    if (!store) return Promise.resolve(true);
    const stored = this.stored(group);
    group.saving = group.saving.then(() =>
      store.save(group.id, stored).then(
        (owned) => {
          if (!owned && this.groups.get(group.id) === group) this.drop(group.id);
          return owned;
        },
        () => false,
      ),
    );
    return group.saving;
  }

  close(): void {
    this.closed = true;
    for (const group of this.groups.values()) {
      this.clearTimers(group);
      for (const m of group.members.values()) {
        m.joinWaiter?.(joinError('coordinator_not_available', m.memberId));
        m.syncWaiter?.(syncError('coordinator_not_available'));
        if (m.sessionTimer) clearTimeout(m.sessionTimer);
      }
    }
    this.groups.clear();
  }

  // ─── Helpers ──────────────────────────────────────────────────────────────

  private validateGroupId(groupId: string): GroupError | null {
    if (groupId === '' || Buffer.byteLength(groupId) > this.options.maxGroupIdBytes) return 'invalid_group_id';
    return null;
  }

  private fencedStatic(group: Group, memberId: string, groupInstanceId: string | null): GroupError | null {
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
  private staticIdentityError(group: Group, memberId: string, groupInstanceId: string | null): GroupError | null {
    if (groupInstanceId === null) return null;
    const current = group.staticMembers.get(groupInstanceId);
    if (current === undefined) return 'unknown_member_id';
    return current === memberId ? null : 'fenced_instance_id';
  }

  private groupFor(id: string): Group {
    let group = this.groups.get(id);
    if (!group) {
      group = {
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
      this.groups.set(id, group);
    }
    return group;
  }

  private forgetIfUnused(group: Group): void {
    if (group.state === 'Empty' && group.members.size === 0 && group.pendingMembers.size === 0 && group.generationId === 0) {
      this.clearTimers(group);
      this.groups.delete(group.id);
    }
  }

  private clearTimers(group: Group): void {
    if (group.rebalanceTimer) clearTimeout(group.rebalanceTimer);
    if (group.syncTimer) clearTimeout(group.syncTimer);
    for (const t of group.pendingMembers.values()) clearTimeout(t);
    group.rebalanceTimer = null;
    group.syncTimer = null;
  }
}

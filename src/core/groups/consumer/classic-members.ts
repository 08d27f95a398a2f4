import { randomUUID } from 'node:crypto';
import { Reader } from '../../../../protocol/primitives/reader.js';
import { Writer } from '../../../../protocol/primitives/writer.js';
import type { GroupError, HeartbeatRequest, StoredGroup, JoinGroupRequest, JoinGroupResult, LeaveGroupRequest, LeaveGroupResult, SyncGroupRequest, SyncGroupResult } from '../types.js';
import { DEFAULT_ASSIGNOR, type MemberAssignment } from './assignors.js';
import type { ConsumerGroupCoordinator } from './coordinator.js';
import type { Member } from './group.js';
import type { StoredConsumerGroup } from './persistence.js';
import { toTopicPartitions } from './reconciliation.js';
import type { ConsumerGroupError, ConsumerGroupHeartbeatRequest, TopicMetadata } from './types.js';

/**
 * Classic members of a consumer group (KIP-848's migration, as Kafka 4's
 * default `group.consumer.migration.policy` allows): a member speaking
 * JoinGroup, SyncGroup and Heartbeat joins a consumer group that has
 * members, and the coordinator treats it as one of its own. Each call is
 * translated into a ConsumerGroupHeartbeat of that member:
 *
 * - JoinGroup: the subscription and the partitions it still owns (read from
 *   its ConsumerProtocolSubscription) are a heartbeat at its current epoch
 *   (0 to join); the answer's generation is its member epoch, the protocol
 *   the first it offers, no leader (every classic member is a follower: the
 *   coordinator assigns). A first join without an id answers
 *   MEMBER_ID_REQUIRED with one, as Kafka 4.4 does.
 * - SyncGroup: its assignment, as ConsumerProtocolAssignment v0.
 * - Heartbeat: a heartbeat owning what it was last given; when that moves
 *   its epoch or assignment on (partitions to give up or to take), it is
 *   told REBALANCE_IN_PROGRESS and rejoins, so revocation still comes before
 *   assignment.
 * - LeaveGroup: a heartbeat at epoch -1.
 *
 * And the other way in: a classic group with members converts to a consumer
 * group when a member of the consumer protocol joins it (upgradedClassicGroup).
 */

interface Subscription {
  topics: string[];
  owned: { topic: string; partitions: number[] }[];
}

/** ConsumerProtocolSubscription, any version: topics, and from v1 the partitions the member owns. */
function readSubscription(metadata: Buffer): Subscription {
  const r = new Reader(metadata);
  const version = r.int16();
  const topics: string[] = [];
  for (let n = r.arrayLength(); n > 0; n--) topics.push(r.string());
  const owned: Subscription['owned'] = [];
  if (version >= 1) {
    r.nullableBytes();
    for (let n = r.arrayLength(); n > 0; n--) {
      const topic = r.string();
      const partitions: number[] = [];
      for (let p = r.arrayLength(); p > 0; p--) partitions.push(r.int32());
      owned.push({ topic, partitions });
    }
  }
  return { topics, owned };
}

/** ConsumerProtocolAssignment v0 of `assignment`, topics named. */
function writeAssignment(assignment: MemberAssignment, names: Map<string, string>): Buffer {
  const w = new Writer();
  const topics = toTopicPartitions(assignment);
  w.int16(0);
  w.int32(topics.length);
  for (const t of topics) {
    w.string(names.get(t.topicId) ?? '');
    w.int32(t.partitions.length);
    for (const p of t.partitions) w.int32(p);
  }
  w.nullableBytes(null);
  return w.toBuffer();
}

const sameAssignment = (a: MemberAssignment, b: MemberAssignment) => JSON.stringify(toTopicPartitions(a)) === JSON.stringify(toTopicPartitions(b));

/** A consumer group's refusal in the classic calls' terms. */
function classicError(error: ConsumerGroupError): GroupError {
  switch (error) {
    case 'fenced_member_epoch':
    case 'stale_member_epoch':
      return 'illegal_generation';
    case 'unknown_member_id':
    case 'group_max_size_reached':
    case 'fenced_instance_id':
    case 'not_coordinator':
    case 'coordinator_not_available':
      return error;
    default:
      return 'inconsistent_group_protocol';
  }
}

/** ConsumerProtocolAssignment, any version: the partitions by topic name. */
function readAssignment(bytes: Buffer): { topic: string; partitions: number[] }[] {
  if (bytes.length === 0) return [];
  const r = new Reader(bytes);
  r.int16();
  const topics: { topic: string; partitions: number[] }[] = [];
  for (let n = r.arrayLength(); n > 0; n--) {
    const topic = r.string();
    const partitions: number[] = [];
    for (let p = r.arrayLength(); p > 0; p--) partitions.push(r.int32());
    topics.push({ topic, partitions });
  }
  return topics;
}

/**
 * The online upgrade (KIP-848): a classic group with members, of the
 * consumer protocol and Stable, handed over to the consumer group
 * coordinator when a member of the consumer protocol joins it. Each classic
 * member becomes a classic member of the consumer group at its generation,
 * keeping its partitions (they are the group's target until the assignor
 * runs for the joining member). Null when the group cannot convert (another
 * protocol type, a rebalance under way, metadata that does not read), as
 * Kafka then refuses the consumer member.
 */
export function upgradedClassicGroup(classic: StoredGroup, topics: readonly TopicMetadata[]): StoredConsumerGroup | null {
  if (classic.protocolType !== 'consumer' || classic.state !== 'Stable' || classic.protocolName === null) return null;
  const ids = new Map(topics.map((t) => [t.name, t.id]));
  const stored = (owned: { topic: string; partitions: number[] }[]): [string, number[]][] => owned.filter((t) => ids.has(t.topic)).map((t) => [ids.get(t.topic)!, [...t.partitions].sort((a, b) => a - b)]);
  try {
    const members = classic.members.map((m) => {
      const metadata = m.protocols.find((p) => p.name === classic.protocolName)?.metadata;
      if (metadata === undefined) throw new Error('no metadata for the chosen protocol');
      const assigned = stored(readAssignment(Buffer.from(m.assignment, 'base64')));
      return {
        memberId: m.memberId, instanceId: m.groupInstanceId, rackId: null, clientId: m.clientId, clientHost: m.clientHost,
        rebalanceTimeoutMs: m.rebalanceTimeoutMs, subscribedTopicNames: [...new Set(readSubscription(Buffer.from(metadata, 'base64')).topics)].sort(),
        subscribedTopicRegex: null, serverAssignor: null, state: 'stable' as const, memberEpoch: classic.generationId, previousMemberEpoch: classic.generationId - 1,
        assigned, pendingRevocation: [], lastAnswered: null,
        classic: { sessionTimeoutMs: m.sessionTimeoutMs, protocolName: classic.protocolName!, synced: assigned },
      };
    });
    return {
      groupEpoch: classic.generationId,
      assignmentEpoch: classic.generationId,
      assignorName: DEFAULT_ASSIGNOR,
      subscriptionMetadata: '[]',
      target: members.map((m) => [m.memberId, m.assigned]),
      members,
    };
  } catch {
    return null;
  }
}

export class ClassicMembers {
  constructor(private readonly coordinator: ConsumerGroupCoordinator) {}

  // Long because the join's answer has every field of JoinGroup's, refusals included.
  join(req: JoinGroupRequest, topics: readonly TopicMetadata[]): JoinGroupResult {
    const refused = (error: GroupError, memberId = req.memberId): JoinGroupResult => ({ error, generationId: -1, protocolType: null, protocolName: null, leader: '', memberId, members: [], skipAssignment: false });
    const protocol = req.protocols[0];
    if (req.protocolType !== 'consumer' || !protocol) return refused('inconsistent_group_protocol');
    if (req.memberId === '' && req.requireKnownMemberId) return refused('member_id_required', randomUUID());
    let subscription: Subscription;
    try {
      subscription = readSubscription(protocol.metadata);
    } catch {
      return refused('inconsistent_group_protocol');
    }
    const memberId = req.memberId === '' ? randomUUID() : req.memberId;
    const existing = this.coordinator.member(req.group, memberId);
    const ids = new Map(topics.map((t) => [t.name, t.id]));
    const owned = subscription.owned.filter((t) => ids.has(t.topic)).map((t) => ({ topicId: ids.get(t.topic)!, partitions: t.partitions }));
    const result = this.coordinator.heartbeat(
      this.request(req.group, memberId, existing ? existing.memberEpoch : 0, req.clientId, req.clientHost, {
        instanceId: req.groupInstanceId,
        rebalanceTimeoutMs: req.rebalanceTimeoutMs,
        subscribedTopicNames: subscription.topics,
        topicPartitions: existing ? owned : [],
      }),
      topics,
    );
    if (result.error !== null) return refused(classicError(result.error), memberId);
    const member = this.coordinator.member(req.group, memberId)!;
    const synced: MemberAssignment = new Map(owned.map((t) => [t.topicId, new Set(t.partitions)]));
    member.classic = { sessionTimeoutMs: req.sessionTimeoutMs, protocolName: protocol.name, synced };
    return { error: null, generationId: result.memberEpoch, protocolType: 'consumer', protocolName: protocol.name, leader: '', memberId, members: [], skipAssignment: false };
  }

  sync(req: SyncGroupRequest, topics: readonly TopicMetadata[]): SyncGroupResult {
    const refused = (error: GroupError): SyncGroupResult => ({ error, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) });
    const member = this.classicMember(req.group, req.memberId);
    if (!member) return refused('unknown_member_id');
    if (req.generationId !== member.memberEpoch) return refused('illegal_generation');
    member.classic!.synced = new Map([...member.assigned].map(([topicId, partitions]) => [topicId, new Set(partitions)]));
    return { error: null, protocolType: 'consumer', protocolName: member.classic!.protocolName, assignment: writeAssignment(member.assigned, new Map(topics.map((t) => [t.id, t.name]))) };
  }

  heartbeat(req: HeartbeatRequest, topics: readonly TopicMetadata[]): { error: GroupError | null } {
    const member = this.classicMember(req.group, req.memberId);
    if (!member) return { error: 'unknown_member_id' };
    if (req.generationId !== member.memberEpoch) return { error: 'illegal_generation' };
    const synced = member.classic!.synced;
    const result = this.coordinator.heartbeat(this.request(req.group, req.memberId, member.memberEpoch, member.clientId, member.clientHost, { topicPartitions: toTopicPartitions(synced) }), topics);
    if (result.error !== null) return { error: classicError(result.error) };
    // Something to give up or to take: the member rejoins to learn it.
    if (result.memberEpoch !== req.generationId || !sameAssignment(member.assigned, synced)) return { error: 'rebalance_in_progress' };
    return { error: null };
  }

  leave(req: LeaveGroupRequest, topics: readonly TopicMetadata[]): LeaveGroupResult {
    const members = req.members.map((m) => {
      const member = this.classicMember(req.group, m.memberId);
      if (!member) return { ...m, error: 'unknown_member_id' as const };
      this.coordinator.heartbeat(this.request(req.group, m.memberId, -1, member.clientId, member.clientHost, { instanceId: m.groupInstanceId }), topics);
      return { memberId: m.memberId, groupInstanceId: m.groupInstanceId, error: null };
    });
    return { error: null, members };
  }

  /** Whether `memberId` is a classic member of the consumer group (the classic calls go here, not to the classic coordinator). */
  isClassicMember(group: string, memberId: string): boolean {
    return this.classicMember(group, memberId) !== undefined;
  }

  private classicMember(group: string, memberId: string): Member | undefined {
    const member = this.coordinator.member(group, memberId);
    return member?.classic ? member : undefined;
  }

  private request(group: string, memberId: string, memberEpoch: number, clientId: string, clientHost: string, more: Partial<ConsumerGroupHeartbeatRequest>): ConsumerGroupHeartbeatRequest {
    return {
      group, memberId, memberEpoch, clientId, clientHost,
      instanceId: null, rackId: null, rebalanceTimeoutMs: -1, subscribedTopicNames: null, subscribedTopicRegex: null, serverAssignor: null, topicPartitions: null,
      apiVersion: 1,
      ...more,
    };
  }
}

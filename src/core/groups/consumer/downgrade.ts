import { Writer } from '../../../../protocol/primitives/writer.js';
import type { StoredGroup } from '../types.js';
import type { StoredConsumerGroup } from './persistence.js';
import type { TopicMetadata } from './types.js';

/**
 * KIP-848's downgrade, as Kafka 4 does it under its default
 * `group.consumer.migration.policy`: when the last member of the consumer
 * protocol leaves a consumer group (or is removed) and members of the
 * classic protocol remain, the group becomes a classic group again. Its
 * generation is the group's epoch, its members the classic members with the
 * partitions they hold, their protocol the one they joined with; the classic
 * coordinator then rebalances it, so each member rejoins (its next Heartbeat
 * answers REBALANCE_IN_PROGRESS, or ILLEGAL_GENERATION when its epoch was
 * behind) and the leader the members elect assigns, as in any classic group.
 */

/** ConsumerProtocolSubscription v0 of `topics`. */
function writeSubscription(topics: readonly string[]): Buffer {
  const w = new Writer();
  w.int16(0);
  w.int32(topics.length);
  for (const t of topics) w.string(t);
  w.nullableBytes(null);
  return w.toBuffer();
}

/** ConsumerProtocolAssignment v0 of a stored assignment, topics named. */
function writeAssignment(assigned: [string, number[]][], names: Map<string, string>): Buffer {
  const w = new Writer();
  const topics = assigned.filter(([topicId, partitions]) => names.has(topicId) && partitions.length > 0);
  w.int16(0);
  w.int32(topics.length);
  for (const [topicId, partitions] of topics) {
    w.string(names.get(topicId)!);
    w.int32(partitions.length);
    for (const p of partitions) w.int32(p);
  }
  w.nullableBytes(null);
  return w.toBuffer();
}

/**
 * The classic group a consumer group becomes, or null when it stays a
 * consumer group (no members, or a member of the consumer protocol among
 * them). Topic names come from the group's subscription metadata: every
 * topic a member holds is one the group subscribes to.
 */
export function downgradedConsumerGroup(stored: StoredConsumerGroup): StoredGroup | null {
  if (stored.members.length === 0 || stored.members.some((m) => !m.classic)) return null;
  let topics: TopicMetadata[];
  try {
    topics = JSON.parse(stored.subscriptionMetadata) as TopicMetadata[];
  } catch {
    topics = [];
  }
  const names = new Map(topics.map((t) => [t.id, t.name]));
  const protocolName = stored.members[0]!.classic!.protocolName;
  return {
    state: 'Stable',
    generationId: stored.groupEpoch,
    protocolType: 'consumer',
    protocolName,
    leaderId: stored.members[0]!.memberId,
    members: stored.members.map((m) => ({
      memberId: m.memberId,
      groupInstanceId: m.instanceId,
      clientId: m.clientId,
      clientHost: m.clientHost,
      sessionTimeoutMs: m.classic!.sessionTimeoutMs,
      rebalanceTimeoutMs: m.rebalanceTimeoutMs,
      protocolType: 'consumer',
      protocols: [{ name: m.classic!.protocolName, metadata: writeSubscription(m.subscribedTopicNames).toString('base64') }],
      assignment: writeAssignment(m.classic!.synced, names).toString('base64'),
    })),
  };
}

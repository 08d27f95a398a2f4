import { ASSIGNORS, DEFAULT_ASSIGNOR } from './assignors.js';
import type { Group, Member } from './group.js';
import { subscribedTopics } from './subscriptions.js';
import type { TopicMetadata } from './types.js';

/**
 * A consumer group's target assignment (KIP-848): what the members'
 * subscriptions resolve to, and the server-side assignor's share of it for
 * each member, computed when the group epoch is ahead of the assignment
 * epoch. Members then move towards their share (./reconciliation.ts).
 */

/** Whether what the subscriptions resolve to changed (a topic appeared, went, or gained partitions). */
export function refreshMetadata(group: Group, topics: readonly TopicMetadata[]): boolean {
  const subscribed = new Map<string, TopicMetadata>();
  for (const m of group.members.values()) {
    for (const t of subscribedTopics(m.subscribedTopicNames, m.subscribedTopicRegex, topics)) subscribed.set(t.name, t);
  }
  const metadata = JSON.stringify([...subscribed.values()].sort((a, b) => (a.name < b.name ? -1 : 1)));
  if (metadata === group.subscriptionMetadata) return false;
  group.subscriptionMetadata = metadata;
  return true;
}

/** The assignor's target for every member, at the group's epoch. */
export function computeTarget(group: Group, topics: readonly TopicMetadata[]): void {
  group.assignorName = preferredAssignor(group);
  const counts = new Map(topics.map((t) => [t.id, t.partitions]));
  const members = [...group.members.values()].map((m) => ({
    memberId: m.memberId,
    topicIds: new Set(subscribedTopics(m.subscribedTopicNames, m.subscribedTopicRegex, topics).map((t) => t.id)),
  }));
  const subscribedIds = new Set(members.flatMap((m) => [...m.topicIds]));
  const spec = { members, topics: new Map([...counts].filter(([id]) => subscribedIds.has(id))), previous: group.target };
  group.target = ASSIGNORS.get(group.assignorName)!(spec);
  group.assignmentEpoch = group.groupEpoch;
}

/** The assignor most members ask for (Kafka's choice); the default when none asks. */
function preferredAssignor(group: Group): string {
  const votes = new Map<string, number>();
  for (const m of group.members.values()) if (m.serverAssignor !== null) votes.set(m.serverAssignor, (votes.get(m.serverAssignor) ?? 0) + 1);
  let best = DEFAULT_ASSIGNOR;
  let most = 0;
  for (const [name, n] of votes) if (n > most) [best, most] = [name, n];
  return best;
}

/** Whether another member still owns (or has yet to give up) the partition: it cannot be handed on yet. */
export function heldByOther(group: Group, member: Member, topicId: string, partition: number): boolean {
  for (const other of group.members.values()) {
    if (other === member) continue;
    if (other.assigned.get(topicId)?.has(partition) || other.pendingRevocation.get(topicId)?.has(partition)) return true;
  }
  return false;
}

/** The topics the group's members subscribe to, by name. */
export function subscribedTopicNames(group: Group | undefined, topics: readonly TopicMetadata[]): Set<string> {
  const names = new Set<string>();
  for (const m of group?.members.values() ?? []) {
    for (const t of subscribedTopics(m.subscribedTopicNames, m.subscribedTopicRegex, topics)) names.add(t.name);
  }
  return names;
}

import { Reader } from '../../../protocol/primitives/reader.js';
import type { Group } from './model.js';
import type { GroupProtocol, JoinGroupRequest } from './types.js';

/**
 * The group protocols members offer: which one a group runs (Kafka's vote),
 * whether a joining member can run it, and the one thing the coordinator
 * reads out of the otherwise opaque metadata bytes, a consumer's
 * subscription (OffsetDelete refuses subscribed topics).
 */

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

/** Topics the group's live consumer members subscribe to. */
export function groupSubscriptions(group: Group): Set<string> {
  const topics = new Set<string>();
  if (group.protocolType !== 'consumer') return topics;
  for (const m of group.members.values()) {
    const metadata = m.protocols.find((p) => p.name === group.protocolName)?.metadata ?? m.protocols[0]?.metadata;
    if (metadata) for (const t of subscribedTopics(metadata)) topics.add(t);
  }
  return topics;
}

export function sameProtocols(a: GroupProtocol[], b: GroupProtocol[]): boolean {
  return a.length === b.length && a.every((p, i) => p.name === b[i]!.name && p.metadata.equals(b[i]!.metadata));
}

/** The protocol every member supports that most members list first among those (Kafka's vote). */
export function selectProtocol(group: Group): string {
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

/** Whether a joining member's protocol type and protocols fit the group's other members. */
export function supportsGroupProtocols(group: Group, req: JoinGroupRequest): boolean {
  const others = [...group.members.values()].filter((m) => m.memberId !== req.memberId);
  if (others.length === 0) return true;
  if (group.protocolType !== null && group.protocolType !== req.protocolType) return false;
  const names = new Set(req.protocols.map((p) => p.name));
  const common = others[0]!.protocols.map((p) => p.name).filter((n) => names.has(n) && others.every((m) => m.protocols.some((p) => p.name === n)));
  return common.length > 0;
}

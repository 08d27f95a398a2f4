/**
 * The server-side assignors of KIP-848, chosen by a member's ServerAssignor
 * as Kafka's `group.consumer.assignors` offers them: `uniform` (the default)
 * and `range`. An assignor maps the group's members and their subscribed
 * topics to a target assignment; the coordinator then moves each member
 * towards it (reconciliation.ts).
 */

/** Topic id → partitions of that topic. */
export type MemberAssignment = Map<string, Set<number>>;

export interface AssignmentSpec {
  /** Each member with the ids of the topics it subscribes to that exist. */
  members: { memberId: string; topicIds: Set<string> }[];
  /** Topic id → partition count. */
  topics: Map<string, number>;
  /** The target assignment before this one: what `uniform` keeps where it can. */
  previous: Map<string, MemberAssignment>;
}

export type Assignor = (spec: AssignmentSpec) => Map<string, MemberAssignment>;

function emptyTargets(spec: AssignmentSpec): Map<string, MemberAssignment> {
  return new Map(spec.members.map((m) => [m.memberId, new Map<string, Set<number>>()]));
}

function give(target: MemberAssignment, topicId: string, partition: number): void {
  let set = target.get(topicId);
  if (!set) target.set(topicId, (set = new Set()));
  set.add(partition);
}

/**
 * Kafka's range assignor, per topic: the members subscribed to it, by member
 * id, each take a contiguous range; the first (partitions % members) take one
 * more. Co-partitioned topics land on the same member.
 */
export const rangeAssignor: Assignor = (spec) => {
  const targets = emptyTargets(spec);
  const byId = [...spec.members].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
  for (const [topicId, count] of spec.topics) {
    const subscribers = byId.filter((m) => m.topicIds.has(topicId));
    if (subscribers.length === 0) continue;
    const base = Math.floor(count / subscribers.length);
    const extra = count % subscribers.length;
    let next = 0;
    subscribers.forEach((m, i) => {
      const take = base + (i < extra ? 1 : 0);
      for (let p = next; p < next + take; p++) give(targets.get(m.memberId)!, topicId, p);
      next += take;
    });
  }
  return targets;
};

/**
 * Kafka's uniform assignor in spirit: as even as the subscriptions allow,
 * and sticky. A member keeps the partitions it had while that keeps the
 * spread even; every other partition goes to the subscribed member with the
 * fewest; then partitions move from the fullest to the emptiest subscribed
 * member until no two members that could trade differ by more than one.
 */
export const uniformAssignor: Assignor = (spec) => {
  const targets = emptyTargets(spec);
  const counts = new Map(spec.members.map((m) => [m.memberId, 0]));
  const owner = new Map<string, string>(); // "topicId:partition" → member
  const subscribers = new Map<string, string[]>();
  for (const topicId of spec.topics.keys()) {
    subscribers.set(topicId, spec.members.filter((m) => m.topicIds.has(topicId)).map((m) => m.memberId).sort());
  }
  const assign = (memberId: string, topicId: string, p: number) => {
    owner.set(`${topicId}:${p}`, memberId);
    counts.set(memberId, counts.get(memberId)! + 1);
  };
  const total = [...spec.topics].reduce((n, [id, c]) => n + ((subscribers.get(id)?.length ?? 0) > 0 ? c : 0), 0);
  const fairShare = Math.ceil(total / Math.max(1, spec.members.length));
  // Keep what each member had, up to an even share.
  for (const m of spec.members) {
    for (const [topicId, partitions] of spec.previous.get(m.memberId) ?? []) {
      const count = spec.topics.get(topicId);
      if (count === undefined || !m.topicIds.has(topicId)) continue;
      for (const p of [...partitions].sort((a, b) => a - b)) {
        if (p < count && !owner.has(`${topicId}:${p}`) && counts.get(m.memberId)! < fairShare) assign(m.memberId, topicId, p);
      }
    }
  }
  const fewest = (candidates: string[]) => candidates.reduce((best, id) => (counts.get(id)! < counts.get(best)! ? id : best));
  for (const [topicId, count] of spec.topics) {
    const candidates = subscribers.get(topicId)!;
    if (candidates.length === 0) continue;
    for (let p = 0; p < count; p++) if (!owner.has(`${topicId}:${p}`)) assign(fewest(candidates), topicId, p);
  }
  // Even out what subscriptions that differ left uneven.
  for (let moved = true; moved; ) {
    moved = false;
    for (const [key, from] of owner) {
      const topicId = key.slice(0, key.lastIndexOf(':'));
      const to = fewest(subscribers.get(topicId)!);
      if (counts.get(to)! < counts.get(from)! - 1) {
        counts.set(from, counts.get(from)! - 1);
        assign(to, topicId, Number(key.slice(key.lastIndexOf(':') + 1)));
        moved = true;
      }
    }
  }
  for (const [key, memberId] of owner) {
    const at = key.lastIndexOf(':');
    give(targets.get(memberId)!, key.slice(0, at), Number(key.slice(at + 1)));
  }
  return targets;
};

/** Kafka's group.consumer.assignors, first one the default. */
export const ASSIGNORS: ReadonlyMap<string, Assignor> = new Map([
  ['uniform', uniformAssignor],
  ['range', rangeAssignor],
]);
export const DEFAULT_ASSIGNOR = 'uniform';

import type { MemberAssignment } from './assignors.js';
import type { TopicPartitions } from './types.js';

/**
 * How a member moves towards its target assignment (Kafka's
 * CurrentAssignmentBuilder), one heartbeat at a time, so that no partition
 * is ever owned by two members:
 *
 * - A member that must give partitions up first keeps its epoch and only the
 *   partitions it keeps (`unrevoked_partitions`), until a heartbeat shows it
 *   no longer owns the others.
 * - Then it moves to the target epoch and takes the new partitions that no
 *   other member still holds; those that are held it waits for
 *   (`unreleased_partitions`), and gets on a later heartbeat once released.
 */

export type MemberState = 'stable' | 'unrevoked_partitions' | 'unreleased_partitions';

export interface MemberProgress {
  state: MemberState;
  memberEpoch: number;
  previousMemberEpoch: number;
  /** What the member may consume now (what its heartbeats are answered). */
  assigned: MemberAssignment;
  /** What it was asked to give up and has not shown it released. */
  pendingRevocation: MemberAssignment;
}

export function keyOf(topicId: string, partition: number): string {
  return `${topicId}:${partition}`;
}

export function countOf(assignment: MemberAssignment): number {
  let n = 0;
  for (const set of assignment.values()) n += set.size;
  return n;
}

/** Whether every partition the member reports owning is among `allowed`. */
function ownsOnly(owned: TopicPartitions[], allowed: MemberAssignment): boolean {
  return owned.every((t) => t.partitions.every((p) => allowed.get(t.topicId)?.has(p) === true));
}

function ownsAnyOf(owned: TopicPartitions[] | null, partitions: MemberAssignment): boolean {
  // Null: the member did not say, so it is taken to own what it was given.
  if (owned === null) return true;
  return owned.some((t) => t.partitions.some((p) => partitions.get(t.topicId)?.has(p) === true));
}

/**
 * The member's next step. `heldByOther` answers whether another member of
 * the group still holds a partition (assigned or pending its revocation).
 */
export function reconcile(
  member: MemberProgress,
  target: MemberAssignment,
  targetEpoch: number,
  owned: TopicPartitions[] | null,
  heldByOther: (topicId: string, partition: number) => boolean,
): MemberProgress {
  switch (member.state) {
    case 'stable':
      if (member.memberEpoch === targetEpoch) return member;
      return nextStep(member, target, targetEpoch, owned, heldByOther);
    case 'unrevoked_partitions':
      if (owned !== null && ownsOnly(owned, member.assigned)) return nextStep(member, target, targetEpoch, owned, heldByOther);
      return member;
    case 'unreleased_partitions':
      return nextStep(member, target, targetEpoch, owned, heldByOther);
  }
}

function nextStep(
  member: MemberProgress,
  target: MemberAssignment,
  targetEpoch: number,
  owned: TopicPartitions[] | null,
  heldByOther: (topicId: string, partition: number) => boolean,
): MemberProgress {
  const kept: MemberAssignment = new Map();
  const toRevoke: MemberAssignment = new Map();
  let unreleased = false;
  const add = (into: MemberAssignment, topicId: string, p: number) => {
    let set = into.get(topicId);
    if (!set) into.set(topicId, (set = new Set()));
    set.add(p);
  };
  for (const [topicId, partitions] of member.assigned) {
    for (const p of partitions) add(target.get(topicId)?.has(p) ? kept : toRevoke, topicId, p);
  }
  const granted: MemberAssignment = new Map([...kept].map(([t, s]) => [t, new Set(s)]));
  for (const [topicId, partitions] of target) {
    for (const p of partitions) {
      if (kept.get(topicId)?.has(p)) continue;
      if (heldByOther(topicId, p)) unreleased = true;
      else add(granted, topicId, p);
    }
  }
  if (countOf(toRevoke) > 0 && ownsAnyOf(owned, toRevoke)) {
    return { ...member, state: 'unrevoked_partitions', assigned: kept, pendingRevocation: toRevoke };
  }
  return {
    state: unreleased ? 'unreleased_partitions' : 'stable',
    memberEpoch: targetEpoch,
    previousMemberEpoch: member.memberEpoch,
    assigned: granted,
    pendingRevocation: new Map(),
  };
}

/** The wire's list form of an assignment, topics and partitions in order. */
export function toTopicPartitions(assignment: MemberAssignment): TopicPartitions[] {
  return [...assignment]
    .filter(([, set]) => set.size > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([topicId, set]) => ({ topicId, partitions: [...set].sort((a, b) => a - b) }));
}

import type { Group, Member } from './model.js';
import { joinedFields, type StoredGroup } from './types.js';

/**
 * Membership stored where Kafka stores group metadata, and fencing by it:
 * a group is stored when a rebalance completes (the new generation, and
 * again with the leader's assignments before SyncGroup is answered) and when
 * a static member's id changes. A core that takes the group over (a
 * coordinator move, a restart) restores it from there, so members carry on
 * with their ids and generation. A store that answers "fenced" (another node
 * took the group's lease) makes this coordinator drop the group; its members
 * are told NOT_COORDINATOR and find the new owner.
 */

/** Where membership is stored; false from save means this node no longer owns the group. */
export interface GroupStore {
  save(groupId: string, stored: StoredGroup): Promise<boolean>;
}

/** The group as it is stored: only the states a successor can take over in, metadata and assignments as base64. */
export function storedForm(group: Group): StoredGroup {
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
 * Puts a stored group into a fresh one: members keep their ids, generation
 * and assignments. Answers the members, whose sessions the caller starts.
 */
export function restoreInto(group: Group, stored: StoredGroup): Member[] {
  group.state = stored.state;
  group.generationId = stored.generationId;
  group.protocolType = stored.protocolType;
  group.protocolName = stored.protocolName;
  group.leaderId = stored.leaderId;
  const members: Member[] = [];
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
    members.push(member);
  }
  return members;
}

/** Stores groups one store after another per group, and lets go of a group the store says another node owns. */
export class GroupSaver {
  constructor(
    private readonly store: GroupStore | null,
    /** Whether `group` is still the one this coordinator holds under its id. */
    private readonly holds: (group: Group) => boolean,
    /** Lets go of a group another node owns now. */
    private readonly drop: (groupId: string) => void,
  ) {}

  /**
   * Stores the group as it is now, after the stores before it. Answers false
   * when the store did not take it; when that is because another node owns
   * the group, the group is dropped here.
   */
  save(group: Group): Promise<boolean> {
    const store = this.store;
    if (!store) return Promise.resolve(true);
    const stored = storedForm(group);
    group.saving = group.saving.then(() =>
      store.save(group.id, stored).then(
        (owned) => {
          if (!owned && this.holds(group)) this.drop(group.id);
          return owned;
        },
        () => false,
      ),
    );
    return group.saving;
  }
}

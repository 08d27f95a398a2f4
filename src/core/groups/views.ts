import { chosenMetadata, EMPTY, hasLiveMembers, type Group } from './model.js';
import type { GroupDescription, GroupListing } from './types.js';

/**
 * The groups as the admin APIs see them (DescribeGroups, ListGroups) and
 * what DeleteGroups and the lease renewal ask of them. A group this
 * coordinator does not hold is described as Dead, as Kafka does.
 */

export function describeGroup(id: string, group: Group | undefined): GroupDescription {
  if (!group) {
    return { group: id, error: null, state: 'Dead' as const, protocolType: '', protocolName: '', generationId: -1, members: [] };
  }
  // Metadata is shown once a protocol is chosen, assignments once handed out.
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
      metadata: stable ? chosenMetadata(group, m) : EMPTY,
      assignment: group.state === 'Stable' ? m.assignment : EMPTY,
    })),
  };
}

export function listGroups(groups: Iterable<Group>): GroupListing[] {
  return [...groups].filter((g) => g.state !== 'Dead').map((g) => ({ group: g.id, protocolType: g.protocolType ?? '', state: g.state }));
}

/** Groups with members, joining or not: the leases worth keeping. */
export function activeGroupIds(groups: Iterable<Group>): string[] {
  return [...groups].filter(hasLiveMembers).map((g) => g.id);
}

// ListGroups: every group with live members or committed offsets, with its
// state (v4+) and type (v5+): "classic", or "consumer" for a KIP-848 group,
// whose protocol type is "consumer" and whose states are Kafka's consumer
// group states (Empty, Assigning, Reconciling, Stable). The states filter
// (v4+) matches state names as Kafka does, ignoring case and surrounding
// spaces ("stable" finds Stable groups of both kinds; a name no state has
// finds none); the types filter (v5+) likewise, by "classic" and "consumer".
//
// ACLs: with DESCRIBE on the cluster every group is listed; without it, the
// groups the principal may DESCRIBE, as Kafka's.
import { ListGroups } from '../../../protocol/messages/index.js';
import { CLUSTER_NAME } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';

export const listGroups: ApiHandler<typeof ListGroups> = {
  api: ListGroups,
  versions: '0-5',
  async handle(request, ctx) {
    const types = new Set(request.typesFilter.map((t) => t.trim().toLowerCase()));
    const states = new Set(request.statesFilter.map((s) => s.trim().toLowerCase()));
    const { groups: all } = await ctx.core.listGroupStates({});
    const everyGroup = ctx.access.allows('DESCRIBE', 'CLUSTER', CLUSTER_NAME);
    const groups = everyGroup ? all : all.filter((g) => ctx.access.allows('DESCRIBE', 'GROUP', g.group));
    return {
      throttleTimeMs: 0,
      errorCode: NONE,
      groups: groups
        .filter((g) => states.size === 0 || states.has(g.state.toLowerCase()))
        .filter((g) => types.size === 0 || types.has(g.groupType ?? 'classic'))
        .map((g) => ({ groupId: g.group, protocolType: g.protocolType, groupState: g.state, groupType: g.groupType ?? 'classic' })),
    };
  },
  unavailable: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, groups: [] }),
};

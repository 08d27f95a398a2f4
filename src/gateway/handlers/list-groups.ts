// ListGroups: every group with live members or committed offsets, with its
// state (v4+) and type (v5+, always "classic" here). The states filter (v4+)
// matches Kafka's state names; the types filter (v5+) keeps "classic" only.
import { ListGroups } from '../../../protocol/messages/index.js';
import type { GroupState } from '../../core/groups/types.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';

export const listGroups: ApiHandler = {
  api: ListGroups,
  versions: '0-5',
  async handle(request, ctx) {
    const types = (request.typesFilter as string[]).map((t) => t.toLowerCase());
    if (types.length > 0 && !types.includes('classic')) return { throttleTimeMs: 0, errorCode: NONE, groups: [] };
    const { groups } = await ctx.core.listGroupStates({ states: request.statesFilter as GroupState[] });
    return {
      throttleTimeMs: 0,
      errorCode: NONE,
      groups: groups.map((g) => ({ groupId: g.group, protocolType: g.protocolType, groupState: g.state, groupType: 'classic' })),
    };
  },
};

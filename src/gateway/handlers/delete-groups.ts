// DeleteGroups: deletes groups and their committed offsets. A group with
// members is refused with NON_EMPTY_GROUP; one that never existed answers
// GROUP_ID_NOT_FOUND.
import { DeleteGroups } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';
import { groupErrorCode } from '../kafka-errors.js';

export const deleteGroups: ApiHandler = {
  api: DeleteGroups,
  versions: '0-2',
  async handle(request, ctx) {
    const { groups } = await ctx.core.deleteGroups({ groups: request.groupsNames });
    return { throttleTimeMs: 0, results: groups.map((g) => ({ groupId: g.group, errorCode: groupErrorCode(g.error) })) };
  },
};

// DeleteGroups: deletes groups and their committed offsets. A group with
// members is refused with NON_EMPTY_GROUP; one that never existed answers
// GROUP_ID_NOT_FOUND.
//
// ACLs: DELETE on each group, else GROUP_AUTHORIZATION_FAILED.
import { DeleteGroups } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { groupErrorCode } from '../kafka-errors.js';

export const deleteGroups: ApiHandler<typeof DeleteGroups> = {
  api: DeleteGroups,
  versions: '0-2',
  async handle(request, ctx) {
    const asked: string[] = request.groupsNames;
    const allowed = asked.filter((group) => ctx.access.allows('DELETE', 'GROUP', group));
    const { groups } = allowed.length > 0 ? await ctx.core.deleteGroups({ groups: allowed }) : { groups: [] };
    const codes = new Map(groups.map((g) => [g.group, groupErrorCode(g.error)]));
    return { throttleTimeMs: 0, results: asked.map((groupId) => ({ groupId, errorCode: codes.get(groupId) ?? DENIED_CODE.GROUP })) };
  },
  unavailable: (request, errorCode) => ({ throttleTimeMs: 0, results: request.groupsNames.map((groupId) => ({ groupId, errorCode })) }),
};

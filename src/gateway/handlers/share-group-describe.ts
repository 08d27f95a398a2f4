// ShareGroupDescribe: each share group's state (Empty, Stable, Dead), epochs,
// assignor ("simple") and members with their assignments, as
// kafka-share-groups.sh --describe --members shows them.
//
// ACLs: DESCRIBE on the group, else GROUP_AUTHORIZATION_FAILED for it.
import { ShareGroupDescribe } from '../../../protocol/messages/index.js';
import { authorizedOperations, DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { shareErrorCode } from '../share-sessions.js';

function refusedGroup(groupId: string, errorCode: number, errorMessage: string | null, operations: number) {
  return { errorCode, errorMessage, groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [], authorizedOperations: operations };
}

export const shareGroupDescribe: ApiHandler<typeof ShareGroupDescribe> = {
  api: ShareGroupDescribe,
  versions: '1',
  async handle(request, ctx) {
    const asked = request.groupIds;
    const allowed = asked.filter((group) => ctx.access.allows('DESCRIBE', 'GROUP', group));
    const { groups } = allowed.length > 0 ? await ctx.core.shareGroupDescribe({ groups: allowed }) : { groups: [] };
    const operations = (group: string) => authorizedOperations(request.includeAuthorizedOperations, ctx.access.operations('GROUP', group));
    return {
      throttleTimeMs: 0,
      groups: asked.map((groupId) => {
        const d = groups.find((g) => g.group === groupId);
        if (d === undefined) return refusedGroup(groupId, DENIED_CODE.GROUP, null, operations(groupId));
        if (d.error !== null) return refusedGroup(groupId, shareErrorCode(d.error), d.errorMessage, operations(groupId));
        return {
          errorCode: 0,
          errorMessage: null,
          groupId,
          groupState: d.state,
          groupEpoch: d.groupEpoch,
          assignmentEpoch: d.assignmentEpoch,
          assignorName: d.assignorName,
          members: d.members.map((m) => ({
            memberId: m.memberId,
            rackId: m.rackId,
            memberEpoch: m.memberEpoch,
            clientId: m.clientId,
            clientHost: m.clientHost,
            subscribedTopicNames: m.subscribedTopicNames,
            assignment: { topicPartitions: m.assignment },
          })),
          authorizedOperations: operations(groupId),
        };
      }),
    };
  },
  unavailable: (request, errorCode) => ({ throttleTimeMs: 0, groups: request.groupIds.map((g) => refusedGroup(g, errorCode, null, -2147483648)) }),
};

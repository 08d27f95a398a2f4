// ConsumerGroupDescribe: a KIP-848 consumer group as its coordinator holds
// it: state (Empty, Assigning, Reconciling, Stable), group and assignment
// epochs, the assignor chosen, and per member its subscription, its current
// assignment and its target assignment, with topic names beside topic ids.
//
// Choices:
// - A group that does not exist answers GROUP_ID_NOT_FOUND "Group X not
//   found."; a classic group answers GROUP_ID_NOT_FOUND "Group X is not a
//   consumer group.", on which Kafka's admin client asks DescribeGroups.
//
// Versions: v0 only. Kafka 4.4 also serves v1 (MemberType per member, an
// ignorable field clients do without); v1 is newer than the message specs
// this gateway is checked against (test/protocol/conformance.test.ts).
//
// ACLs: DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED;
// authorized operations when asked for, as DescribeGroups.
import { ConsumerGroupDescribe } from '../../../protocol/messages/index.js';
import { authorizedOperations, DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { consumerGroupErrorCode } from '../kafka-errors.js';

function emptyGroup(groupId: string, errorCode: number, errorMessage: string | null, operations: number) {
  return { errorCode, errorMessage, groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, assignorName: '', members: [], authorizedOperations: operations };
}

export const consumerGroupDescribe: ApiHandler<typeof ConsumerGroupDescribe> = {
  api: ConsumerGroupDescribe,
  versions: '0',
  async handle(request, ctx) {
    const asked: string[] = request.groupIds;
    const allowed = asked.filter((group) => ctx.access.allows('DESCRIBE', 'GROUP', group));
    const { groups } = allowed.length > 0 ? await ctx.core.consumerGroupDescribe({ groups: allowed }) : { groups: [] };
    const byName = new Map(groups.map((g) => [g.group, g]));
    const operations = (group: string) => authorizedOperations(request.includeAuthorizedOperations, ctx.access.operations('GROUP', group));
    return {
      throttleTimeMs: 0,
      groups: asked.map((groupId) => {
        const g = byName.get(groupId);
        if (!g) return emptyGroup(groupId, DENIED_CODE.GROUP, null, authorizedOperations(request.includeAuthorizedOperations, 0));
        if (g.error !== null) return emptyGroup(groupId, consumerGroupErrorCode(g.error), g.errorMessage, operations(groupId));
        return {
          errorCode: 0,
          errorMessage: null,
          groupId,
          groupState: g.state,
          groupEpoch: g.groupEpoch,
          assignmentEpoch: g.assignmentEpoch,
          assignorName: g.assignorName,
          members: g.members.map((m) => ({
            ...m,
            assignment: { topicPartitions: m.assignment },
            targetAssignment: { topicPartitions: m.targetAssignment },
          })),
          authorizedOperations: operations(groupId),
        };
      }),
    };
  },
  unavailable: (request, errorCode) => ({
    throttleTimeMs: 0,
    groups: request.groupIds.map((groupId) => emptyGroup(groupId, errorCode, null, authorizedOperations(request.includeAuthorizedOperations, 0))),
  }),
};

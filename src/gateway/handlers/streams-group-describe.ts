// StreamsGroupDescribe: a Kafka Streams group (KIP-1071) as its coordinator
// holds it: state (Empty, NotReady, Assigning, Reconciling, Stable), group
// and assignment epochs, the topology, and per member its process, endpoint,
// topology epoch, current and target tasks.
//
// Choices:
// - A group that does not exist answers GROUP_ID_NOT_FOUND "Group X not
//   found."; a group of another kind with members "Group X is not a streams
//   group.".
// - v1's TopologyDescription is never kept (the members are not asked for it,
//   see streams-group-heartbeat.ts): it answers null with status 0; the
//   assignor's name is `sticky`, the one assignor here.
// - Members report no task offsets here: TaskOffsets and TaskEndOffsets are
//   empty.
//
// ACLs: DESCRIBE on each group, else GROUP_AUTHORIZATION_FAILED;
// authorized operations when asked for, as DescribeGroups.
import { StreamsGroupDescribe } from '../../../protocol/messages/index.js';
import { authorizedOperations, DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { streamsGroupErrorCode } from '../kafka-errors.js';

function emptyGroup(groupId: string, errorCode: number, errorMessage: string | null, operations: number) {
  return {
    errorCode, errorMessage, groupId, groupState: '', groupEpoch: 0, assignmentEpoch: 0, topology: null, members: [], authorizedOperations: operations,
    topologyDescription: null, topologyDescriptionStatus: 0, assignorName: null,
  };
}

export const streamsGroupDescribe: ApiHandler<typeof StreamsGroupDescribe> = {
  api: StreamsGroupDescribe,
  versions: '0-1',
  async handle(request, ctx) {
    const asked: string[] = request.groupIds;
    const allowed = asked.filter((group) => ctx.access.allows('DESCRIBE', 'GROUP', group));
    const { groups } = allowed.length > 0 ? await ctx.core.streamsGroupDescribe({ groups: allowed }) : { groups: [] };
    const byName = new Map(groups.map((g) => [g.group, g]));
    const operations = (group: string) => authorizedOperations(request.includeAuthorizedOperations, ctx.access.operations('GROUP', group));
    return {
      throttleTimeMs: 0,
      groups: asked.map((groupId) => {
        const g = byName.get(groupId);
        if (!g) return emptyGroup(groupId, DENIED_CODE.GROUP, null, authorizedOperations(request.includeAuthorizedOperations, 0));
        if (g.error !== null) return emptyGroup(groupId, streamsGroupErrorCode(g.error), g.errorMessage, operations(groupId));
        return {
          errorCode: 0,
          errorMessage: null,
          groupId,
          groupState: g.state,
          groupEpoch: g.groupEpoch,
          assignmentEpoch: g.assignmentEpoch,
          topology: g.topology,
          members: g.members.map((m) => ({ ...m, taskOffsets: [], taskEndOffsets: [], isClassic: false })),
          authorizedOperations: operations(groupId),
          topologyDescription: null,
          topologyDescriptionStatus: 0,
          assignorName: 'sticky',
        };
      }),
    };
  },
  unavailable: (request, errorCode) => ({
    throttleTimeMs: 0,
    groups: request.groupIds.map((groupId) => emptyGroup(groupId, errorCode, null, authorizedOperations(request.includeAuthorizedOperations, 0))),
  }),
};

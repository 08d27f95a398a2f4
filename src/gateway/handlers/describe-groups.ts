// DescribeGroups: each group's state, chosen protocol and members, with their
// client ids, hosts, metadata and (when Stable) assignments. An unknown group
// answers state "Dead" with no error, as Kafka does; a group known only by its
// committed offsets is "Empty".
//
// Versions: GroupInstanceId per member from v4; authorized operations (v3+)
// answer Kafka's "not requested" sentinel unless asked for, then all
// (../acl-operations.ts).
import { DescribeGroups } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';
import { authorizedOperations, GROUP_OPERATIONS } from '../acl-operations.js';
import { groupErrorCode } from '../kafka-errors.js';


export const describeGroups: ApiHandler = {
  api: DescribeGroups,
  versions: '0-5',
  async handle(request, ctx) {
    const { groups } = await ctx.core.describeGroups({ groups: request.groups });
    return {
      throttleTimeMs: 0,
      groups: groups.map((g) => ({
        errorCode: groupErrorCode(g.error),
        groupId: g.group,
        groupState: g.state,
        protocolType: g.protocolType,
        protocolData: g.protocolName,
        members: g.members.map((m) => ({
          memberId: m.memberId,
          groupInstanceId: m.groupInstanceId,
          clientId: m.clientId,
          clientHost: m.clientHost,
          memberMetadata: m.metadata,
          memberAssignment: m.assignment,
        })),
        authorizedOperations: authorizedOperations(request.includeAuthorizedOperations, GROUP_OPERATIONS),
      })),
    };
  },
};

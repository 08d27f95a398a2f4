// DescribeGroups: each group's state, chosen protocol and members, with their
// client ids, hosts, metadata and (when Stable) assignments. An unknown group
// answers state "Dead" with no error, as Kafka does; a group known only by its
// committed offsets is "Empty". A KIP-848 consumer group is "Dead" with no
// members, as Kafka 4.4 answers before v6 (ConsumerGroupDescribe describes it).
//
// A group the principal may not DESCRIBE answers GROUP_AUTHORIZATION_FAILED
// and nothing about it.
//
// Versions: GroupInstanceId per member from v4; authorized operations (v3+)
// answer Kafka's "not requested" sentinel unless asked for, then what the
// principal may do on the group.
import { DescribeGroups } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';
import { authorizedOperations, DENIED_CODE } from '../../access/acl-operations.js';
import { groupErrorCode } from '../kafka-errors.js';


export const describeGroups: ApiHandler<typeof DescribeGroups> = {
  api: DescribeGroups,
  versions: '0-5',
  async handle(request, ctx) {
    const asked: string[] = request.groups;
    const allowed = asked.filter((group) => ctx.access.allows('DESCRIBE', 'GROUP', group));
    const { groups: described } = await ctx.core.describeGroups({ groups: allowed });
    const byName = new Map(described.map((g) => [g.group, g]));
    const denied = (groupId: string) => ({ errorCode: DENIED_CODE.GROUP, groupId, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: authorizedOperations(request.includeAuthorizedOperations, 0) });
    return {
      throttleTimeMs: 0,
      groups: asked.map((name) => byName.get(name) ?? null).map((g, i) => g === null ? denied(asked[i]!) : ({
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
        authorizedOperations: authorizedOperations(request.includeAuthorizedOperations, ctx.access.operations('GROUP', g.group)),
      })),
    };
  },
  unavailable: (request, errorCode) => ({
    throttleTimeMs: 0,
    groups: request.groups.map((groupId) => ({ errorCode, groupId, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: authorizedOperations(request.includeAuthorizedOperations, 0) })),
  }),
};

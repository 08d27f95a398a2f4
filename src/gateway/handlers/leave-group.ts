// LeaveGroup: members leave a group, which rebalances the rest at once (so a
// leaving consumer's partitions move without waiting for its session timeout).
//
// Versions: v0-v2 name one member; v3+ batch members, each by member id or
// by group.instance.id (a static member leaving for good), with a
// per-member error; v5 adds a reason, logged.
//
// ACLs: READ on the group, else GROUP_AUTHORIZATION_FAILED.
import { LeaveGroup } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { groupErrorCode, NONE } from '../kafka-errors.js';

type LeavingMember = RequestOf<typeof LeaveGroup>['members'][number];

export const leaveGroup: ApiHandler<typeof LeaveGroup> = {
  api: LeaveGroup,
  versions: '0-5',
  async handle(request, ctx) {
    const batched = ctx.header.apiVersion >= 3;
    if (!ctx.access.allows('READ', 'GROUP', request.groupId)) return { throttleTimeMs: 0, errorCode: DENIED_CODE.GROUP, members: [] };
    const members: LeavingMember[] = batched
      ? request.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId ?? null, reason: m.reason ?? null }))
      : [{ memberId: request.memberId, groupInstanceId: null, reason: null }];
    for (const m of members) {
      if (m.reason) ctx.log.info({ group: request.groupId, memberId: m.memberId, reason: m.reason }, 'member leaving group');
    }
    const result = await ctx.core.leaveGroup({ group: request.groupId, members });
    if (!batched) {
      return { throttleTimeMs: 0, errorCode: groupErrorCode(result.error ?? result.members[0]?.error ?? null) };
    }
    return {
      throttleTimeMs: 0,
      errorCode: groupErrorCode(result.error),
      members: result.members.map((m) => ({ memberId: m.memberId, groupInstanceId: m.groupInstanceId, errorCode: m.error === null ? NONE : groupErrorCode(m.error) })),
    };
  },
  unavailable: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode, members: [] }),
};

// Heartbeat: keeps a member alive and tells it, with REBALANCE_IN_PROGRESS,
// that the group is rebalancing and it must rejoin. ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID and FENCED_INSTANCE_ID tell it it is out of date.
//
// ACLs: READ on the group, else GROUP_AUTHORIZATION_FAILED.
import { Heartbeat } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { groupErrorCode } from '../kafka-errors.js';

export const heartbeat: ApiHandler<typeof Heartbeat> = {
  api: Heartbeat,
  versions: '0-4',
  async handle(request, ctx) {
    if (!ctx.access.allows('READ', 'GROUP', request.groupId)) return { throttleTimeMs: 0, errorCode: DENIED_CODE.GROUP };
    const { error } = await ctx.core.heartbeat({
      group: request.groupId,
      generationId: request.generationId,
      memberId: request.memberId,
      groupInstanceId: request.groupInstanceId ?? null,
    });
    return { throttleTimeMs: 0, errorCode: groupErrorCode(error) };
  },
  unavailable: (_request, errorCode) => ({ throttleTimeMs: 0, errorCode }),
};

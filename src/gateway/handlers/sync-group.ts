// SyncGroup: the leader hands in every member's assignment; followers wait
// for theirs. Held in the core's coordinator until the leader's call arrives
// (or the group rebalances again, which answers REBALANCE_IN_PROGRESS).
//
// Versions: v5 adds ProtocolType and ProtocolName, checked against the
// group's (INCONSISTENT_GROUP_PROTOCOL when they differ) and echoed back.
//
// ACLs: READ on the group, else GROUP_AUTHORIZATION_FAILED.
import { SyncGroup } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ResponseOf } from '../../../protocol/codec/types.js';
import type { ApiHandler } from '../handler.js';
import { groupErrorCode } from '../kafka-errors.js';

/** A SyncGroup answered with an error only: no assignment. */
function refused(errorCode: number): ResponseOf<typeof SyncGroup> {
  return { throttleTimeMs: 0, errorCode, protocolType: null, protocolName: null, assignment: Buffer.alloc(0) };
}

export const syncGroup: ApiHandler<typeof SyncGroup> = {
  api: SyncGroup,
  versions: '0-5',
  async handle(request, ctx) {
    if (!ctx.access.allows('READ', 'GROUP', request.groupId)) return refused(DENIED_CODE.GROUP);
    const result = await ctx.core.syncGroup(
      {
        group: request.groupId,
        generationId: request.generationId,
        memberId: request.memberId,
        groupInstanceId: request.groupInstanceId ?? null,
        protocolType: request.protocolType ?? null,
        protocolName: request.protocolName ?? null,
        assignments: (request.assignments).map((a) => ({
          memberId: a.memberId,
          // Copied: the request frame's buffer is not kept beyond this call.
          assignment: Buffer.from(a.assignment),
        })),
      },
      { signal: ctx.connection.closed },
    );
    return {
      throttleTimeMs: 0,
      errorCode: groupErrorCode(result.error),
      protocolType: result.protocolType,
      protocolName: result.protocolName,
      assignment: result.assignment,
    };
  },
  unavailable: (_request, errorCode) => refused(errorCode),
};

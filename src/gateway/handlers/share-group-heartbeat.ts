// ShareGroupHeartbeat: a share group member (KIP-932) joins at epoch 0 with
// the topics it subscribes to, heartbeats at its epoch, leaves at -1; answered
// its epoch and, when it changed, its assignment (src/core/groups/share).
//
// Choices:
// - Every member is assigned every partition of its topics: in a share group
//   members share partitions and hold records, not partitions.
// - The heartbeat interval is the group's share.heartbeat.interval.ms (5 s).
//
// Versions: v1, the only one Kafka 4.4 serves (v0 was the early access's).
//
// ACLs: READ on the group, else GROUP_AUTHORIZATION_FAILED; the topics need
// DESCRIBE, checked when they are fetched.
import { ShareGroupHeartbeat } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { shareErrorCode } from '../share-sessions.js';

function refused(errorCode: number, errorMessage: string | null = null, memberId: string | null = null) {
  return { throttleTimeMs: 0, errorCode, errorMessage, memberId, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
}

export const shareGroupHeartbeat: ApiHandler<typeof ShareGroupHeartbeat> = {
  api: ShareGroupHeartbeat,
  versions: '1',
  async handle(request, ctx) {
    if (!ctx.access.allows('READ', 'GROUP', request.groupId)) return refused(DENIED_CODE.GROUP);
    const result = await ctx.core.shareGroupHeartbeat({
      group: request.groupId,
      memberId: request.memberId,
      memberEpoch: request.memberEpoch,
      rackId: request.rackId ?? null,
      subscribedTopicNames: request.subscribedTopicNames ?? null,
      clientId: ctx.header.clientId ?? '',
      clientHost: `/${ctx.connection.remoteHost}`,
    });
    if (result.error !== null) return refused(shareErrorCode(result.error), result.errorMessage, result.memberId);
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      memberId: result.memberId,
      memberEpoch: result.memberEpoch,
      heartbeatIntervalMs: result.heartbeatIntervalMs,
      assignment: result.assignment === null ? null : { topicPartitions: result.assignment },
    };
  },
  unavailable: (_request, errorCode) => refused(errorCode),
};

// ConsumerGroupHeartbeat: Kafka's consumer group protocol (KIP-848). One call
// does what JoinGroup, SyncGroup, Heartbeat and LeaveGroup did: a member
// joins with epoch 0, heartbeats at its epoch with what it owns, and is
// answered its epoch and, when it changed, its assignment (computed in the
// core by the server-side assignor, src/core/groups/consumer). Epoch -1
// leaves; -2 leaves for a while as a static member.
//
// Choices:
// - Errors carry Kafka's sentences in ErrorMessage (INVALID_REQUEST,
//   UNSUPPORTED_ASSIGNOR, INVALID_REGULAR_EXPRESSION, UNRELEASED_INSTANCE_ID).
// - The heartbeat interval answered is group.consumer.heartbeat.interval.ms
//   (5 s unless configured).
// - The client host is the connection's remote address, `/127.0.0.1` as
//   Kafka writes it.
//
// Versions: v1 adds SubscribedTopicRegex and makes the client name itself
// (KIP-1082); a v0 member joining without an id is named by the coordinator.
//
// ACLs: READ on the group, else GROUP_AUTHORIZATION_FAILED.
import { ConsumerGroupHeartbeat } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { consumerGroupErrorCode } from '../kafka-errors.js';

function refused(errorCode: number, errorMessage: string | null = null) {
  return { throttleTimeMs: 0, errorCode, errorMessage, memberId: null, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null };
}

export const consumerGroupHeartbeat: ApiHandler<typeof ConsumerGroupHeartbeat> = {
  api: ConsumerGroupHeartbeat,
  versions: '0-1',
  async handle(request, ctx) {
    if (!ctx.access.allows('READ', 'GROUP', request.groupId)) return refused(DENIED_CODE.GROUP);
    const result = await ctx.core.consumerGroupHeartbeat({
      group: request.groupId,
      memberId: request.memberId,
      memberEpoch: request.memberEpoch,
      instanceId: request.instanceId ?? null,
      rackId: request.rackId ?? null,
      rebalanceTimeoutMs: request.rebalanceTimeoutMs,
      subscribedTopicNames: request.subscribedTopicNames ?? null,
      subscribedTopicRegex: request.subscribedTopicRegex ?? null,
      serverAssignor: request.serverAssignor ?? null,
      topicPartitions: request.topicPartitions?.map((t) => ({ topicId: t.topicId, partitions: t.partitions })) ?? null,
      clientId: ctx.header.clientId ?? '',
      clientHost: `/${ctx.connection.remoteHost}`,
      apiVersion: ctx.header.apiVersion,
    });
    if (result.error !== null) return { ...refused(consumerGroupErrorCode(result.error), result.errorMessage), memberId: result.memberId };
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

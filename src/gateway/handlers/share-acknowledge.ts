// ShareAcknowledge: a share group member's ACCEPT, RELEASE, REJECT (and GAP,
// RENEW) of records it holds, outside a fetch (KIP-932; the consumer's
// commitSync/commitAsync and close). Within the member's share session:
// epoch 0 is refused (INVALID_SHARE_SESSION_EPOCH), -1 closes the session.
//
// Choices: an acknowledgement of a record the member does not hold (its lock
// ran out, another member took it) answers INVALID_RECORD_STATE for its
// partition and changes nothing of that batch, as Kafka.
//
// Versions: 1-2 (Kafka 4.4).
//
// ACLs: READ on the group and on each topic.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ShareAcknowledge } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { ackBatches, shareErrorCode, shareSession } from '../share-sessions.js';
import { topicNamesById } from '../topics.js';

function refused(errorCode: number) {
  return { throttleTimeMs: 0, errorCode, errorMessage: null, acquisitionLockTimeoutMs: 0, responses: [], nodeEndpoints: [] };
}

export const shareAcknowledge: ApiHandler<typeof ShareAcknowledge> = {
  api: ShareAcknowledge,
  versions: '1-2',
  async handle(request, ctx) {
    const group = request.groupId ?? '';
    const memberId = request.memberId ?? '';
    if (!ctx.access.allows('READ', 'GROUP', group)) return refused(DENIED_CODE.GROUP);
    if (request.shareSessionEpoch === 0) return refused(ErrorCode.INVALID_SHARE_SESSION_EPOCH);
    const session = shareSession(ctx, group, memberId, request.shareSessionEpoch);
    if (typeof session === 'number') return refused(session);
    const names = await topicNamesById(ctx, request.topics.map((t) => t.topicId));
    const codes = new Map<string, number>();
    const acknowledgements: { queue: string; partition: number; batches: ReturnType<typeof ackBatches>; key: string }[] = [];
    for (const t of request.topics) {
      const topic = names.get(t.topicId);
      for (const p of t.partitions) {
        const key = `${t.topicId}:${p.partitionIndex}`;
        if (topic === undefined) codes.set(key, ErrorCode.UNKNOWN_TOPIC_ID);
        else if (!ctx.access.allows('READ', 'TOPIC', topic)) codes.set(key, DENIED_CODE.TOPIC);
        else acknowledgements.push({ queue: topic, partition: p.partitionIndex, batches: ackBatches(p.acknowledgementBatches), key });
      }
    }
    const { partitions } = await ctx.core.shareAcknowledge({ group, memberId, acknowledgements: acknowledgements.map(({ key: _key, ...a }) => a) });
    partitions.forEach((p, i) => codes.set(acknowledgements[i]!.key, shareErrorCode(p.error)));
    const { config } = await ctx.core.describeShareGroupConfig({ group });
    const leader = { leaderId: ctx.settings.advertised.nodeId, leaderEpoch: 0 };
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      acquisitionLockTimeoutMs: config['share.record.lock.duration.ms'],
      responses: request.topics.map((t) => ({
        topicId: t.topicId,
        partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: codes.get(`${t.topicId}:${p.partitionIndex}`) ?? 0, errorMessage: null, currentLeader: leader })),
      })),
      nodeEndpoints: [],
    };
  },
  unavailable: (_request, errorCode) => refused(errorCode),
};

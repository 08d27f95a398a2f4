// ShareFetch: a share group member acknowledges what it processed and gets
// records under acquisition locks (KIP-932). The core acquires them
// (src/core/groups/share): each answer's AcquiredRecords names the offsets
// locked for the member and their delivery counts, beside the stored batches
// holding them, verbatim; the client keeps only the acquired offsets.
//
// Choices:
// - The share session (src/gateway/share-sessions.ts) lives in this gateway;
//   a full request (epoch 0) answers every partition of the session, an
//   incremental one only the partitions with records, errors or
//   acknowledgement results.
// - MaxWaitMs is a long poll on the partitions' logs; locks that run out in
//   the meantime are noticed within a quarter of a second.
// - AcquisitionLockTimeoutMs is the group's share.record.lock.duration.ms.
//
// Versions: 1-2 (Kafka 4.4). v2's ShareAcquireMode is served as batch-optimised
// and IsRenewAck's RENEW acknowledgements extend locks (such a request
// acquires nothing).
//
// ACLs: READ on the group (GROUP_AUTHORIZATION_FAILED), READ on each topic
// (TOPIC_AUTHORIZATION_FAILED for its partitions).
import { ErrorCode } from '../../../protocol/error-codes.js';
import { ShareFetch } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { ackBatches, FINAL_EPOCH, partitionKey, shareErrorCode, shareSession, type SharePartitionRef } from '../share-sessions.js';
import { topicNamesById } from '../topics.js';

function refused(errorCode: number, errorMessage: string | null = null) {
  return { throttleTimeMs: 0, errorCode, errorMessage, acquisitionLockTimeoutMs: 0, responses: [], nodeEndpoints: [] };
}

interface PartitionAnswer {
  topicId: string;
  partitionIndex: number;
  errorCode: number;
  acknowledgeErrorCode: number;
  records: Buffer[];
  acquiredRecords: { firstOffset: bigint; lastOffset: bigint; deliveryCount: number }[];
}

function answer(ref: SharePartitionRef, fields: Partial<PartitionAnswer>): PartitionAnswer {
  return { topicId: ref.topicId, partitionIndex: ref.partition, errorCode: 0, acknowledgeErrorCode: 0, records: [], acquiredRecords: [], ...fields };
}

/** The request's partitions by id, each resolved to its topic name (null: unknown id). */
async function resolve(ctx: HandlerContext, topics: { topicId: string; partitions: { partitionIndex: number }[] }[]) {
  const names = await topicNamesById(ctx, topics.map((t) => t.topicId));
  return topics.flatMap((t) => t.partitions.map((p) => ({ topicId: t.topicId, topic: names.get(t.topicId) ?? null, partition: p.partitionIndex })));
}

export const shareFetch: ApiHandler<typeof ShareFetch> = {
  api: ShareFetch,
  versions: '1-2',
  // Long because it runs the session, the acknowledgements, the fetch and the answer's assembly in order.
  async handle(request, ctx) {
    const group = request.groupId ?? '';
    const memberId = request.memberId ?? '';
    if (!ctx.access.allows('READ', 'GROUP', group)) return refused(DENIED_CODE.GROUP);
    const session = shareSession(ctx, group, memberId, request.shareSessionEpoch);
    if (typeof session === 'number') return refused(session);
    const named = await resolve(ctx, request.topics);
    const answers: PartitionAnswer[] = [];
    for (const p of named) {
      if (p.topic === null) answers.push(answer({ ...p, topic: '' }, { errorCode: ErrorCode.UNKNOWN_TOPIC_ID }));
      else if (!ctx.access.allows('READ', 'TOPIC', p.topic)) answers.push(answer({ ...p, topic: p.topic }, { errorCode: DENIED_CODE.TOPIC }));
      else if (request.shareSessionEpoch !== FINAL_EPOCH) session.partitions.set(partitionKey(p.topicId, p.partition), { ...p, topic: p.topic });
    }
    for (const f of request.forgottenTopicsData) for (const partition of f.partitions) session.partitions.delete(partitionKey(f.topicId, partition));
    const acknowledgements = request.topics.flatMap((t) => t.partitions.filter((p) => p.acknowledgementBatches.length > 0).map((p) => ({ topicId: t.topicId, partition: p.partitionIndex, batches: p.acknowledgementBatches })));
    const ackRefs = acknowledgements.map((a) => named.find((n) => n.topicId === a.topicId && n.partition === a.partition && n.topic !== null && ctx.access.allows('READ', 'TOPIC', n.topic)));
    // A final request and a renewal (v2's IsRenewAck) only acknowledge.
    const fetchRefs = request.shareSessionEpoch === FINAL_EPOCH || request.isRenewAck ? [] : [...session.partitions.values()];
    const result = await ctx.core.shareFetch(
      {
        group, memberId,
        acknowledgements: acknowledgements.flatMap((a, i) => (ackRefs[i] ? [{ queue: ackRefs[i].topic!, partition: a.partition, batches: ackBatches(a.batches) }] : [])),
        partitions: fetchRefs.map((r) => ({ queue: r.topic, partition: r.partition })),
        maxRecords: Math.max(1, request.maxRecords), maxBytes: Math.max(1, Math.min(request.maxBytes, ctx.settings.fetchMaxBytes)), maxWaitMs: Math.max(0, request.maxWaitMs),
      },
      { signal: AbortSignal.any([ctx.connection.closed, ctx.connection.draining]) },
    );
    const full = request.shareSessionEpoch === 0;
    for (const [i, r] of result.partitions.entries()) {
      const ref = fetchRefs[i]!;
      if (!full && r.error === null && r.acquired.length === 0) continue;
      answers.push(answer(ref, {
        errorCode: shareErrorCode(r.error), records: r.records,
        acquiredRecords: r.acquired.map((a) => ({ firstOffset: BigInt(a.firstOffset), lastOffset: BigInt(a.lastOffset), deliveryCount: a.deliveryCount })),
      }));
    }
    for (const ack of result.acknowledged) {
      const ref = named.find((n) => n.topic === ack.queue && n.partition === ack.partition)!;
      const existing = answers.find((a) => a.topicId === ref.topicId && a.partitionIndex === ack.partition);
      if (existing) existing.acknowledgeErrorCode = shareErrorCode(ack.error);
      else answers.push(answer({ ...ref, topic: ack.queue }, { acknowledgeErrorCode: shareErrorCode(ack.error) }));
    }
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, acquisitionLockTimeoutMs: result.lockDurationMs, responses: byTopic(answers, ctx.settings.advertised.nodeId), nodeEndpoints: [] };
  },
  unavailable: (_request, errorCode) => refused(errorCode),
};

function byTopic(answers: PartitionAnswer[], leaderId: number) {
  const topics = new Map<string, PartitionAnswer[]>();
  for (const a of answers) topics.set(a.topicId, [...(topics.get(a.topicId) ?? []), a]);
  return [...topics].map(([topicId, partitions]) => ({
    topicId,
    partitions: partitions.map((p) => ({
      partitionIndex: p.partitionIndex, errorCode: p.errorCode, errorMessage: null, acknowledgeErrorCode: p.acknowledgeErrorCode, acknowledgeErrorMessage: null,
      currentLeader: { leaderId, leaderEpoch: 0 }, records: p.records, acquiredRecords: p.acquiredRecords,
    })),
  }));
}

// TxnOffsetCommit: a consumer group's offsets sent inside a transaction
// (sendOffsetsToTransaction). The core keeps them pending with the
// transaction, durable, and writes them to the group's committed offsets
// (the same offsets the group's consumers and Queen's native readers use)
// when the transaction commits; an abort drops them. The group must have
// been added with AddOffsetsToTxn first (else INVALID_TXN_STATE).
//
// Choices: v3+'s generation and member id (KIP-447) are not checked against
// the group's generation: a fenced producer is already refused by its epoch.
// Every partition answers the same code: the call is taken or refused whole.
//
// Versions: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.
import { TxnOffsetCommit } from '../../../protocol/messages/index.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';
import { transactionalErrorOf } from '../transactional-errors.js';

interface TopicOffsets {
  name: string;
  partitions: { partitionIndex: number; committedOffset: bigint; committedLeaderEpoch: number; committedMetadata: string | null }[];
}

export const txnOffsetCommit: ApiHandler = {
  api: TxnOffsetCommit,
  versions: '0-4',
  async handle(request, ctx) {
    const topics = request.topics as TopicOffsets[];
    let errorCode = NONE;
    try {
      await ctx.core.txnOffsetCommit({
        transactionalId: request.transactionalId,
        producerId: Number(request.producerId),
        producerEpoch: request.producerEpoch,
        group: request.groupId,
        offsets: topics.flatMap((t) =>
          t.partitions.map((p) => ({
            queue: t.name,
            partition: p.partitionIndex,
            offset: Number(p.committedOffset),
            leaderEpoch: p.committedLeaderEpoch ?? -1,
            metadata: p.committedMetadata,
          })),
        ),
      });
    } catch (e) {
      errorCode = transactionalErrorOf(e, ctx.header.apiVersion, 2).errorCode;
    }
    return {
      throttleTimeMs: 0,
      topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
    };
  },
};

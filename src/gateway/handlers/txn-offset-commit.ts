// TxnOffsetCommit: a consumer group's offsets sent inside a transaction
// (sendOffsetsToTransaction). The core keeps them pending with the
// transaction, durable, and writes them to the group's committed offsets
// (the same offsets the group's consumers and Queen's native readers use)
// when the transaction commits; an abort drops them. The group must have
// been added with AddOffsetsToTxn first (else INVALID_TXN_STATE, from v4
// TRANSACTION_ABORTABLE), except at
// v5 (transaction version 2, KIP-890 part 2), where this call adds the group
// to the transaction itself, opening one if none is open.
//
// Choices: v3+'s generation and member id (KIP-447) are not checked against
// the group's generation: a fenced producer is already refused by its epoch.
// Every partition answers the same code: the call is taken or refused whole.
//
// Versions: a fenced producer gets INVALID_PRODUCER_EPOCH at v0-v4, as Apache
// Kafka 4 answers it: the group coordinator checks the epoch, and only
// KIP-890's v5 carries PRODUCER_FENCED (the differential suite's zombie
// scenario shows both).
//
// ACLs, as Kafka's: WRITE on the transactional id (else every partition
// answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED), READ on the group (else
// GROUP_AUTHORIZATION_FAILED) and READ on each topic: a topic without it
// answers TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED, and
// nothing is committed.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { TxnOffsetCommit } from '../../../protocol/messages/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';
import { transactionalErrorOf } from '../transactional-errors.js';

export const txnOffsetCommit: ApiHandler<typeof TxnOffsetCommit> = {
  api: TxnOffsetCommit,
  versions: '0-5',
  async handle(request, ctx) {
    const topics = request.topics;
    const answerAll = (code: (topic: string) => number) => ({
      throttleTimeMs: 0,
      topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: code(t.name) })) })),
    });
    if (!ctx.access.allows('WRITE', 'TRANSACTIONAL_ID', request.transactionalId)) return answerAll(() => DENIED_CODE.TRANSACTIONAL_ID);
    if (!ctx.access.allows('READ', 'GROUP', request.groupId)) return answerAll(() => DENIED_CODE.GROUP);
    const unreadable = new Set(topics.filter((t) => !ctx.access.allows('READ', 'TOPIC', t.name)).map((t) => t.name));
    if (unreadable.size > 0) return answerAll((topic) => (unreadable.has(topic) ? DENIED_CODE.TOPIC : ErrorCode.OPERATION_NOT_ATTEMPTED));
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
        addsGroup: ctx.header.apiVersion >= 5,
      });
    } catch (e) {
      errorCode = transactionalErrorOf(e, ctx.header.apiVersion, 5).errorCode;
      // KIP-890: from v4 a group outside the transaction is TRANSACTION_ABORTABLE, as Kafka 4.4 answers it.
      if (errorCode === ErrorCode.INVALID_TXN_STATE && ctx.header.apiVersion >= 4) errorCode = ErrorCode.TRANSACTION_ABORTABLE;
    }
    return {
      throttleTimeMs: 0,
      topics: topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
    };
  },
  unavailable: (request, errorCode) => ({
    throttleTimeMs: 0,
    topics: request.topics.map((t) => ({ name: t.name, partitions: t.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode })) })),
  }),
};

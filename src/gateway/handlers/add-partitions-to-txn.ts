// AddPartitionsToTxn: adds partitions to a producer's open transaction (and
// opens one when none is), before it produces to them.
//
// The core's transaction coordinator keeps the set, durable; Produce of a
// transactional batch to a partition not in it answers INVALID_TXN_STATE.
// When any partition is unknown nothing is added: that partition answers
// UNKNOWN_TOPIC_OR_PARTITION and the others OPERATION_NOT_ATTEMPTED, as
// Kafka answers. A refusal of the producer (fenced, wrong id, a transaction
// ending) is every partition's code.
//
// Versions: v0-v3 are the client's (one transactional id); PRODUCER_FENCED
// is INVALID_PRODUCER_EPOCH before v2. v4+ is Kafka's broker-to-broker form
// (several transactional ids, VerifyOnly asks whether partitions are in the
// transaction without adding them); it is served here the same way, with
// VerifyOnly answered from the core's state.
//
// ACLs, as Kafka's: WRITE on the transactional id (else every partition
// answers TRANSACTIONAL_ID_AUTHORIZATION_FAILED) and WRITE on each topic (else
// its partitions answer TOPIC_AUTHORIZATION_FAILED, the others
// OPERATION_NOT_ATTEMPTED, and nothing is added).
import { ErrorCode } from '../../../protocol/error-codes.js';
import { AddPartitionsToTxn } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import type { AddPartitionsToTxnResult, PartitionRef } from '../../core/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { coreErrorCode, NONE } from '../kafka-errors.js';
import { transactionalErrorOf } from '../transactional-errors.js';

type TopicPartitions = RequestOf<typeof AddPartitionsToTxn>['transactions'][number]['topics'][number];

interface TopicResult {
  name: string;
  resultsByPartition: { partitionIndex: number; partitionErrorCode: number }[];
}

function byTopic(refs: PartitionRef[], codeOf: (ref: PartitionRef) => number): TopicResult[] {
  const topics = new Map<string, TopicResult>();
  for (const ref of refs) {
    let topic = topics.get(ref.queue);
    if (!topic) topics.set(ref.queue, (topic = { name: ref.queue, resultsByPartition: [] }));
    topic.resultsByPartition.push({ partitionIndex: ref.partition, partitionErrorCode: codeOf(ref) });
  }
  return [...topics.values()];
}

async function addForTransaction(
  ctx: HandlerContext,
  txn: { transactionalId: string; producerId: bigint; producerEpoch: number; verifyOnly: boolean; topics: TopicPartitions[] },
): Promise<TopicResult[]> {
  const refs = txn.topics.flatMap((t) => t.partitions.map((partition) => ({ queue: t.name, partition })));
  if (!ctx.access.allows('WRITE', 'TRANSACTIONAL_ID', txn.transactionalId)) return byTopic(refs, () => DENIED_CODE.TRANSACTIONAL_ID);
  const unwritable = new Set(txn.topics.filter((t) => !ctx.access.allows('WRITE', 'TOPIC', t.name)).map((t) => t.name));
  if (unwritable.size > 0) return byTopic(refs, (ref) => (unwritable.has(ref.queue) ? DENIED_CODE.TOPIC : ErrorCode.OPERATION_NOT_ATTEMPTED));
  let result: AddPartitionsToTxnResult;
  try {
    result = await ctx.core.addPartitionsToTxn({
      transactionalId: txn.transactionalId,
      producerId: Number(txn.producerId),
      producerEpoch: txn.producerEpoch,
      partitions: refs,
      verifyOnly: txn.verifyOnly,
    });
  } catch (e) {
    const { errorCode } = transactionalErrorOf(e, ctx.header.apiVersion, 2);
    return byTopic(refs, () => errorCode);
  }
  const failed = result.partitions.some((p) => p.error !== null);
  return byTopic(result.partitions, (ref) => {
    const error = (ref as AddPartitionsToTxnResult['partitions'][number]).error;
    if (error === null) return failed && !txn.verifyOnly ? ErrorCode.OPERATION_NOT_ATTEMPTED : NONE;
    return coreErrorCode(error);
  });
}

export const addPartitionsToTxn: ApiHandler<typeof AddPartitionsToTxn> = {
  api: AddPartitionsToTxn,
  versions: '0-5',
  async handle(request, ctx) {
    if (ctx.header.apiVersion <= 3) {
      const results = await addForTransaction(ctx, {
        transactionalId: request.v3AndBelowTransactionalId,
        producerId: request.v3AndBelowProducerId,
        producerEpoch: request.v3AndBelowProducerEpoch,
        verifyOnly: false,
        topics: request.v3AndBelowTopics,
      });
      return { throttleTimeMs: 0, resultsByTopicV3AndBelow: results };
    }
    const transactions = request.transactions;
    const resultsByTransaction = await Promise.all(
      transactions.map(async (t) => ({ transactionalId: t.transactionalId, topicResults: await addForTransaction(ctx, t) })),
    );
    return { throttleTimeMs: 0, errorCode: NONE, resultsByTransaction };
  },
};

// DescribeTransactions: the state of transactional ids, from the core's
// transaction coordinator (kafka-transactions.sh --describe). An unknown id
// answers TRANSACTIONAL_ID_NOT_FOUND.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeTransactions } from '../../../protocol/messages/index.js';
import type { PartitionRef } from '../../core/core.js';
import type { ApiHandler } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';

function topicsOf(partitions: PartitionRef[]): { topic: string; partitions: number[] }[] {
  const topics = new Map<string, number[]>();
  for (const p of partitions) {
    let list = topics.get(p.queue);
    if (!list) topics.set(p.queue, (list = []));
    list.push(p.partition);
  }
  return [...topics].map(([topic, list]) => ({ topic, partitions: list.sort((a, b) => a - b) }));
}

export const describeTransactions: ApiHandler = {
  api: DescribeTransactions,
  versions: '0',
  async handle(request, ctx) {
    const ids = request.transactionalIds as string[];
    const unknown = (transactionalId: string, errorCode: number) => ({
      errorCode,
      transactionalId,
      transactionState: '',
      transactionTimeoutMs: 0,
      transactionStartTimeMs: -1n,
      producerId: -1n,
      producerEpoch: -1,
      topics: [],
    });
    try {
      const { transactions } = await ctx.core.describeTransactions({ transactionalIds: ids });
      return {
        throttleTimeMs: 0,
        transactionStates: ids.map((id, i) => {
          const t = transactions[i];
          if (!t) return unknown(id, ErrorCode.TRANSACTIONAL_ID_NOT_FOUND);
          return {
            errorCode: NONE,
            transactionalId: id,
            transactionState: t.state,
            transactionTimeoutMs: t.timeoutMs,
            transactionStartTimeMs: t.startedAt,
            producerId: t.producerId,
            producerEpoch: t.producerEpoch,
            topics: topicsOf(t.partitions),
          };
        }),
      };
    } catch (e) {
      const { errorCode } = kafkaErrorOf(e);
      return { throttleTimeMs: 0, transactionStates: ids.map((id) => unknown(id, errorCode)) };
    }
  },
};

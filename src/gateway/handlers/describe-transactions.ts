// DescribeTransactions: the state of transactional ids, from the core's
// transaction coordinator (kafka-transactions.sh --describe). An unknown id
// answers TRANSACTIONAL_ID_NOT_FOUND with every other field zero, as Apache
// Kafka answers it.
//
// ACLs: DESCRIBE on each transactional id (else that id answers
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED and nothing of it), as Kafka's.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeTransactions } from '../../../protocol/messages/index.js';
import type { PartitionRef } from '../../core/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
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

export const describeTransactions: ApiHandler<typeof DescribeTransactions> = {
  api: DescribeTransactions,
  versions: '0',
  async handle(request, ctx) {
    const ids = request.transactionalIds;
    const unknown = (transactionalId: string, errorCode: number) => ({
      errorCode,
      transactionalId,
      transactionState: '',
      transactionTimeoutMs: 0,
      transactionStartTimeMs: 0n,
      producerId: 0n,
      producerEpoch: 0,
      topics: [],
    });
    const allowed = ids.filter((id) => ctx.access.allows('DESCRIBE', 'TRANSACTIONAL_ID', id));
    try {
      const { transactions } = await ctx.core.describeTransactions({ transactionalIds: allowed });
      const byId = new Map(allowed.map((id, i) => [id, transactions[i]]));
      return {
        throttleTimeMs: 0,
        transactionStates: ids.map((id) => {
          if (!allowed.includes(id)) return unknown(id, DENIED_CODE.TRANSACTIONAL_ID);
          const t = byId.get(id);
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

/**
 * Kafka transactions (ListTransactions, then DescribeTransactions for each):
 * the transactional ids the principal may DESCRIBE, with state, producer,
 * timeout, how long the open one has run and the partitions it wrote to.
 */
import type { FastifyRequest } from 'fastify';
import type { Core } from '../../core/core.js';
import { permits } from '../access.js';
import { consoleAccess, type ConsoleContext } from './context.js';

async function listTransactions(core: Core, request: FastifyRequest) {
  const { transactions } = await core.listTransactions({ states: [], producerIds: [] });
  const ids = transactions.map((t) => t.transactionalId).filter((id) => permits(request, { operation: 'DESCRIBE', type: 'TRANSACTIONAL_ID', name: id })).sort();
  const { transactions: described } = await core.describeTransactions({ transactionalIds: ids });
  return described.flatMap((t) =>
    t === null
      ? []
      : [{ transactionalId: t.transactionalId, state: t.state, producerId: t.producerId, producerEpoch: t.producerEpoch, timeoutMs: t.timeoutMs, startedAt: t.startedAt, partitions: t.partitions.map((p) => ({ topic: p.queue, partition: p.partition })) }],
  );
}

export function registerConsoleTransactionRoutes({ app, core }: ConsoleContext): void {
  app.get('/console/api/transactions', { schema: {}, config: consoleAccess(() => []) }, (request) => listTransactions(core, request));
}

// ListTransactions: the transactional ids the core's coordinator knows, with
// their producer and state, filtered by state, producer id and (v1) how long
// the transaction has been open (kafka-transactions.sh --list). A state
// filter Kafka does not know is listed back in UnknownStateFilters and
// matches nothing.
//
// ACLs: only the ids the principal may DESCRIBE are listed, as Kafka's.
import { ListTransactions } from '../../../protocol/messages/index.js';
import type { KafkaTxnState } from '../../core/index.js';
import type { ApiHandler } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';

const STATES = new Set<string>(['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence']);

export const listTransactions: ApiHandler<typeof ListTransactions> = {
  api: ListTransactions,
  versions: '0-1',
  async handle(request, ctx) {
    const filters = request.stateFilters;
    const unknownStateFilters = filters.filter((s) => !STATES.has(s));
    if (filters.length > 0 && unknownStateFilters.length === filters.length) {
      return { throttleTimeMs: 0, errorCode: NONE, unknownStateFilters, transactionStates: [] };
    }
    try {
      const { transactions } = await ctx.core.listTransactions({
        states: filters.filter((s) => STATES.has(s)) as KafkaTxnState[],
        producerIds: request.producerIdFilters.map(Number),
        minDurationMs: ctx.header.apiVersion >= 1 ? Number(request.durationFilter) : -1,
      });
      return {
        throttleTimeMs: 0,
        errorCode: NONE,
        unknownStateFilters,
        transactionStates: transactions.filter((t) => ctx.access.allows('DESCRIBE', 'TRANSACTIONAL_ID', t.transactionalId)).map((t) => ({ transactionalId: t.transactionalId, producerId: t.producerId, transactionState: t.state })),
      };
    } catch (e) {
      return { throttleTimeMs: 0, errorCode: kafkaErrorOf(e).errorCode, unknownStateFilters, transactionStates: [] };
    }
  },
};

// InitProducerId: gives a producer its producer id and epoch.
//
// The id and epoch come from the core, which keeps producer state durable and
// shared by every gateway. A producer that sends its current id and epoch
// (v3+, KIP-360) asks for an epoch bump after a sequence error; the core
// answers the bumped epoch, or a fresh id when the epoch would overflow.
//
// With a transactional id the core's transaction coordinator answers: a new
// id, or the id's producer with its epoch bumped, which fences every older
// instance and aborts the transaction it left open (markers written before
// this answers, where Kafka answers CONCURRENT_TRANSACTIONS until its abort
// is done). A timeout above 15 minutes (Kafka's transaction.max.timeout.ms)
// answers INVALID_TRANSACTION_TIMEOUT; a stale id or epoch PRODUCER_FENCED
// (INVALID_PRODUCER_EPOCH before v4, as Kafka answers).
//
// ACLs, as Kafka's: a transactional id needs WRITE on it (else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an idempotent producer needs
// IDEMPOTENT_WRITE on the cluster or WRITE on some topic (else
// CLUSTER_AUTHORIZATION_FAILED).
import { InitProducerId } from '../../../protocol/messages/index.js';
import { CLUSTER_NAME, DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { NONE } from '../kafka-errors.js';
import { transactionalErrorOf } from '../transactional-errors.js';

export const initProducerId: ApiHandler<typeof InitProducerId> = {
  api: InitProducerId,
  versions: '0-5',
  async handle(request, ctx) {
    const refused = (errorCode: number) => ({ throttleTimeMs: 0, errorCode, producerId: -1n, producerEpoch: -1 });
    if (request.transactionalId !== null && !ctx.access.allows('WRITE', 'TRANSACTIONAL_ID', request.transactionalId)) return refused(DENIED_CODE.TRANSACTIONAL_ID);
    // Kafka's rule for an idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic.
    if (request.transactionalId === null && !ctx.access.allows('IDEMPOTENT_WRITE', 'CLUSTER', CLUSTER_NAME) && !ctx.access.allowsAny('WRITE', 'TOPIC')) return refused(DENIED_CODE.CLUSTER);
    try {
      const { producerId, producerEpoch } = await ctx.core.initProducer({
        transactionalId: request.transactionalId,
        transactionTimeoutMs: request.transactionTimeoutMs,
        producerId: Number(request.producerId),
        producerEpoch: request.producerEpoch,
      });
      return { throttleTimeMs: 0, errorCode: NONE, producerId, producerEpoch };
    } catch (e) {
      return { throttleTimeMs: 0, errorCode: transactionalErrorOf(e, ctx.header.apiVersion, 4).errorCode, producerId: -1n, producerEpoch: -1 };
    }
  },
};

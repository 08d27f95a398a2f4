// InitProducerId: gives an idempotent producer its producer id and epoch.
//
// The id and epoch come from the core, which keeps producer state durable and
// shared by every gateway. A producer that sends its current id and epoch
// (v3+, KIP-360) asks for an epoch bump after a sequence error; the core
// answers the bumped epoch, or a fresh id when the epoch would overflow.
//
// Not built yet: transactions. A non-null TransactionalId answers
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED (53). That code is fatal and
// non-retriable in kafkajs, librdkafka and the Java client, so a
// transactional producer stops at once with an error naming the
// transactional id, instead of retrying forever as it would on
// COORDINATOR_NOT_AVAILABLE or NOT_COORDINATOR; the gateway logs why.
//
// ACLs, as Kafka's: a transactional id needs WRITE on it (else
// TRANSACTIONAL_ID_AUTHORIZATION_FAILED); an idempotent producer needs
// IDEMPOTENT_WRITE on the cluster or WRITE on some topic (else
// CLUSTER_AUTHORIZATION_FAILED).
import { ErrorCode } from '../../../protocol/error-codes.js';
import { InitProducerId } from '../../../protocol/messages/index.js';
import { CLUSTER_NAME, DENIED_CODE } from '../acl-operations.js';
import type { ApiHandler } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';

export const initProducerId: ApiHandler = {
  api: InitProducerId,
  versions: '0-5',
  async handle(request, ctx) {
    const refused = (errorCode: number) => ({ throttleTimeMs: 0, errorCode, producerId: -1n, producerEpoch: -1 });
    if (request.transactionalId !== null && !ctx.access.allows('WRITE', 'TRANSACTIONAL_ID', request.transactionalId)) return refused(DENIED_CODE.TRANSACTIONAL_ID);
    // Kafka's rule for an idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic.
    if (request.transactionalId === null && !ctx.access.allows('IDEMPOTENT_WRITE', 'CLUSTER', CLUSTER_NAME) && !ctx.access.allowsAny('WRITE', 'TOPIC')) return refused(DENIED_CODE.CLUSTER);
    if (request.transactionalId !== null) {
      ctx.log.info({ transactionalId: request.transactionalId }, 'transactional producer refused: transactions are not supported yet');
      return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n, producerEpoch: -1 };
    }
    try {
      const { producerId, producerEpoch } = await ctx.core.initProducer({
        transactionalId: null,
        transactionTimeoutMs: request.transactionTimeoutMs,
        producerId: Number(request.producerId),
        producerEpoch: request.producerEpoch,
      });
      return { throttleTimeMs: 0, errorCode: NONE, producerId, producerEpoch };
    } catch (e) {
      return { throttleTimeMs: 0, errorCode: kafkaErrorOf(e).errorCode, producerId: -1n, producerEpoch: -1 };
    }
  },
};

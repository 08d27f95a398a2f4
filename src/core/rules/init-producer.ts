import { CoreError } from '../errors.js';
import type { InitProducerRequest } from '../core.js';
import { requireInteger } from './arguments.js';

/** Kafka's largest producer epoch; an epoch bump past it allocates a new producer id. */
export const MAX_PRODUCER_EPOCH = 32_767;

const INT32_MAX = 2_147_483_647;
const INT32_MIN = -2_147_483_648;

/**
 * Checks an InitProducer request the same way for every engine. Kafka ignores
 * the transaction timeout of a producer without a transactional id, and
 * librdkafka's idempotent producer sends -1 there, so it is only checked for
 * transactional producers. Here it need only be an int32: whether it is a
 * usable timeout (1 ms up to transaction.max.timeout.ms) is the coordinator's
 * check, which answers INVALID_TRANSACTION_TIMEOUT as Kafka does, also for -1.
 */
export function checkInitProducer(req: InitProducerRequest): InitProducerRequest {
  if (req?.transactionalId !== null && (typeof req?.transactionalId !== 'string' || req.transactionalId.length === 0)) {
    throw new CoreError('invalid_argument', 'transactionalId must be null or a non-empty string.');
  }
  const transactionTimeoutMs =
    req.transactionalId === null ? 0 : requireInteger(req.transactionTimeoutMs, 'transactionTimeoutMs', INT32_MIN, INT32_MAX);
  return {
    transactionalId: req.transactionalId,
    transactionTimeoutMs,
    producerId: requireInteger(req.producerId, 'producerId', -1),
    producerEpoch: requireInteger(req.producerEpoch, 'producerEpoch', -1, MAX_PRODUCER_EPOCH),
  };
}

/** What InitProducerId without a transactional id does: allocate a new producer id, or bump the caller's epoch. */
export type IdempotentInit = { kind: 'new' } | { kind: 'bump'; producerId: number; producerEpoch: number };

/**
 * InitProducerId without a transactional id. A producer that names its own
 * id and current epoch (KIP-360, bumping its epoch after a sequence error)
 * keeps its id with the next epoch, or gets a new id once the epoch would
 * pass MAX_PRODUCER_EPOCH; anyone else gets a new id. `recordedEpoch` is
 * the epoch stored for the named id (null when none).
 */
export function decideIdempotentInit(req: Pick<InitProducerRequest, 'producerId' | 'producerEpoch'>, recordedEpoch: number | null): IdempotentInit {
  if (req.producerId < 0 || recordedEpoch !== req.producerEpoch) return { kind: 'new' };
  if (req.producerEpoch + 1 >= MAX_PRODUCER_EPOCH) return { kind: 'new' };
  return { kind: 'bump', producerId: req.producerId, producerEpoch: req.producerEpoch + 1 };
}

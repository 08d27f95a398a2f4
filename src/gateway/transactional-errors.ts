import { ErrorCode } from '../../protocol/error-codes.js';
import { COORDINATOR_TRANSIENT, kafkaErrorOf } from './kafka-errors.js';

/**
 * The Kafka code for a transactional call's refusal. KIP-588 gave clients
 * PRODUCER_FENCED; Kafka's broker still answers INVALID_PRODUCER_EPOCH to a
 * request older than the version that came with it (InitProducerId v4,
 * AddPartitionsToTxn, AddOffsetsToTxn, EndTxn and TxnOffsetCommit v2), and
 * so does this gateway: both mean "a newer instance took over".
 */
export function transactionalErrorOf(e: unknown, version: number, fencedFrom: number): { errorCode: number; errorMessage: string } {
  // The transaction coordinator, like the group coordinator, is unavailable rather than broken while its store is.
  const found = kafkaErrorOf(e, COORDINATOR_TRANSIENT);
  if (found.errorCode === ErrorCode.PRODUCER_FENCED && version < fencedFrom) return { ...found, errorCode: ErrorCode.INVALID_PRODUCER_EPOCH };
  return found;
}

/** The Core interface (../core.ts), the idempotent producer: requests and results, plain data. */

export interface InitProducerRequest {
  /** Null for an idempotent (non-transactional) producer. */
  transactionalId: string | null;
  transactionTimeoutMs: number;
  /** A producer asking to bump its own epoch (KIP-360); -1 when new. */
  producerId: number;
  producerEpoch: number;
}

export interface InitProducerResult {
  producerId: number;
  producerEpoch: number;
}

export interface ProducerState {
  producerId: number;
  producerEpoch: number;
  lastSequence: number;
  lastTimestamp: number;
  coordinatorEpoch: number;
  currentTxnStartOffset: number;
}

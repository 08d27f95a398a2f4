/**
 * The core's catalogue of whole-call errors. A CoreError means the call changed
 * nothing. `code` is stable (the gateway maps it to a Kafka error code, the
 * HTTP API to a status); `message` is a sentence for people.
 */
export type CoreErrorCode =
  | 'invalid_name'          // a queue, group or KV name breaks the naming rules
  | 'invalid_argument'      // a count, offset, size or option is out of range
  | 'unknown_queue'
  | 'unknown_partition'
  | 'queue_exists'
  | 'transaction_id_too_long'
  | 'invalid_config'
  | 'unknown_lease'
  | 'not_supported'
  | 'corrupt_batch'         // a stored batch cannot be read (written by an older version, or a disk fault)
  | 'closed'
  // The store did not answer (database down, frozen or timing out): the call
  // may or may not have taken effect; retrying is safe where the call has a key.
  | 'unavailable'
  // The engine is at its configured size limit: nothing more is stored until
  // retention, deletion or a higher limit makes room.
  | 'storage_full'
  // Kafka transactions: an older epoch of a transactional producer (a newer instance took over).
  | 'producer_fenced'
  // The producer id is not the transactional id's (or it never ran InitProducerId).
  | 'invalid_producer_id_mapping'
  // The call does not fit the transaction's state (e.g. EndTxn with no open transaction).
  | 'invalid_txn_state'
  // A transaction timeout above the core's maximum (Kafka's transaction.max.timeout.ms).
  | 'invalid_transaction_timeout'
  // Another core node holds the coordinator lease of the group or transactional id (or took it from this one).
  | 'not_coordinator';

export class CoreError extends Error {
  override readonly name = 'CoreError';
  readonly code: CoreErrorCode;

  constructor(code: CoreErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

export function isCoreError(e: unknown): e is CoreError {
  return e instanceof Error && (e as CoreError).name === 'CoreError' && typeof (e as CoreError).code === 'string';
}

/** A whole call naming a queue that is not there. */
export function unknownQueueError(queue: string): CoreError {
  return new CoreError('unknown_queue', `Queue "${queue}" does not exist; create it first.`);
}

/** What a partition index past a queue's partitions is told (a whole call's error, or one partition's message). */
export function unknownPartitionError(queue: string, partitionCount: number, partition: number): CoreError {
  return new CoreError('unknown_partition', `Queue "${queue}" has partitions 0 to ${partitionCount - 1}; there is no partition ${partition}.`);
}

/** A whole call naming a partition, by name, that its queue lacks. */
export function unknownPartitionNameError(queue: string, name: string): CoreError {
  return new CoreError('unknown_partition', `Queue "${queue}" has no partition named "${name}".`);
}

/** A queue created under a name already taken, without ifNotExists. */
export function queueExistsError(queue: string): CoreError {
  return new CoreError('queue_exists', `Queue "${queue}" already exists; use ifNotExists to accept it as it is.`);
}

/** DeleteRecords asked to delete past a partition's high watermark. */
export function pastHighWatermarkError(beforeOffset: number, highWatermark: number, queue: string, partition: number): CoreError {
  return new CoreError('invalid_argument', `beforeOffset ${beforeOffset} is past the high watermark ${highWatermark} of ${queue}/${partition}.`);
}

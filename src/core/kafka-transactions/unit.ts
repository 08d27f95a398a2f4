import type { CommittedOffset, PartitionRef } from '../core.js';
import type { MissingPartition } from '../log/append.js';
import type { StoredTransaction } from '../rules/kafka-transactions.js';

/**
 * The terms of one atomic unit on a transactional id, between the core's
 * transaction coordinator (./coordinator.ts), which decides, and an engine's
 * `EngineKafkaTransactions.transact`, which loads and stores.
 */

/** What one call needs the engine to hold and load. */
export interface TxnUnitRequest {
  transactionalId: string;
  /** A call only the id's coordinator serves: the engine takes or keeps the id's coordinator lease first. */
  coordinator: boolean;
  /** InitProducerId: the engine serializes calls on the id even before it is stored. */
  creates?: boolean;
  /** Partitions to find. */
  partitions?: PartitionRef[];
  /** Also tell whether the transaction holds each of them. */
  verify?: boolean;
  /** A group to tell whether the open transaction holds it. */
  group?: string;
}

export interface TxnView {
  now: number;
  stored: StoredTransaction | null;
  /** Per requested partition: why it is missing, or whether the transaction holds it (false unless `verify` asked). */
  partitions: (MissingPartition | { held: boolean })[];
  /** Whether the transaction holds the requested group. */
  holdsGroup: boolean;
}

/** What a call writes, applied in this order by the engine. */
export interface TxnWrites {
  /** Ends the open transaction: a marker (stamped `markerEpoch`) on each of its partitions, an abort's ranges, a commit's offsets; then its partitions, groups and offsets go. */
  end?: { commit: boolean; producerId: number; markerEpoch: number };
  /** A new transaction opens: no partitions, groups or offsets yet. */
  clear?: boolean;
  /** A new producer id (epoch NEW_PRODUCER_EPOCH) is allocated first; `save` and `producerEpoch` take it. */
  newProducer?: boolean;
  save?: StoredTransaction;
  /** The requested partitions join the transaction. */
  addPartitions?: boolean;
  /** The requested group joins the transaction. */
  addGroup?: boolean;
  /** The requested group's offsets, pending until the transaction commits. */
  putOffsets?: CommittedOffset[];
  /** The saved identity is recorded as its producer id's epoch (what the idempotent InitProducerId checks). */
  producerEpoch?: boolean;
}

export interface TxnDecision<R> {
  answer: R;
  writes: TxnWrites;
}

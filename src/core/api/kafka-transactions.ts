/** The Core interface (../core.ts), Kafka transactions: requests and results, plain data. */
import type { PartitionRef } from './log.js';
import type { CommittedOffset } from './offsets.js';

// Kafka's transaction coordinator, durable in the engine: per transactional id
// its producer id and epoch, state, partitions and groups, timeout and start.
// Transactional batches are appended when produced; ending a transaction
// writes a commit or abort marker (a control batch) to each of its
// partitions. Whole-call refusals are CoreErrors: producer_fenced (an older
// epoch), invalid_producer_id_mapping (another producer id, or no
// InitProducerId yet), invalid_txn_state, invalid_transaction_timeout.

export type KafkaTxnState = 'Empty' | 'Ongoing' | 'PrepareCommit' | 'PrepareAbort' | 'CompleteCommit' | 'CompleteAbort' | 'Dead' | 'PrepareEpochFence';

/** The producer a transactional call speaks for. */
export interface TxnProducer {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
}

export interface AddPartitionsToTxnRequest extends TxnProducer {
  partitions: PartitionRef[];
  /** Only answer whether each partition is in the open transaction (AddPartitionsToTxn v4+ VerifyOnly); add nothing. */
  verifyOnly?: boolean;
}

export interface AddPartitionsToTxnResult {
  /** When any partition has an error nothing was added. */
  partitions: (PartitionRef & { error: 'unknown_queue' | 'unknown_partition' | 'invalid_txn_state' | null })[];
}

export interface AddOffsetsToTxnRequest extends TxnProducer {
  group: string;
}

export interface TxnOffsetCommitRequest extends TxnProducer {
  group: string;
  /** Pending with the transaction; written to the group's committed offsets at commit, dropped at abort. */
  offsets: CommittedOffset[];
  /** KIP-890 part 2 (TxnOffsetCommit v5+): the group joins the transaction here, opening one if none is, as AddOffsetsToTxn would. */
  addsGroup?: boolean;
}

export interface EndTxnRequest extends TxnProducer {
  commit: boolean;
  /** KIP-890 part 2 (EndTxn v5+): the epoch is bumped at this end; the markers carry the new epoch, which the answer gives. */
  bumpsEpoch?: boolean;
}

export interface TransactionDescription {
  transactionalId: string;
  state: KafkaTxnState;
  producerId: number;
  producerEpoch: number;
  timeoutMs: number;
  /** When the open transaction began (epoch ms), -1 when none is open. */
  startedAt: number;
  partitions: PartitionRef[];
}

export interface ListTransactionsRequest {
  /** Empty: every state. */
  states: KafkaTxnState[];
  /** Empty: every producer. */
  producerIds: number[];
  /** Only transactions open longer than this (ms); -1: no filter. */
  minDurationMs?: number;
}

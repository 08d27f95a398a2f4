import type { AbortedTransaction, InitProducerRequest, KafkaTxnState, TxnProducer } from '../core.js';
import { CoreError } from '../errors.js';
import { buildControlBatch, ControlRecordType } from '../../../protocol/records/record-batch.js';
import { BatchAttr, BatchPos } from '../../../protocol/records/batch-header.js';
import { requireArray, requireInteger } from './arguments.js';
import { MAX_PRODUCER_EPOCH } from './init-producer.js';
import { validateGroupName } from './names.js';

/**
 * Kafka's transaction coordinator rules, the same for every engine. The
 * engines keep the state (memory maps, PostgreSQL rows) and call these to
 * decide; each call's checks and writes happen in one atomic step.
 *
 * Choices:
 * - Ending a transaction is one step: the markers are written and the state
 *   becomes CompleteCommit or CompleteAbort before EndTxn answers, so the
 *   Prepare states are never seen and CONCURRENT_TRANSACTIONS never needed.
 * - InitProducerId for an id with an open transaction aborts it (markers
 *   written under the new epoch) and answers the new epoch in the same call,
 *   where Kafka answers CONCURRENT_TRANSACTIONS until its abort completes.
 * - The coordinator epoch in every marker is 0: there is one coordinator,
 *   the core, and it never moves.
 */

/** Kafka's transaction.max.timeout.ms default: 15 minutes. */
export const MAX_TRANSACTION_TIMEOUT_MS = 900_000;

/** The coordinator epoch written into markers. */
export const COORDINATOR_EPOCH = 0;

/** How often the core looks for transactions open past their timeout. */
export const TRANSACTION_SWEEP_INTERVAL_MS = 1_000;

export interface StoredTransaction {
  transactionalId: string;
  producerId: number;
  producerEpoch: number;
  timeoutMs: number;
  state: KafkaTxnState;
  /** -1 when no transaction is open. */
  startedAt: number;
  /**
   * The epoch before the last bump a producer asked for with its own id and
   * epoch (KIP-360), so a retry of that InitProducerId gets the same answer;
   * -1 after any other InitProducerId (Kafka's lastProducerEpoch).
   */
  lastProducerEpoch: number;
}

/** Checks the identity fields every transactional call carries. */
export function checkTxnProducer(req: TxnProducer): TxnProducer {
  if (typeof req?.transactionalId !== 'string' || req.transactionalId.length === 0) {
    throw new CoreError('invalid_argument', 'transactionalId must be a non-empty string.');
  }
  return {
    transactionalId: req.transactionalId,
    producerId: requireInteger(req.producerId, 'producerId', 0),
    producerEpoch: requireInteger(req.producerEpoch, 'producerEpoch', 0, MAX_PRODUCER_EPOCH),
  };
}

export function checkTxnGroup(group: unknown): string {
  return validateGroupName(group);
}

export function checkTimeout(timeoutMs: number, maxTimeoutMs = MAX_TRANSACTION_TIMEOUT_MS): number {
  if (timeoutMs > maxTimeoutMs || timeoutMs <= 0) {
    throw new CoreError(
      'invalid_transaction_timeout',
      `transaction.timeout.ms ${timeoutMs} is outside 1 to ${maxTimeoutMs} ms (transaction.max.timeout.ms); set the producer's transaction.timeout.ms within it.`,
    );
  }
  return timeoutMs;
}

/**
 * That the caller is the transactional id's current producer: another
 * producer id is INVALID_PRODUCER_ID_MAPPING, another epoch PRODUCER_FENCED
 * (an older instance that a newer InitProducerId took over from).
 */
export function requireCurrentProducer(txn: StoredTransaction | null, who: TxnProducer): StoredTransaction {
  if (!txn || txn.state === 'Dead') {
    throw new CoreError('invalid_producer_id_mapping', `Transactional id "${who.transactionalId}" has no producer; the producer must call InitProducerId first.`);
  }
  if (txn.producerId !== who.producerId) {
    throw new CoreError(
      'invalid_producer_id_mapping',
      `Transactional id "${who.transactionalId}" belongs to producer id ${txn.producerId}, not ${who.producerId}; the producer must call InitProducerId again.`,
    );
  }
  if (txn.producerEpoch !== who.producerEpoch) {
    throw new CoreError(
      'producer_fenced',
      `Producer ${who.producerId} epoch ${who.producerEpoch} of transactional id "${who.transactionalId}" is fenced: epoch ${txn.producerEpoch} has taken over. Close this producer.`,
    );
  }
  return txn;
}

export type InitDecision =
  | { kind: 'new' }
  | { kind: 'bump'; producerId: number; producerEpoch: number; lastProducerEpoch: number }
  /** A retry of an InitProducerId already answered: the same identity again. */
  | { kind: 'same'; producerId: number; producerEpoch: number };

/**
 * InitProducerId for a transactional id. Without a producer id (-1) the
 * epoch is bumped, fencing any other instance. With one (KIP-360, a producer
 * bumping its own epoch after an abortable error) it must be the current
 * identity, or the one such a bump started from (a retry of it). Any other
 * is fenced: an older instance never gets the current epoch.
 */
export function decideTransactionalInit(existing: StoredTransaction | null, req: InitProducerRequest): InitDecision {
  if (!existing) {
    if (req.producerId >= 0) {
      throw new CoreError('invalid_producer_id_mapping', `Transactional id "${req.transactionalId}" has no producer ${req.producerId}; call InitProducerId without a producer id.`);
    }
    return { kind: 'new' };
  }
  if (req.producerId >= 0) {
    if (req.producerId === existing.producerId && existing.lastProducerEpoch >= 0 && req.producerEpoch === existing.lastProducerEpoch) {
      return { kind: 'same', producerId: existing.producerId, producerEpoch: existing.producerEpoch };
    }
    if (req.producerId !== existing.producerId || req.producerEpoch !== existing.producerEpoch) {
      throw new CoreError(
        'producer_fenced',
        `Producer ${req.producerId} epoch ${req.producerEpoch} of transactional id "${req.transactionalId}" is fenced: producer ${existing.producerId} epoch ${existing.producerEpoch} holds it now.`,
      );
    }
  }
  if (existing.producerEpoch + 1 >= MAX_PRODUCER_EPOCH) return { kind: 'new' };
  return { kind: 'bump', producerId: existing.producerId, producerEpoch: existing.producerEpoch + 1, lastProducerEpoch: req.producerId >= 0 ? existing.producerEpoch : -1 };
}

export function isOpen(txn: StoredTransaction): boolean {
  return txn.state === 'Ongoing';
}

/** AddPartitionsToTxn, AddOffsetsToTxn and TxnOffsetCommit need a transaction that is not ending. */
export function requireAddable(txn: StoredTransaction): void {
  if (txn.state === 'PrepareCommit' || txn.state === 'PrepareAbort' || txn.state === 'PrepareEpochFence') {
    throw new CoreError('invalid_txn_state', `Transaction "${txn.transactionalId}" is ending (${txn.state}); wait for EndTxn to finish.`);
  }
}

/**
 * EndTxn: commit or abort the open transaction. Ending an already ended one
 * the same way again is a retry and succeeds; the other way round, or with
 * nothing open, is INVALID_TXN_STATE.
 */
export function decideEnd(txn: StoredTransaction, commit: boolean): 'end' | 'retry' {
  if (txn.state === 'Ongoing') return 'end';
  if ((commit && txn.state === 'CompleteCommit') || (!commit && txn.state === 'CompleteAbort')) return 'retry';
  throw new CoreError(
    'invalid_txn_state',
    `Transactional id "${txn.transactionalId}" has no open transaction to ${commit ? 'commit' : 'abort'} (its state is ${txn.state}).`,
  );
}

export type BumpingEndDecision =
  /** A retry of an end already done: the identity it answered. */
  | { kind: 'retry' }
  /** End (markers only when a transaction is open) and move to the next epoch, or to a new producer id when the epoch is spent. */
  | { kind: 'end'; markers: boolean; nextEpoch: number | 'new_producer' };

/**
 * EndTxn v5+ (KIP-890 part 2, transaction.version 2): every end bumps the
 * epoch, the markers carry the new one and the producer goes on with it, so
 * a late batch of the ended transaction is fenced. A retry comes with the
 * epoch before the bump (kept as lastProducerEpoch) and gets the same
 * answer. An abort with nothing open still bumps (the producer may have sent
 * batches that never reached a partition); a commit with nothing open, or
 * a retry the other way round, is INVALID_TXN_STATE.
 */
export function decideBumpingEnd(txn: StoredTransaction | null, req: TxnProducer & { commit: boolean }): BumpingEndDecision {
  if (txn && txn.producerId === req.producerId && txn.lastProducerEpoch >= 0 && req.producerEpoch === txn.lastProducerEpoch && txn.producerEpoch === req.producerEpoch + 1) {
    if (txn.state === endedState(req.commit)) return { kind: 'retry' };
    throw new CoreError(
      'invalid_txn_state',
      `Transactional id "${txn.transactionalId}" ended its last transaction the other way (${txn.state}); it cannot be ${req.commit ? 'committed' : 'aborted'} now.`,
    );
  }
  const current = requireCurrentProducer(txn, req);
  const nextEpoch = current.producerEpoch + 1 >= MAX_PRODUCER_EPOCH ? 'new_producer' : current.producerEpoch + 1;
  if (current.state === 'Ongoing') return { kind: 'end', markers: true, nextEpoch };
  if (!req.commit) return { kind: 'end', markers: false, nextEpoch };
  throw new CoreError(
    'invalid_txn_state',
    `Transactional id "${current.transactionalId}" has no open transaction to commit (its state is ${current.state}).`,
  );
}

export function endedState(commit: boolean): KafkaTxnState {
  return commit ? 'CompleteCommit' : 'CompleteAbort';
}

/** Whether an open transaction has outlived its timeout. */
export function hasExpired(txn: StoredTransaction, now: number): boolean {
  return txn.state === 'Ongoing' && txn.startedAt >= 0 && now - txn.startedAt > txn.timeoutMs;
}

/** A commit or abort marker for one partition, stored like any batch at `baseOffset`. */
export function transactionMarker(commit: boolean, producerId: number, producerEpoch: number, baseOffset: number, now: number): Buffer {
  return buildControlBatch({
    type: commit ? ControlRecordType.Commit : ControlRecordType.Abort,
    producerId,
    producerEpoch,
    coordinatorEpoch: COORDINATOR_EPOCH,
    timestamp: now,
    baseOffset,
    partitionLeaderEpoch: 0,
  });
}

/** What the append check needs to know of a producer's transaction. */
export interface ProducerTransaction {
  transactionalId: string;
  producerEpoch: number;
  state: KafkaTxnState;
  /** Whether the partition being appended to is in the open transaction. */
  hasPartition: boolean;
}

/**
 * Kafka 3.6+'s check of transactional batches at Produce: the producer's
 * epoch must be its transactional id's current one (an older one is
 * INVALID_PRODUCER_EPOCH: fenced), and the partition must have been added to
 * its open transaction (else INVALID_TXN_STATE).
 */
export function checkTransactionalBatches(
  batches: readonly { isTransactional: boolean; producerId: number; producerEpoch: number }[],
  transactionOf: (producerId: number) => ProducerTransaction | null,
): { error: 'invalid_producer_epoch' | 'invalid_txn_state'; message: string } | null {
  for (const batch of batches) {
    if (!batch.isTransactional) continue;
    const txn = transactionOf(batch.producerId);
    if (!txn) {
      return { error: 'invalid_txn_state', message: `Producer ${batch.producerId} sent a transactional batch but holds no transactional id; call InitProducerId with one first.` };
    }
    if (batch.producerEpoch < txn.producerEpoch) {
      return {
        error: 'invalid_producer_epoch',
        message: `Producer ${batch.producerId} epoch ${batch.producerEpoch} of transactional id "${txn.transactionalId}" is fenced: epoch ${txn.producerEpoch} has taken over.`,
      };
    }
    if (batch.producerEpoch > txn.producerEpoch || txn.state !== 'Ongoing' || !txn.hasPartition) {
      return {
        error: 'invalid_txn_state',
        message: `Transactional id "${txn.transactionalId}" has not added this partition to an open transaction; call AddPartitionsToTxn before producing to it.`,
      };
    }
  }
  return null;
}

/** The transactional producers among an append's batches, by producer id. */
export function transactionalProducers(batches: readonly { isTransactional: boolean; producerId: number }[]): number[] {
  return [...new Set(batches.filter((b) => b.isTransactional).map((b) => b.producerId))];
}

/** An aborted transaction on one partition: its producer, first offset and the offset of its abort marker. */
export interface AbortedRange extends AbortedTransaction {
  lastOffset: number;
}

/**
 * The aborted transactions a read_committed Fetch of [fetchOffset, upTo)
 * must be told about: those whose records may lie in that range.
 */
export function abortedInRange(aborted: readonly AbortedRange[], fetchOffset: number, upTo: number): AbortedTransaction[] {
  return aborted.filter((a) => a.lastOffset >= fetchOffset && a.firstOffset < upTo).map((a) => ({ producerId: a.producerId, firstOffset: a.firstOffset }));
}

/** Transaction markers and aborted records: what a native reader must pass over. */
export interface SkippedBatch {
  /** A control batch (a marker): no record of it is a message. */
  control: boolean;
  /** A transactional batch of an aborted transaction. */
  aborted: boolean;
}

/** Reads the batch header's transactional and control flags and producer id. */
export function transactionalFlags(bytes: Buffer): { transactional: boolean; control: boolean; producerId: number } {
  const attributes = bytes.readInt16BE(BatchPos.Attributes);
  return {
    transactional: (attributes & BatchAttr.Transactional) !== 0,
    control: (attributes & BatchAttr.Control) !== 0,
    producerId: Number(bytes.readBigInt64BE(BatchPos.ProducerId)),
  };
}

/** Whether a stored batch at `baseOffset` belongs to an aborted transaction of its producer. */
export function isAbortedBatch(aborted: readonly AbortedRange[], producerId: number, baseOffset: number): boolean {
  return aborted.some((a) => a.producerId === producerId && a.firstOffset <= baseOffset && baseOffset < a.lastOffset);
}

export function checkTransactionStates(states: unknown): KafkaTxnState[] {
  const known: KafkaTxnState[] = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'];
  return requireArray<string>(states ?? [], 'states').map((s) => {
    if (!known.includes(s as KafkaTxnState)) throw new CoreError('invalid_argument', `Unknown transaction state "${s}"; use one of ${known.join(', ')}.`);
    return s as KafkaTxnState;
  });
}

import { decodeControlRecord, ControlRecordType } from '../../../protocol/records/record-batch.js';
import { readBatchRecords } from '../../../protocol/records/record-walk.js';
import type { InflationBudget } from '../../../protocol/records/compression.js';
import type { ValidBatch } from '../../../protocol/records/invalid-batch.js';
import type { AbortedRange } from './kafka-transactions.js';

/**
 * Transactions in copied batches (appendAt, the migration bridge reading the
 * source read_uncommitted): the source's transactional data batches and its
 * COMMIT and ABORT markers are stored as they came, and the partition's
 * transaction state follows them as a Kafka follower's follows its leader's
 * log: a producer's first transactional batch after its last marker opens a
 * copied transaction there (it holds the last stable offset), an ABORT marker
 * enters the range from that first batch to the marker in the aborted index
 * (what Fetch's aborted_transactions and read_committed use), and either
 * marker closes it. Decided here for every engine; the engines store the
 * outcome (copiedTransactionState).
 */

/** What a copied batch means for transactions. */
export type CopiedTxnRole =
  | { kind: 'data'; producerId: number }
  | { kind: 'marker'; producerId: number; commit: boolean }
  /** A control batch of another type (not a transaction marker): stored, no effect. */
  | { kind: 'other-control' };

/**
 * The role of a checked copied batch, or why it is refused: a control batch
 * must be transactional, carry a producer id and hold exactly one record.
 */
export function copiedTxnRole(records: Buffer, batch: ValidBatch, budget: InflationBudget): CopiedTxnRole | null | string {
  const producerId = Number(batch.header.producerId);
  if (!batch.isControl) return batch.isTransactional && producerId >= 0 ? { kind: 'data', producerId } : null;
  if (!batch.isTransactional || producerId < 0) return 'is a control batch without a transactional producer id';
  if (batch.header.recordCount !== 1) return `is a control batch of ${batch.header.recordCount} records, not one`;
  const record = readBatchRecords(records, batch, budget, false, true).records![0]!;
  const control = decodeControlRecord(record);
  if (control.type === ControlRecordType.Abort || control.type === ControlRecordType.Commit) {
    return { kind: 'marker', producerId, commit: control.type === ControlRecordType.Commit };
  }
  return { kind: 'other-control' };
}

/** A partition's copied transactions after a copy: per producer touched, its open transaction's first offset (null: none open), and the new aborted ranges. */
export interface CopiedTxnState {
  open: Map<number, number | null>;
  aborted: AbortedRange[];
}

/**
 * Walks the copied batches in offset order from the stored open copied
 * transactions (`openFirst`, by producer id), as the source's log was
 * written.
 */
export function copiedTransactionState(batches: readonly { baseOffset: number; txn?: CopiedTxnRole | null }[], openFirst: (producerId: number) => number | undefined): CopiedTxnState {
  const open = new Map<number, number | null>();
  const aborted: AbortedRange[] = [];
  const current = (producerId: number): number | null => (open.has(producerId) ? open.get(producerId)! : (openFirst(producerId) ?? null));
  for (const b of batches) {
    const role = b.txn;
    if (!role || role.kind === 'other-control') continue;
    const first = current(role.producerId);
    if (role.kind === 'data') {
      if (first === null) open.set(role.producerId, b.baseOffset);
      continue;
    }
    if (!role.commit && first !== null) aborted.push({ producerId: role.producerId, firstOffset: first, lastOffset: b.baseOffset });
    open.set(role.producerId, null);
  }
  return { open, aborted };
}

/** The producers whose stored open copied transaction the copy needs (those with transactional batches in it). */
export function copiedTxnProducers(batches: readonly { txn?: CopiedTxnRole | null }[]): number[] {
  const ids = new Set<number>();
  for (const b of batches) if (b.txn && b.txn.kind !== 'other-control') ids.add(b.txn.producerId);
  return [...ids];
}

import { describe, expect, it } from 'vitest';
import { buildBatch, decodeBatch, decodeControlRecord, ControlRecordType } from '../../../protocol/records/record-batch.js';
import { CoreError } from '../../../src/core/errors.js';
import { MAX_PRODUCER_EPOCH } from '../../../src/core/rules/init-producer.js';
import {
  abortedInRange,
  checkTimeout,
  checkTransactionalBatches,
  checkTransactionStates,
  checkTxnProducer,
  decideBumpingEnd,
  decideEnd,
  decideTransactionalInit,
  hasExpired,
  isAbortedBatch,
  requireAddable,
  requireCurrentProducer,
  transactionalFlags,
  transactionalProducers,
  transactionMarker,
  type ProducerTransaction,
  type StoredTransaction,
} from '../../../src/core/rules/kafka-transactions.js';

const txn: StoredTransaction = { transactionalId: 'tx', producerId: 7, producerEpoch: 3, timeoutMs: 60_000, state: 'Ongoing', startedAt: 1_000, lastProducerEpoch: -1 };
const who = { transactionalId: 'tx', producerId: 7, producerEpoch: 3 };

/** The core error code a call throws, so each case reads as the Kafka error a client gets. */
function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof CoreError) return e.code;
    throw e;
  }
  return 'none';
}

describe('Kafka transaction coordinator rules', () => {
  it('checks the identity every transactional call carries', () => {
    expect(checkTxnProducer(who)).toEqual(who);
    expect(() => checkTxnProducer({ ...who, transactionalId: '' })).toThrow(/transactionalId must be a non-empty string/);
    expect(() => checkTxnProducer({ ...who, producerEpoch: 32_768 })).toThrow(/producerEpoch/);
    expect(() => checkTxnProducer({ ...who, producerId: -1 })).toThrow(/producerId/);
  });

  it('takes transaction timeouts from 1 ms to transaction.max.timeout.ms (15 min), else INVALID_TRANSACTION_TIMEOUT', () => {
    expect(checkTimeout(1)).toBe(1);
    expect(checkTimeout(900_000)).toBe(900_000);
    expect(codeOf(() => checkTimeout(0))).toBe('invalid_transaction_timeout');
    expect(codeOf(() => checkTimeout(900_001))).toBe('invalid_transaction_timeout');
    expect(codeOf(() => checkTimeout(5_000, 1_000))).toBe('invalid_transaction_timeout');
  });

  it('tells a fenced instance (older epoch) from an unknown producer id', () => {
    expect(requireCurrentProducer(txn, who)).toBe(txn);
    expect(codeOf(() => requireCurrentProducer(null, who))).toBe('invalid_producer_id_mapping');
    expect(codeOf(() => requireCurrentProducer({ ...txn, state: 'Dead' }, who))).toBe('invalid_producer_id_mapping');
    expect(codeOf(() => requireCurrentProducer(txn, { ...who, producerId: 8 }))).toBe('invalid_producer_id_mapping');
    expect(codeOf(() => requireCurrentProducer(txn, { ...who, producerEpoch: 2 }))).toBe('producer_fenced');
  });

  it('InitProducerId: new id, epoch bump fencing the old instance, KIP-360 own bump and its retry, and a new producer id at the epoch ceiling', () => {
    const fresh = { transactionalId: 'tx', transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 };
    expect(decideTransactionalInit(null, fresh)).toEqual({ kind: 'new' });
    expect(codeOf(() => decideTransactionalInit(null, { ...fresh, producerId: 7, producerEpoch: 3 }))).toBe('invalid_producer_id_mapping');
    expect(decideTransactionalInit(txn, fresh)).toEqual({ kind: 'bump', producerId: 7, producerEpoch: 4, lastProducerEpoch: -1 });
    const ownBump = decideTransactionalInit(txn, { ...fresh, producerId: 7, producerEpoch: 3 });
    expect(ownBump).toEqual({ kind: 'bump', producerId: 7, producerEpoch: 4, lastProducerEpoch: 3 });
    // The retry of that bump, arriving after it was stored, gets the same answer.
    expect(decideTransactionalInit({ ...txn, producerEpoch: 4, lastProducerEpoch: 3 }, { ...fresh, producerId: 7, producerEpoch: 3 })).toEqual({ kind: 'same', producerId: 7, producerEpoch: 4 });
    expect(codeOf(() => decideTransactionalInit(txn, { ...fresh, producerId: 7, producerEpoch: 2 }))).toBe('producer_fenced');
    expect(codeOf(() => decideTransactionalInit(txn, { ...fresh, producerId: 9, producerEpoch: 3 }))).toBe('producer_fenced');
    expect(decideTransactionalInit({ ...txn, producerEpoch: 32_766 }, fresh)).toEqual({ kind: 'new' });
  });

  it('refuses additions while a transaction is ending, and ends one only once each way (a repeat is a retry)', () => {
    for (const state of ['PrepareCommit', 'PrepareAbort', 'PrepareEpochFence'] as const) expect(codeOf(() => requireAddable({ ...txn, state }))).toBe('invalid_txn_state');
    for (const state of ['Empty', 'Ongoing', 'CompleteCommit', 'CompleteAbort'] as const) expect(codeOf(() => requireAddable({ ...txn, state }))).toBe('none');
    expect(decideEnd(txn, true)).toBe('end');
    expect(decideEnd({ ...txn, state: 'CompleteCommit' }, true)).toBe('retry');
    expect(decideEnd({ ...txn, state: 'CompleteAbort' }, false)).toBe('retry');
    expect(codeOf(() => decideEnd({ ...txn, state: 'CompleteCommit' }, false))).toBe('invalid_txn_state');
    expect(codeOf(() => decideEnd({ ...txn, state: 'Empty' }, true))).toBe('invalid_txn_state');
  });

  it('expires an open transaction once it has been open longer than its timeout, and nothing else', () => {
    expect(hasExpired(txn, 61_000)).toBe(false);
    expect(hasExpired(txn, 61_001)).toBe(true);
    expect(hasExpired({ ...txn, state: 'CompleteCommit' }, 1e12)).toBe(false);
    expect(hasExpired({ ...txn, startedAt: -1 }, 1e12)).toBe(false);
  });

  it('writes markers as Kafka does: a transactional control batch of one record naming commit or abort', () => {
    for (const commit of [true, false]) {
      const marker = transactionMarker(commit, 7, 3, 40, 5_000);
      const batch = decodeBatch(marker);
      expect([batch.isControl, batch.isTransactional, batch.header.producerId, batch.header.producerEpoch, batch.header.baseOffset]).toEqual([true, true, 7n, 3, 40n]);
      expect(decodeControlRecord(batch.records[0]!).type).toBe(commit ? ControlRecordType.Commit : ControlRecordType.Abort);
      expect(transactionalFlags(marker)).toEqual({ transactional: true, control: true, producerId: 7 });
    }
  });

  it('checks transactional batches at Produce: fenced epoch, partition not added, no transactional id; plain batches pass', () => {
    const open: ProducerTransaction = { transactionalId: 'tx', producerEpoch: 3, state: 'Ongoing', hasPartition: true };
    const batch = { isTransactional: true, producerId: 7, producerEpoch: 3 };
    const check = (t: ProducerTransaction | null, b = batch) => checkTransactionalBatches([b], () => t)?.error ?? null;
    expect(check(open)).toBeNull();
    expect(check(open, { ...batch, producerEpoch: 2 })).toBe('invalid_producer_epoch');
    expect(check({ ...open, hasPartition: false })).toBe('invalid_txn_state');
    expect(check({ ...open, state: 'CompleteCommit' })).toBe('invalid_txn_state');
    expect(check(null)).toBe('invalid_txn_state');
    expect(check(null, { ...batch, isTransactional: false })).toBeNull();
    expect(transactionalProducers([batch, { ...batch, producerId: 9 }, batch, { ...batch, producerId: 4, isTransactional: false }])).toEqual([7, 9]);
  });

  it('tells a read_committed fetch the aborted transactions whose records may lie in its range, and marks their batches', () => {
    const aborted = [{ producerId: 7, firstOffset: 10, lastOffset: 20 }, { producerId: 8, firstOffset: 30, lastOffset: 35 }];
    expect(abortedInRange(aborted, 0, 10)).toEqual([]);
    expect(abortedInRange(aborted, 0, 11)).toEqual([{ producerId: 7, firstOffset: 10 }]);
    expect(abortedInRange(aborted, 20, 40)).toEqual([{ producerId: 7, firstOffset: 10 }, { producerId: 8, firstOffset: 30 }]);
    expect(abortedInRange(aborted, 21, 40)).toEqual([{ producerId: 8, firstOffset: 30 }]);
    expect([isAbortedBatch(aborted, 7, 10), isAbortedBatch(aborted, 7, 20), isAbortedBatch(aborted, 8, 10), isAbortedBatch(aborted, 7, 9)]).toEqual([true, false, false, false]);
    expect(transactionalFlags(buildBatch({ records: [{ value: 'v' }] }))).toEqual({ transactional: false, control: false, producerId: -1 });
  });

  it('lists only known states as a filter', () => {
    expect(checkTransactionStates(undefined)).toEqual([]);
    expect(checkTransactionStates(['Ongoing', 'CompleteAbort'])).toEqual(['Ongoing', 'CompleteAbort']);
    expect(() => checkTransactionStates(['Open'])).toThrow(/Unknown transaction state "Open"; use one of Empty, Ongoing/);
  });
});

describe('EndTxn v5 (transaction version 2): every end bumps the epoch', () => {
  const ended = (state: StoredTransaction['state']): StoredTransaction => ({ ...txn, producerEpoch: 4, lastProducerEpoch: 3, state });

  it('ends an open transaction with markers at the next epoch, or moves to a new producer id when the epoch is spent', () => {
    expect(decideBumpingEnd(txn, { ...who, commit: true })).toEqual({ kind: 'end', markers: true, nextEpoch: 4 });
    const spent = { ...txn, producerEpoch: MAX_PRODUCER_EPOCH - 1 };
    expect(decideBumpingEnd(spent, { ...who, producerEpoch: MAX_PRODUCER_EPOCH - 1, commit: false })).toEqual({ kind: 'end', markers: true, nextEpoch: 'new_producer' });
  });

  it('takes a retry with the epoch before the bump, refuses it the other way round, and fences any older epoch', () => {
    expect(decideBumpingEnd(ended('CompleteCommit'), { ...who, commit: true })).toEqual({ kind: 'retry' });
    expect(codeOf(() => decideBumpingEnd(ended('CompleteCommit'), { ...who, commit: false }))).toBe('invalid_txn_state');
    expect(codeOf(() => decideBumpingEnd(ended('CompleteCommit'), { ...who, producerEpoch: 2, commit: true }))).toBe('producer_fenced');
  });

  it('bumps on an abort with nothing open (no markers) and refuses a commit with nothing open', () => {
    const idle = { ...txn, state: 'CompleteCommit' as const };
    expect(decideBumpingEnd(idle, { ...who, commit: false })).toEqual({ kind: 'end', markers: false, nextEpoch: 4 });
    expect(codeOf(() => decideBumpingEnd({ ...txn, state: 'Empty' }, { ...who, commit: true }))).toBe('invalid_txn_state');
  });
});

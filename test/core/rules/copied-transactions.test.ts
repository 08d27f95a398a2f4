import { describe, expect, it } from 'vitest';
import { copiedTransactionState, type CopiedTxnRole } from '../../../src/core/rules/copied-transactions.js';

/** The transaction state copied batches leave (appendAt of a read_uncommitted copy), decided once for every engine. */
describe('copiedTransactionState', () => {
  const data = (producerId: number): CopiedTxnRole => ({ kind: 'data', producerId });
  const end = (producerId: number, commit: boolean): CopiedTxnRole => ({ kind: 'marker', producerId, commit });

  it('opens at a producer first transactional batch, closes at its marker, and enters an abort from that batch to the marker', () => {
    const state = copiedTransactionState(
      [{ baseOffset: 0, txn: data(1) }, { baseOffset: 2, txn: data(2) }, { baseOffset: 3, txn: data(1) }, { baseOffset: 5, txn: end(1, false) }, { baseOffset: 6 }, { baseOffset: 7, txn: end(2, true) }, { baseOffset: 8, txn: data(1) }],
      () => undefined,
    );
    expect(state.aborted).toEqual([{ producerId: 1, firstOffset: 0, lastOffset: 5 }]);
    expect([...state.open]).toEqual([[1, 8], [2, null]]);
  });

  it('continues a transaction opened by an earlier copy, and a marker with nothing open enters no range', () => {
    const state = copiedTransactionState([{ baseOffset: 40, txn: data(1) }, { baseOffset: 41, txn: end(1, false) }, { baseOffset: 42, txn: end(3, false) }], (id) => (id === 1 ? 12 : undefined));
    expect(state.aborted).toEqual([{ producerId: 1, firstOffset: 12, lastOffset: 41 }]);
    expect([...state.open]).toEqual([[1, null], [3, null]]);
  });
});

import { describe, expect, it } from 'vitest';
import { buildBatch, buildControlBatch, ControlRecordType } from '../../../protocol/records/record-batch.js';
import { acknowledge, acquire, acquiredRanges, advanceStart, expireLocks, lag, type FailedSink, type SharePartitionState } from '../../../src/core/groups/share/partition-state.js';
import { batchSpans } from '../../../src/core/groups/share/spans.js';

/**
 * The share-partition rules (src/core/groups/share/partition-state.ts) and
 * the batch spans a fetch acquires from (spans.ts), without an engine: what a
 * member would see of them through ShareFetch and ShareAcknowledge.
 */
const limits = (owner: string, now = 1000, maxRecords = 100) => ({ owner, now, lockMs: 500, maxRecords, maxInFlight: 2000 });
const fresh = (): SharePartitionState => ({ startOffset: 0, records: [] });

describe('share-partition rules', () => {
  it('acquires whole spans in order, skipping control batches and filling gaps as archived', () => {
    const state = fresh();
    const got = acquire(state, [{ baseOffset: 0, lastOffset: 1, control: false }, { baseOffset: 2, lastOffset: 2, control: true }, { baseOffset: 5, lastOffset: 6, control: false }], limits('a'));
    expect(acquiredRanges(got)).toEqual([{ firstOffset: 0, lastOffset: 1, deliveryCount: 1 }, { firstOffset: 5, lastOffset: 6, deliveryCount: 1 }]);
    expect(state.records.map((r) => [r.offset, r.state])).toEqual([[0, 'acquired'], [1, 'acquired'], [2, 'archived'], [3, 'archived'], [4, 'archived'], [5, 'acquired'], [6, 'acquired']]);
  });

  it('stops at maxRecords and at the in-flight limit', () => {
    const state = fresh();
    expect(acquire(state, [{ baseOffset: 0, lastOffset: 9, control: false }], limits('a', 1000, 3)).map((r) => r.offset)).toEqual([0, 1, 2]);
    expect(acquire(state, [{ baseOffset: 0, lastOffset: 9, control: false }], { ...limits('b'), maxInFlight: 5 }).map((r) => r.offset)).toEqual([3, 4]);
  });

  it('a lock past its deadline gives the record back; at the delivery limit it is archived and reported failed', () => {
    const state = fresh();
    acquire(state, [{ baseOffset: 0, lastOffset: 1, control: false }], limits('a', 1000));
    const failed: FailedSink = [];
    expect(expireLocks(state, 1499, 2, failed)).toBe(false);
    expect(expireLocks(state, 1500, 2, failed)).toBe(true);
    expect(failed).toEqual([]);
    acquire(state, [{ baseOffset: 0, lastOffset: 1, control: false }], limits('b', 2000));
    expect(state.records.map((r) => r.deliveryCount)).toEqual([2, 2]);
    expireLocks(state, 2500, 2, failed);
    expect(failed).toEqual([{ offset: 0, deliveryCount: 2, reason: 'exhausted' }, { offset: 1, deliveryCount: 2, reason: 'exhausted' }]);
    advanceStart(state);
    expect(state).toEqual({ startOffset: 2, records: [] });
  });

  it('acknowledges only what the owner holds, one type per offset or one for all; RENEW extends the lock', () => {
    const state = fresh();
    acquire(state, [{ baseOffset: 0, lastOffset: 3, control: false }], limits('a'));
    const ack = { owner: 'a', now: 1100, lockMs: 500, deliveryLimit: 5 };
    expect(acknowledge(state, { ...ack, owner: 'b', firstOffset: 0, lastOffset: 0, types: [1] })).toBe(false);
    expect(acknowledge(state, { ...ack, firstOffset: 0, lastOffset: 1, types: [1, 2, 3] })).toBe(false);
    const failed: FailedSink = [];
    expect(acknowledge(state, { ...ack, firstOffset: 0, lastOffset: 2, types: [1, 2, 3], failed })).toBe(true);
    expect(acknowledge(state, { ...ack, firstOffset: 3, lastOffset: 3, types: [4] })).toBe(true);
    expect(state.records.map((r) => [r.offset, r.state, r.deadline])).toEqual([[0, 'acknowledged', 0], [1, 'available', 0], [2, 'archived', 0], [3, 'acquired', 1600]]);
    expect(failed).toEqual([{ offset: 2, deliveryCount: 1, reason: 'rejected' }]);
    advanceStart(state);
    expect(state.startOffset).toBe(1);
    expect(lag(state, 4)).toBe(2);
  });
});

describe('batch spans', () => {
  const producerId = 7;
  const txn = (baseOffset: number) => buildBatch({ records: [{ value: 'x' }, { value: 'y' }], baseOffset, producerId, producerEpoch: 0, baseSequence: 0, isTransactional: true });
  const marker = (baseOffset: number, type: ControlRecordType) => buildControlBatch({ type, producerId, producerEpoch: 0, coordinatorEpoch: 0, baseOffset });

  it('read_uncommitted: only control batches hold nothing to deliver', () => {
    const spans = batchSpans([txn(0), marker(2, ControlRecordType.Abort)], null);
    expect(spans).toEqual([{ baseOffset: 0, lastOffset: 1, control: false }, { baseOffset: 2, lastOffset: 2, control: true }]);
  });

  it('read_committed: an aborted transaction\'s batches are skipped up to its abort marker, a later committed one is not', () => {
    const spans = batchSpans([txn(0), marker(2, ControlRecordType.Abort), txn(3), marker(5, ControlRecordType.Commit)], [{ producerId, firstOffset: 0 }]);
    expect(spans.map((s) => [s.baseOffset, s.control])).toEqual([[0, true], [2, true], [3, false], [5, true]]);
  });
});

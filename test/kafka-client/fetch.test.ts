/**
 * The read_committed view of fetched batches (committedBatches): which of the
 * source's batches the bridge copies, as Kafka's consumers decide it from the
 * Fetch answer's aborted transactions and the control batches, each kept as
 * the exact bytes that came.
 */
import { describe, expect, it } from 'vitest';
import { buildBatch, buildControlBatch, ControlRecordType } from '../../protocol/records/record-batch.js';
import { committedBatches, storedBatches } from '../../src/kafka-client/fetch.js';

const data = (baseOffset: number, count: number, producer: { producerId: number; transactional: boolean } | null = null) =>
  buildBatch({
    baseOffset,
    records: Array.from({ length: count }, (_, i) => ({ value: `v${baseOffset + i}` })),
    ...(producer ? { producerId: producer.producerId, producerEpoch: 0, baseSequence: 0, isTransactional: producer.transactional } : {}),
  });
const marker = (baseOffset: number, producerId: number, type: ControlRecordType) => buildControlBatch({ type, producerId, producerEpoch: 0, coordinatorEpoch: 0, baseOffset });

describe('committedBatches', () => {
  // Producer 7's transaction (offsets 0-1) aborts at 4; producer 8's (2-3) commits at 5; then plain records 6-7.
  const batches = [data(0, 2, { producerId: 7, transactional: true }), data(2, 2, { producerId: 8, transactional: true }), marker(4, 7, ControlRecordType.Abort), marker(5, 8, ControlRecordType.Commit), data(6, 2)];
  const records = Buffer.concat(batches);
  const aborted = [{ producerId: 7n, firstOffset: 0 }];

  it('keeps committed and plain batches byte for byte, and skips aborted data and markers, moving past them', () => {
    const view = committedBatches(records, aborted, 0);
    expect(view.batches.map((b) => [b.baseOffset, b.nextOffset, b.recordCount])).toEqual([[2, 4, 2], [6, 8, 2]]);
    expect(view.batches[0]!.bytes.equals(batches[1]!)).toBe(true);
    expect(view.batches[1]!.bytes.equals(batches[4]!)).toBe(true);
    expect(view.next).toBe(8);
    expect(view.straddling).toBeNull();
  });

  it('leaves a partial trailing batch for the next fetch, and sets apart a batch that starts before the position', () => {
    const cut = committedBatches(records.subarray(0, records.length - 10), aborted, 0);
    expect(cut.next).toBe(6);
    expect(cut.batches.map((b) => b.baseOffset)).toEqual([2]);
    const inside = committedBatches(records, aborted, 7);
    expect(inside.batches).toEqual([]);
    expect(inside.straddling?.baseOffset).toBe(6);
    expect(inside.next).toBe(8);
  });

  it('without aborted transactions (read_uncommitted, or none aborted) keeps every data batch', () => {
    expect(committedBatches(records, [], 0).batches.map((b) => b.baseOffset)).toEqual([0, 2, 6]);
  });

  it('storedBatches (the bridge reads read_uncommitted) keeps every batch as stored, aborted data and markers too', () => {
    const view = storedBatches(records, 1);
    expect(view.batches.map((b) => [b.baseOffset, b.nextOffset, b.recordCount])).toEqual([[2, 4, 2], [4, 5, 1], [5, 6, 1], [6, 8, 2]]);
    expect(view.batches.every((b, i) => b.bytes.equals(batches[i + 1]!))).toBe(true);
    expect(view.straddling?.baseOffset).toBe(0);
    expect(view.next).toBe(8);
  });
});

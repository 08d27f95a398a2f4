import { describe, expect, it } from 'vitest';
import { buildBatch, TimestampType } from '../../../protocol/records/record-batch.js';
import { recordAtOrAfter } from '../../../src/core/rules/timestamps.js';

const read = { where: 'orders/0', maxBytes: 1 << 20 };

function batchAt(baseOffset: number, timestamps: number[], timestampType: TimestampType = TimestampType.CreateTime): Buffer {
  const b = buildBatch({ timestampType, records: timestamps.map((timestamp, i) => ({ key: null, value: `v${i}`, timestamp })) });
  b.writeBigInt64BE(BigInt(baseOffset), 0);
  return b;
}

describe('ListOffsets by time inside one stored batch', () => {
  it('answers the first record at or after the time, from the fetch offset on', () => {
    const batch = batchAt(100, [1_000, 3_000, 2_000, 5_000]);
    expect(recordAtOrAfter(batch, 2_500, 0, read)).toEqual({ offset: 101, timestamp: 3_000 });
    expect(recordAtOrAfter(batch, 1_500, 0, read)).toEqual({ offset: 101, timestamp: 3_000 });
    expect(recordAtOrAfter(batch, 1_500, 102, read)).toEqual({ offset: 102, timestamp: 2_000 });
    expect(recordAtOrAfter(batch, 6_000, 0, read)).toBeNull();
  });

  it('reads a LogAppendTime batch as all of its records at the batch\'s time', () => {
    const batch = batchAt(40, [1_000, 2_000], TimestampType.LogAppendTime);
    const maxTimestamp = Number(batch.readBigInt64BE(35));
    expect(recordAtOrAfter(batch, maxTimestamp, 41, read)).toEqual({ offset: 41, timestamp: maxTimestamp });
    expect(recordAtOrAfter(batch, maxTimestamp + 1, 0, read)).toBeNull();
  });

  it('answers a batch it cannot read with corrupt_batch naming the offset and the partition', () => {
    // The header of a batch at offset 7 followed by two bytes where its records should be.
    const damaged = Buffer.concat([batchAt(7, [1_000]).subarray(0, 61), Buffer.from([0xff, 0xff])]);
    damaged.writeInt32BE(damaged.length - 12, 8);
    expect(() => recordAtOrAfter(damaged, 0, 0, read)).toThrow(/stored batch at offset 7 of orders\/0 cannot be read/);
  });
});

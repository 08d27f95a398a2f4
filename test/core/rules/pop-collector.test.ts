/**
 * How a native pop walks stored batches (src/core/rules/native-records.ts
 * PopCollector), the part both engines share: a batch nobody can decode is
 * passed over when it comes first and ends the pop when it comes after
 * messages, and a stored batch that inflates past the read limit counts as
 * unreadable rather than costing the process its memory.
 */
import { describe, expect, it } from 'vitest';
import { setBaseOffset } from '../../../protocol/records/batch-header.js';
import { CompressionCodec } from '../../../protocol/records/compression.js';
import { crc32c } from '../../../protocol/records/crc32c.js';
import { buildBatch } from '../../../protocol/records/record-batch.js';
import { PopCollector, type StoredBatchRef } from '../../../src/core/rules/native-records.js';

const where = { queue: 'q', queueId: '018f0000-0000-7000-8000-000000000000', partition: '0', partitionIndex: 0 };
const MIB = 1024 * 1024;

/** A stored batch at `baseOffset` holding one record per value. */
function stored(baseOffset: number, values: string[], compression: CompressionCodec = CompressionCodec.None): StoredBatchRef {
  const bytes = buildBatch({ compression, records: values.map((value) => ({ value })) });
  setBaseOffset(bytes, 0, baseOffset);
  return { nextOffset: baseOffset + values.length, bytes };
}

/** The same batch with its records garbled under a CRC that holds, as a version checking only the CRC stored it. */
function garbled(batch: StoredBatchRef): StoredBatchRef {
  const bytes = Buffer.from(batch.bytes);
  bytes.fill(0xc7, 61);
  bytes.writeUInt32BE(crc32c(bytes.subarray(21)), 17);
  return { nextOffset: batch.nextOffset, bytes };
}

function collect(position: number, batches: StoredBatchRef[], limit = 100, maxBytes = 16 * MIB): PopCollector {
  const collector = new PopCollector(position, limit, where, maxBytes);
  for (const b of batches) if (!collector.take(b)) break;
  return collector;
}

describe('a pop over stored batches', () => {
  const log = [stored(0, ['a', 'b']), garbled(stored(2, ['x', 'y', 'z'])), stored(5, ['c'])];

  it('delivers the readable records before an unreadable batch and stops there, reporting nothing yet', () => {
    const c = collect(0, log);
    expect(c.messages.map((m) => [m.offset, m.payload])).toEqual([[0, 'a'], [1, 'b']]);
    expect(c.unreadable).toEqual([]);
    expect(c.position).toBe(0);
  });

  it('passes over an unreadable batch it meets first: reports its offsets and why, moves the position, delivers what follows', () => {
    const c = collect(2, log.slice(1));
    expect(c.unreadable).toEqual([{ partition: '0', fromOffset: 2, toOffset: 5, reason: expect.stringMatching(/record 0/) }]);
    expect(c.position).toBe(5);
    expect(c.messages.map((m) => [m.offset, m.payload])).toEqual([[5, 'c']]);
  });

  it('reports only the unread part when the position lies inside the unreadable batch', () => {
    expect(collect(3, log.slice(1)).unreadable[0]).toMatchObject({ fromOffset: 3, toOffset: 5 });
  });

  it('counts a stored batch that inflates past the read limit as unreadable, without inflating it all', () => {
    const bomb = stored(0, ['0'.repeat(2 * MIB)], CompressionCodec.Gzip);
    const c = collect(0, [bomb, stored(1, ['after'])], 100, MIB);
    expect(c.unreadable).toEqual([{ partition: '0', fromOffset: 0, toOffset: 1, reason: expect.stringMatching(/1048576-byte/) }]);
    expect(c.messages.map((m) => m.payload)).toEqual(['after']);
  });

  it('hands out keys and header values that do not pin the inflated batch they came from', () => {
    const bytes = buildBatch({ compression: CompressionCodec.Gzip, records: [{ key: 'k', value: 'v'.repeat(2 * MIB), headers: [{ key: 'h', value: 'x' }] }] });
    const [m] = collect(0, [{ nextOffset: 1, bytes }]).messages;
    expect(m!.key!.toString()).toBe('k');
    expect(m!.key!.buffer.byteLength).toBeLessThan(64 * 1024);
    expect(m!.headers[0]!.value!.buffer.byteLength).toBeLessThan(64 * 1024);
  });

  it('stops at the message limit', () => {
    expect(collect(0, [stored(0, ['a', 'b', 'c'])], 2).messages.map((m) => m.payload)).toEqual(['a', 'b']);
  });
});

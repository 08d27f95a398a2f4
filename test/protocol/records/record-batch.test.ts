import { describe, expect, it } from 'vitest';
import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import {
  BatchPos,
  CompressionCodec,
  ControlRecordType,
  InvalidBatchError,
  TimestampType,
  buildBatch,
  buildControlBatch,
  decodeBatch,
  decodeBatches,
  decodeControlRecord,
  readBatchHeader,
  setBaseOffset,
  validateBatch,
  validateBatches,
  type BatchRule,
  type RecordInput,
} from '../../../protocol/records/index.js';
import { int32, int64, resign, withInt32 } from './bytes.js';

const CODECS = [CompressionCodec.None, CompressionCodec.Gzip, CompressionCodec.Snappy, CompressionCodec.Lz4, CompressionCodec.Zstd];

const records: RecordInput[] = [
  { key: 'user-1', value: 'first', timestamp: 1_700_000_000_000n, headers: [{ key: 'trace', value: 'abc' }] },
  { key: null, value: null, timestamp: 1_699_999_999_000n },
  {
    key: Buffer.from([0, 1, 2]),
    value: 'x'.repeat(3000),
    timestamp: 1_700_000_005_000n,
    headers: [
      { key: 'dup', value: '1' },
      { key: 'dup', value: null },
      { key: 'ünï', value: Buffer.alloc(0) },
    ],
  },
];

function ruleOf(fn: () => unknown): BatchRule {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidBatchError);
    return (e as InvalidBatchError).rule;
  }
  throw new Error('expected the batch to be refused');
}

describe('buildBatch and decodeBatch', () => {
  it.each(CODECS)('round-trips records, headers and producer fields with codec %i', (compression) => {
    const batch = buildBatch({
      records,
      compression,
      producerId: 4242n,
      producerEpoch: 3,
      baseSequence: 17,
      isTransactional: true,
      partitionLeaderEpoch: 9,
    });
    const d = decodeBatch(batch);
    expect(d.end).toBe(batch.length);
    expect(d.compression).toBe(compression);
    expect(d.isTransactional).toBe(true);
    expect(d.isControl).toBe(false);
    expect(d.timestampType).toBe(TimestampType.CreateTime);
    expect(d.header).toMatchObject({
      baseOffset: 0n,
      partitionLeaderEpoch: 9,
      magic: 2,
      lastOffsetDelta: 2,
      baseTimestamp: 1_700_000_000_000n,
      maxTimestamp: 1_700_000_005_000n,
      producerId: 4242n,
      producerEpoch: 3,
      baseSequence: 17,
      recordCount: 3,
    });
    expect(d.records.map((r) => [r.offsetDelta, r.timestampDelta])).toEqual([
      [0, 0],
      [1, -1000],
      [2, 5000],
    ]);
    expect(d.records[0]!.key!.toString()).toBe('user-1');
    expect(d.records[0]!.value!.toString()).toBe('first');
    expect(d.records[1]!.key).toBeNull();
    expect(d.records[1]!.value).toBeNull();
    expect(d.records[2]!.key).toEqual(Buffer.from([0, 1, 2]));
    expect(d.records[2]!.value!.toString()).toBe('x'.repeat(3000));
    expect(d.records[2]!.headers).toEqual([
      { key: 'dup', value: Buffer.from('1') },
      { key: 'dup', value: null },
      { key: 'ünï', value: Buffer.alloc(0) },
    ]);
  });

  it('lays out an uncompressed batch byte for byte as the v2 format documents it', () => {
    const batch = buildBatch({ records: [{ key: 'k', value: 'v', timestamp: 5n }], baseOffset: 7n });
    const record = Buffer.from([
      0x10, // length 8 (zig-zag)
      0x00, // attributes
      0x00, // timestampDelta 0
      0x00, // offsetDelta 0
      0x02, 0x6b, // key "k"
      0x02, 0x76, // value "v"
      0x00, // no headers
    ]);
    const afterCrc = Buffer.concat([
      Buffer.from([0x00, 0x00]), // attributes
      int32(0), // lastOffsetDelta
      int64(5n), // baseTimestamp
      int64(5n), // maxTimestamp
      int64(-1n), // producerId
      Buffer.from([0xff, 0xff]), // producerEpoch -1
      int32(-1), // baseSequence
      int32(1), // record count
      record,
    ]);
    const expected = Buffer.concat([int64(7n), int32(afterCrc.length + 9), int32(-1), Buffer.from([2]), int32(0), afterCrc]);
    resign(expected);
    expect(batch.toString('hex')).toBe(expected.toString('hex'));
  });

  it('stamps LogAppendTime and an explicit maxTimestamp when asked', () => {
    const d = decodeBatch(buildBatch({ records, timestampType: TimestampType.LogAppendTime, maxTimestamp: 42n }));
    expect(d.timestampType).toBe(TimestampType.LogAppendTime);
    expect(d.header.maxTimestamp).toBe(42n);
  });

  it('refuses to build an empty batch', () => {
    expect(() => buildBatch({ records: [] })).toThrow(RangeError);
  });

  it.each(CODECS)('keeps the CRC valid when baseOffset is rewritten (codec %i)', (compression) => {
    const batch = buildBatch({ records, compression });
    const crc = batch.readUInt32BE(BatchPos.Crc);
    setBaseOffset(batch, 0, 1_234_567_890_123n);
    expect(batch.readUInt32BE(BatchPos.Crc)).toBe(crc);
    expect(validateBatch(batch).header.baseOffset).toBe(1_234_567_890_123n);
    expect(decodeBatch(batch).records).toHaveLength(3);
  });

  it('decodes and validates back-to-back batches', () => {
    const first = buildBatch({ records: records.slice(0, 1) });
    const two = Buffer.concat([first, buildBatch({ records, compression: CompressionCodec.Gzip })]);
    expect(validateBatches(two).map((b) => [b.start, b.end, b.header.recordCount])).toEqual([
      [0, first.length, 1],
      [first.length, two.length, 3],
    ]);
    expect(decodeBatches(two).map((b) => b.records.length)).toEqual([1, 3]);
  });
});

describe('validateBatch', () => {
  const good = () => buildBatch({ records, producerId: 1n, producerEpoch: 0, baseSequence: 0 });

  it('accepts a well-formed produced batch and reports its span and flags', () => {
    const batch = good();
    const v = validateBatch(batch);
    expect(v).toMatchObject({ start: 0, end: batch.length, compression: 0, isControl: false, isTransactional: false });
    expect(v.header.recordCount).toBe(3);
  });

  it.each<[string, (b: Buffer) => Buffer, BatchRule]>([
    ['fewer bytes than a header', (b) => b.subarray(0, 60), 'header'],
    ['magic 1', (b) => { const c = Buffer.from(b); c[BatchPos.Magic] = 1; return c; }, 'magic'],
    ['a length past the end', (b) => { const c = Buffer.from(b); c.writeInt32BE(c.length, BatchPos.BatchLength); return c; }, 'length'],
    ['a length shorter than the header', (b) => { const c = Buffer.from(b); c.writeInt32BE(48, BatchPos.BatchLength); return c; }, 'length'],
    ['a negative length', (b) => { const c = Buffer.from(b); c.writeInt32BE(-5, BatchPos.BatchLength); return c; }, 'length'],
    ['one flipped bit in a value', (b) => { const c = Buffer.from(b); c[c.length - 1]! ^= 0x01; return c; }, 'crc'],
    ['a flipped attribute bit', (b) => { const c = Buffer.from(b); c[BatchPos.Attributes + 1]! ^= 0x10; return c; }, 'crc'],
    ['compression codec 5', (b) => { const c = Buffer.from(b); c.writeInt16BE(5, BatchPos.Attributes); return resign(c); }, 'compression'],
    ['a negative record count', (b) => withInt32(b, BatchPos.RecordCount, -1), 'record-count'],
    ['zero records', (b) => withInt32(withInt32(b, BatchPos.RecordCount, 0), BatchPos.LastOffsetDelta, 0), 'record-count'],
    ['2^31-1 records in a few kilobytes', (b) => withInt32(withInt32(b, BatchPos.RecordCount, 0x7fffffff), BatchPos.LastOffsetDelta, 0x7ffffffe), 'record-count'],
    ['lastOffsetDelta not count - 1', (b) => withInt32(b, BatchPos.LastOffsetDelta, 5), 'offset-range'],
    ['a negative lastOffsetDelta', (b) => withInt32(b, BatchPos.LastOffsetDelta, -1), 'offset-range'],
    ['more records than offsets', (b) => withInt32(b, BatchPos.LastOffsetDelta, 1), 'offset-range'],
    ['a producer id without a base sequence', (b) => withInt32(b, BatchPos.BaseSequence, -1), 'sequence'],
  ])('refuses %s', (_, edit, rule) => {
    expect(ruleOf(() => validateBatch(edit(good())))).toBe(rule);
  });

  it('names the broken rule in a sentence with the position', () => {
    const bad = withInt32(good(), BatchPos.LastOffsetDelta, 5);
    expect(() => validateBatch(bad)).toThrowError('lastOffsetDelta 5 does not match the record count 3 (it must be count - 1) (at byte 0)');
  });

  it('refuses control batches from clients but accepts them from a log', () => {
    const marker = buildControlBatch({ type: ControlRecordType.Commit, producerId: 7n, producerEpoch: 1, coordinatorEpoch: 0 });
    expect(ruleOf(() => validateBatch(marker))).toBe('control');
    expect(validateBatch(marker, 0, { fromClient: false }).isControl).toBe(true);
  });

  it('accepts a compacted batch (fewer records than its offset range) only outside the client rules', () => {
    const compacted = withInt32(buildBatch({ records: records.slice(0, 1) }), BatchPos.LastOffsetDelta, 9);
    expect(ruleOf(() => validateBatch(compacted))).toBe('offset-range');
    expect(validateBatch(compacted, 0, { fromClient: false }).header.lastOffsetDelta).toBe(9);
  });

  it('finds a bad batch among several and says where', () => {
    const first = buildBatch({ records });
    const second = Buffer.from(buildBatch({ records }));
    second[second.length - 1]! ^= 0xff;
    const e = (() => {
      try {
        validateBatches(Buffer.concat([first, second]));
      } catch (err) {
        return err as InvalidBatchError;
      }
      throw new Error('expected a refusal');
    })();
    expect(e.rule).toBe('crc');
    expect(e.position).toBe(first.length);
  });

  it('refuses trailing bytes after the last batch', () => {
    expect(ruleOf(() => validateBatches(Buffer.concat([good(), Buffer.alloc(10)])))).toBe('header');
  });
});

describe('decodeBatch strictness', () => {
  /** An uncompressed batch with its records section replaced, count and CRC fixed up. */
  function withRecords(recordBytes: Buffer, count: number): Buffer {
    const head = Buffer.from(buildBatch({ records: [{ value: 'v' }] }).subarray(0, 61));
    const batch = Buffer.concat([head, recordBytes]);
    batch.writeInt32BE(batch.length - 12, BatchPos.BatchLength);
    batch.writeInt32BE(count, BatchPos.RecordCount);
    batch.writeInt32BE(count - 1, BatchPos.LastOffsetDelta);
    return resign(batch);
  }
  const oneRecord = Buffer.from([0x0e, 0x00, 0x00, 0x00, 0x01, 0x02, 0x76, 0x00]); // length 7, null key, "v"

  it('reads a hand-made record', () => {
    expect(decodeBatch(withRecords(oneRecord, 1)).records[0]!.value!.toString()).toBe('v');
  });

  it('refuses a record whose fields end before its declared length', () => {
    const padded = Buffer.concat([Buffer.from([0x10]), oneRecord.subarray(1), Buffer.from([0x00])]);
    expect(() => decodeBatch(withRecords(padded, 1))).toThrowError(/record declares 8 bytes but its fields end 1 bytes early/);
  });

  it('refuses bytes left over after the declared records', () => {
    expect(() => decodeBatch(withRecords(Buffer.concat([oneRecord, oneRecord]), 1))).toThrowError(/bytes remain after the 1 records/);
  });

  it('refuses fewer records than declared', () => {
    expect(() => decodeBatch(withRecords(Buffer.concat([oneRecord, Buffer.alloc(7)]), 2))).toThrow(DecodeError);
  });

  it('refuses a null header key', () => {
    const rec = Buffer.from([0x10, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x01, 0x01]); // null key and value, one header with key -1
    expect(() => decodeBatch(withRecords(rec, 1))).toThrowError(/record header key is null/);
  });

  it('refuses a varint that never ends', () => {
    const rec = Buffer.from([0x1e, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
    expect(() => decodeBatch(withRecords(rec, 1))).toThrowError(/varlong longer than 10 bytes/);
  });

  it('places errors inside compressed records at the batch', () => {
    // The header claims four records; the gzip payload holds three.
    const lying = withInt32(withInt32(buildBatch({ records, compression: CompressionCodec.Gzip }), BatchPos.RecordCount, 4), BatchPos.LastOffsetDelta, 3);
    expect(() => decodeBatch(lying)).toThrowError(/^in the decompressed records of the batch: .* \(at byte 0\)$/);
  });
});

describe('control batches', () => {
  it.each([
    ['commit', ControlRecordType.Commit],
    ['abort', ControlRecordType.Abort],
  ] as const)('builds a %s marker that decodes back', (_, type) => {
    const marker = buildControlBatch({ type, producerId: 99n, producerEpoch: 4, coordinatorEpoch: 12, timestamp: 1000n, baseOffset: 50n });
    const d = decodeBatch(marker);
    expect(d).toMatchObject({ isControl: true, isTransactional: true });
    expect(d.header).toMatchObject({ producerId: 99n, producerEpoch: 4, baseSequence: -1, baseOffset: 50n, recordCount: 1 });
    expect(d.records[0]!.key).toEqual(Buffer.from([0, 0, 0, type]));
    expect(d.records[0]!.value).toEqual(Buffer.from([0, 0, 0, 0, 0, 12]));
    expect(decodeControlRecord(d.records[0]!)).toEqual({ version: 0, type, coordinatorEpoch: 12 });
  });

  it('passes through control types other than transaction markers, and refuses short keys', () => {
    const leaderChange = { attributes: 0, timestampDelta: 0, offsetDelta: 0, key: Buffer.from([0, 0, 0, 2]), value: Buffer.from('x'), headers: [] };
    expect(decodeControlRecord(leaderChange)).toEqual({ version: 0, type: 2, coordinatorEpoch: null });
    expect(() => decodeControlRecord({ ...leaderChange, key: Buffer.from([0]) })).toThrow(DecodeError);
    expect(() => decodeControlRecord({ ...leaderChange, key: Buffer.from([0, 0, 0, 1]), value: null })).toThrow(DecodeError);
  });

  it('reads the header fields of a marker like any batch', () => {
    const marker = buildControlBatch({ type: ControlRecordType.Abort, producerId: 1n, producerEpoch: 0, coordinatorEpoch: 0 });
    expect(readBatchHeader(marker).attributes).toBe(0x30);
  });
});

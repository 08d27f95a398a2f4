/**
 * The record walk Produce runs on every batch before it is stored: Kafka's
 * per-record rules (DefaultRecord, LogValidator) over batches crafted byte by
 * byte, the inflation budget per batch and per request with every codec, and
 * the property that matters to readers: whatever the walk accepts decodes.
 */
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BatchAttr,
  CompressionCodec,
  InvalidBatchError,
  buildBatch,
  compress,
  decodeBatch,
  inflationBudget,
  validateBatch,
  validateBatches,
  type BatchRules,
  type InflationBudget,
} from '../../../protocol/records/index.js';
import { batchBytes, recordBytes, resign, zigzag } from './bytes.js';

const MIB = 1024 * 1024;
const walk = (budget: InflationBudget = inflationBudget(MIB, 4 * MIB)): BatchRules => ({ records: budget });

function refusal(fn: () => unknown): InvalidBatchError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidBatchError);
    return e as InvalidBatchError;
  }
  throw new Error('expected the batch to be refused');
}

const good = (i: number) => recordBytes({ offsetDelta: i, key: `k${i}`, value: `value ${i}`, headers: [{ key: 'h', value: 'v' }] });

describe('the record walk refuses what Kafka refuses', () => {
  it("refuses the issue's poison: a ~100-byte batch with a right CRC and garbage records (only the header check would store it)", () => {
    const garbage = Buffer.from('9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddccbbaa99887766554433221100', 'hex');
    const poison = batchBytes({ records: garbage, count: 1 });
    expect(poison.length).toBeLessThan(110);
    expect(() => validateBatch(poison)).not.toThrow();
    const e = refusal(() => validateBatch(poison, 0, walk()));
    expect(e.rule).toBe('record');
    expect(e.recordIndex).toBe(0);
    expect(e.message).toMatch(/^record 0: /);
  });

  it.each([
    ['a record whose declared length runs past the batch', [recordBytes({ offsetDelta: 0, value: 'abc', lengthLie: 50 })], 1, 0, /record length \d+ is invalid/],
    ['a record whose fields end before its declared length', [Buffer.concat([recordBytes({ offsetDelta: 0, value: 'abc', lengthLie: 1 }), Buffer.from([0])])], 1, 0, /fields end 1 bytes early/],
    ['a key length past the record', [Buffer.concat([zigzag(6), Buffer.from([0]), zigzag(0), zigzag(0), zigzag(100), Buffer.from('ab')])], 1, 0, /truncated|needs 100 bytes/],
    ['a key length below -1', [Buffer.concat([zigzag(5), Buffer.from([0]), zigzag(0), zigzag(0), zigzag(-2), zigzag(-1), zigzag(0)])], 1, 0, /record field length -2 is invalid/],
    ['a negative header count', [recordBytes({ offsetDelta: 0, rawHeaders: zigzag(-1) })], 1, 0, /record header count -1 is invalid/],
    ['a null header key', [recordBytes({ offsetDelta: 0, headers: [{ key: null, value: 'x' }] })], 1, 0, /record header key is null/],
    ['a header value length past the record', [recordBytes({ offsetDelta: 0, rawHeaders: Buffer.concat([zigzag(1), zigzag(1), Buffer.from('k'), zigzag(90)]) })], 1, 0, /needs 90 bytes/],
    ['offset deltas that skip one (0, 2)', [good(0), recordBytes({ offsetDelta: 2, value: 'x' })], 2, 1, /offset delta 2 where 1 \(offset deltas run 0\.\.n-1\)/],
    ['offset deltas that repeat (0, 0)', [good(0), good(0)], 2, 1, /offset delta 0 where 1/],
    ['offset deltas that do not start at 0', [good(1), good(2)], 2, 0, /offset delta 1 where 0/],
    ['fewer records than the header counts', [good(0), good(1)], 3, 2, /record 2: /],
  ])('refuses %s, naming the record', (_, records, count, recordIndex, message) => {
    const e = refusal(() => validateBatch(batchBytes({ records: Buffer.concat(records), count }), 0, walk()));
    expect(e.rule).toBe('record');
    expect(e.recordIndex).toBe(recordIndex);
    expect(e.message).toMatch(message);
  });

  it('refuses bytes after the last record the header counts', () => {
    const e = refusal(() => validateBatch(batchBytes({ records: Buffer.concat([good(0), good(1), Buffer.from([0, 0])]), count: 2 }), 0, walk()));
    expect(e.rule).toBe('record');
    expect(e.message).toMatch(/2 bytes remain after the 2 records/);
  });

  it('refuses a transactional batch without a producer id, and a client control batch', () => {
    const records = Buffer.concat([good(0)]);
    expect(refusal(() => validateBatch(batchBytes({ records, count: 1, attributes: BatchAttr.Transactional }), 0, walk())).rule).toBe('producer');
    expect(refusal(() => validateBatch(batchBytes({ records, count: 1, attributes: BatchAttr.Control }), 0, walk())).rule).toBe('control');
  });

  it('refuses compressed records that do not inflate, and records that inflate to garbage, per codec', () => {
    for (const codec of [CompressionCodec.Gzip, CompressionCodec.Snappy, CompressionCodec.Lz4, CompressionCodec.Zstd]) {
      const notCompressed = batchBytes({ records: Buffer.from('these bytes are not compressed by anything'), count: 1, codec });
      expect(refusal(() => validateBatch(notCompressed, 0, walk())).rule, `codec ${codec}`).toBe('compressed');
      const garbageInside = batchBytes({ records: compress(codec, Buffer.from('0123456789abcdef0123456789')), count: 2, codec });
      const e = refusal(() => validateBatch(garbageInside, 0, walk()));
      expect(e.rule, `codec ${codec}`).toBe('record');
      expect(e.message).toMatch(/^in the decompressed records of the batch: record 0: /);
    }
  });

  it('accepts offset deltas with gaps inside the range only for batches from a log (compaction), not from a client', () => {
    const gapped = batchBytes({ records: Buffer.concat([good(0), recordBytes({ offsetDelta: 2, value: 'x' })]), count: 2, lastOffsetDelta: 2 });
    expect(() => validateBatch(gapped, 0, { ...walk(), fromClient: false })).not.toThrow();
    expect(refusal(() => validateBatch(gapped, 0, walk())).rule).toBe('offset-range');
    const beyond = batchBytes({ records: Buffer.concat([good(0), recordBytes({ offsetDelta: 3, value: 'x' })]), count: 2, lastOffsetDelta: 2 });
    expect(refusal(() => validateBatch(beyond, 0, { ...walk(), fromClient: false })).message).toMatch(/offset delta 3 where above 0 and at most 2/);
  });
});

describe('what the walk reads', () => {
  it('accepts batches every codec builds, and reads the largest record timestamp whatever the header claims', () => {
    for (const compression of [CompressionCodec.None, CompressionCodec.Gzip, CompressionCodec.Snappy, CompressionCodec.Lz4, CompressionCodec.Zstd]) {
      const batch = buildBatch({
        compression,
        records: [
          { value: 'a', timestamp: 1_000 },
          { value: 'b', timestamp: 5_000 },
          { value: 'c', timestamp: 3_000 },
        ],
        maxTimestamp: 2_000, // a producer's wrong claim (kafkajs can write one)
      });
      const valid = validateBatch(batch, 0, walk());
      expect(valid.recordsMaxTimestamp, `codec ${compression}`).toBe(5_000n);
      expect(valid.header.maxTimestamp).toBe(2_000n);
    }
  });

  it('reports no record timestamp when asked for the header check only', () => {
    expect(validateBatch(buildBatch({ records: [{ value: 'a' }] })).recordsMaxTimestamp).toBeNull();
  });
});

describe('the inflation budget', () => {
  const zeros = Buffer.alloc(2 * MIB);
  /** A batch of `n` records whose values are zeros, compressed: tiny on the wire, large inflated. */
  const bomb = (compression: CompressionCodec, valueBytes: number, n = 4) =>
    buildBatch({ compression, records: Array.from({ length: n }, () => ({ value: zeros.subarray(0, valueBytes) })) });

  it.each([
    ['gzip', CompressionCodec.Gzip],
    ['snappy', CompressionCodec.Snappy],
    ['lz4', CompressionCodec.Lz4],
    ['zstd', CompressionCodec.Zstd],
  ])('refuses a %s batch inflating past the per-batch limit, as too large, before it is all inflated', (_, codec) => {
    const batch = bomb(codec, 512 * 1024);
    expect(batch.length).toBeLessThan(200 * 1024);
    const e = refusal(() => validateBatch(batch, 0, walk(inflationBudget(MIB, 8 * MIB))));
    expect(e.rule).toBe('inflated-size');
    expect(e.message).toMatch(/inflate past the 1048576-byte inflation limit for one batch/);
    expect(() => validateBatch(batch, 0, walk(inflationBudget(4 * MIB, 8 * MIB)))).not.toThrow();
  });

  it('shares the per-request limit among the batches of a request: the batch that crosses it is refused and named', () => {
    const each = bomb(CompressionCodec.Gzip, 128 * 1024); // 512 KiB inflated
    const request = Buffer.concat([each, each, each]);
    const budget = inflationBudget(MIB, MIB + 256 * 1024);
    const e = refusal(() => validateBatches(request, walk(budget)));
    expect(e.rule).toBe('inflated-size');
    expect(e.batchIndex).toBe(2);
    expect(e.message).toMatch(/inflation limit for all batches of one request/);
    // Uncompressed batches draw nothing: they are walked where they lie.
    const plain = buildBatch({ records: [{ value: zeros.subarray(0, 3 * MIB / 2) }] });
    expect(() => validateBatches(Buffer.concat([plain, plain]), walk(inflationBudget(MIB, MIB)))).not.toThrow();
  });

  it('refuses a record count the budget cannot hold without inflating anything', () => {
    const liar = batchBytes({ records: gzipSync(Buffer.alloc(10)), count: 1_000_000, codec: CompressionCodec.Gzip });
    const e = refusal(() => validateBatch(liar, 0, walk(inflationBudget(MIB, MIB))));
    expect(e.rule).toBe('inflated-size');
    expect(e.message).toMatch(/record count 1000000 cannot fit/);
  });
});

describe('what the walk accepts, every reader can decode', () => {
  it('holds for batches whose record bytes are damaged and re-signed (fast-check)', () => {
    const seeds = [
      buildBatch({ records: [{ key: 'k', value: 'one', headers: [{ key: 'h', value: 'x' }] }, { value: null }, { key: null, value: 'three' }] }),
      buildBatch({ compression: CompressionCodec.Gzip, records: [{ key: 'k', value: 'one' }, { value: 'two', headers: [{ key: 'a', value: null }] }] }),
      buildBatch({ compression: CompressionCodec.Lz4, records: [{ value: 'x'.repeat(300) }, { value: 'y' }] }),
    ];
    fc.assert(
      fc.property(
        fc.constantFrom(...seeds),
        fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { minLength: 1, maxLength: 6 }),
        (seed, edits) => {
          const batch = Buffer.from(seed);
          for (const { at, byte } of edits) batch[61 + (at % (batch.length - 61))] = byte;
          resign(batch);
          let accepted = false;
          try {
            validateBatch(batch, 0, walk());
            accepted = true;
          } catch (e) {
            expect(e).toBeInstanceOf(InvalidBatchError);
          }
          if (accepted) expect(() => decodeBatch(batch)).not.toThrow();
        },
      ),
      { numRuns: 2000 },
    );
  });
});

/**
 * Hostile input: whatever the bytes, decoding returns or throws a DecodeError,
 * never another exception; it ends; and a count or length in the input cannot
 * make it allocate or loop beyond what the input (or the budget) allows.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import {
  BATCH_HEADER_SIZE,
  BatchPos,
  CompressionCodec,
  buildBatch,
  decodeBatch,
  decodeBatches,
  decodeMessageSet,
  messageSetToBatch,
  validateBatch,
  validateBatches,
} from '../../../protocol/records/index.js';
import { gzipSync } from 'node:zlib';
import { legacyMessage, messageSet, resign, withInt32 } from './bytes.js';

const CODECS = [CompressionCodec.None, CompressionCodec.Gzip, CompressionCodec.Snappy, CompressionCodec.Lz4, CompressionCodec.Zstd];
const BUDGET = 1 << 20;

/** Runs `fn`; passes when it returns or throws a DecodeError, fails on anything else. */
function onlyDecodeErrors(fn: () => unknown): void {
  try {
    fn();
  } catch (e) {
    if (!(e instanceof DecodeError)) throw new Error(`expected only DecodeError, got ${String(e)}`, { cause: e });
  }
}

const seedBatches = CODECS.map((compression) =>
  buildBatch({
    records: [
      { key: 'k', value: 'value one', headers: [{ key: 'h', value: 'x' }], timestamp: 1000 },
      { key: null, value: 'v'.repeat(300), timestamp: 1001 },
      { key: 'k3', value: null, timestamp: 999 },
    ],
    compression,
    producerId: 5n,
    producerEpoch: 0,
    baseSequence: 0,
  }),
);

const seedMessageSet = Buffer.concat([
  messageSet([
    { offset: 0, message: legacyMessage({ magic: 1, timestamp: 1n, key: 'a', value: 'one' }) },
    { offset: 1, message: legacyMessage({ magic: 0, key: null, value: 'two' }) },
  ]),
  messageSet([
    {
      offset: 2,
      message: legacyMessage({
        magic: 1,
        attributes: 1,
        key: null,
        value: gzipSync(messageSet([{ offset: 0, message: legacyMessage({ magic: 1, key: 'i', value: 'inner' }) }])),
      }),
    },
  ]),
]);

/** A copy of `seed` with some bytes overwritten and possibly cut short. */
const mutated = (seeds: Buffer[]) =>
  fc
    .record({
      seed: fc.constantFrom(...seeds),
      edits: fc.array(fc.record({ at: fc.nat(), byte: fc.integer({ min: 0, max: 255 }) }), { maxLength: 8 }),
      cut: fc.option(fc.nat()),
    })
    .map(({ seed, edits, cut }) => {
      const copy = Buffer.from(seed);
      for (const { at, byte } of edits) copy[at % copy.length] = byte;
      return cut === null ? copy : copy.subarray(0, cut % (copy.length + 1));
    });

function decodeEverything(input: Buffer): void {
  onlyDecodeErrors(() => validateBatch(input));
  onlyDecodeErrors(() => validateBatches(input, { fromClient: false }));
  onlyDecodeErrors(() => decodeBatch(input, 0, { maxBytes: BUDGET }));
  onlyDecodeErrors(() => decodeBatches(input, { maxBytes: BUDGET }));
  onlyDecodeErrors(() => decodeMessageSet(input, { maxBytes: BUDGET }));
  onlyDecodeErrors(() => messageSetToBatch(input, { maxBytes: BUDGET }));
}

describe('hostile record input', () => {
  it('arbitrary bytes: only DecodeError', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 400 }), (bytes) => decodeEverything(Buffer.from(bytes))), { numRuns: 1000 });
  });

  it('garbled and truncated batches of every codec: only DecodeError', () => {
    fc.assert(fc.property(mutated(seedBatches), decodeEverything), { numRuns: 1000 });
  });

  it('garbled batches whose CRC is recomputed, so the damage reaches the records: only DecodeError', () => {
    const garbledRecords = mutated(seedBatches).filter((b) => b.length >= BATCH_HEADER_SIZE).map((b) => resign(Buffer.from(b)));
    fc.assert(
      fc.property(garbledRecords, (batch) => {
        onlyDecodeErrors(() => {
          const d = decodeBatch(batch, 0, { maxBytes: BUDGET });
          // What does decode must be what the header promised.
          expect(d.records).toHaveLength(d.header.recordCount);
        });
      }),
      { numRuns: 1000 },
    );
  });

  it('arbitrary counts, offsets and lengths in a correctly signed header: only DecodeError', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...seedBatches),
        fc.constantFrom(BatchPos.RecordCount, BatchPos.LastOffsetDelta, BatchPos.BatchLength, BatchPos.BaseSequence),
        fc.integer({ min: -0x80000000, max: 0x7fffffff }),
        (seed, field, value) => {
          const batch = withInt32(seed, field, value);
          onlyDecodeErrors(() => decodeBatch(batch, 0, { maxBytes: BUDGET }));
          onlyDecodeErrors(() => validateBatch(batch));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('garbled message sets: only DecodeError', () => {
    fc.assert(fc.property(mutated([seedMessageSet]), decodeEverything), { numRuns: 1000 });
  });

  it('a 40-byte input claiming 2^31-1 records fails at once', () => {
    const input = Buffer.alloc(40);
    input.writeInt32BE(0x7fffffff, 8); // batchLength
    input[BatchPos.Magic] = 2;
    const started = performance.now();
    expect(() => decodeBatch(input)).toThrowError(/needs a 61-byte header, 40 bytes left/);
    expect(performance.now() - started).toBeLessThan(50);
  });

  it.each(CODECS)('a signed batch (codec %i) claiming 2^31-1 records fails before reading or inflating records', (codec) => {
    const seed = seedBatches[codec]!;
    const claim = withInt32(withInt32(seed, BatchPos.RecordCount, 0x7fffffff), BatchPos.LastOffsetDelta, 0x7ffffffe);
    const heapBefore = process.memoryUsage().heapUsed;
    const started = performance.now();
    expect(() => decodeBatch(claim, 0, { maxBytes: BUDGET })).toThrowError(/record count 2147483647 cannot fit/);
    expect(performance.now() - started).toBeLessThan(50);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(8 << 20);
  });

  it('a record length of 2^31-1 and a header count of 2^31-1 are refused from the bytes left', () => {
    const head = Buffer.from(seedBatches[0]!.subarray(0, BATCH_HEADER_SIZE));
    const asBatch = (records: Buffer) => {
      const b = Buffer.concat([head, records]);
      b.writeInt32BE(b.length - 12, BatchPos.BatchLength);
      b.writeInt32BE(1, BatchPos.RecordCount);
      b.writeInt32BE(0, BatchPos.LastOffsetDelta);
      return resign(b);
    };
    // zig-zag 2^31-1 as a varint: 0xfe 0xff 0xff 0xff 0x0f
    const hugeLength = Buffer.from([0xfe, 0xff, 0xff, 0xff, 0x0f, 0, 0, 0, 0, 0, 0]);
    expect(() => decodeBatch(asBatch(hugeLength))).toThrowError(/record length 2147483647 is invalid/);
    const hugeHeaders = Buffer.from([0x10, 0x00, 0x00, 0x00, 0x01, 0x01, 0xfe, 0xff, 0xff, 0xff, 0x0f]);
    hugeHeaders[0] = (hugeHeaders.length - 1) * 2;
    expect(() => decodeBatch(asBatch(hugeHeaders))).toThrowError(/record header count 2147483647 is invalid/);
  });

  it('a records section of endless continuation bytes is refused', () => {
    const head = Buffer.from(seedBatches[0]!.subarray(0, BATCH_HEADER_SIZE));
    const b = Buffer.concat([head, Buffer.alloc(4096, 0xff)]);
    b.writeInt32BE(b.length - 12, BatchPos.BatchLength);
    b.writeInt32BE(1, BatchPos.RecordCount);
    b.writeInt32BE(0, BatchPos.LastOffsetDelta);
    expect(() => decodeBatch(resign(b))).toThrowError(/varint longer than 5 bytes/);
  });
});

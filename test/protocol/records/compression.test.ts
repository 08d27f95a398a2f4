import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { gzipSync } from 'node:zlib';
import * as snappy from 'snappy';
import * as lz4 from 'lz4-napi';
import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import { CompressionCodec, compress, decompress } from '../../../protocol/records/compression.js';
import { CODECS, lz4Frame, xerialSnappy } from './bytes.js';

const text = Buffer.from('Kafka records compress well when they repeat themselves. '.repeat(3000));

describe.each(CODECS)('%s', (name, codec) => {
  it('round-trips arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70_000 }), (bytes) => {
        const data = Buffer.from(bytes);
        expect(decompress(codec, compress(codec, data), data.length).equals(data)).toBe(true);
      }),
      { numRuns: 30 },
    );
  });

  it('round-trips repetitive data larger than one block', () => {
    const packed = compress(codec, text);
    if (codec !== CompressionCodec.None) expect(packed.length).toBeLessThan(text.length / 4);
    expect(decompress(codec, packed, text.length).equals(text)).toBe(true);
  });

  it('refuses output one byte past the budget and accepts it at exactly the budget', () => {
    const packed = compress(codec, text);
    expect(() => decompress(codec, packed, text.length - 1)).toThrowError(
      new RegExp(`^${name} decompression exceeds the ${text.length - 1}-byte budget`),
    );
    expect(decompress(codec, packed, text.length)).toHaveLength(text.length);
  });

  it.skipIf(codec === CompressionCodec.None)('rejects truncated input with a DecodeError', () => {
    const packed = compress(codec, text);
    expect(() => decompress(codec, packed.subarray(0, packed.length - 5), 1e7)).toThrow(DecodeError);
  });

  it.skipIf(codec === CompressionCodec.None)('answers garbage with a DecodeError or bytes within budget, nothing else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        try {
          expect(decompress(codec, Buffer.from(bytes), 4096).length).toBeLessThanOrEqual(4096);
        } catch (e) {
          expect(e).toBeInstanceOf(DecodeError);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('snappy framing', () => {
  it('writes one raw block, readable by a plain snappy decoder', () => {
    const packed = compress(CompressionCodec.Snappy, text);
    expect((snappy.uncompressSync(packed) as Buffer).equals(text)).toBe(true);
  });

  it('reads xerial framing as Java producers write it, across several blocks', () => {
    const framed = xerialSnappy(text, 32 * 1024);
    expect(framed.subarray(0, 8).toString('latin1')).toBe('\x82SNAPPY\x00');
    expect(decompress(CompressionCodec.Snappy, framed, text.length).equals(text)).toBe(true);
  });

  it('counts the budget across xerial blocks, refusing before inflating the block that would pass it', () => {
    const framed = xerialSnappy(text, 32 * 1024);
    expect(() => decompress(CompressionCodec.Snappy, framed, 40 * 1024)).toThrowError(/exceeds the 40960-byte budget/);
  });

  it('reads an empty xerial stream as empty', () => {
    expect(decompress(CompressionCodec.Snappy, xerialSnappy(Buffer.alloc(0)), 0)).toHaveLength(0);
  });

  it('rejects a xerial block whose size runs past the end', () => {
    const framed = xerialSnappy(text);
    framed.writeInt32BE(0x7fffffff, 16);
    expect(() => decompress(CompressionCodec.Snappy, framed, 1e7)).toThrowError(/xerial block size 2147483647/);
  });
});

describe('lz4 frames', () => {
  const blocks = [text.subarray(0, 65536), text.subarray(65536, 131072), text.subarray(131072)];

  it('writes a standard frame with independent blocks, readable by the library\'s frame decoder', () => {
    const packed = compress(CompressionCodec.Lz4, text);
    expect(packed.readUInt32LE(0)).toBe(0x184d2204);
    expect(packed[4]! & 0x20).toBe(0x20); // block independence, which Kafka's Java reader requires
    expect(lz4.decompressFrameSync(packed).equals(text)).toBe(true);
  });

  it.each([
    ['Kafka Java shape: 64 KiB independent blocks', {}],
    ['block checksums', { blockChecksum: true }],
    ['content checksum', { contentChecksum: true }],
    ['declared content size', { contentSize: BigInt(text.length) }],
    ['4 MiB block size', { blockSizeCode: 7 as const }],
    ['linked blocks', { independent: false }],
    ['stored (uncompressed) blocks', { stored: true }],
  ])('reads frames with %s', (_, spec) => {
    expect(decompress(CompressionCodec.Lz4, lz4Frame(blocks, spec), text.length).equals(text)).toBe(true);
  });

  it('reads concatenated frames and skips skippable frames', () => {
    const skippable = Buffer.from([0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 9, 9, 9]);
    const data = Buffer.concat([lz4Frame([blocks[0]!]), skippable, lz4Frame([blocks[1]!, blocks[2]!])]);
    expect(decompress(CompressionCodec.Lz4, data, text.length).equals(text)).toBe(true);
  });

  it('fails before inflating when the declared content size is over budget', () => {
    const frame = lz4Frame([blocks[0]!], { contentSize: 1n << 40n });
    expect(() => decompress(CompressionCodec.Lz4, frame, 1 << 20)).toThrowError(/exceeds the 1048576-byte budget/);
  });

  it('rejects a frame whose content differs from its declared size', () => {
    const frame = lz4Frame([blocks[0]!], { contentSize: 10n });
    expect(() => decompress(CompressionCodec.Lz4, frame, 1 << 20)).toThrowError(/declares 10 bytes of content but holds 65536/);
  });

  it('rejects a block larger than the frame\'s block maximum', () => {
    const frame = lz4Frame([text.subarray(0, 100_000)], { stored: true });
    expect(() => decompress(CompressionCodec.Lz4, frame, 1 << 20)).toThrowError(/exceeds the frame's 65536-byte maximum/);
  });

  it('rejects frames that need a dictionary, and bad magic', () => {
    const frame = lz4Frame([blocks[0]!]);
    frame[4] = frame[4]! | 0x01;
    expect(() => decompress(CompressionCodec.Lz4, frame, 1 << 20)).toThrowError(/dictionary/);
    expect(() => decompress(CompressionCodec.Lz4, Buffer.from('not lz4 at all'), 1 << 20)).toThrowError(/bad frame magic/);
  });
});

describe('gzip and zstd streams', () => {
  it('reads concatenated gzip members as one stream', () => {
    const data = Buffer.concat([gzipSync(text.subarray(0, 1000)), gzipSync(text.subarray(1000))]);
    expect(decompress(CompressionCodec.Gzip, data, text.length).equals(text)).toBe(true);
  });

  it('reads concatenated zstd frames as one stream', () => {
    const data = Buffer.concat([compress(CompressionCodec.Zstd, text.subarray(0, 1000)), compress(CompressionCodec.Zstd, text.subarray(1000))]);
    expect(decompress(CompressionCodec.Zstd, data, text.length).equals(text)).toBe(true);
  });

  it('rejects a truncated zstd frame instead of returning partial output', () => {
    const packed = compress(CompressionCodec.Zstd, Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 7919) & 0xff)));
    expect(() => decompress(CompressionCodec.Zstd, packed.subarray(0, packed.length - 10), 1e6)).toThrowError(/zstd compressed records are corrupt/);
  });
});

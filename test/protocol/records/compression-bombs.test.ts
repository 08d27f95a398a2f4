/**
 * Compression bombs: small inputs that inflate to gigabytes. Each must fail
 * with the budget error, quickly, and without the process's peak memory
 * growing by anything like the bomb's size (an unbounded decompressor would
 * need the whole output, 2 GiB here, and write every page of it).
 */
import { describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import * as snappy from 'snappy';
import { CompressionCodec, compress, decompress } from '../../../protocol/records/compression.js';
import { buildBatch, decodeBatch } from '../../../protocol/records/record-batch.js';
import { BATCH_HEADER_SIZE } from '../../../protocol/records/batch-header.js';
import { lz4Frame, resign } from './bytes.js';

const MiB = 1024 * 1024;
const BUDGET = MiB;
const BOMB_OUTPUT = 2048 * MiB;

function repeat(piece: Buffer, times: number): Buffer {
  return Buffer.concat(Array.from({ length: times }, () => piece));
}

function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

/** Runs a bomb and checks the error, the time and the growth of peak memory. */
function expectDefused(codec: CompressionCodec, bomb: Buffer): void {
  const before = peakRssMiB();
  const started = performance.now();
  expect(() => decompress(codec, bomb, BUDGET)).toThrowError(`exceeds the ${BUDGET}-byte budget`);
  expect(performance.now() - started).toBeLessThan(2000);
  expect(peakRssMiB() - before).toBeLessThan(256);
}

describe('compression bombs', () => {
  it('gzip: 2048 members of 1 MiB of zeros each', () => {
    const bomb = repeat(gzipSync(Buffer.alloc(MiB), { level: 9 }), BOMB_OUTPUT / MiB);
    expect(bomb.length).toBeLessThan(BOMB_OUTPUT / 500);
    expectDefused(CompressionCodec.Gzip, bomb);
  });

  it('zstd: 2048 frames of 1 MiB of zeros each', () => {
    const bomb = repeat(compress(CompressionCodec.Zstd, Buffer.alloc(MiB)), BOMB_OUTPUT / MiB);
    expect(bomb.length).toBeLessThan(BOMB_OUTPUT / 500);
    expectDefused(CompressionCodec.Zstd, bomb);
  });

  it('lz4: one frame of 32768 blocks of 64 KiB of zeros each', () => {
    const zeros = Buffer.alloc(64 * 1024);
    const block = lz4Frame([zeros]);
    // Reuse one compressed block: frame header (7 bytes), then the block, repeated, then the end mark.
    const body = block.subarray(7, block.length - 4);
    const bomb = Buffer.concat([block.subarray(0, 7), repeat(body, BOMB_OUTPUT / zeros.length), Buffer.alloc(4)]);
    expect(bomb.length).toBeLessThan(BOMB_OUTPUT / 200);
    expectDefused(CompressionCodec.Lz4, bomb);
  });

  it('snappy: a raw block whose preamble claims 4 GiB fails before inflating', () => {
    const bomb = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]);
    expectDefused(CompressionCodec.Snappy, bomb);
  });

  it('snappy: xerial framing with 100 blocks of 1 MiB of zeros', () => {
    const header = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1]);
    const block = snappy.compressSync(Buffer.alloc(MiB));
    const size = Buffer.alloc(4);
    size.writeInt32BE(block.length);
    expectDefused(CompressionCodec.Snappy, Buffer.concat([header, repeat(Buffer.concat([size, block]), 100)]));
  });

  it('a batch carrying a bomb fails decoding with the budget error', () => {
    const batch = buildBatch({ records: [{ value: 'x' }], compression: CompressionCodec.Zstd });
    const bomb = repeat(compress(CompressionCodec.Zstd, Buffer.alloc(MiB)), 64);
    const hostile = Buffer.concat([batch.subarray(0, BATCH_HEADER_SIZE), bomb]);
    hostile.writeInt32BE(hostile.length - 12, 8);
    resign(hostile);
    expect(() => decodeBatch(hostile, 0, { maxBytes: BUDGET })).toThrowError(`zstd decompression exceeds the ${BUDGET}-byte budget`);
  });
});

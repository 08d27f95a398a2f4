/**
 * Small byte builders for the record tests, written from Kafka's documented
 * layouts and independent of the code under test: legacy messages, xerial
 * snappy framing, LZ4 frames, and in-place edits that keep a batch's CRC right.
 */
import { crc32 } from 'node:zlib';
import { createRequire } from 'node:module';
import * as snappy from 'snappy';
import * as lz4 from 'lz4-napi';
import { CompressionCodec } from '../../../protocol/records/compression.js';
import { crc32c } from '../../../protocol/records/crc32c.js';

export const require = createRequire(import.meta.url);

export function int8(n: number): Buffer {
  const b = Buffer.alloc(1);
  b.writeInt8(n);
  return b;
}
export function int32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}
export function int64(n: bigint | number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(BigInt(n));
  return b;
}
export function kafkaBytes(v: Buffer | string | null): Buffer {
  if (v === null) return int32(-1);
  const b = Buffer.from(v);
  return Buffer.concat([int32(b.length), b]);
}

export interface LegacyMessageSpec {
  magic: 0 | 1;
  attributes?: number;
  timestamp?: bigint;
  key: Buffer | string | null;
  value: Buffer | string | null;
}

/** One message (crc, magic, attributes, [timestamp], key, value) with its CRC-32. */
export function legacyMessage(m: LegacyMessageSpec): Buffer {
  const body = Buffer.concat([
    int8(m.magic),
    int8(m.attributes ?? 0),
    m.magic === 1 ? int64(m.timestamp ?? 0n) : Buffer.alloc(0),
    kafkaBytes(m.key),
    kafkaBytes(m.value),
  ]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([crc, body]);
}

/** A message set: (offset, size, message) per message. */
export function messageSet(entries: { offset: bigint | number; message: Buffer }[]): Buffer {
  return Buffer.concat(entries.flatMap((e) => [int64(e.offset), int32(e.message.length), e.message]));
}

/** Xerial snappy-java framing, as Java producers write it: header, then (size, raw block)*. */
export function xerialSnappy(data: Buffer, blockSize = 32 * 1024): Buffer {
  const header = Buffer.concat([Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]), int32(1), int32(1)]);
  const parts: Buffer[] = [header];
  for (let from = 0; from < Math.max(data.length, 1); from += blockSize) {
    const block = snappy.compressSync(data.subarray(from, from + blockSize));
    parts.push(int32(block.length), block);
  }
  return Buffer.concat(parts);
}

export interface Lz4FrameSpec {
  blockSizeCode?: 4 | 5 | 6 | 7;
  independent?: boolean;
  blockChecksum?: boolean;
  contentSize?: bigint;
  contentChecksum?: boolean;
  /** Store blocks uncompressed (high bit of the size word). */
  stored?: boolean;
}

/**
 * An LZ4 frame with every block compressed independently (or, when
 * `independent` is false, each block compressed against the previous one as
 * its dictionary). Checksum fields are filled with zeros: readers in Kafka's
 * position do not depend on them, and ours does not check them.
 */
export function lz4Frame(blocks: Buffer[], spec: Lz4FrameSpec = {}): Buffer {
  const independent = spec.independent ?? true;
  const flags =
    0x40 |
    (independent ? 0x20 : 0) |
    (spec.blockChecksum ? 0x10 : 0) |
    (spec.contentSize !== undefined ? 0x08 : 0) |
    (spec.contentChecksum ? 0x04 : 0);
  const parts: Buffer[] = [Buffer.from([0x04, 0x22, 0x4d, 0x18, flags, (spec.blockSizeCode ?? 4) << 4])];
  if (spec.contentSize !== undefined) {
    const size = Buffer.alloc(8);
    size.writeBigUInt64LE(spec.contentSize);
    parts.push(size);
  }
  parts.push(Buffer.from([0])); // header checksum
  let previous: Buffer | null = null;
  for (const block of blocks) {
    let payload: Buffer;
    let word: number;
    if (spec.stored) {
      payload = block;
      word = (block.length | 0x80000000) >>> 0;
    } else {
      const compressed: Buffer = previous && !independent ? lz4.compressSync(block, previous) : lz4.compressSync(block);
      payload = compressed.subarray(4); // drop the library's size prefix
      word = payload.length;
    }
    const size = Buffer.alloc(4);
    size.writeUInt32LE(word);
    parts.push(size, payload);
    if (spec.blockChecksum) parts.push(Buffer.alloc(4));
    previous = block;
  }
  parts.push(Buffer.alloc(4)); // end mark
  if (spec.contentChecksum) parts.push(Buffer.alloc(4));
  return Buffer.concat(parts);
}

/** Sets an int32 header field of a v2 batch and recomputes its CRC, so the edit reaches the rule under test. */
export function withInt32(batch: Buffer, position: number, value: number): Buffer {
  const copy = Buffer.from(batch);
  copy.writeInt32BE(value, position);
  return resign(copy);
}

/** Recomputes a v2 batch's CRC-32C in place (bytes 21.. into byte 17). */
export function resign(batch: Buffer): Buffer {
  batch.writeUInt32BE(crc32c(batch.subarray(21)), 17);
  return batch;
}

/** Every Kafka compression codec by name, for tables of cases. */
export const CODECS = [
  ['none', CompressionCodec.None],
  ['gzip', CompressionCodec.Gzip],
  ['snappy', CompressionCodec.Snappy],
  ['lz4', CompressionCodec.Lz4],
  ['zstd', CompressionCodec.Zstd],
] as const;

/** Kafka's zig-zag varint (also varlong), written out here, independent of protocol/primitives. */
export function zigzag(n: bigint | number): Buffer {
  let u = BigInt.asUintN(64, (BigInt(n) << 1n) ^ (BigInt(n) >> 63n));
  const out: number[] = [];
  while (u >= 0x80n) {
    out.push(Number(u & 0x7fn) | 0x80);
    u >>= 7n;
  }
  out.push(Number(u));
  return Buffer.from(out);
}

/** A varint-length-prefixed field: null is -1. */
export function varintField(v: Buffer | string | null): Buffer {
  if (v === null) return zigzag(-1);
  const b = Buffer.from(v);
  return Buffer.concat([zigzag(b.length), b]);
}

export interface RecordSpec {
  timestampDelta?: number;
  offsetDelta: number;
  key?: Buffer | string | null;
  value?: Buffer | string | null;
  headers?: { key: Buffer | string | null; value: Buffer | string | null }[];
  /** Raw bytes instead of the header list (count included). */
  rawHeaders?: Buffer;
  /** Added to the declared length (a lie about the record's size). */
  lengthLie?: number;
}

/** One v2 record as the format documents it: length, attributes, deltas, key, value, headers. */
export function recordBytes(spec: RecordSpec): Buffer {
  const headers =
    spec.rawHeaders ??
    Buffer.concat([zigzag((spec.headers ?? []).length), ...(spec.headers ?? []).flatMap((h) => [varintField(h.key), varintField(h.value)])]);
  const body = Buffer.concat([
    Buffer.from([0]),
    zigzag(spec.timestampDelta ?? 0),
    zigzag(spec.offsetDelta),
    varintField(spec.key ?? null),
    varintField(spec.value ?? null),
    headers,
  ]);
  return Buffer.concat([zigzag(body.length + (spec.lengthLie ?? 0)), body]);
}

export interface BatchSpec {
  /** The records section as sent (compressed already when `codec` says so). */
  records: Buffer;
  count: number;
  lastOffsetDelta?: number;
  codec?: CompressionCodec;
  attributes?: number;
  baseTimestamp?: bigint;
  maxTimestamp?: bigint;
  producerId?: bigint;
  producerEpoch?: number;
  baseSequence?: number;
}

/** A v2 batch around a records section, header laid out by hand, CRC-32C filled in. */
export function batchBytes(spec: BatchSpec): Buffer {
  const h = Buffer.alloc(61);
  h.writeBigInt64BE(0n, 0);
  h.writeInt32BE(61 - 12 + spec.records.length, 8);
  h.writeInt32BE(-1, 12);
  h.writeInt8(2, 16);
  h.writeInt16BE((spec.attributes ?? 0) | (spec.codec ?? CompressionCodec.None), 21);
  h.writeInt32BE(spec.lastOffsetDelta ?? spec.count - 1, 23);
  h.writeBigInt64BE(spec.baseTimestamp ?? 1_700_000_000_000n, 27);
  h.writeBigInt64BE(spec.maxTimestamp ?? spec.baseTimestamp ?? 1_700_000_000_000n, 35);
  h.writeBigInt64BE(spec.producerId ?? -1n, 43);
  h.writeInt16BE(spec.producerEpoch ?? -1, 51);
  h.writeInt32BE(spec.baseSequence ?? -1, 53);
  h.writeInt32BE(spec.count, 57);
  return resign(Buffer.concat([h, spec.records]));
}

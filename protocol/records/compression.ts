/**
 * The five record-batch compression codecs, each decompressed under an output
 * budget: a batch of a few kilobytes can claim gigabytes once inflated, so every
 * codec stops as soon as its output would pass `maxBytes` and fails with a
 * DecodeError instead of allocating what the input asks for.
 *
 * How each codec is bounded for real:
 * - gzip: zlib's `maxOutputLength`, which aborts inflation at the limit.
 * - snappy: each raw block starts with its uncompressed length (a varint), read
 *   and checked before the block is handed to the library. Xerial framing (what
 *   Java clients write) is a sequence of such blocks, each checked alike.
 * - lz4: the frame is parsed here and each block decompressed on its own, into
 *   at most the frame's block maximum (64 KiB to 4 MiB) or the budget left.
 * - zstd: the streaming decompressor writes into output chunks we allocate, no
 *   larger than the budget left, and its window is capped (`windowLogMax`).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import * as snappy from 'snappy';
import * as lz4 from 'lz4-napi';
// The native binding exposes zstd's streaming API, which the high-level wrapper hides.
import zstd from 'zstd-napi/binding.js';
import { DecodeError } from '../primitives/decode-error.js';

export const CompressionCodec = {
  None: 0,
  Gzip: 1,
  Snappy: 2,
  Lz4: 3,
  Zstd: 4,
} as const;
export type CompressionCodec = (typeof CompressionCodec)[keyof typeof CompressionCodec];

export const CODEC_NAMES: Record<CompressionCodec, string> = {
  0: 'none',
  1: 'gzip',
  2: 'snappy',
  3: 'lz4',
  4: 'zstd',
};

export function isCompressionCodec(n: number): n is CompressionCodec {
  return Number.isInteger(n) && n >= 0 && n <= 4;
}

/**
 * Default ceiling for one batch's decompressed records. Kafka's own default
 * batch limit (message.max.bytes) is about 1 MiB compressed; 64 MiB leaves room
 * for very compressible data while keeping a hostile batch harmless.
 */
export const DEFAULT_DECOMPRESSION_BUDGET = 64 * 1024 * 1024;

/**
 * The records would inflate past the budget. A DecodeError like any other, so
 * callers that only care whether bytes decode need not know it; a Produce
 * tells it apart, because the batch is too large rather than corrupt.
 */
export class InflationLimitError extends DecodeError {}

/**
 * How far the batches of one request may inflate: each batch up to
 * `maxBatchBytes`, all of them together up to what `requestBytesLeft` holds
 * (a counter the batches draw down as they inflate).
 */
export interface InflationBudget {
  readonly maxBatchBytes: number;
  readonly maxRequestBytes: number;
  requestBytesLeft: number;
}

/** A fresh budget for one request. */
export function inflationBudget(maxBatchBytes: number, maxRequestBytes: number): InflationBudget {
  return { maxBatchBytes, maxRequestBytes, requestBytesLeft: maxRequestBytes };
}

export interface CompressOptions {
  /** Codec-specific level; the library default when absent. */
  level?: number;
}

export function compress(codec: CompressionCodec, data: Buffer, options: CompressOptions = {}): Buffer {
  switch (codec) {
    case CompressionCodec.None:
      return data;
    case CompressionCodec.Gzip:
      return gzipSync(data, options.level === undefined ? {} : { level: options.level });
    case CompressionCodec.Snappy:
      return compressSnappy(data);
    case CompressionCodec.Lz4:
      return lz4.compressFrameSync(data);
    case CompressionCodec.Zstd:
      return compressZstd(data, options.level ?? 3);
  }
}

/**
 * Decompresses `data` and fails once the output would exceed `maxBytes`.
 * `at` is where `data` starts in the enclosing input, for error positions.
 */
export function decompress(codec: CompressionCodec, data: Buffer, maxBytes = DEFAULT_DECOMPRESSION_BUDGET, at = 0): Buffer {
  if (!Number.isInteger(maxBytes) || maxBytes < 0) throw new RangeError(`decompression budget ${maxBytes} is not a byte count`);
  const budget = new OutputBudget(CODEC_NAMES[codec], maxBytes, at);
  switch (codec) {
    case CompressionCodec.None:
      budget.take(data.length);
      return data;
    case CompressionCodec.Gzip:
      return decompressGzip(data, budget);
    case CompressionCodec.Snappy:
      return decompressSnappy(data, budget);
    case CompressionCodec.Lz4:
      return decompressLz4(data, budget);
    case CompressionCodec.Zstd:
      return decompressZstd(data, budget);
  }
}

/** Counts output bytes against the budget and phrases the codec's failures. */
class OutputBudget {
  used = 0;

  constructor(
    readonly codec: string,
    readonly maxBytes: number,
    readonly at: number,
  ) {}

  get left(): number {
    return this.maxBytes - this.used;
  }

  /** Claims `n` more output bytes, or fails before they are produced. */
  take(n: number): void {
    if (n > this.left) this.exceeded();
    this.used += n;
  }

  exceeded(): never {
    throw new InflationLimitError(`${this.codec} decompression exceeds the ${this.maxBytes}-byte budget`, this.at);
  }

  corrupt(detail: string): never {
    throw new DecodeError(`${this.codec} compressed records are corrupt: ${detail}`, this.at);
  }
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

// ---------------------------------------------------------------- gzip

function decompressGzip(data: Buffer, budget: OutputBudget): Buffer {
  try {
    // maxOutputLength must be at least 1; an empty budget still admits empty output.
    return gunzipSync(data, { maxOutputLength: Math.max(1, budget.maxBytes) });
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') budget.exceeded();
    budget.corrupt(messageOf(e));
  }
}

// ---------------------------------------------------------------- snappy

/** Xerial snappy-java's stream header: magic, then version and minimum compatible version. */
const XERIAL_MAGIC = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
const XERIAL_HEADER_SIZE = 16;
/**
 * Snappy is written as one raw block, as librdkafka writes it. Java clients
 * write xerial framing instead, but every Kafka reader we know accepts a raw
 * block (snappy-java's stream falls back to it when the magic is absent, and
 * librdkafka, franz-go and kafkajs's codec detect the framing), while
 * @platformatic/kafka 1.x reads raw blocks only. So: decode both, encode raw.
 */
function compressSnappy(data: Buffer): Buffer {
  return snappy.compressSync(data);
}

function isXerialFramed(data: Buffer): boolean {
  return data.length >= XERIAL_HEADER_SIZE && data.subarray(0, XERIAL_MAGIC.length).equals(XERIAL_MAGIC);
}

function decompressSnappy(data: Buffer, budget: OutputBudget): Buffer {
  if (!isXerialFramed(data)) return decompressSnappyBlock(data, budget);
  const blocks: Buffer[] = [];
  let at = XERIAL_HEADER_SIZE;
  while (at < data.length) {
    if (data.length - at < 4) budget.corrupt(`xerial block size at compressed byte ${at} is truncated`);
    const size = data.readInt32BE(at);
    if (size < 0 || size > data.length - at - 4) budget.corrupt(`xerial block size ${size} at compressed byte ${at} runs past the end`);
    blocks.push(decompressSnappyBlock(data.subarray(at + 4, at + 4 + size), budget));
    at += 4 + size;
  }
  return blocks.length === 1 ? blocks[0]! : Buffer.concat(blocks, budget.used);
}

/** One raw snappy block, whose varint preamble says how large it will inflate. */
function decompressSnappyBlock(block: Buffer, budget: OutputBudget): Buffer {
  budget.take(snappyPreamble(block, budget));
  try {
    return snappy.uncompressSync(block, { asBuffer: true }) as Buffer;
  } catch (e) {
    budget.corrupt(messageOf(e));
  }
}

function snappyPreamble(block: Buffer, budget: OutputBudget): number {
  let length = 0;
  for (let i = 0; i < 5 && i < block.length; i++) {
    const byte = block[i]!;
    length += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) return length;
  }
  return budget.corrupt('block length preamble is truncated or longer than 32 bits');
}

// ---------------------------------------------------------------- lz4

const LZ4_MAGIC = 0x184d2204;
const LZ4_SKIPPABLE_MASK = 0xfffffff0;
const LZ4_SKIPPABLE_MAGIC = 0x184d2a50;
/** Linked blocks may refer back this far into earlier output. */
const LZ4_WINDOW = 64 * 1024;

const Lz4Flag = {
  Version: 0xc0,
  VersionOne: 0x40,
  BlockIndependent: 0x20,
  BlockChecksum: 0x10,
  ContentSize: 0x08,
  ContentChecksum: 0x04,
  DictId: 0x01,
} as const;

/**
 * Parses LZ4 frames (Kafka's format for magic 1 and 2) block by block. The
 * header checksum byte is not verified: Kafka clients of the magic-0 era wrote
 * it wrongly, and the batch CRC already guards these bytes.
 */
function decompressLz4(data: Buffer, budget: OutputBudget): Buffer {
  const out: Buffer[] = [];
  let at = 0;
  const need = (n: number, what: string): void => {
    if (data.length - at < n) budget.corrupt(`${what} at compressed byte ${at} is truncated`);
  };
  while (at < data.length) {
    need(4, 'frame magic');
    const magic = data.readUInt32LE(at);
    if ((magic & LZ4_SKIPPABLE_MASK) >>> 0 === LZ4_SKIPPABLE_MAGIC) {
      need(8, 'skippable frame');
      const size = data.readUInt32LE(at + 4);
      at += 8;
      need(size, 'skippable frame');
      at += size;
      continue;
    }
    if (magic !== LZ4_MAGIC) budget.corrupt(`bad frame magic 0x${magic.toString(16)} at compressed byte ${at}`);
    need(7, 'frame descriptor');
    const flags = data[at + 4]!;
    const blockDescriptor = data[at + 5]!;
    at += 6;
    if ((flags & Lz4Flag.Version) !== Lz4Flag.VersionOne) budget.corrupt(`frame version bits 0x${flags.toString(16)} are not version 1`);
    if (flags & Lz4Flag.DictId) budget.corrupt('frames that need a dictionary are not supported');
    const sizeCode = (blockDescriptor >> 4) & 0x07;
    if (sizeCode < 4) budget.corrupt(`block maximum size code ${sizeCode} is invalid`);
    const blockMax = 1 << (2 * sizeCode + 8);
    let contentSize = -1;
    if (flags & Lz4Flag.ContentSize) {
      need(9, 'frame content size');
      const declared = data.readBigUInt64LE(at);
      // Fail before inflating anything when the frame says up front it is too big.
      if (declared > BigInt(budget.left)) budget.exceeded();
      contentSize = Number(declared);
      at += 8;
    }
    at += 1; // header checksum, see above
    const frameStart = budget.used;
    const frameOut: Buffer[] = [];
    let window: Buffer | null = null;
    for (;;) {
      need(4, 'block size');
      const word = data.readUInt32LE(at);
      at += 4;
      if (word === 0) break;
      const stored = (word & 0x80000000) !== 0;
      const size = word & 0x7fffffff;
      if (size > blockMax) budget.corrupt(`block of ${size} bytes exceeds the frame's ${blockMax}-byte maximum`);
      need(size, 'block');
      const block = data.subarray(at, at + size);
      at += size;
      if (flags & Lz4Flag.BlockChecksum) {
        need(4, 'block checksum');
        at += 4;
      }
      const plain = stored ? storedLz4Block(block, budget) : inflateLz4Block(block, blockMax, window, budget);
      frameOut.push(plain);
      if (!(flags & Lz4Flag.BlockIndependent)) window = lz4Window(window, plain);
    }
    if (flags & Lz4Flag.ContentChecksum) {
      need(4, 'content checksum');
      at += 4;
    }
    if (contentSize >= 0 && budget.used - frameStart !== contentSize) {
      budget.corrupt(`frame declares ${contentSize} bytes of content but holds ${budget.used - frameStart}`);
    }
    out.push(...frameOut);
  }
  return out.length === 1 ? out[0]! : Buffer.concat(out, budget.used);
}

function storedLz4Block(block: Buffer, budget: OutputBudget): Buffer {
  budget.take(block.length);
  return block;
}

/**
 * Decompresses one block into at most min(block maximum, budget left) bytes.
 * The library's block API takes the output size as a 4-byte little-endian
 * prefix and refuses to write past it.
 */
function inflateLz4Block(block: Buffer, blockMax: number, window: Buffer | null, budget: OutputBudget): Buffer {
  const limit = Math.min(blockMax, budget.left);
  const framed = Buffer.allocUnsafe(4 + block.length);
  framed.writeUInt32LE(limit, 0);
  block.copy(framed, 4);
  let plain: Buffer;
  try {
    plain = window ? lz4.uncompressSync(framed, window) : lz4.uncompressSync(framed);
  } catch (e) {
    if (limit < blockMax && /too small/.test(messageOf(e))) budget.exceeded();
    budget.corrupt(messageOf(e));
  }
  budget.take(plain.length);
  return plain;
}

/** The last 64 KiB of output, which a linked block may copy from. */
function lz4Window(window: Buffer | null, plain: Buffer): Buffer {
  const joined = window ? Buffer.concat([window, plain]) : plain;
  return joined.length > LZ4_WINDOW ? Buffer.from(joined.subarray(joined.length - LZ4_WINDOW)) : joined;
}

// ---------------------------------------------------------------- zstd

let zstdCompressor: InstanceType<typeof zstd.CCtx> | null = null;
let zstdDecompressor: InstanceType<typeof zstd.DCtx> | null = null;

function compressZstd(data: Buffer, level: number): Buffer {
  zstdCompressor ??= new zstd.CCtx();
  const out = Buffer.allocUnsafe(zstd.compressBound(data.length));
  const n = zstdCompressor.compress(out, data, level);
  return out.subarray(0, n);
}

/** zstd's default window limit (2^27); hostile frames cannot ask for more. */
const ZSTD_WINDOW_LOG_LIMIT = 27;
/** Producers stream with windows up to 2^23 at common levels; never refuse those. */
const ZSTD_WINDOW_LOG_FLOOR = 23;
const ZSTD_CHUNK = zstd.dStreamOutSize();

function decompressZstd(data: Buffer, budget: OutputBudget): Buffer {
  zstdDecompressor ??= new zstd.DCtx();
  const dctx = zstdDecompressor;
  dctx.reset(zstd.ResetDirective.sessionAndParameters);
  // A window wider than the whole budget buys nothing but a larger allocation.
  const budgetLog = Math.ceil(Math.log2(Math.max(2, budget.maxBytes)));
  dctx.setParameter(zstd.DParameter.windowLogMax, Math.min(ZSTD_WINDOW_LOG_LIMIT, Math.max(ZSTD_WINDOW_LOG_FLOOR, budgetLog)));
  const chunks: Buffer[] = [];
  let input = data;
  let frameOpen = false;
  try {
    while (input.length > 0 || frameOpen) {
      // One byte past the budget is enough to learn that the budget is exceeded.
      const chunk = Buffer.allocUnsafe(Math.min(ZSTD_CHUNK, budget.left + 1));
      const [hint, produced, consumed] = dctx.decompressStream(chunk, input);
      budget.take(produced);
      if (produced > 0) chunks.push(chunk.subarray(0, produced));
      input = input.subarray(consumed);
      frameOpen = hint !== 0;
      if (frameOpen && input.length === 0 && produced < chunk.length) budget.corrupt('the last frame is truncated');
      if (produced === 0 && consumed === 0 && input.length > 0) budget.corrupt('the decoder made no progress');
    }
  } catch (e) {
    if (e instanceof DecodeError) throw e;
    dctx.reset(zstd.ResetDirective.sessionOnly);
    budget.corrupt(messageOf(e));
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, budget.used);
}

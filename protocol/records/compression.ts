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
import { decompressLz4 } from './lz4-frames.js';
import { messageOf, OutputBudget } from './output-budget.js';

export { InflationLimitError } from './output-budget.js';

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

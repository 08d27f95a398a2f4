/** LZ4 frames as Kafka writes them, decompressed within an output budget (./compression.ts). */
import * as lz4 from 'lz4-napi';
import { messageOf, type OutputBudget } from './output-budget.js';

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
export function decompressLz4(data: Buffer, budget: OutputBudget): Buffer {
  const out: Buffer[] = [];
  const c = new Lz4Cursor(data, budget);
  while (c.at < data.length) {
    c.need(4, 'frame magic');
    const magic = data.readUInt32LE(c.at);
    if ((magic & LZ4_SKIPPABLE_MASK) >>> 0 === LZ4_SKIPPABLE_MAGIC) {
      c.need(8, 'skippable frame');
      const size = data.readUInt32LE(c.at + 4);
      c.at += 8;
      c.need(size, 'skippable frame');
      c.at += size;
      continue;
    }
    if (magic !== LZ4_MAGIC) budget.corrupt(`bad frame magic 0x${magic.toString(16)} at compressed byte ${c.at}`);
    const frame = readLz4Descriptor(c, budget);
    const frameStart = budget.used;
    const frameOut = readLz4Blocks(c, frame, budget);
    if (frame.flags & Lz4Flag.ContentChecksum) {
      c.need(4, 'content checksum');
      c.at += 4;
    }
    if (frame.contentSize >= 0 && budget.used - frameStart !== frame.contentSize) {
      budget.corrupt(`frame declares ${frame.contentSize} bytes of content but holds ${budget.used - frameStart}`);
    }
    out.push(...frameOut);
  }
  return out.length === 1 ? out[0]! : Buffer.concat(out, budget.used);
}

/** The position in LZ4 frame bytes; `need` fails, naming what was cut short, when fewer than n bytes are left. */
class Lz4Cursor {
  at = 0;

  constructor(
    readonly data: Buffer,
    private readonly budget: OutputBudget,
  ) {}

  need(n: number, what: string): void {
    if (this.data.length - this.at < n) this.budget.corrupt(`${what} at compressed byte ${this.at} is truncated`);
  }
}

interface Lz4Frame {
  flags: number;
  blockMax: number;
  /** The content size the frame declares, or -1. */
  contentSize: number;
}

/** The frame descriptor after the magic: flags, block maximum size, optional content size, header checksum. */
function readLz4Descriptor(c: Lz4Cursor, budget: OutputBudget): Lz4Frame {
  c.need(7, 'frame descriptor');
  const flags = c.data[c.at + 4]!;
  const blockDescriptor = c.data[c.at + 5]!;
  c.at += 6;
  if ((flags & Lz4Flag.Version) !== Lz4Flag.VersionOne) budget.corrupt(`frame version bits 0x${flags.toString(16)} are not version 1`);
  if (flags & Lz4Flag.DictId) budget.corrupt('frames that need a dictionary are not supported');
  const sizeCode = (blockDescriptor >> 4) & 0x07;
  if (sizeCode < 4) budget.corrupt(`block maximum size code ${sizeCode} is invalid`);
  const blockMax = 1 << (2 * sizeCode + 8);
  let contentSize = -1;
  if (flags & Lz4Flag.ContentSize) {
    c.need(9, 'frame content size');
    const declared = c.data.readBigUInt64LE(c.at);
    // Fail before inflating anything when the frame says up front it is too big.
    if (declared > BigInt(budget.left)) budget.exceeded();
    contentSize = Number(declared);
    c.at += 8;
  }
  c.at += 1; // header checksum, see decompressLz4
  return { flags, blockMax, contentSize };
}

/** A frame's blocks up to its end mark, each inflated (or taken as stored) within the budget. */
function readLz4Blocks(c: Lz4Cursor, frame: Lz4Frame, budget: OutputBudget): Buffer[] {
  const { flags, blockMax } = frame;
  const frameOut: Buffer[] = [];
  let window: Buffer | null = null;
  for (;;) {
    c.need(4, 'block size');
    const word = c.data.readUInt32LE(c.at);
    c.at += 4;
    if (word === 0) return frameOut;
    const stored = (word & 0x80000000) !== 0;
    const size = word & 0x7fffffff;
    if (size > blockMax) budget.corrupt(`block of ${size} bytes exceeds the frame's ${blockMax}-byte maximum`);
    c.need(size, 'block');
    const block = c.data.subarray(c.at, c.at + size);
    c.at += size;
    if (flags & Lz4Flag.BlockChecksum) {
      c.need(4, 'block checksum');
      c.at += 4;
    }
    const plain = stored ? storedLz4Block(block, budget) : inflateLz4Block(block, blockMax, window, budget);
    frameOut.push(plain);
    if (!(flags & Lz4Flag.BlockIndependent)) window = lz4Window(window, plain);
  }
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

/**
 * Legacy message sets (magic 0 and 1), as Produce v0-v2 clients send them,
 * decoded and converted to one RecordBatch v2 so storage holds one format.
 *
 *   MessageSet := (offset int64, size int32, Message)*
 *   Message v0 := crc uint32, magic int8, attributes int8, key bytes, value bytes
 *   Message v1 := crc uint32, magic int8, attributes int8, timestamp int64, key bytes, value bytes
 *
 * The CRC-32 (IEEE) covers magic to the end of the message. A compressed
 * message is a wrapper whose value is an inner message set; as in Kafka, inner
 * messages may not themselves be compressed and must share the wrapper's magic.
 *
 * The reverse conversion (v2 to magic 0/1) is not built: only Fetch v0-v3
 * returned message sets, and the gateway serves Fetch from v4.
 */
import { crc32 } from 'node:zlib';
import { DecodeError } from '../primitives/decode-error.js';
import { Reader } from '../primitives/reader.js';
import { CODEC_NAMES, CompressionCodec, DEFAULT_DECOMPRESSION_BUDGET, decompress, isCompressionCodec } from './compression.js';
import { NO_TIMESTAMP, TimestampType, buildBatch } from './record-batch.js';

const LegacyAttr = {
  CompressionMask: 0x07,
  TimestampLogAppend: 0x08,
} as const;

/** Bytes from the crc to the end of an empty-keyed, empty-valued message, per magic. */
const MIN_MESSAGE_SIZE = { 0: 14, 1: 22 } as const;
/** offset + size */
const ENTRY_PREFIX = 12;

export interface LegacyMessage {
  /** The offset the producer wrote (ignored by a broker, which assigns its own). */
  offset: bigint;
  magic: 0 | 1;
  /** -1 for magic 0, which has no timestamp. */
  timestamp: bigint;
  timestampType: TimestampType;
  key: Buffer | null;
  value: Buffer | null;
  /** Codec of the wrapper this message came out of, None when it was not wrapped. */
  compression: CompressionCodec;
}

export interface MessageSetOptions {
  /** Ceiling on the bytes all compressed wrappers of the set may inflate to, together. */
  maxBytes?: number;
}

/** Decodes a message set, unwrapping compressed messages into their inner messages. */
export function decodeMessageSet(buf: Buffer, options: MessageSetOptions = {}): LegacyMessage[] {
  const budget = { left: options.maxBytes ?? DEFAULT_DECOMPRESSION_BUDGET };
  const out: LegacyMessage[] = [];
  for (const wrapper of readEntries(new Reader(buf), 0)) {
    if (wrapper.codec === CompressionCodec.None) {
      out.push({ ...wrapper.message, compression: CompressionCodec.None });
      continue;
    }
    const inner = unwrap(wrapper, budget);
    out.push(...inner);
  }
  return out;
}

interface Entry {
  message: Omit<LegacyMessage, 'compression'>;
  codec: CompressionCodec;
  /** Where the entry starts in the buffer it was read from. */
  at: number;
}

function unwrap(wrapper: Entry, budget: { left: number }): LegacyMessage[] {
  const { message, codec, at } = wrapper;
  if (message.value === null) throw new DecodeError('compressed wrapper message has a null value', at);
  const plain = decompress(codec, message.value, budget.left, at);
  budget.left -= plain.length;
  let entries: Entry[];
  try {
    entries = readEntries(new Reader(plain), message.magic);
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    throw new DecodeError(`in the inner messages of a ${CODEC_NAMES[codec]} wrapper: ${e.message}`, at);
  }
  return entries.map(({ message: inner, codec: innerCodec }) => {
    if (innerCodec !== CompressionCodec.None) throw new DecodeError('a compressed wrapper holds a compressed inner message; nesting is not allowed', at);
    if (inner.magic !== message.magic) throw new DecodeError(`inner message magic ${inner.magic} differs from its wrapper's magic ${message.magic}`, at);
    // Under LogAppendTime the wrapper's timestamp is every inner message's timestamp.
    const timestamp = message.timestampType === TimestampType.LogAppendTime ? message.timestamp : inner.timestamp;
    return { ...inner, timestamp, timestampType: message.timestampType, compression: codec };
  });
}

/**
 * Reads every entry of a message set; a partial trailing entry is an error,
 * since a producer sends whole messages. `innerOf` is the wrapper's magic when
 * reading an inner set (0 at the top level), for the message size check.
 */
function readEntries(r: Reader, innerOf: number): Entry[] {
  const entries: Entry[] = [];
  while (r.remaining > 0) {
    const at = r.pos;
    const offset = r.int64();
    const size = r.int32();
    if (size < MIN_MESSAGE_SIZE[0] || size > r.remaining) r.fail(`message size ${size} is invalid with ${r.remaining} bytes left`);
    entries.push(readMessage(new Reader(r.buf, r.pos, r.pos + size), offset, at));
    r.pos += size;
  }
  if (innerOf > 0 && entries.length === 0) r.fail('a compressed wrapper holds no messages');
  return entries;
}

function readMessage(m: Reader, offset: bigint, at: number): Entry {
  const crc = m.uint32();
  const computed = crc32(m.buf.subarray(m.pos, m.end)) >>> 0;
  if (crc !== computed) m.fail(`message CRC-32 is 0x${crc.toString(16)} but the bytes give 0x${computed.toString(16)}; the message is corrupt`);
  const magic = m.int8();
  if (magic !== 0 && magic !== 1) m.fail(`message magic ${magic} is not 0 or 1`);
  if (m.end - at - ENTRY_PREFIX < MIN_MESSAGE_SIZE[magic]) m.fail(`message of ${m.end - at - ENTRY_PREFIX} bytes is too short for magic ${magic}`);
  const attributes = m.int8();
  const codec = attributes & LegacyAttr.CompressionMask;
  // zstd (4) arrived with magic 2 and never existed for message sets.
  if (!isCompressionCodec(codec) || codec === CompressionCodec.Zstd) m.fail(`message names compression codec ${codec}, which message sets do not support`);
  const timestamp = magic === 1 ? m.int64() : NO_TIMESTAMP;
  const timestampType = magic === 1 && attributes & LegacyAttr.TimestampLogAppend ? TimestampType.LogAppendTime : TimestampType.CreateTime;
  const key = m.nullableBytes();
  const value = m.nullableBytes();
  if (m.remaining !== 0) m.fail(`${m.remaining} bytes remain after the message's value`);
  return { message: { offset, magic, timestamp, timestampType, key, value }, codec, at };
}

export interface ConvertOptions extends MessageSetOptions {
  /** Codec of the resulting batch; by default the producer's (its first wrapper's), as Kafka keeps it. */
  compression?: CompressionCodec;
}

/**
 * Converts a legacy message set to one RecordBatch v2 holding the same
 * records in order (offset deltas 0..n-1; magic-0 records get no timestamp).
 */
export function messageSetToBatch(buf: Buffer, options: ConvertOptions = {}): Buffer {
  const messages = decodeMessageSet(buf, options);
  const first = messages[0];
  if (first === undefined) throw new DecodeError('message set holds no messages', 0);
  return buildBatch({
    records: messages.map((m) => ({ key: m.key, value: m.value, timestamp: m.timestamp })),
    compression: options.compression ?? first.compression,
    timestampType: first.timestampType,
  });
}

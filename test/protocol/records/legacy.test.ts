import { describe, expect, it } from 'vitest';
import { gzipSync } from 'node:zlib';
import * as lz4 from 'lz4-napi';
import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import {
  CompressionCodec,
  TimestampType,
  decodeBatch,
  decodeMessageSet,
  messageSetToBatch,
  validateBatch,
} from '../../../protocol/records/index.js';
import { legacyMessage, messageSet, require, xerialSnappy } from './bytes.js';

const KafkajsMessageSet = require('kafkajs/src/protocol/messageSet');
const { Types: KafkajsCompression } = require('kafkajs/src/protocol/message/compression');

const GZIP = 1;
const SNAPPY = 2;
const LZ4 = 3;
const LOG_APPEND_TIME = 0x08;

function plainSet(magic: 0 | 1): Buffer {
  return messageSet([
    { offset: 0, message: legacyMessage({ magic, timestamp: 1000n, key: 'a', value: 'one' }) },
    { offset: 1, message: legacyMessage({ magic, timestamp: 1001n, key: null, value: 'two' }) },
    { offset: 2, message: legacyMessage({ magic, timestamp: 1002n, key: 'c', value: null }) },
  ]);
}

/** A wrapper message whose value is `inner` compressed, as Kafka 0.10 producers send it. */
function wrapped(attributes: number, value: Buffer, magic: 0 | 1 = 1, timestamp = 5000n): Buffer {
  return messageSet([{ offset: 2, message: legacyMessage({ magic, attributes, timestamp, key: null, value }) }]);
}

describe('decodeMessageSet', () => {
  it.each([0, 1] as const)('reads an uncompressed magic %i set', (magic) => {
    const messages = decodeMessageSet(plainSet(magic));
    expect(messages.map((m) => [m.offset, m.magic, m.timestamp, m.key?.toString() ?? null, m.value?.toString() ?? null])).toEqual([
      [0n, magic, magic === 1 ? 1000n : -1n, 'a', 'one'],
      [1n, magic, magic === 1 ? 1001n : -1n, null, 'two'],
      [2n, magic, magic === 1 ? 1002n : -1n, 'c', null],
    ]);
  });

  it.each([
    ['gzip', GZIP, (b: Buffer) => gzipSync(b)],
    ['snappy (xerial, as Java clients wrote it)', SNAPPY, (b: Buffer) => xerialSnappy(b)],
    ['lz4', LZ4, (b: Buffer) => lz4.compressFrameSync(b)],
  ])('unwraps a %s wrapper into its inner messages', (_, codec, pack) => {
    const inner = plainSet(1);
    const messages = decodeMessageSet(wrapped(codec, pack(inner)));
    expect(messages.map((m) => [m.value?.toString() ?? null, m.timestamp, m.compression])).toEqual([
      ['one', 1000n, codec],
      ['two', 1001n, codec],
      [null, 1002n, codec],
    ]);
  });

  it('gives inner messages the wrapper timestamp under LogAppendTime', () => {
    const inner = plainSet(1);
    const messages = decodeMessageSet(wrapped(GZIP | LOG_APPEND_TIME, gzipSync(inner), 1, 7777n));
    expect(messages.map((m) => [m.timestamp, m.timestampType])).toEqual(Array(3).fill([7777n, TimestampType.LogAppendTime]));
  });

  it('reads message sets encoded by kafkajs, plain and gzip-wrapped as its Produce v2 sends them', async () => {
    const entries = [
      { key: 'k1', value: 'v1', timestamp: 10 },
      { key: 'k2', value: 'v2', timestamp: 20 },
    ];
    for (const messageVersion of [0, 1]) {
      const plain = KafkajsMessageSet({ messageVersion, compression: KafkajsCompression.None, entries }).buffer as Buffer;
      expect(decodeMessageSet(plain).map((m) => [m.magic, m.key?.toString(), m.value?.toString()])).toEqual([
        [messageVersion, 'k1', 'v1'],
        [messageVersion, 'k2', 'v2'],
      ]);
    }
    const inner = KafkajsMessageSet({ messageVersion: 1, compression: KafkajsCompression.GZIP, entries });
    const outer = KafkajsMessageSet({
      messageVersion: 1,
      entries: [{ compression: KafkajsCompression.GZIP, timestamp: 20, value: gzipSync(inner.buffer) }],
    }).buffer as Buffer;
    expect(decodeMessageSet(outer).map((m) => [m.offset, m.timestamp, m.value?.toString(), m.compression])).toEqual([
      [0n, 10n, 'v1', CompressionCodec.Gzip],
      [1n, 20n, 'v2', CompressionCodec.Gzip],
    ]);
  });

  it.each<[string, () => Buffer, RegExp]>([
    ['a bad CRC', () => { const b = plainSet(1); b[b.length - 1]! ^= 1; return b; }, /message CRC-32 is .* the message is corrupt/],
    ['magic 2', () => messageSet([{ offset: 0, message: legacyMessage({ magic: 2 as 1, key: null, value: 'x' }) }]), /message magic 2 is not 0 or 1/],
    ['a zstd wrapper', () => wrapped(4, Buffer.from('x')), /compression codec 4, which message sets do not support/],
    ['a truncated trailing message', () => plainSet(0).subarray(0, plainSet(0).length - 3), /message size \d+ is invalid/],
    ['a negative message size', () => { const b = plainSet(0); b.writeInt32BE(-1, 8); return b; }, /message size -1 is invalid/],
    ['a wrapper with a null value', () => messageSet([{ offset: 0, message: legacyMessage({ magic: 1, attributes: GZIP, key: null, value: null }) }]), /null value/],
    ['nested compression', () => { const deep = wrapped(GZIP, gzipSync(plainSet(1))); return wrapped(GZIP, gzipSync(deep)); }, /nesting is not allowed/],
    ['inner magic differing from the wrapper', () => wrapped(GZIP, gzipSync(plainSet(0))), /inner message magic 0 differs from its wrapper's magic 1/],
    ['an empty wrapper', () => wrapped(GZIP, gzipSync(Buffer.alloc(0))), /holds no messages/],
    ['garbage inside a wrapper', () => wrapped(GZIP, gzipSync(Buffer.from('not a message set'))), /in the inner messages of a gzip wrapper/],
  ])('refuses %s with a DecodeError', (_, build, message) => {
    const input = build();
    expect(() => decodeMessageSet(input)).toThrow(DecodeError);
    expect(() => decodeMessageSet(input)).toThrowError(message);
  });

  it('counts the decompression budget across wrappers', () => {
    const inner = plainSet(1);
    const one = wrapped(GZIP, gzipSync(inner));
    expect(decodeMessageSet(one, { maxBytes: inner.length })).toHaveLength(3);
    expect(() => decodeMessageSet(Buffer.concat([one, one]), { maxBytes: inner.length * 2 - 1 })).toThrowError(/exceeds the/);
  });
});

describe('messageSetToBatch', () => {
  it('converts a magic 1 set into one valid v2 batch with the same records in order', () => {
    const batch = messageSetToBatch(plainSet(1));
    const d = decodeBatch(batch, 0, { fromClient: true });
    expect(d.compression).toBe(CompressionCodec.None);
    expect(d.header).toMatchObject({ recordCount: 3, lastOffsetDelta: 2, baseTimestamp: 1000n, maxTimestamp: 1002n, producerId: -1n });
    expect(d.records.map((r) => [r.offsetDelta, r.timestampDelta, r.key?.toString() ?? null, r.value?.toString() ?? null, r.headers])).toEqual([
      [0, 0, 'a', 'one', []],
      [1, 1, null, 'two', []],
      [2, 2, 'c', null, []],
    ]);
  });

  it('gives magic 0 records no timestamp (-1), as Kafka does on up-conversion', () => {
    const d = decodeBatch(messageSetToBatch(plainSet(0)));
    expect(d.header.baseTimestamp).toBe(-1n);
    expect(d.records.every((r) => r.timestampDelta === 0)).toBe(true);
  });

  it('keeps the producer\'s codec unless told otherwise', () => {
    const inner = plainSet(1);
    const set = wrapped(GZIP, gzipSync(inner));
    expect(validateBatch(messageSetToBatch(set)).compression).toBe(CompressionCodec.Gzip);
    const asZstd = messageSetToBatch(set, { compression: CompressionCodec.Zstd });
    expect(decodeBatch(asZstd).records.map((r) => r.value?.toString() ?? null)).toEqual(['one', 'two', null]);
  });

  it('refuses an empty message set', () => {
    expect(() => messageSetToBatch(Buffer.alloc(0))).toThrowError(/holds no messages/);
  });
});

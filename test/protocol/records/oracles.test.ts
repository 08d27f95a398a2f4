/**
 * Independent oracles: batches built by kafkajs's and @platformatic/kafka's own
 * encoders parse with ours, and batches we build parse with their decoders.
 * kafkajs ships gzip only; for snappy, lz4 and zstd it is given codecs built on
 * our compression module, which still checks that the batch framing around
 * compressed records agrees. @platformatic/kafka brings its own codecs
 * (its zstd needs Node's zlib zstd, absent before Node 22.15).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as platformatic from '@platformatic/kafka';
import {
  CompressionCodec,
  buildBatch,
  buildControlBatch,
  ControlRecordType,
  compress,
  decodeBatch,
  decompress,
  validateBatch,
  type BuildBatchOptions,
  type DecodedBatch,
} from '../../../protocol/records/index.js';
import { CODECS, require, xerialSnappy } from './bytes.js';

// kafkajs's protocol internals are untyped CommonJS.
const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0');
const KafkajsRecord = require('kafkajs/src/protocol/recordBatch/record/v0');
const KafkajsDecoder = require('kafkajs/src/protocol/decoder');
const decodeKafkajsBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder');
const { Codecs: kafkajsCodecs } = require('kafkajs/src/protocol/message/compression');
const Long = require('kafkajs/src/utils/long');

const BASE_TS = 1_700_000_000_000;
const sample = [
  { key: 'order-1', value: 'created', ts: BASE_TS, headers: { source: 'web' } as Record<string, string> },
  { key: null, value: 'y'.repeat(2000), ts: BASE_TS - 3, headers: {} },
  { key: 'order-1', value: 'paid', ts: BASE_TS + 250, headers: { source: 'api', retry: '2' } },
];

function expectSample(d: DecodedBatch): void {
  expect(d.records).toHaveLength(sample.length);
  d.records.forEach((r, i) => {
    const want = sample[i]!;
    expect(r.offsetDelta).toBe(i);
    expect(r.timestampDelta).toBe(want.ts - BASE_TS);
    expect(r.key === null ? null : r.key.toString()).toBe(want.key);
    expect(r.value?.toString()).toBe(want.value);
    expect(r.headers.map((h) => [h.key, h.value?.toString()])).toEqual(Object.entries(want.headers));
  });
}

function ourSample(compression: CompressionCodec, extra: Partial<BuildBatchOptions> = {}): Buffer {
  return buildBatch({
    records: sample.map((s) => ({
      key: s.key,
      value: s.value,
      timestamp: s.ts,
      headers: Object.entries(s.headers).map(([key, value]) => ({ key, value })),
    })),
    compression,
    ...extra,
  });
}

describe('kafkajs', () => {
  const saved: Record<number, unknown> = {};

  beforeAll(() => {
    for (const codec of [CompressionCodec.Snappy, CompressionCodec.Lz4, CompressionCodec.Zstd]) {
      saved[codec] = kafkajsCodecs[codec];
      kafkajsCodecs[codec] = () => ({
        compress: async (encoder: { buffer: Buffer }) => compress(codec, encoder.buffer),
        decompress: async (buf: Buffer) => decompress(codec, buf),
      });
    }
  });
  afterAll(() => Object.assign(kafkajsCodecs, saved));

  async function kafkajsSample(compression: number, producer = { id: -1, epoch: 0, sequence: 0, transactional: false }): Promise<Buffer> {
    const encoder = await RecordBatch({
      compression,
      firstOffset: Long.fromInt(0),
      firstTimestamp: BASE_TS,
      maxTimestamp: BASE_TS + 250,
      lastOffsetDelta: sample.length - 1,
      producerId: Long.fromValue(producer.id),
      producerEpoch: producer.epoch,
      firstSequence: producer.sequence,
      transactional: producer.transactional,
      records: sample.map((s, i) =>
        KafkajsRecord({ offsetDelta: i, timestampDelta: s.ts - BASE_TS, key: s.key, value: s.value, headers: s.headers }),
      ),
    });
    return encoder.buffer;
  }

  it.each(CODECS)('a %s batch built by kafkajs validates and decodes with ours', async (_, codec) => {
    const batch = await kafkajsSample(codec, { id: 77, epoch: 2, sequence: 40, transactional: true });
    const v = validateBatch(batch);
    expect(v.end).toBe(batch.length);
    expect(v.header).toMatchObject({ producerId: 77n, producerEpoch: 2, baseSequence: 40, recordCount: 3, maxTimestamp: BigInt(BASE_TS + 250) });
    const d = decodeBatch(batch);
    expect(d.compression).toBe(codec);
    expect(d.isTransactional).toBe(true);
    expectSample(d);
  });

  it.each(CODECS)('a %s batch we build decodes with kafkajs', async (_, codec) => {
    const batch = ourSample(codec, { producerId: 12n, producerEpoch: 1, baseSequence: 5, baseOffset: 100n });
    const theirs: any = await decodeKafkajsBatch(new KafkajsDecoder(batch));
    expect(theirs).toMatchObject({ firstOffset: '100', producerId: '12', producerEpoch: 1, firstSequence: 5, lastOffsetDelta: 2 });
    expect(theirs.records.map((r: any) => [r.offset, r.timestamp, r.key?.toString() ?? null, r.value.toString()])).toEqual(
      sample.map((s, i) => [String(100 + i), String(s.ts), s.key, s.value]),
    );
    expect(theirs.records.map((r: any) => Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)])))).toEqual(
      sample.map((s) => s.headers),
    );
  });

  it('sees our commit marker as a control batch', async () => {
    const marker = buildControlBatch({ type: ControlRecordType.Commit, producerId: 3n, producerEpoch: 0, coordinatorEpoch: 1 });
    const theirs: any = await decodeKafkajsBatch(new KafkajsDecoder(marker));
    expect(theirs.isControlBatch).toBe(true);
    expect(theirs.inTransaction).toBe(true);
    expect(theirs.records[0].key).toEqual(Buffer.from([0, 0, 0, 1]));
  });
});

describe('@platformatic/kafka', () => {
  const names = { 0: 'none', 1: 'gzip', 2: 'snappy', 3: 'lz4', 4: 'zstd' } as const;
  const available = (codec: CompressionCodec) => codec === CompressionCodec.None || platformatic.compressionsAlgorithms[names[codec]].available;

  function platformaticSample(codec: CompressionCodec): Buffer {
    const messages = sample.map((s) => ({
      topic: 't',
      partition: 0,
      key: s.key === null ? undefined : Buffer.from(s.key),
      value: Buffer.from(s.value),
      timestamp: BigInt(s.ts),
      headers: new Map(Object.entries(s.headers).map(([k, v]) => [Buffer.from(k), Buffer.from(v)])),
    }));
    return platformatic.createRecordsBatch(messages, { compression: names[codec], producerId: 9n, producerEpoch: 1, partitionLeaderEpoch: 4 }).buffer;
  }

  it.each(CODECS)('a %s batch built by @platformatic/kafka validates and decodes with ours', (_, codec) => {
    if (!available(codec)) return expect(codec).toBe(CompressionCodec.Zstd); // only zstd may be missing, on Node < 22.15
    const batch = platformaticSample(codec);
    const d = decodeBatch(batch, 0, { fromClient: true });
    expect(d.compression).toBe(codec);
    expect(d.header).toMatchObject({ producerId: 9n, producerEpoch: 1, partitionLeaderEpoch: 4, recordCount: 3 });
    // @platformatic writes an absent key as null, like ours.
    expectSample(d);
  });

  it.each(CODECS)('a %s batch we build decodes with @platformatic/kafka', (_, codec) => {
    if (!available(codec)) return expect(codec).toBe(CompressionCodec.Zstd);
    const theirs = platformatic.readRecordsBatch(platformatic.Reader.from(ourSample(codec, { baseOffset: 5n })));
    expect(theirs.firstOffset).toBe(5n);
    expect(theirs.records.map((r) => [r.offsetDelta, Number(r.timestampDelta), r.key?.toString() ?? null, r.value?.toString()])).toEqual(
      sample.map((s, i) => [i, s.ts - BASE_TS, s.key, s.value]),
    );
    expect(theirs.records.map((r) => r.headers.map(([k, v]) => [k?.toString(), v?.toString()]))).toEqual(sample.map((s) => Object.entries(s.headers)));
  });

  it('reads only raw snappy blocks, which is why we write snappy raw and not xerial-framed', () => {
    const plain = Buffer.from('some records');
    expect(platformatic.compressionsAlgorithms.snappy.decompressSync(compress(CompressionCodec.Snappy, plain))).toEqual(plain);
    expect(() => platformatic.compressionsAlgorithms.snappy.decompressSync(xerialSnappy(plain))).toThrow();
  });
});

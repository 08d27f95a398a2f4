import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { responseCodec } from '../../protocol/codec/registry.js';
import { Writer } from '../../protocol/primitives/writer.js';
import { buildBatch } from '../../protocol/records/index.js';
import { kafkajsModule, kafkajsProtocolDir, kafkajsVersions, type KafkajsResponse } from './support/clients.js';
import { expectedReads, recordReads } from './support/read-log.js';
import { sampleMessage } from './support/sample.js';

/**
 * kafkajs 2.2.4 as an independent oracle. Responses: for every API and
 * version kafkajs has (within what we serve), a realistic response we encode
 * is read by kafkajs's own decoder value for value and offset for offset,
 * and its parse step accepts it; the same with real error codes, decode only
 * (kafkajs's parse turns error codes into exceptions by design).
 */

const Decoder = kafkajsModule<{ prototype: Record<string, unknown> }>(join(kafkajsProtocolDir, 'decoder.js'));

const READS = [
  'readInt8', 'readInt16', 'readInt32', 'readInt64', 'readDouble', 'readString', 'readBytes', 'readBoolean',
  'readVarInt', 'readVarLong', 'readUVarInt', 'readVarIntString', 'readUVarIntString', 'readVarIntBytes', 'readUVarIntBytes',
];

const batch = buildBatch({ records: [{ key: 'k1', value: 'v1', timestamp: 1_700_000_000_000n }, { key: null, value: 'v2', headers: [{ key: 'h', value: 'x' }], timestamp: 1_700_000_000_001n }] });

function encodeResponse(apiKey: number, version: number, body: Record<string, unknown>): Buffer {
  const w = new Writer();
  responseCodec(apiKey, version).encode(w, body);
  return w.toBuffer();
}

async function readWithKafkajs(response: KafkajsResponse, bytes: Buffer): Promise<{ decoded: unknown; log: string[] }> {
  const recorder = recordReads(Decoder.prototype, READS, (d) => (d as { buffer: Buffer }).buffer === bytes, (method, args, log) => {
    // decodeMessages reads the record-set size itself, then readBytes(size): count that as one bytes value.
    if (method === 'readBytes' && args.length === 1 && log[log.length - 1] === String(args[0])) log.pop();
  });
  try {
    const decoded = await response.decode(bytes);
    return { decoded, log: recorder.log };
  } finally {
    recorder.restore();
  }
}

/**
 * kafkajs's decoders for these flexible responses read the response header's
 * tagged fields (header v1) themselves, as the first thing in the bytes they
 * are given, and stop before the body's own closing tag section (the last
 * thing in the frame, so nothing is misread); the others of kafkajs get the
 * body alone and read all of it.
 */
const READS_HEADER_TAGS = new Set(['AlterPartitionReassignments', 'ListPartitionReassignments']);

/** The bytes kafkajs's decoder is given, and the reads it must make: the body's, after the header's empty tag section where it reads that. */
function asKafkajsGetsIt(apiName: string, body: Buffer, reads: string[]): { bytes: Buffer; reads: string[] } {
  if (!READS_HEADER_TAGS.has(apiName)) return { bytes: body, reads };
  expect(reads[reads.length - 1]).toBe('tags');
  // They read each tag section as its count (readTaggedFields), logged as the number.
  return { bytes: Buffer.concat([Buffer.from([0]), body]), reads: ['tags', ...reads.slice(0, -1)].map((r) => (r === 'tags' ? '0' : r)) };
}

const cases = kafkajsVersions().map((c) => [`${c.api.name} v${c.version}`, c] as const);

describe('kafkajs decodes the responses we encode', () => {
  it('has cases for the APIs kafkajs implements', () => {
    expect(cases.length).toBeGreaterThan(60);
  });

  it('the read log notices a field read from the wrong place', async () => {
    const { api, dir } = kafkajsVersions().find((c) => c.api.name === 'Metadata' && c.version === 1)!;
    const body = sampleMessage(api.response, 1, { errors: 'none', tagged: false });
    const v0Bytes = encodeResponse(api.apiKey, 0, body); // v0 lacks rack, controller id and is-internal
    const response = kafkajsModule<KafkajsResponse>(join(dir, 'response.js'));
    const outcome = await readWithKafkajs(response, v0Bytes).catch(() => null);
    expect(outcome?.log).not.toEqual(expectedReads(api.response, 1, body, { records: 'bytes' }));
  });

  describe.each(cases)('%s', (_title, { api, version, dir }) => {
    // A few response modules (DeleteRecords) are factories over the request's topics.
    const loaded = kafkajsModule<KafkajsResponse | ((request: { topics: unknown[] }) => KafkajsResponse)>(join(dir, 'response.js'));
    const response = typeof loaded === 'function' ? loaded({ topics: [] }) : loaded;

    it('error-free: read field for field, and parse accepts it', async () => {
      const body = sampleMessage(api.response, version, { errors: 'none', tagged: false, records: batch });
      const { bytes, reads } = asKafkajsGetsIt(api.name, encodeResponse(api.apiKey, version, body), expectedReads(api.response, version, body, { records: 'bytes' }));
      const { decoded, log } = await readWithKafkajs(response, bytes);
      expect(log).toEqual(reads);
      await expect(Promise.resolve().then(() => response.parse(decoded))).resolves.toBeDefined();
    });

    it('with error codes: read field for field', async () => {
      const body = sampleMessage(api.response, version, { errors: 'distinct', tagged: false, records: batch });
      const { bytes, reads } = asKafkajsGetsIt(api.name, encodeResponse(api.apiKey, version, body), expectedReads(api.response, version, body, { records: 'bytes' }));
      const { log } = await readWithKafkajs(response, bytes);
      expect(log).toEqual(reads);
    });
  });
});

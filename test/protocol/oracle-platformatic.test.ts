import { Reader as PlatformaticReader } from '@platformatic/kafka';
import { describe, expect, it } from 'vitest';
import { responseCodec } from '../../protocol/codec/registry.js';
import { Writer } from '../../protocol/primitives/writer.js';
import { buildBatch } from '../../protocol/records/index.js';
import { platformaticVersions, type PlatformaticApi } from './support/clients.js';
import { expectedReads, recordReads } from './support/read-log.js';
import { sampleMessage } from './support/sample.js';

/**
 * @platformatic/kafka 1.35 as an independent oracle; it covers the flexible
 * versions kafkajs lacks. For every API and version it has within what we
 * serve, a realistic response we encode is read by its parseResponse value
 * for value, with and without error codes (its parse reports error codes by
 * throwing a ResponseError that carries the decoded response).
 *
 * Tagged fields stay at their defaults here: platformatic skips a tagged
 * section by reading its count as a byte length, which only holds for an
 * empty section.
 */

const READS = [
  'readInt8', 'readInt16', 'readInt32', 'readInt64', 'readUnsignedInt8', 'readUnsignedInt16', 'readUnsignedInt32', 'readUnsignedInt64',
  'readFloat64', 'readUnsignedVarInt', 'readVarInt', 'readUnsignedVarInt64', 'readVarInt64', 'readBoolean',
  'readNullableString', 'readUUID', 'readNullableBytes', 'readVarIntBytes', 'readTaggedFields',
];

const batch = buildBatch({ records: [{ key: 'k1', value: 'v1', timestamp: 1_700_000_000_000n }, { key: null, value: 'v2', timestamp: 1_700_000_000_001n }] });

function encodeResponse(apiKey: number, version: number, body: Record<string, unknown>): Buffer {
  const w = new Writer();
  responseCodec(apiKey, version).encode(w, body);
  return w.toBuffer();
}

function readWithPlatformatic(module: PlatformaticApi, apiKey: number, version: number, bytes: Buffer): { log: string[]; consumed: number; error: unknown } {
  const reader = PlatformaticReader.from(bytes);
  const recorder = recordReads(PlatformaticReader.prototype as unknown as Record<string, unknown>, READS, (r) => r === reader);
  let error: unknown = null;
  try {
    module.parseResponse(1, apiKey, version, reader);
  } catch (e) {
    error = e;
  } finally {
    recorder.restore();
  }
  return { log: recorder.log, consumed: reader.position, error };
}

/**
 * platformatic leaves empty tagged sections at the very end of a message
 * unread (the message's own and its last struct's); they carry nothing, so
 * trailing ones are left out of both logs.
 */
function withoutTrailingTags(log: string[]): string[] {
  let end = log.length;
  while (end > 0 && log[end - 1] === 'tags') end--;
  return log.slice(0, end);
}

/**
 * Versions where platformatic's parser departs from Kafka's spec (our
 * definitions match the spec field for field: see conformance.test.ts). These
 * run as expected failures, so a platformatic fix shows up here.
 */
const PLATFORMATIC_DEPARTS: Record<string, string> = {
  'Metadata v9': 'reads a bool after the topics where v9-v10 carry ClusterAuthorizedOperations (int32) and v11 nothing',
  'Metadata v10': 'same as v9',
  'Metadata v11': 'same as v9',
  'OffsetForLeaderEpoch v4': 'reads Partition before ErrorCode; the spec has ErrorCode first',
  'DescribeConfigs v2': 'reads the v0 layout of a config entry (IsDefault) instead of ConfigSource and synonyms',
  'ConsumerGroupDescribe v0': 'reads a string where a member has SubscribedTopicNames (a compact array)',
  'DescribeClientQuotas v0': "reads v1's flexible layout (compact strings, tagged fields) under v0, which the spec has non-flexible",
};

const cases = (await platformaticVersions()).map((c) => [`${c.api.name} v${c.version}`, c] as const);

describe('@platformatic/kafka decodes the responses we encode', () => {
  it('has cases for the flexible versions', () => {
    expect(cases.length).toBeGreaterThan(80);
  });

  describe.each(cases)('%s', (title, { api, version, module }) => {
    const departs = PLATFORMATIC_DEPARTS[title];
    const test = departs ? it.fails : it;

    test('error-free: read field for field, without complaint', () => {
      const body = sampleMessage(api.response, version, { errors: 'none', tagged: false, records: batch });
      const bytes = encodeResponse(api.apiKey, version, body);
      const { log, error } = readWithPlatformatic(module, api.apiKey, version, bytes);
      const expected = expectedReads(api.response, version, body, { records: 'compact-length' });
      expect(withoutTrailingTags(log)).toEqual(withoutTrailingTags(expected));
      expect(error).toBeNull();
    });

    test('with error codes: read field for field, errors reported as errors', () => {
      const body = sampleMessage(api.response, version, { errors: 'distinct', tagged: false, records: batch });
      const bytes = encodeResponse(api.apiKey, version, body);
      const { log, error } = readWithPlatformatic(module, api.apiKey, version, bytes);
      const expected = expectedReads(api.response, version, body, { records: 'compact-length' });
      expect(withoutTrailingTags(log)).toEqual(withoutTrailingTags(expected));
      if (error !== null) expect(error).toBeInstanceOf(Error);
    });
  });
});

import { describe, expect, it } from 'vitest';
import { apis } from '../../protocol/messages/index.js';
import { ApiKey } from '../../protocol/api-keys.js';
import { parseVersions, type FieldDef, type MessageDef } from '../../protocol/schema/definition.js';
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { loadJarSpec, loadSpec, SAME_FIELDS_AS_BEFORE, specDirectory, specsAvailable, type SpecField, type SpecMessage } from './support/kafka-spec.js';
import { servedRange } from './support/served.js';

/**
 * Every definition against Apache Kafka's JSON specs, field by field. Field
 * order is part of the wire format, so fields are compared position by
 * position; each difference is reported as one line naming its path.
 */

/** The versions issue 2 asks the gateway to serve. */
const SERVED: Record<string, string> = {
  Produce: '0-12', Fetch: '4-17', ListOffsets: '0-10', Metadata: '0-12',
  OffsetCommit: '0-9', OffsetFetch: '0-9', FindCoordinator: '0-6', JoinGroup: '0-9',
  Heartbeat: '0-4', LeaveGroup: '0-5', SyncGroup: '0-5', DescribeGroups: '0-5',
  ListGroups: '0-5', SaslHandshake: '0-1', ApiVersions: '0-4', CreateTopics: '0-7',
  DeleteTopics: '0-6', DeleteRecords: '0-2', InitProducerId: '0-5', OffsetForLeaderEpoch: '0-4',
  AddPartitionsToTxn: '0-5', AddOffsetsToTxn: '0-4', EndTxn: '0-5', TxnOffsetCommit: '0-5',
  DescribeAcls: '0-3', CreateAcls: '0-3', DeleteAcls: '0-3', DescribeConfigs: '0-4',
  AlterConfigs: '0-2', SaslAuthenticate: '0-2', CreatePartitions: '0-3', DeleteGroups: '0-2',
  IncrementalAlterConfigs: '0-1', AlterPartitionReassignments: '0', ListPartitionReassignments: '0',
  OffsetDelete: '0', DescribeClientQuotas: '0-1', AlterClientQuotas: '0-1', DescribeUserScramCredentials: '0',
  AlterUserScramCredentials: '0', DescribeCluster: '0-1', DescribeProducers: '0',
  DescribeTransactions: '0', ListTransactions: '0-1', ConsumerGroupHeartbeat: '0-1',
  ConsumerGroupDescribe: '0', DescribeTopicPartitions: '0',
  // Issue 33: what kafka-log-dirs.sh and kafka-metadata-quorum.sh ask (Kafka 4 dropped DescribeLogDirs v0).
  DescribeLogDirs: '1-4', DescribeQuorum: '0-2',
  // Issue 28: share groups (KIP-932) at the versions Kafka 4.4 serves.
  ShareGroupHeartbeat: '1', ShareGroupDescribe: '1', ShareFetch: '1-2', ShareAcknowledge: '1-2',
  DescribeShareGroupOffsets: '0-1', AlterShareGroupOffsets: '0', DeleteShareGroupOffsets: '0',
  // Streams groups (KIP-1071) at the versions Kafka 4.4 serves.
  StreamsGroupHeartbeat: '0-1', StreamsGroupDescribe: '0-1',
};

const PRIMITIVES = new Set(['bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'string', 'bytes', 'uuid', 'records']);

function span(range: string | undefined): string {
  if (range === undefined) return 'none';
  const s = parseVersions(range);
  return s === null ? 'none' : `${s.min}-${s.max}`;
}

/** A default as the value it stands for, so "0x7fffffff", 2147483647 and an absent default of 0 compare by meaning. */
function effectiveDefault(type: string, raw: unknown): string {
  const isNull = raw === null || raw === 'null';
  if (type.startsWith('[]') || !PRIMITIVES.has(type)) return raw === undefined ? 'absent' : isNull ? 'null' : `?${String(raw)}`;
  switch (type) {
    case 'bool':
      return raw === undefined ? 'false' : String(raw === true || raw === 'true');
    case 'float64':
      return raw === undefined ? '0' : String(Number(raw));
    case 'int8': case 'int16': case 'uint16': case 'int32': case 'uint32': case 'int64':
      if (raw === undefined) return '0';
      if (isNull) return 'null';
      return BigInt(raw as string | number | bigint).toString();
    case 'string':
      return raw === undefined ? '""' : isNull ? 'null' : JSON.stringify(String(raw));
    case 'uuid':
      return raw === undefined ? 'zero' : String(raw);
    default: // bytes, records
      return raw === undefined ? 'empty' : isNull ? 'null' : `?${String(raw)}`;
  }
}

function elementType(type: string): string {
  return type.startsWith('[]') ? type.slice(2) : type;
}

function oursStructFields(message: MessageDef, field: FieldDef): readonly FieldDef[] | undefined {
  if (field.fields) return field.fields;
  const name = elementType(field.type);
  if (PRIMITIVES.has(name)) return undefined;
  return message.commonStructs?.find((s) => s.name === name)?.fields;
}

function specStructFields(message: SpecMessage, field: SpecField): SpecField[] | undefined {
  if (field.fields) return field.fields;
  const name = elementType(field.type);
  if (PRIMITIVES.has(name)) return undefined;
  return message.commonStructs?.find((s) => s.name === name)?.fields;
}

function compareFields(
  path: string,
  ours: readonly FieldDef[],
  theirs: readonly SpecField[],
  oursMessage: MessageDef,
  specMessage: SpecMessage,
  differences: string[],
): void {
  const ourNames = ours.map((f) => f.name);
  const theirNames = theirs.map((f) => f.name);
  if (ourNames.join(',') !== theirNames.join(',')) {
    differences.push(`${path}: fields [${ourNames.join(', ')}] but Kafka has [${theirNames.join(', ')}]`);
  }
  for (const spec of theirs) {
    const mine = ours.find((f) => f.name === spec.name);
    if (!mine) continue;
    const at = `${path}.${spec.name}`;
    const check = (what: string, a: unknown, b: unknown): void => {
      if (a !== b) differences.push(`${at}: ${what} is ${String(a)}, Kafka says ${String(b)}`);
    };
    check('type', mine.type, spec.type);
    check('versions', span(mine.versions), span(spec.versions));
    check('nullableVersions', span(mine.nullableVersions), span(spec.nullableVersions));
    check('default', effectiveDefault(mine.type, mine.default), effectiveDefault(spec.type, spec.default));
    check('tag', mine.tag, spec.tag);
    if (spec.tag !== undefined || mine.tag !== undefined) {
      check('taggedVersions', span(mine.taggedVersions ?? mine.versions), span(spec.taggedVersions));
    }
    const mineNested = oursStructFields(oursMessage, mine);
    const specNested = specStructFields(specMessage, spec);
    if (specNested && !mineNested) differences.push(`${at}: struct ${spec.type} has no field list here`);
    if (mineNested && specNested) compareFields(at, mineNested, specNested, oursMessage, specMessage, differences);
  }
}

function compareMessage(ours: MessageDef, spec: SpecMessage): string[] {
  const differences: string[] = [];
  const check = (what: string, a: unknown, b: unknown): void => {
    if (a !== b) differences.push(`${ours.name}: ${what} is ${String(a)}, Kafka says ${String(b)}`);
  };
  check('name', ours.name, spec.name);
  check('apiKey', ours.apiKey, spec.apiKey);
  check('kind', ours.kind, spec.type);
  check('validVersions', span(ours.validVersions), span(spec.validVersions));
  check('flexibleVersions', span(ours.flexibleVersions), span(spec.flexibleVersions));
  compareFields(ours.name, ours.fields, spec.fields, ours, spec, differences);
  return differences;
}

const available = specsAvailable();
const suite = available ? describe : describe.skip;
const title = available
  ? "definitions match Apache Kafka's message specs"
  : `conformance skipped: Kafka's message specs are not at ${specDirectory} (they live beside the checkout, in ../shared/kafka-protocol/message)`;

suite(title, () => {
  it('covers exactly the APIs of issue 2, each under its own key', () => {
    expect(apis.map((a) => a.name).sort()).toEqual(Object.keys(SERVED).sort());
    for (const api of apis) {
      expect(api.apiKey, api.name).toBe(ApiKey[api.name as keyof typeof ApiKey]);
      expect(api.request.apiKey, api.name).toBe(api.apiKey);
      expect(api.response.apiKey, api.name).toBe(api.apiKey);
    }
  });

  it('notices a wrong type, range, default, tag or field order', () => {
    const spec = loadSpec('ProduceResponse');
    const mutate = (change: (fields: FieldDef[]) => void): string[] => {
      const copy = structuredClone(apis[0]!.response);
      change(copy.fields[0]!.fields![1]!.fields! as FieldDef[]);
      return compareMessage(copy, spec);
    };
    expect(compareMessage(apis[0]!.response, spec)).toEqual([]);
    expect(mutate((f) => { f[2]!.type = 'int32'; })).toHaveLength(1);
    expect(mutate((f) => { f[3]!.versions = '3+'; })).toHaveLength(1);
    expect(mutate((f) => { f[3]!.default = 0n; })).toHaveLength(1);
    expect(mutate((f) => { f[6]!.nullableVersions = '9+'; })).toHaveLength(1);
    expect(mutate((f) => { f[7]!.tag = 1; })).toHaveLength(1);
    expect(mutate((f) => { f[7]!.fields![0]!.default = 0; })).toHaveLength(1);
    expect(mutate((f) => { f.reverse(); })).toHaveLength(1);
  });

  // The Maven cache the Java suites fill (test/java-client); absent on a machine that never ran them.
  const clientsDir = join(homedir(), '.m2', 'repository', 'org', 'apache', 'kafka', 'kafka-clients');
  const clientsJar = existsSync(clientsDir) ? readdirSync(clientsDir).filter((v) => v.startsWith('4.')).sort().map((v) => join(clientsDir, v, `kafka-clients-${v}.jar`)).filter(existsSync).pop() : undefined;
  it.skipIf(clientsJar === undefined)('the versions newer than the specs are in kafka-clients 4.x, with the fields of the version before', () => {
    for (const [name, version] of Object.entries(SAME_FIELDS_AS_BEFORE)) {
      const jar = loadJarSpec(clientsJar!, name);
      expect(parseVersions(jar.validVersions)!.max, name).toBeGreaterThanOrEqual(version);
      const fieldsAt = (fields: readonly SpecField[], v: number): string[] =>
        fields.filter((f) => { const r = parseVersions(f.versions); return r !== null && r.min <= v && v <= r.max; }).flatMap((f) => [f.name, ...fieldsAt(f.fields ?? [], v)]);
      expect(fieldsAt(jar.fields, version), name).toEqual(fieldsAt(jar.fields, version - 1));
    }
  });

  describe.each(apis.map((api) => [api.name, api] as const))('%s', (_name, api) => {
    it('request matches the spec field by field', () => {
      expect(compareMessage(api.request, loadSpec(api.request.name))).toEqual([]);
    });

    it('response matches the spec field by field', () => {
      expect(compareMessage(api.response, loadSpec(api.response.name))).toEqual([]);
    });

    it("serves the issue's versions, all within what Kafka defines", () => {
      const served = servedRange(api);
      expect(`${served.min}-${served.max}`).toBe(span(SERVED[api.name]));
      for (const message of [loadSpec(api.request.name), loadSpec(api.response.name)]) {
        const valid = parseVersions(message.validVersions)!;
        expect(served.min, message.name).toBeGreaterThanOrEqual(valid.min);
        expect(served.max, message.name).toBeLessThanOrEqual(valid.max);
      }
    });
  });
});

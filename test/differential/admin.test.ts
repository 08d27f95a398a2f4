/**
 * Topic and broker configs and the admin APIs, held against Apache Kafka.
 * Every scenario runs against a real Apache Kafka 4.x broker (one KRaft node,
 * node id 1) and against the gateway (node id 1) on the memory engine and on
 * PostgreSQL, through kafkajs's admin client, librdkafka's admin client where
 * it has the call, and raw requests built with the project's own codecs for
 * what clients do not expose. The observations are compared field by field
 * (./admin-compare.ts); the only differences allowed are the deliberate ones
 * listed there with their reasons.
 *
 * Error messages are not compared (Kafka's are terse, the gateway's say what
 * to do), nor topic ids or documentation text (the gateway's own words):
 * only whether documentation is there.
 */
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { startBroker, type Broker } from '../../src/index.js';
import { execFile } from 'node:child_process';
import { apacheKafkaInstall, startApacheKafka, type ApacheKafka } from '../support/apache-kafka.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { waitFor } from '../support/eventually.js';
import { adminCall, createAdmin } from '../support/rdkafka.js';
import { RawConnection } from '../support/raw-connection.js';
import { compareWithKafka, DELIBERATE_DIFFERENCES, type Observation } from './admin-compare.js';

const NODE_ID = 1;
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
const TOPIC = 2;
const BROKER = 4;
const [SET, DELETE, APPEND, SUBTRACT] = [0, 1, 2, 3];

interface Target {
  name: string;
  port: number;
  bootstrap: string;
  raw: RawConnection;
  kafkajs: Kafka;
  admin: Admin;
  stop(): Promise<void>;
}

async function target(name: string, port: number, stop: () => Promise<void>): Promise<Target> {
  const bootstrap = `127.0.0.1:${port}`;
  const kafkajs = new Kafka({ clientId: 'admin-differential', brokers: [bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2, initialRetryTime: 100 } });
  const admin = kafkajs.admin();
  await admin.connect();
  const raw = await RawConnection.open(port);
  return {
    name, port, bootstrap, raw, kafkajs, admin,
    async stop() {
      raw.destroy();
      await admin.disconnect();
      await stop();
    },
  };
}

const engines = await engineMatrix();
const postgres = engines.find((e) => e.name === 'postgres')!;

let kafka: ApacheKafka | null = null;
const targets: Target[] = [];

beforeAll(async () => {
  kafka = await startApacheKafka();
  targets.push(await target('kafka', kafka.port, () => kafka!.stop()));
  for (const engine of engines) {
    if (engine.skipReason) continue;
    const choice = engine.fresh();
    const broker: Broker = await startBroker({ ...choice, nodeId: NODE_ID, defaultPartitions: 1, autoCreateTopics: true, logLevel: 'silent' });
    targets.push(await target(`gateway on ${engine.name}`, broker.port, () => broker.stop()));
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(targets.map((t) => t.stop()));
  await releaseEngines();
}, 60_000);

// ─── Requests every scenario uses ─────────────────────────────────────────────

const request = (t: Target, apiKey: number, version: number, body: Message) => t.raw.request(apiKey, version, body, 30_000);

function creatable(name: string, extra: Message = {}): Message {
  return { name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [], ...extra };
}

async function createTopics(t: Target, topics: Message[], validateOnly = false): Promise<Message[]> {
  const { topics: results } = await request(t, ApiKey.CreateTopics, 7, { topics, timeoutMs: 30_000, validateOnly });
  // One request at a time: a RawConnection matches answers to requests in order.
  if (!validateOnly) for (const r of results.filter((x: Message) => x.errorCode === 0)) await visible(t, r.name);
  return results;
}

/** Kafka's metadata reaches its broker a moment after CreateTopics answers: wait until the topic has leaders (at once on the gateway). */
async function visible(t: Target, name: string): Promise<void> {
  await waitFor(async () => {
    const { topics } = await metadata(t, [name]);
    return topics[0].errorCode === 0 && topics[0].partitions.every((p: Message) => p.leaderId >= 0);
  }, { what: `topic ${name} listed with leaders on ${t.name}`, timeoutMs: 20_000 });
}

function metadata(t: Target, names: string[]): Promise<Message> {
  return request(t, ApiKey.Metadata, 12, { topics: names.map((name) => ({ name, topicId: ZERO_UUID })), allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
}

/** What a client sees of topics' partitions: count, leader, replicas and in-sync replicas, by topic. */
async function partitionsListed(t: Target, names: string[]): Promise<Message> {
  const { topics } = await metadata(t, names);
  return Object.fromEntries(
    topics.map((topic: Message) => [
      topic.name,
      { errorCode: topic.errorCode, partitions: topic.partitions.map((p: Message) => `${p.partitionIndex}:${p.leaderId}:${p.replicaNodes}:${p.isrNodes}`).sort() },
    ]),
  );
}

/** A DescribeConfigs answer as a client sees it (v4, synonyms and documentation asked for). */
async function describeConfigs(t: Target, resourceType: number, resourceName: string, keys: string[] | null = null): Promise<Message> {
  const { results } = await request(t, ApiKey.DescribeConfigs, 4, {
    resources: [{ resourceType, resourceName, configurationKeys: keys }],
    includeSynonyms: true,
    includeDocumentation: true,
  });
  const [result] = results;
  return {
    errorCode: result.errorCode,
    configs: result.configs.map((c: Message) => ({
      name: c.name,
      value: c.value,
      readOnly: c.readOnly,
      configSource: c.configSource,
      isSensitive: c.isSensitive,
      configType: c.configType,
      synonyms: c.synonyms.map((s: Message) => `${s.name}=${s.value}@${s.source}`).join(' '),
      documented: c.documentation !== null,
    })),
  };
}

/** Kafka's broker applies a config change a moment after answering it: wait until DescribeConfigs shows it (at once on the gateway). */
async function configShows(t: Target, topic: string, key: string, value: string): Promise<void> {
  await waitFor(async () => (await describeConfigs(t, TOPIC, topic, [key])).configs[0]?.value === value, { what: `${topic} ${key}=${value} on ${t.name}`, timeoutMs: 20_000 });
}

const incremental = async (t: Target, resourceType: number, resourceName: string, configs: Message[], validateOnly = false) =>
  (await request(t, ApiKey.IncrementalAlterConfigs, 1, { resources: [{ resourceType, resourceName, configs }], validateOnly })).responses[0].errorCode as number;

const firstOf = (results: Message[]): Message => results[0]!;

const codes = (results: Message[]) => Object.fromEntries(results.map((r) => [r.name, r.errorCode]));

/**
 * One of Apache Kafka's own command-line tools (kafka-topics.sh is
 * TopicCommand, kafka-configs.sh is ConfigCommand) run against a target: its
 * exit code and output lines.
 */
async function kafkaTool(t: Target, tool: 'TopicCommand' | 'ConfigCommand', args: string[]): Promise<{ exit: number; lines: string[] }> {
  const { libs } = await apacheKafkaInstall();
  const argv = ['-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-cp', `${libs}/*`, `org.apache.kafka.tools.${tool}`, '--bootstrap-server', t.bootstrap, ...args];
  // Asynchronous on purpose: the gateway under test runs in this process and must keep answering.
  const outcome = await new Promise<{ exit: number; stdout: string }>((resolve) => {
    execFile('java', argv, { encoding: 'utf8', timeout: 90_000 }, (error, stdout) => resolve({ exit: error ? Number(error.code ?? -1) : 0, stdout }));
  });
  return { exit: outcome.exit, lines: outcome.stdout.split('\n').map((l) => l.trim()).filter((l) => l !== '') };
}

/** kafka-topics.sh --describe as fields: the topic line's "Key: value" pairs (the id left out) and the partition lines. */
function topicDescription(lines: string[]): Message {
  const [head, ...partitions] = lines;
  const fields = Object.fromEntries((head ?? '').split('\t').map((f) => f.split(': ')).filter(([k]) => k !== 'TopicId'));
  return { ...fields, partitions };
}

// ─── Scenarios ────────────────────────────────────────────────────────────────

/** One value per Kafka topic config, each other than its default, some written as Kafka normalizes them. */
const EVERY_CONFIG_SET: [string, string][] = [
  ['cleanup.policy', ' delete '],
  ['compression.gzip.level', '5'],
  ['compression.lz4.level', '4'],
  ['compression.type', 'zstd'],
  ['compression.zstd.level', '-5'],
  ['delete.retention.ms', '1000'],
  ['errors.deadletterqueue.group.enable', 'TRUE'],
  ['file.delete.delay.ms', '1000'],
  ['flush.messages', '10'],
  ['flush.ms', '1000'],
  ['follower.replication.throttled.replicas', '*'],
  ['index.interval.bytes', '1024'],
  ['leader.replication.throttled.replicas', '0:1, 1:1'],
  ['local.retention.bytes', '-1'],
  ['local.retention.ms', '-1'],
  ['max.compaction.lag.ms', '100000'],
  ['max.decompressed.message.bytes', '1048576'],
  ['max.message.bytes', '2048'],
  ['message.timestamp.after.max.ms', '1000'],
  ['message.timestamp.before.max.ms', '1000'],
  ['message.timestamp.type', 'LogAppendTime'],
  ['min.cleanable.dirty.ratio', '1'],
  ['min.compaction.lag.ms', '10'],
  ['min.insync.replicas', '2'],
  ['preallocate', 'true'],
  ['remote.copy.lag.bytes', '100'],
  ['remote.copy.lag.ms', '100'],
  ['remote.log.copy.disable', 'true'],
  ['remote.log.delete.on.disable', 'true'],
  ['remote.storage.enable', 'false'],
  ['retention.bytes', '-7'],
  ['retention.ms', '+9223372036854775807'],
  ['segment.bytes', '1048576'],
  ['segment.index.bytes', '4096'],
  ['segment.jitter.ms', '5'],
  ['segment.ms', '1000'],
  ['unclean.leader.election.enable', 'true'],
];

/** Values Kafka refuses, one per rule: ranges, types, lists, names, nulls, keys gone from Kafka 4. */
const INVALID_CONFIGS: [string, string | null][] = [
  ['no.such.config', '1'],
  ['message.timestamp.difference.max.ms', '1000'],
  ['message.format.version', '3.0'],
  ['retention.ms', 'a week'],
  ['retention.ms', '-2'],
  ['retention.ms', '9223372036854775808'],
  ['retention.ms', null],
  ['segment.bytes', '1048575'],
  ['segment.ms', '0'],
  ['segment.index.bytes', '3'],
  ['max.message.bytes', '-1'],
  ['min.insync.replicas', '0'],
  ['min.insync.replicas', '2147483648'],
  ['cleanup.policy', 'nope'],
  ['compression.type', 'GZIP'],
  ['compression.gzip.level', '0'],
  ['compression.lz4.level', '18'],
  ['compression.zstd.level', '23'],
  ['min.cleanable.dirty.ratio', '1.5'],
  ['min.cleanable.dirty.ratio', 'half'],
  ['preallocate', 'yes'],
  ['message.timestamp.type', 'createtime'],
  ['message.timestamp.after.max.ms', '-1'],
  ['local.retention.ms', '-3'],
  ['max.decompressed.message.bytes', '0'],
  ['remote.copy.lag.bytes', '-2'],
  ['leader.replication.throttled.replicas', 'x'],
  ['remote.storage.enable', 'true'],
];

const SCENARIOS: Record<string, (t: Target) => Promise<Observation>> = {
  async 'topic configs, all defaults'(t) {
    await t.admin.createTopics({ topics: [{ topic: 'defaults', numPartitions: 2 }], waitForLeaders: true });
    await visible(t, 'defaults');
    return describeConfigs(t, TOPIC, 'defaults');
  },

  async 'every topic config set at creation'(t) {
    const created = firstOf(await createTopics(t, [creatable('everything', { configs: EVERY_CONFIG_SET.map(([name, value]) => ({ name, value })) })]));
    return {
      errorCode: created.errorCode,
      numPartitions: created.numPartitions,
      replicationFactor: created.replicationFactor,
      answered: created.configs.map((c: Message) => ({ name: c.name, value: c.value, readOnly: c.readOnly, configSource: c.configSource, isSensitive: c.isSensitive })),
      described: (await describeConfigs(t, TOPIC, 'everything', EVERY_CONFIG_SET.map(([name]) => name))).configs,
    };
  },

  async 'invalid topic configs'(t) {
    const results = await createTopics(t, INVALID_CONFIGS.map(([name, value], i) => creatable(`invalid-${i}`, { configs: [{ name, value }] })), true);
    return Object.fromEntries(results.map((r, i) => [`${INVALID_CONFIGS[i]![0]}=${INVALID_CONFIGS[i]![1]}`, r.errorCode]));
  },

  async 'a config given twice at creation'(t) {
    const created = firstOf(await createTopics(t, [creatable('twice-given', { configs: [{ name: 'retention.ms', value: '1000' }, { name: 'retention.ms', value: '2000' }] })]));
    return { errorCode: created.errorCode, described: (await describeConfigs(t, TOPIC, 'twice-given', ['retention.ms'])).configs };
  },

  async 'incremental alter configs'(t) {
    await createTopics(t, [creatable('stepwise', { configs: [{ name: 'retention.ms', value: '60000' }] })]);
    const steps: [string, Message[]][] = [
      ['set', [{ name: 'segment.ms', configOperation: SET, value: '1000' }, { name: 'min.insync.replicas', configOperation: SET, value: '2' }]],
      ['delete', [{ name: 'retention.ms', configOperation: DELETE, value: null }]],
      ['delete unknown', [{ name: 'no.such.config', configOperation: DELETE, value: null }]],
      ['subtract delete', [{ name: 'cleanup.policy', configOperation: SUBTRACT, value: 'delete' }]],
      ['append delete', [{ name: 'cleanup.policy', configOperation: APPEND, value: 'delete' }]],
      ['append to a long', [{ name: 'retention.ms', configOperation: APPEND, value: '5' }]],
      ['append throttled', [{ name: 'leader.replication.throttled.replicas', configOperation: APPEND, value: '0:1' }]],
      ['set unknown', [{ name: 'no.such.config', configOperation: SET, value: '1' }]],
      ['set null', [{ name: 'retention.bytes', configOperation: SET, value: null }]],
      ['set out of range', [{ name: 'segment.ms', configOperation: SET, value: '0' }]],
      ['key twice', [{ name: 'retention.bytes', configOperation: SET, value: '1' }, { name: 'retention.bytes', configOperation: SET, value: '2' }]],
      ['unknown operation', [{ name: 'retention.bytes', configOperation: 9, value: '1' }]],
      ['compaction lags cross', [{ name: 'min.compaction.lag.ms', configOperation: SET, value: '50' }, { name: 'max.compaction.lag.ms', configOperation: SET, value: '10' }]],
    ];
    const outcome: Message = {};
    for (const [label, configs] of steps) outcome[label] = await incremental(t, TOPIC, 'stepwise', configs);
    if (outcome['append throttled'] === 0) await configShows(t, 'stepwise', 'leader.replication.throttled.replicas', '0:1');
    outcome.validateOnly = await incremental(t, TOPIC, 'stepwise', [{ name: 'retention.bytes', configOperation: SET, value: '77' }], true);
    outcome.unknownTopic = await incremental(t, TOPIC, 'no-such-topic', [{ name: 'retention.ms', configOperation: SET, value: '1' }]);
    outcome.badTopicName = await incremental(t, TOPIC, 'bad name!', [{ name: 'retention.ms', configOperation: SET, value: '1' }]);
    outcome.described = (await describeConfigs(t, TOPIC, 'stepwise', ['segment.ms', 'min.insync.replicas', 'retention.ms', 'retention.bytes', 'cleanup.policy', 'leader.replication.throttled.replicas', 'min.compaction.lag.ms'])).configs;
    return outcome;
  },

  async 'alter configs (replace)'(t) {
    await createTopics(t, [creatable('replaced', { configs: [{ name: 'retention.ms', value: '60000' }, { name: 'segment.ms', value: '1000' }] })]);
    await t.admin.alterConfigs({ validateOnly: false, resources: [{ type: TOPIC, name: 'replaced', configEntries: [{ name: 'retention.bytes', value: '100' }, { name: 'unclean.leader.election.enable', value: 'true' }] }] });
    await configShows(t, 'replaced', 'retention.bytes', '100');
    const alter = async (configs: Message[]) =>
      (await request(t, ApiKey.AlterConfigs, 2, { resources: [{ resourceType: TOPIC, resourceName: 'replaced', configs }], validateOnly: false })).responses[0].errorCode;
    const { resources } = await t.admin.describeConfigs({ resources: [{ type: TOPIC, name: 'replaced', configNames: ['retention.ms', 'segment.ms', 'retention.bytes', 'unclean.leader.election.enable'] }], includeSynonyms: false });
    return {
      described: resources[0]!.configEntries.map((e) => ({ name: e.configName, value: e.configValue, source: e.configSource, readOnly: e.readOnly })),
      nullValue: await alter([{ name: 'retention.ms', value: null }]),
      keyTwice: await alter([{ name: 'retention.ms', value: '1' }, { name: 'retention.ms', value: '2' }]),
      unknownKey: await alter([{ name: 'no.such.config', value: '1' }]),
    };
  },

  async 'replication factor 3'(t) {
    const created = firstOf(await createTopics(t, [creatable('three-replicas', { numPartitions: 2, replicationFactor: 3 })]));
    const rdkafka = createAdmin(t.bootstrap);
    const viaLibrdkafka = await adminCall<void>((cb) => rdkafka.createTopic({ topic: 'three-by-librdkafka', num_partitions: 1, replication_factor: 3 }, 15_000, cb))
      .then(() => 0, (e: { code?: number }) => e.code ?? -1)
      .finally(() => rdkafka.disconnect());
    return {
      errorCode: created.errorCode,
      numPartitions: created.numPartitions,
      replicationFactor: created.replicationFactor,
      metadata: await partitionsListed(t, ['three-replicas']),
      librdkafka: viaLibrdkafka,
    };
  },

  async 'partition counts and replication factors'(t) {
    await createTopics(t, [creatable('existing')]);
    // The answer is keyed by topic name, so its order means nothing.
    const named = (results: Message[]) => results.map((r) => `${r.name}:${r.errorCode}`).sort();
    const again = named(await createTopics(t, [creatable('existing'), creatable('named-twice'), creatable('named-twice'), creatable('bad name!')], true));
    return { again, ...codes(await createTopics(t, [
      creatable('p-zero', { numPartitions: 0 }),
      creatable('p-minus-two', { numPartitions: -2 }),
      creatable('rf-zero', { replicationFactor: 0 }),
      creatable('rf-minus-two', { replicationFactor: -2 }),
      creatable('defaults-both', { numPartitions: -1, replicationFactor: -1 }),
    ], true)) };
  },

  async 'describe with an empty key list'(t) {
    await createTopics(t, [creatable('keyless')]);
    const { configs } = await describeConfigs(t, TOPIC, 'keyless', []);
    return { described: configs.filter((c: Message) => c.name !== 'queen.dedup.window.seconds').length };
  },

  async 'manual assignments'(t) {
    const assigned = (name: string, assignments: [number, number[]][], extra: Message = {}) =>
      creatable(name, { numPartitions: -1, replicationFactor: -1, assignments: assignments.map(([partitionIndex, brokerIds]) => ({ partitionIndex, brokerIds })), ...extra });
    const outcome = codes(await createTopics(t, [
      assigned('assigned', [[0, [NODE_ID]], [1, [NODE_ID]]]),
      assigned('a-unknown-broker', [[0, [NODE_ID + 1]]]),
      assigned('a-broker-twice', [[0, [NODE_ID, NODE_ID]]]),
      assigned('a-empty', [[0, []]]),
      assigned('a-gap', [[1, [NODE_ID]]]),
      assigned('a-with-count', [[0, [NODE_ID]]], { numPartitions: 1 }),
      assigned('a-with-factor', [[0, [NODE_ID]]], { replicationFactor: 1 }),
    ]));
    return { ...outcome, metadata: await partitionsListed(t, ['assigned']) };
  },

  async 'create partitions'(t) {
    await createTopics(t, [creatable('growing'), creatable('growing-assigned'), creatable('not-growing', { numPartitions: 2 })]);
    const grow = async (topics: Message[], validateOnly = false) =>
      codes((await request(t, ApiKey.CreatePartitions, 3, { topics, timeoutMs: 30_000, validateOnly })).results);
    const outcome = {
      dry: await grow([{ name: 'growing', count: 5, assignments: null }], true),
      grown: await grow([{ name: 'growing', count: 3, assignments: null }, { name: 'growing-assigned', count: 3, assignments: [{ brokerIds: [NODE_ID] }, { brokerIds: [NODE_ID] }] }]),
      namedTwice: await grow([{ name: 'not-growing', count: 5, assignments: null }, { name: 'not-growing', count: 6, assignments: null }], true),
      refused: await grow([
        { name: 'not-growing', count: 2, assignments: null },
        { name: 'growing', count: 2, assignments: null },
        { name: 'no-such-topic', count: 4, assignments: null },
      ]),
      badAssignments: await grow([
        { name: 'not-growing', count: 4, assignments: [{ brokerIds: [NODE_ID] }] },
        { name: 'growing', count: 4, assignments: [{ brokerIds: [NODE_ID + 1] }] },
        { name: 'growing-assigned', count: 4, assignments: [{ brokerIds: [] }] },
      ]),
    };
    const viaKafkajs = await t.admin.createPartitions({ topicPartitions: [{ topic: 'growing-assigned', count: 4, assignments: [[NODE_ID]] }] }).then(() => 'ok', (e: Error) => e.name);
    const rdkafka = createAdmin(t.bootstrap);
    const viaLibrdkafka = await adminCall<void>((cb) => rdkafka.createPartitions('growing', 4, 15_000, cb))
      .then(() => 0, (e: { code?: number }) => e.code ?? -1)
      .finally(() => rdkafka.disconnect());
    await waitFor(async () => (await partitionsListed(t, ['growing'])).growing.partitions.length === 4, { what: `four partitions of growing on ${t.name}`, timeoutMs: 20_000 });
    await waitFor(async () => (await partitionsListed(t, ['growing-assigned']))['growing-assigned'].partitions.length === 4, { what: `four partitions of growing-assigned on ${t.name}`, timeoutMs: 20_000 });
    return { ...outcome, kafkajs: viaKafkajs, librdkafka: viaLibrdkafka, metadata: await partitionsListed(t, ['growing', 'growing-assigned', 'not-growing']) };
  },

  async 'partition reassignments'(t) {
    await createTopics(t, [creatable('moved', { numPartitions: 2 })]);
    const { errorCode, responses } = await request(t, ApiKey.AlterPartitionReassignments, 0, {
      timeoutMs: 30_000,
      topics: [
        { name: 'moved', partitions: [{ partitionIndex: 0, replicas: [NODE_ID] }, { partitionIndex: 1, replicas: null }, { partitionIndex: 7, replicas: [NODE_ID] }] },
        { name: 'no-such-topic', partitions: [{ partitionIndex: 0, replicas: [NODE_ID] }] },
      ],
    });
    const refusals = await request(t, ApiKey.AlterPartitionReassignments, 0, {
      timeoutMs: 30_000,
      topics: [{ name: 'moved', partitions: [{ partitionIndex: 0, replicas: [NODE_ID + 1] }, { partitionIndex: 1, replicas: [] }] }],
    });
    const refusalsTwice = await request(t, ApiKey.AlterPartitionReassignments, 0, {
      timeoutMs: 30_000,
      topics: [{ name: 'moved', partitions: [{ partitionIndex: 0, replicas: [NODE_ID, NODE_ID] }] }],
    });
    const partitionCodes = (rs: Message[]) => Object.fromEntries(rs.flatMap((r: Message) => r.partitions.map((p: Message) => [`${r.name}-${p.partitionIndex}`, p.errorCode])));
    const kafkajsMove = await t.admin.alterPartitionReassignments({ topics: [{ topic: 'moved', partitionAssignment: [{ partition: 1, replicas: [NODE_ID] }] }] })
      .then(() => 'ok', (e: Error) => e.name);
    const kafkajsMoveElsewhere = await t.admin.alterPartitionReassignments({ topics: [{ topic: 'moved', partitionAssignment: [{ partition: 1, replicas: [NODE_ID + 1] }] }] })
      .then(() => 'ok', (e: Error & { errors?: { type?: string }[] }) => `${e.name}: ${(e.errors ?? []).map((x) => x.type).join(',')}`);
    const kafkajsList = (await t.admin.listPartitionReassignments({})).topics.length;
    const listAll = await request(t, ApiKey.ListPartitionReassignments, 0, { timeoutMs: 30_000, topics: null });
    const listSome = await request(t, ApiKey.ListPartitionReassignments, 0, { timeoutMs: 30_000, topics: [{ name: 'moved', partitionIndexes: [0, 1] }, { name: 'no-such-topic', partitionIndexes: [0] }] });
    return {
      errorCode,
      alter: partitionCodes(responses),
      refused: partitionCodes(refusals.responses),
      refusedTwice: partitionCodes(refusalsTwice.responses),
      kafkajs: { move: kafkajsMove, moveElsewhere: kafkajsMoveElsewhere, listed: kafkajsList },
      listAll: { errorCode: listAll.errorCode, topics: listAll.topics.length },
      listSome: { errorCode: listSome.errorCode, topics: listSome.topics.length },
      metadata: await partitionsListed(t, ['moved']),
    };
  },

  async 'delete records'(t) {
    await createTopics(t, [creatable('trimmed')]);
    const producer = t.kafkajs.producer();
    await producer.connect();
    await producer.send({ topic: 'trimmed', messages: [{ value: 'a' }, { value: 'b' }, { value: 'c' }, { value: 'd' }] });
    await producer.disconnect();
    const deleteBefore = async (partitions: [number, bigint][], name = 'trimmed') =>
      (await request(t, ApiKey.DeleteRecords, 2, { topics: [{ name, partitions: partitions.map(([partitionIndex, offset]) => ({ partitionIndex, offset })) }], timeoutMs: 30_000 }))
        .topics[0].partitions.map((p: Message) => `${p.partitionIndex}:${p.lowWatermark}:${p.errorCode}`);
    const outcome = {
      toOne: await deleteBefore([[0, 1n]]),
      backwards: await deleteBefore([[0, 0n]]),
      pastTheEnd: await deleteBefore([[0, 10n]]),
      belowMinusOne: await deleteBefore([[0, -2n]]),
      unknownPartition: await deleteBefore([[3, 0n]]),
      unknownTopic: await deleteBefore([[0, 0n]], 'no-such-topic'),
      viaKafkajs: await t.admin.deleteTopicRecords({ topic: 'trimmed', partitions: [{ partition: 0, offset: '3' }] }).then(() => 'ok', (e: Error) => e.name),
      all: await deleteBefore([[0, -1n]]),
    };
    const offsets = await t.admin.fetchTopicOffsets('trimmed');
    return { ...outcome, offsets: offsets.map((o) => `${o.partition}:${o.low}:${o.high}`) };
  },

  async 'delete topics'(t) {
    await createTopics(t, [creatable('doomed'), creatable('doomed-by-librdkafka')]);
    const { responses } = await request(t, ApiKey.DeleteTopics, 6, {
      topics: [{ name: 'doomed', topicId: ZERO_UUID }, { name: 'no-such-topic', topicId: ZERO_UUID }, { name: null, topicId: '11111111-2222-3333-4444-555555555555' }],
      timeoutMs: 30_000,
    });
    const rdkafka = createAdmin(t.bootstrap);
    const viaLibrdkafka = await adminCall<void>((cb) => rdkafka.deleteTopic('doomed-by-librdkafka', 15_000, cb))
      .then(() => 0, (e: { code?: number }) => e.code ?? -1)
      .finally(() => rdkafka.disconnect());
    const gone = await t.admin.deleteTopics({ topics: ['no-such-topic'] }).then(() => 'ok', (e: Error & { type?: string }) => e.type ?? e.name);
    await waitFor(async () => (await partitionsListed(t, ['doomed'])).doomed.errorCode === 3, { what: `doomed gone from ${t.name}`, timeoutMs: 20_000 });
    return {
      deleted: responses.map((r: Message) => `${r.name}:${r.errorCode}`).sort(),
      librdkafka: viaLibrdkafka,
      kafkajsUnknown: gone,
      metadata: await partitionsListed(t, ['doomed', 'doomed-by-librdkafka']),
    };
  },

  async 'timestamp rules'(t) {
    await createTopics(t, [
      creatable('ts-defaults'),
      creatable('ts-narrow', { configs: [{ name: 'message.timestamp.before.max.ms', value: '60000' }, { name: 'message.timestamp.after.max.ms', value: '60000' }] }),
      creatable('ts-append-time', { configs: [{ name: 'message.timestamp.type', value: 'LogAppendTime' }, { name: 'message.timestamp.after.max.ms', value: '0' }] }),
    ]);
    const producer = t.kafkajs.producer({ retry: { retries: 0 } });
    await producer.connect();
    const now = Date.now();
    const send = (topic: string, timestamp: number) =>
      producer.send({ topic, messages: [{ value: 'x', timestamp: String(timestamp) }] }).then(() => 'ok', (e: Error & { type?: string }) => e.type ?? e.name);
    const hour = 3_600_000;
    const outcome = {
      defaultsTwoHoursAhead: await send('ts-defaults', now + 2 * hour),
      defaultsAYearAgo: await send('ts-defaults', now - 365 * 24 * hour),
      defaultsNow: await send('ts-defaults', now),
      narrowTenMinutesAgo: await send('ts-narrow', now - 10 * 60_000),
      narrowTenMinutesAhead: await send('ts-narrow', now + 10 * 60_000),
      narrowNow: await send('ts-narrow', now),
      appendTimeAhead: await send('ts-append-time', now + 2 * hour),
    };
    await producer.disconnect();
    const offsets = async (topic: string) => (await t.admin.fetchTopicOffsets(topic)).map((o) => o.high).join(',');
    return { ...outcome, stored: { defaults: await offsets('ts-defaults'), narrow: await offsets('ts-narrow'), appendTime: await offsets('ts-append-time') } };
  },

  async "Kafka's own tools"(t) {
    const created = await kafkaTool(t, 'TopicCommand', ['--create', '--topic', 'tools', '--partitions', '2', '--replication-factor', '1', '--config', 'segment.ms=1000', '--config', 'retention.bytes=4096']);
    await visible(t, 'tools');
    const described = topicDescription((await kafkaTool(t, 'TopicCommand', ['--describe', '--topic', 'tools'])).lines);
    const altered = await kafkaTool(t, 'ConfigCommand', ['--alter', '--entity-type', 'topics', '--entity-name', 'tools', '--add-config', 'retention.ms=1000,cleanup.policy=[delete]', '--delete-config', 'segment.ms']);
    await configShows(t, 'tools', 'retention.ms', '1000');
    const configs = await kafkaTool(t, 'ConfigCommand', ['--describe', '--entity-type', 'topics', '--entity-name', 'tools']);
    const broker = await kafkaTool(t, 'ConfigCommand', ['--describe', '--entity-type', 'brokers', '--entity-name', String(NODE_ID)]);
    const grown = await kafkaTool(t, 'TopicCommand', ['--alter', '--topic', 'tools', '--partitions', '3']);
    await waitFor(async () => (await partitionsListed(t, ['tools'])).tools.partitions.length === 3, { what: `three partitions of tools on ${t.name}`, timeoutMs: 20_000 });
    const deleted = await kafkaTool(t, 'TopicCommand', ['--delete', '--topic', 'tools']);
    const threeReplicas = await kafkaTool(t, 'TopicCommand', ['--create', '--topic', 'tools-rf3', '--partitions', '1', '--replication-factor', '3']);
    return {
      threeReplicas,
      created,
      described,
      altered,
      // One line per config set on the topic, keyed by its name.
      configs: { exit: configs.exit, lines: Object.fromEntries(configs.lines.map((l) => [l.split('=')[0], l])) },
      broker,
      grown,
      deleted,
    };
  },

  async 'compaction'(t) {
    const created = firstOf(await createTopics(t, [creatable('compacted', { configs: [{ name: 'cleanup.policy', value: 'compact' }] })]));
    await createTopics(t, [creatable('appended')]);
    const append = await incremental(t, TOPIC, 'appended', [{ name: 'cleanup.policy', configOperation: APPEND, value: 'compact' }]);
    if (append === 0) await configShows(t, 'appended', 'cleanup.policy', 'delete,compact');
    return {
      create: { errorCode: created.errorCode },
      describe: created.errorCode === 0 ? (await describeConfigs(t, TOPIC, 'compacted', ['cleanup.policy'])).configs : [],
      append: { errorCode: append },
      policyAfterAppend: (await describeConfigs(t, TOPIC, 'appended', ['cleanup.policy'])).configs,
    };
  },

  async 'broker configs'(t) {
    // The gateway lists a subset of Kafka's 350 broker configs: each one it lists is held to Kafka's.
    const listed = (await describeConfigs(targets.find((x) => x.name !== 'kafka')!, BROKER, String(NODE_ID))).configs.map((c: Message) => c.name);
    const byId = await describeConfigs(t, BROKER, String(NODE_ID), listed);
    const { results } = await request(t, ApiKey.DescribeConfigs, 4, {
      resources: [{ resourceType: BROKER, resourceName: '', configurationKeys: ['num.partitions'] }, { resourceType: BROKER, resourceName: String(NODE_ID + 1), configurationKeys: null }],
      includeSynonyms: false,
      includeDocumentation: false,
    });
    return { ...byId, clusterDefault: results[0].errorCode, otherBroker: results[1].errorCode };
  },

  async 'broker config changes'(t) {
    return {
      clusterDefault: { errorCode: await incremental(t, BROKER, '', [{ name: 'log.retention.ms', configOperation: SET, value: '1000' }], true) },
      thisBroker: { errorCode: await incremental(t, BROKER, String(NODE_ID), [{ name: 'log.retention.ms', configOperation: SET, value: '1000' }], true) },
      staticOne: await incremental(t, BROKER, String(NODE_ID), [{ name: 'broker.id', configOperation: SET, value: '7' }], true),
      otherBroker: (await request(t, ApiKey.AlterConfigs, 2, { resources: [{ resourceType: BROKER, resourceName: String(NODE_ID + 1), configs: [{ name: 'num.partitions', value: '2' }] }], validateOnly: true })).responses[0].errorCode,
    };
  },
};

// ─── The comparison ───────────────────────────────────────────────────────────

describe('admin APIs against Apache Kafka', () => {
  it('names, in the table of deliberate differences, only scenarios that exist', () => {
    expect(DELIBERATE_DIFFERENCES.map((d) => d.scenario).filter((s) => s !== '*' && !(s in SCENARIOS))).toEqual([]);
  });

  it.each(Object.keys(SCENARIOS))('%s', async (scenario) => {
    const observed = new Map<string, Observation>();
    for (const t of targets) observed.set(t.name, await SCENARIOS[scenario]!(t));
    const fromKafka = observed.get('kafka')!;
    // ADMIN_DIFF_PRINT=1 shows what each side answered, to read a new scenario's results.
    if (process.env.ADMIN_DIFF_PRINT) console.log(scenario, JSON.stringify(Object.fromEntries(observed), null, 1));
    for (const t of targets.filter((x) => x.name !== 'kafka')) {
      const { unexcused, stale } = compareWithKafka(scenario, fromKafka, observed.get(t.name)!);
      expect({ target: t.name, unexcused }).toEqual({ target: t.name, unexcused: [] });
      expect({ target: t.name, stale }).toEqual({ target: t.name, stale: [] });
    }
    if (postgres.skipReason) console.log(`PostgreSQL gateway not compared: ${postgres.skipReason}`);
  }, 240_000);
});

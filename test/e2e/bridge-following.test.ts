/**
 * The bridge's continuous part, with a gateway as the source and the bridge
 * in this process (Bridge.start): it follows new records, new partitions and
 * new topics that match its pattern (and leaves the others alone), it copies
 * a group's committed offsets each time the group commits at the source, and
 * it stops copying them once the group has committed on the target itself,
 * across a restart of the bridge too. And the source's TLS and SASL settings
 * reach the bridge's Kafka client: the `bridge` command, run as if
 * librdkafka's binding were not installed, copies from a gateway that listens
 * on SASL_SSL only, given them as --source-option; a wrong password there,
 * at the source or at the reverse mode's target, stops the start with
 * the reason in the error (the client's for the source, librdkafka's for Kafka).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import kafkajs, { type Admin } from 'kafkajs';
import { startBroker, type Broker, type BoundListener, type Core } from '../../src/index.js';
import { Bridge, COMMIT_METADATA } from '../../src/bridge/bridge.js';
import { KafkaTarget } from '../../src/bridge/to-kafka.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { scramKeysFromPassword } from '../../src/gateway/sasl/scram.js';
import { batchChecksums, checksums, readLogs, startBridgeProcess, startTarget, type Target } from '../support/bridge.js';
import { makeTestPki, type TestPki } from '../support/certificates.js';
import { waitFor } from '../support/eventually.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { connectProducer, disconnect, expectDelivered, produceAll } from '../support/rdkafka.js';
import { planRecords, uniqueTopic } from '../support/records.js';

const { Kafka, logLevel } = kafkajs;

/** Writes `count` records over the topic's partitions (round robin) through librdkafka; `label` keeps values unique. */
async function produce(bootstrap: string, topic: string, partitions: number, count: number, label: string, options: Record<string, unknown> = {}): Promise<void> {
  const producer = await connectProducer(bootstrap, { 'linger.ms': 5, ...options });
  try {
    const plan = planRecords({ label: `${topic}-${label}`, partitions, perPartition: Math.ceil(count / partitions), headers: [['label', label]] });
    expectDelivered(await produceAll(producer, topic, plan.slice(0, count)));
  } finally {
    await disconnect(producer);
  }
}

/** Every partition of the topic, the same offset for offset at the source and on the target, records and stored batch bytes (a checksum each). */
async function expectSameLogs(source: string, target: string, topic: string, partitions: number): Promise<void> {
  const at = await readLogs(source, topic, partitions);
  expect(at.every((log) => log.records.length > 0), `${topic} has records in every partition at the source`).toBe(true);
  expect(checksums(await readLogs(target, topic, partitions)), `${topic}: target vs source`).toEqual(checksums(at));
  expect(await batchChecksums(target, topic, partitions), `${topic}: the target's batch bytes vs the source's`).toEqual(await batchChecksums(source, topic, partitions));
}

async function highWatermarks(core: Core, topic: string, partitions: number): Promise<number[]> {
  const { partitions: offsets } = await core.offsets({ partitions: Array.from({ length: partitions }, (_, partition) => ({ queue: topic, partition })) });
  return offsets.map((o) => o.highWatermark);
}

function startBridge(source: string, core: Core, topics: RegExp, groups: RegExp | null): Promise<Bridge> {
  return Bridge.start({ source, sourceOptions: {}, topics, groups, core, refreshIntervalMs: 200, log: pino({ level: 'warn' }) });
}

describe('bridge: following the source (a gateway as the source, memory target)', () => {
  let source: Broker;
  let target: Broker;
  let sourceAdmin: Admin;
  let targetAdmin: Admin;
  const bridges: Bridge[] = [];
  beforeAll(async () => {
    source = await startBroker({ autoCreateTopics: false, groups: { initialRebalanceDelayMs: 0 } });
    target = await startBroker({ autoCreateTopics: false, groups: { initialRebalanceDelayMs: 0 } });
    sourceAdmin = kafkajsClient(source.bootstrap).admin();
    targetAdmin = kafkajsClient(target.bootstrap).admin();
    await sourceAdmin.connect();
    await targetAdmin.connect();
  });
  afterAll(async () => {
    for (const bridge of bridges) await bridge.stop();
    await sourceAdmin?.disconnect();
    await targetAdmin?.disconnect();
    await target?.stop();
    await source?.stop();
  });

  it('follows new records, new partitions and new topics that match the pattern, and only those', async () => {
    const prefix = uniqueTopic('follow');
    const first = `${prefix}.orders`;
    const later = `${prefix}.payments`;
    const unmatched = `${prefix}-other`;
    await sourceAdmin.createTopics({ topics: [{ topic: first, numPartitions: 2 }, { topic: unmatched, numPartitions: 1 }] });
    await produce(source.bootstrap, first, 2, 40, 'before');
    await produce(source.bootstrap, unmatched, 1, 10, 'before');
    const bridge = await startBridge(source.bootstrap, target.core, new RegExp(`${prefix.replace(/\./g, '\\.')}\\..*`), null);
    bridges.push(bridge);
    await waitFor(async () => (await highWatermarks(target.core, first, 2)).every((h) => h === 20), { what: `${first} copied`, timeoutMs: 60_000, intervalMs: 100 });

    // New records while it runs.
    await produce(source.bootstrap, first, 2, 30, 'running');
    await waitFor(async () => (await highWatermarks(target.core, first, 2)).every((h) => h === 35), { what: `${first}'s new records copied`, timeoutMs: 60_000, intervalMs: 100 });

    // New partitions of a followed topic: created on the target and copied from their start.
    await sourceAdmin.createPartitions({ topicPartitions: [{ topic: first, count: 4 }] });
    await produce(source.bootstrap, first, 4, 40, 'grown');
    await waitFor(async () => (await target.core.describeQueue({ name: first }))?.partitions.length === 4, { what: `${first}'s new partitions on the target`, timeoutMs: 60_000, intervalMs: 100 });
    await waitFor(async () => (await highWatermarks(target.core, first, 4)).join() === '45,45,10,10', { what: `${first}'s new partitions copied`, timeoutMs: 60_000, intervalMs: 100 });

    // A new topic that matches.
    await sourceAdmin.createTopics({ topics: [{ topic: later, numPartitions: 3 }] });
    await produce(source.bootstrap, later, 3, 30, 'new');
    await waitFor(async () => (await target.core.describeQueue({ name: later })) !== null && (await highWatermarks(target.core, later, 3)).every((h) => h === 10), { what: `${later} copied`, timeoutMs: 60_000, intervalMs: 100 });

    await expectSameLogs(source.bootstrap, target.bootstrap, first, 4);
    await expectSameLogs(source.bootstrap, target.bootstrap, later, 3);
    // The topic outside the pattern existed all along, so every refresh above has passed it by.
    expect(await target.core.describeQueue({ name: unmatched })).toBeNull();
    expect(bridge.progress().topics.map((t) => t.topic)).toEqual([first, later]);
  }, 180_000);

  it('copies a group\'s offsets each time it commits at the source, and no longer once it has committed on the target itself, also after a restart', async () => {
    const topic = uniqueTopic('follow-groups');
    const group = `${topic}-group`;
    await sourceAdmin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    await produce(source.bootstrap, topic, 2, 40, 'records');
    const onTarget = async () => {
      const { offsets } = await target.core.fetchOffsets({ group, partitions: null });
      return new Map(offsets.filter((o) => o.queue === topic).map((o) => [o.partition, { offset: o.offset, metadata: o.metadata }]));
    };
    const commitAtSource = (offsets: [number, number]) =>
      sourceAdmin.setOffsets({ groupId: group, topic, partitions: offsets.map((offset, partition) => ({ partition, offset: String(offset) })) });

    const bridge = await startBridge(source.bootstrap, target.core, new RegExp(topic), new RegExp(group));
    bridges.push(bridge);
    await commitAtSource([3, 5]);
    await waitFor(async () => (await onTarget()).get(0)?.offset === 3 && (await onTarget()).get(1)?.offset === 5, { what: 'the first offsets copied', timeoutMs: 60_000, intervalMs: 100 });
    await commitAtSource([8, 12]);
    await waitFor(async () => (await onTarget()).get(0)?.offset === 8 && (await onTarget()).get(1)?.offset === 12, { what: 'the later offsets copied', timeoutMs: 60_000, intervalMs: 100 });
    expect((await onTarget()).get(0)?.metadata).toBe(COMMIT_METADATA);

    // The group commits on the target: it has moved, and the bridge leaves it alone.
    await targetAdmin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '10' }] });
    await waitFor(() => bridge.progress().groups.some((g) => g.group === group && g.moved !== null), { what: 'the bridge to see the group moved', timeoutMs: 60_000, intervalMs: 100 });
    await commitAtSource([15, 18]);
    await bridge.stop();
    bridges.pop();

    // A bridge started afresh knows nothing of the first one's view: the target's offsets tell it. Its start has read the groups once.
    const restarted = await startBridge(source.bootstrap, target.core, new RegExp(topic), new RegExp(group));
    bridges.push(restarted);
    expect(restarted.progress().groups.find((g) => g.group === group)?.moved).toMatch(/committed offset 10 of .* on the target itself/);
    const after = await onTarget();
    expect(after.get(0)?.offset).toBe(10);
    expect(after.get(0)?.metadata).not.toBe(COMMIT_METADATA);
    expect(after.get(1)?.offset).toBe(12);
  }, 180_000);
});

describe('bridge: a source on SASL_SSL, its settings given as --source-option (gateway source, memory target)', () => {
  let pki: TestPki;
  let source: Broker;
  let target: Target;
  beforeAll(async () => {
    pki = makeTestPki();
    const usersFile = join(pki.dir, 'plain-users.txt');
    writeFileSync(usersFile, 'alice=alice-secret\n');
    source = await startBroker({
      autoCreateTopics: false,
      listeners: [{ name: 'SASL_SSL', host: '127.0.0.1', port: 0 }],
      tls: { certFile: pki.serverCert, keyFile: pki.serverKey },
      sasl: { plainUsersFile: usersFile },
    });
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
      const salt = randomBytes(16);
      await source.core.alterScramCredentials({ deletions: [], upsertions: [{ user: 'bob', mechanism, iterations: 4096, salt, ...(await scramKeysFromPassword(mechanism, 'bob-secret', salt, 4096)) }] });
    }
    target = await startTarget({ engine: 'memory' });
  });
  afterAll(async () => {
    await target?.stop();
    await source?.stop();
    pki?.remove();
  });

  it('copies a topic offset for offset over SCRAM-SHA-512 and TLS; the same command with a wrong password copies nothing and says why', async () => {
    const bootstrap = `127.0.0.1:${(source.listeners[0] as BoundListener).port}`;
    const security: Record<string, string> = { 'security.protocol': 'sasl_ssl', 'ssl.ca.location': pki.caCert, 'sasl.mechanisms': 'SCRAM-SHA-512', 'sasl.username': 'bob', 'sasl.password': 'bob-secret' };
    const topic = uniqueTopic('bridge-sasl');
    const admin = new Kafka({ brokers: [bootstrap], ssl: { ca: [readFileSync(pki.caCert)] }, sasl: { mechanism: 'scram-sha-512', username: 'bob', password: 'bob-secret' }, logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] });
    await admin.disconnect();
    await produce(bootstrap, topic, 3, 60, 'secure', security);

    const options = (password: string) => Object.entries({ ...security, 'sasl.password': password }).flatMap(([k, v]) => ['--source-option', `${k}=${v}`]);
    const args = (password: string) => ['--source', bootstrap, '--topics', topic, '--core', target.rpc, '--refresh-interval-ms', '500', '--progress-interval-ms', '0', ...options(password)];

    const wrong = await startBridgeProcess(args('wrong-password'), { withoutLibrdkafka: true }).catch((e: Error) => e);
    if (!(wrong instanceof Error)) await wrong.stop();
    expect(wrong instanceof Error ? wrong.message : wrong.logs.tail()).toMatch(/could not connect to the source .*SASL authentication error: Authentication failed .* invalid credentials/);
    expect(await target.core.describeQueue({ name: topic })).toBeNull();

    // As on a machine where only `npm install` ran: librdkafka's binding cannot be loaded, and the forward bridge does not need it.
    const bridge = await startBridgeProcess(args('bob-secret'), { withoutLibrdkafka: true });
    try {
      await waitFor(async () => (await target.core.describeQueue({ name: topic })) !== null && (await highWatermarks(target.core, topic, 3)).every((h) => h === 20), { what: `${topic} copied over SASL_SSL`, timeoutMs: 60_000, intervalMs: 100, describe: () => bridge.logs.tail() });
      // The source's topic configs are read over SASL_SSL as well (DescribeConfigs through the bridge's own client).
      expect(bridge.logs.matching('could not be read from the source').length).toBe(0);
    } finally {
      expect(await bridge.stop()).toBe(0);
    }
    const at = await readLogs(bootstrap, topic, 3, 60_000, security);
    expect(checksums(await readLogs(target.bootstrap, topic, 3))).toEqual(checksums(at));
    expect(await batchChecksums(target.bootstrap, topic, 3)).toEqual(await batchChecksums(bootstrap, topic, 3, security));
  }, 180_000);

  it('the reverse target (--to-kafka) given a wrong password says why it could not connect, as the source does', async () => {
    const bootstrap = `127.0.0.1:${(source.listeners[0] as BoundListener).port}`;
    const options = { 'security.protocol': 'sasl_ssl', 'ssl.ca.location': pki.caCert, 'sasl.mechanisms': 'SCRAM-SHA-512', 'sasl.username': 'bob', 'sasl.password': 'wrong-password' };
    const started = await KafkaTarget.start({ bootstrap, options, compression: CompressionCodec.None, log: pino({ level: 'silent' }) }).catch((e: Error) => e);
    if (!(started instanceof Error)) await started.close();
    expect(started instanceof Error ? started.message : 'connected').toMatch(/could not connect to Kafka at .*SASL authentication error: Authentication failed .* invalid credentials.*--target-option/);
  }, 60_000);
});

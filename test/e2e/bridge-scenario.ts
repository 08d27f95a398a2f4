/**
 * The bridge's proof, written once for both sources (Apache Kafka in
 * bridge-kafka.test.ts, a second gateway in bridge-gateway.test.ts): records
 * keep arriving at the source while the bridge (a child process) copies them
 * and is SIGKILLed three times; a consumer group reads part of a topic at the
 * source, stops, and carries on at the target once the bridge has copied its
 * offsets; at the end every partition of every topic is the same, offset for
 * offset, at the source and at the target, and so are the stored batches,
 * byte for byte (a checksum per partition of each).
 */
import { expect } from 'vitest';
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type { KafkaConsumer as KafkaConsumerType, LibrdKafkaError, Message, Producer } from '@confluentinc/kafka-javascript';
import { batchChecksums, checksums, gapCount, readLogs, startBridgeProcess, type BridgeProcess, type PartitionLog, type Target } from '../support/bridge.js';
import { sleep, waitFor } from '../support/eventually.js';
import { freePort } from '../support/gateway.js';
import { connectProducer, disconnect, expectDelivered, produceAll } from '../support/rdkafka.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { planRecords, uniqueTopic } from '../support/records.js';

const { KafkaConsumer } = KafkaJavascript;

export interface CopiedTopic {
  name: string;
  partitions: number;
  /** Offsets at the source that hold no record (compaction, aborted transactions): the copy must keep them. */
  expectGaps?: boolean;
  /** Written by a transactional producer, some transactions aborted: read_uncommitted views compared too. */
  transactional?: boolean;
  /** cleanup.policy=compact at the source: the target's copy is compacted too, or keeps every record. */
  compacted?: boolean;
}

export interface Scenario {
  source: string;
  target: Target;
  /** The topic the ongoing producer writes to and the group reads. */
  main: CopiedTopic;
  /** Prepared at the source before the bridge starts (compacted, transactional). */
  others: CopiedTopic[];
  /** Records written to `main` before the bridge starts, and while it runs. */
  initialRecords: number;
  ongoingRecords: number;
}

export const GROUP = 'switching-group';

/** Per partition, each key's latest record (offset and value). */
function latestPerKey(logs: PartitionLog[]): Record<string, { offset: number; value: string }>[] {
  return logs.map((log) => Object.fromEntries(log.records.map((r) => [r.key ?? '', { offset: r.offset, value: r.value }])));
}

export function groupConsumer(bootstrap: string, topic: string): Promise<KafkaConsumerType> {
  const consumer = new KafkaConsumer(
    { 'bootstrap.servers': bootstrap, 'group.id': GROUP, 'enable.auto.commit': false, 'log_level': 3, 'fetch.wait.max.ms': 50, 'session.timeout.ms': 10_000 },
    { 'auto.offset.reset': 'earliest' },
  );
  return new Promise((resolve, reject) =>
    consumer.connect({ timeout: 20_000 }, (err) => {
      if (err) return reject(err);
      consumer.subscribe([topic]);
      resolve(consumer);
    }),
  );
}

/**
 * Commits every partition at its position and waits until the coordinator
 * has it, without blocking this thread (commitSync would, and the gateways
 * of these tests run on it): an asynchronous commit, then asynchronous
 * reads of the committed offsets.
 */
async function commit(consumer: KafkaConsumerType): Promise<void> {
  const positions = consumer.position().filter((p) => p.offset >= 0);
  if (positions.length === 0) return;
  consumer.commit();
  await waitFor(
    async () => {
      const committed = await new Promise<{ partition: number; offset: number }[]>((resolve) =>
        consumer.committed(positions.map(({ topic, partition }) => ({ topic, partition })), 5_000, (err, tps) => resolve(err ? [] : tps)),
      );
      return positions.every((p) => committed.some((c) => c.partition === p.partition && c.offset >= p.offset));
    },
    { what: "the group's commit to be answered", timeoutMs: 60_000, intervalMs: 50 },
  );
}

/** Consumes (and commits what it consumed) until `enough` says so; returns what it read. */
export async function consumeWhile(consumer: KafkaConsumerType, enough: (read: Message[]) => boolean, what: string, timeoutMs = 180_000): Promise<Message[]> {
  const read: Message[] = [];
  const deadline = Date.now() + timeoutMs;
  while (!enough(read)) {
    if (Date.now() > deadline) throw new Error(`${what}: gave up after ${timeoutMs} ms with ${read.length} records read`);
    const batch = await new Promise<Message[]>((resolve) => consumer.consume(500, (err, messages) => resolve(err ? [] : messages)));
    read.push(...batch);
    if (batch.length === 0) await sleep(20);
  }
  // Once, at the end: what was read is what is committed, so the group's next reader starts right after it.
  await commit(consumer);
  return read;
}

const call = (what: string, f: (cb: (err: LibrdKafkaError) => void) => void) =>
  new Promise<void>((resolve, reject) => f((err) => (err ? reject(new Error(`${what}: ${err.message}`)) : resolve())));

/** Rounds of the same keys, each in its own segment (segment.ms), until the source's cleaner has removed older values. */
async function writeCompacted(bootstrap: string, topic: string): Promise<void> {
  const producer = await connectProducer(bootstrap, { 'linger.ms': 0 });
  let round = 0;
  const gaps = async () => (await readLogs(bootstrap, topic, 3)).reduce((n, log) => n + gapCount(log), 0);
  try {
    await waitFor(
      async () => {
        const records = Array.from({ length: 60 }, (_, i) => ({ partition: i % 3, key: `key-${i % 30}`, value: `round-${round}-${i}`, headers: [['round', String(round)] as [string, string]], timestamp: Date.now() }));
        expectDelivered(await produceAll(producer, topic, records));
        round++;
        await sleep(300);
        return round > 3 && (await gaps()) > 0;
      },
      { what: `Kafka's cleaner to compact ${topic}`, timeoutMs: 120_000, intervalMs: 10 },
    );
  } finally {
    await disconnect(producer);
  }
  // The bridge starts on a settled log: records compacted away after they were copied would stay on the target (docs/bridge.md).
  let settled = await gaps();
  await waitFor(async () => {
    await sleep(1_500);
    const now = await gaps();
    const same = now === settled;
    settled = now;
    return same;
  }, { what: `${topic}'s compaction to settle`, timeoutMs: 60_000, intervalMs: 10 });
}

/** Transactions over two partitions, every third aborted, the last one too (a marker at the partition's end). */
async function writeTransactions(bootstrap: string, topic: string): Promise<void> {
  const producer: Producer = await connectProducer(bootstrap, { 'transactional.id': `bridge-txn-${process.pid}`, 'linger.ms': 0 });
  try {
    await call('initTransactions', (cb) => producer.initTransactions(30_000, cb));
    for (let t = 0; t < 10; t++) {
      await call('beginTransaction', (cb) => producer.beginTransaction(cb));
      for (let i = 0; i < 20; i++) producer.produce(topic, i % 2, Buffer.from(`txn-${t}-${i}`), Buffer.from(`k-${i}`), Date.now(), undefined, [{ txn: Buffer.from(String(t)) }]);
      // Written to the log first, so an abort leaves aborted records (gaps) and not merely unsent ones.
      await call('flush', (cb) => producer.flush(30_000, cb));
      const abort = t % 3 === 2 || t === 9;
      if (abort) await call('abortTransaction', (cb) => producer.abortTransaction(30_000, cb));
      else await call('commitTransaction', (cb) => producer.commitTransaction(30_000, cb));
    }
  } finally {
    await disconnect(producer);
  }
}


/**
 * The scenario's topics, created at the source: the main one (12 partitions,
 * written by the scenario), a compacted one whose cleaner has run and settled
 * (its gaps copied as gaps), and one with committed and aborted transactions
 * (copied with their markers, the trailing one included: read_committed
 * readers of the copy see the committed records, read_uncommitted ones the
 * aborted ones too).
 */
export async function prepareSourceTopics(bootstrap: string): Promise<{ main: CopiedTopic; others: CopiedTopic[] }> {
  const main = { name: uniqueTopic('bridge-main'), partitions: 12 };
  const compacted = { name: uniqueTopic('bridge-compacted'), partitions: 3, expectGaps: true, compacted: true };
  const transactional = { name: uniqueTopic('bridge-txn'), partitions: 2, expectGaps: true, transactional: true };
  const admin = kafkajsClient(bootstrap).admin();
  await admin.connect();
  try {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: main.name, numPartitions: main.partitions },
        { topic: compacted.name, numPartitions: compacted.partitions, configEntries: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'segment.ms', value: '100' }, { name: 'min.cleanable.dirty.ratio', value: '0.01' }] },
        { topic: transactional.name, numPartitions: transactional.partitions },
      ],
    });
  } finally {
    await admin.disconnect();
  }
  await writeCompacted(bootstrap, compacted.name);
  await writeTransactions(bootstrap, transactional.name);
  return { main, others: [compacted, transactional] };
}

/**
 * A transactional topic read_uncommitted at both ends: the aborted records are
 * there too, at the same offsets, and every stored batch, markers included,
 * is the source's byte for byte.
 */
async function compareUncommitted(s: Scenario, topic: CopiedTopic, committed: PartitionLog[]): Promise<void> {
  const uncommitted = { 'isolation.level': 'read_uncommitted' } as const;
  const source = await readLogs(s.source, topic.name, topic.partitions, 120_000, uncommitted);
  const target = await readLogs(s.target.bootstrap, topic.name, topic.partitions, 120_000, uncommitted);
  const count = (logs: PartitionLog[]) => logs.reduce((n, log) => n + log.records.length, 0);
  expect(count(source), `${topic.name}: read_uncommitted at the source reads the aborted records too`).toBeGreaterThan(count(committed));
  expect(checksums(target), `${topic.name}: read_uncommitted, target vs source`).toEqual(checksums(source));
  expect(await batchChecksums(s.target.bootstrap, topic.name, topic.partitions, {}, true), `${topic.name}: every stored batch, markers included, target vs source`).toEqual(await batchChecksums(s.source, topic.name, topic.partitions, {}, true));
}

export async function runBridgeScenario(s: Scenario): Promise<{ bridge: BridgeProcess; report: string }> {
  const { main } = s;
  const producer: Producer = await connectProducer(s.source, { 'compression.codec': 'lz4', 'linger.ms': 5, 'enable.idempotence': true });
  // Timestamped now: Apache Kafka deletes records older than its retention (7 days by their timestamps) at its
  // first retention check, 30 s after it starts, which would empty the source's log start under the test.
  const plan = planRecords({ label: main.name, partitions: main.partitions, perPartition: Math.ceil((s.initialRecords + s.ongoingRecords) / main.partitions), headers: [['origin', 'bridge-test'], ['empty', '']], baseTimestamp: Date.now() });
  const initial = plan.slice(0, s.initialRecords);
  const ongoing = plan.slice(s.initialRecords, s.initialRecords + s.ongoingRecords);
  expectDelivered(await produceAll(producer, main.name, initial, { timeoutMs: 300_000 }));

  const metricsPort = await freePort();
  const bridge = await startBridgeProcess([
    '--source', s.source,
    '--topics', [main, ...s.others].map((t) => t.name.replace(/\./g, '\\.')).join('|'),
    '--groups', GROUP,
    '--core', s.target.rpc,
    '--refresh-interval-ms', '500',
    '--progress-interval-ms', '1000',
    '--metrics-port', String(metricsPort),
  ]);

  // The producer keeps writing while the bridge runs, is killed and comes back.
  // Spread over at least 16 s, so the kills below fall while records are still arriving.
  let produced = 0;
  let writerDone = false;
  const chunk = Math.ceil(ongoing.length / 40);
  const writing = (async () => {
    for (let at = 0; at < ongoing.length; at += chunk) {
      expectDelivered(await produceAll(producer, main.name, ongoing.slice(at, at + chunk), { timeoutMs: 300_000 }));
      produced = Math.min(ongoing.length, at + chunk);
      await sleep(400);
    }
  })().finally(() => (writerDone = true));

  const copiedOnTarget = async () => {
    const { partitions } = await s.target.core.offsets({ partitions: Array.from({ length: main.partitions }, (_, partition) => ({ queue: main.name, partition })) });
    return partitions.reduce((n, p) => n + Math.max(0, p.highWatermark), 0);
  };

  // The group reads part of the topic at the source and leaves.
  const atSource = await groupConsumer(s.source, main.name);
  const firstHalf = await consumeWhile(atSource, (read) => read.length >= s.initialRecords / 2, 'the group at the source');
  await disconnect(atSource);

  // Three crashes, each after the copy has moved on since the last (while the producer writes).
  let killsWhileWriting = 0;
  for (let kill = 0; kill < 3; kill++) {
    const before = await copiedOnTarget();
    await waitFor(async () => writerDone || (await copiedOnTarget()) > before, { what: `the bridge to copy more before kill ${kill + 1}`, timeoutMs: 120_000, intervalMs: 100, describe: () => bridge.logs.tail() });
    if (!writerDone) killsWhileWriting++;
    await bridge.kill();
    await sleep(200);
    await bridge.restart();
  }

  expect(killsWhileWriting, 'kills that fell while the producer was writing').toBeGreaterThan(0);

  // Metrics while running.
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  expect(metrics).toMatch(new RegExp(`queen_bridge_records_copied_total\\{topic="${main.name.replace(/\./g, '\\.')}"\\} \\d+`));
  expect(metrics).toMatch(/# TYPE queen_bridge_lag_records gauge/);
  // Beside its own figures, the process's: Node's, and its round trips to the core when it copies into one.
  expect(metrics).toMatch(/^nodejs_eventloop_lag_seconds \S+$/m);
  expect(await (await fetch(`http://127.0.0.1:${metricsPort}/ready`)).json()).toEqual({ status: 'ready' });

  // The group moves: once the bridge has copied its offsets, it carries on at the target, mid-stream.
  const sourceCommitted = new Map<number, number>();
  for (const m of firstHalf) sourceCommitted.set(m.partition, Math.max(sourceCommitted.get(m.partition) ?? 0, m.offset + 1));
  await waitFor(
    async () => {
      const { offsets } = await s.target.core.fetchOffsets({ group: GROUP, partitions: null });
      const onTarget = new Map(offsets.map((o) => [o.partition, o.offset]));
      return [...sourceCommitted].every(([p, o]) => onTarget.get(p) === o);
    },
    { what: "the group's source offsets copied to the target", timeoutMs: 120_000, intervalMs: 200, describe: () => bridge.logs.tail() },
  );
  const atTarget = await groupConsumer(s.target.bootstrap, main.name);
  const total = s.initialRecords + s.ongoingRecords;
  const secondHalf = await consumeWhile(atTarget, (read) => firstHalf.length + read.length >= total, 'the group at the target', 300_000);
  await disconnect(atTarget);
  await writing;
  expect(produced).toBe(ongoing.length);

  // No duplicate, nothing missed: every record of the topic once, across the move.
  const seen = new Map<string, number>();
  for (const m of [...firstHalf, ...secondHalf]) seen.set(`${m.partition}:${m.offset}`, (seen.get(`${m.partition}:${m.offset}`) ?? 0) + 1);
  expect([...seen.values()].filter((n) => n > 1)).toEqual([]);
  expect(seen.size).toBe(total);
  expect(new Set([...firstHalf, ...secondHalf].map((m) => m.value!.toString())).size).toBe(total);

  // The bridge has seen the group move and leaves it alone.
  await waitFor(() => bridge.logs.matching(`group ${GROUP} has moved to the target`).length > 0, { what: 'the bridge to notice the group moved', timeoutMs: 60_000, intervalMs: 100 });

  // Every topic, offset for offset, once the bridge has caught up.
  const compared: string[] = [];
  for (const topic of [main, ...s.others]) {
    const source = await readLogs(s.source, topic.name, topic.partitions);
    if (topic.expectGaps) expect(source.reduce((n, log) => n + gapCount(log), 0), `${topic.name} has gaps at the source`).toBeGreaterThan(0);
    await waitFor(
      async () => {
        const { partitions } = await s.target.core.offsets({ partitions: source.map((_, partition) => ({ queue: topic.name, partition })) });
        return partitions.every((p, i) => p.highWatermark === source[i]!.end);
      },
      { what: `${topic.name} copied to the source's end`, timeoutMs: 120_000, intervalMs: 200, describe: () => bridge.logs.tail() },
    );
    if (topic.compacted) {
      // The source's config reached the target as far as the target takes it.
      const info = await s.target.core.describeQueue({ name: topic.name });
      expect(info?.config.topicConfigs['cleanup.policy'] === 'compact' || info?.config.retentionMs === -1, `${topic.name} is compacted or keeps every record on the target`).toBe(true);
    }
    const target = await readLogs(s.target.bootstrap, topic.name, topic.partitions);
    if (topic.compacted) {
      // The target's compactor may already have cleaned what the source's has not yet (Kafka never cleans its
      // active segment; the target's tail is its newest batch): the same latest value per key at the same
      // offset, and nothing on the target that the source does not hold at that offset (docs/bridge.md).
      expect(latestPerKey(target), `${topic.name}: the latest record per key, target vs source`).toEqual(latestPerKey(source));
      for (const [partition, log] of target.entries()) {
        const held = new Set(source[partition]!.records.map((r) => JSON.stringify(r)));
        expect(log.records.filter((r) => !held.has(JSON.stringify(r))), `${topic.name}/${partition}: records only the target holds`).toEqual([]);
        expect([log.start, log.end], `${topic.name}/${partition}: start and end`).toEqual([source[partition]!.start, source[partition]!.end]);
      }
    } else {
      expect(checksums(target), `${topic.name}: target vs source`).toEqual(checksums(source));
      // And the stored batches themselves, byte for byte (codec, CRC, producer ids and sequences).
      expect(await batchChecksums(s.target.bootstrap, topic.name, topic.partitions), `${topic.name}: the target's batch bytes vs the source's`).toEqual(await batchChecksums(s.source, topic.name, topic.partitions));
    }
    if (topic.transactional) await compareUncommitted(s, topic, source);
    const records = source.reduce((n, log) => n + log.records.length, 0);
    compared.push(`${topic.name}: ${topic.partitions} partitions, ${records.toLocaleString('en-US')} records, ${source.reduce((n, log) => n + gapCount(log), 0).toLocaleString('en-US')} gaps, ${topic.compacted ? 'the latest record per key equal' : 'record and batch-byte checksums equal'}${topic.transactional ? ', read_committed and read_uncommitted' : ''}`);
  }

  await disconnect(producer);
  const code = await bridge.stop();
  expect(code).toBe(0);
  const report = bridge.logs.lines.slice(-200).join('\n');
  expect(report).toMatch(/bridge stopped after [\d.]+ s: [\d,]+ records copied/);
  // What was proven, for the run's log (the figures).
  console.log([
    `bridge scenario from ${s.source}: 3 SIGKILLs (${killsWhileWriting} while the producer wrote); group ${GROUP} read ${firstHalf.length.toLocaleString('en-US')} records at the source and ${secondHalf.length.toLocaleString('en-US')} at the target, none twice, none missed`,
    ...compared,
  ].join('\n  '));
  return { bridge, report };
}

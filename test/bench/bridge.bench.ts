// The bridge's copy rate as a ratio to a plain consume of the same source in
// the same run. Apache Kafka 4.4 on loopback is the source: RECORDS records of
// RECORD_BYTES over 12 partitions (lz4, with headers) are written once; then,
// in turns (consume, bridge, consume, bridge) so drift on a shared machine hits
// both:
//
//   consume  a librdkafka consumer (read_committed, as the bridge reads) assigned every partition
//            from offset 0 until it has every record: the source's read ceiling for one client
//   perf     Apache Kafka's own kafka-consumer-perf-test (ConsumerPerformance, a new group) reading
//            the same topic to its end: records/s as the tool counts them, from its first record
//            (JVM start and group join left out, so the bridge's ratio to it is a conservative one)
//   bridge   Bridge.start with a fresh target core in this process until the target's high
//            watermarks reach the source's end: PostgreSQL (the test database, when there is
//            one: what a migration writes to) and memory (the bridge's own cost beside the source's)
//
// Then the reverse mode (--to-kafka) the same way, with a gateway (a child
// process, memory engine) as the source and the same Kafka as the target:
//
//   consume  the same plain consume, of the gateway
//   reverse  Bridge.start with a KafkaTarget until it has copied every record (Kafka transactions,
//            the offset mapping written beside them); each round copies a topic of its own, since
//            a topic the bridge copied before is already on Kafka
//   perf     Apache Kafka's own kafka-producer-perf-test writing records of the same size to a
//            topic of as many partitions on the same Kafka (acks=all, 10 s after its warm-up)
//
// Ratios: forward bridge ÷ kafka-consumer-perf-test (issue 30 asks at least 0.9), reverse bridge ÷
// kafka-producer-perf-test (at least 0.7). Every figure goes to bench-results/bridge.json.
//
// Figures are the better of the two rounds; each ratio is bridge ÷ consume of its own source (and,
// forward, bridge ÷ kafka-consumer-perf-test; the bridge's time runs from Bridge.start, connecting included).
// Run: npm run bench:bridge   (BRIDGE_BENCH_RECORDS to change the count; BRIDGE_BENCH_REVERSE=0 skips the reverse mode)
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import KafkaJavascript from '@confluentinc/kafka-javascript';
import { openCore, type Core } from '../../src/core/index.js';
import { Bridge } from '../../src/bridge/bridge.js';
import { KafkaTarget } from '../../src/bridge/to-kafka.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { apacheKafkaInstall, startApacheKafka } from '../support/apache-kafka.js';
import { perfConsume, perfProduce } from './e2e/perf-tools.js';
import { startGatewayProcess } from '../support/gateway.js';
import { findTestDatabase } from '../support/postgres.js';
import { connectConsumer, connectProducer, createTopic, disconnect, expectDelivered, produceAll } from '../support/rdkafka.js';
import { sleep } from '../support/eventually.js';

const { CODES } = KafkaJavascript;
const RECORDS = Number(process.env['BRIDGE_BENCH_RECORDS'] ?? 200_000);
const RECORD_BYTES = 200;
const PARTITIONS = 12;
const ROUNDS = 2;
const TOPIC = 'bench-bridge';
const REVERSE = process.env['BRIDGE_BENCH_REVERSE'] !== '0';

async function plainConsume(bootstrap: string, topic = TOPIC): Promise<number> {
  const consumer = await connectConsumer(bootstrap, { 'isolation.level': 'read_committed' }, topic);
  const started = performance.now();
  let read = 0;
  consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, offset: 0 })));
  while (read < RECORDS) {
    read += await new Promise<number>((resolve) => consumer.consume(5_000, (err, messages) => resolve(err && err.code !== CODES.ERRORS.ERR__PARTITION_EOF ? 0 : messages.length)));
  }
  const seconds = (performance.now() - started) / 1000;
  await disconnect(consumer);
  return seconds;
}

async function bridgeCopy(bootstrap: string, core: Core): Promise<number> {
  const started = performance.now();
  const bridge = await Bridge.start({
    source: bootstrap,
    sourceOptions: {},
    topics: new RegExp(TOPIC),
    groups: null,
    core,
    refreshIntervalMs: 60_000,
    log: pino({ level: 'warn' }),
  });
  const refs = Array.from({ length: PARTITIONS }, (_, partition) => ({ queue: TOPIC, partition }));
  for (;;) {
    const { partitions } = await core.offsets({ partitions: refs });
    if (partitions.reduce((n, p) => n + Math.max(0, p.highWatermark), 0) >= RECORDS) break;
    await sleep(20);
  }
  const seconds = (performance.now() - started) / 1000;
  await bridge.stop();
  return seconds;
}

/** The reverse bridge from the gateway at `source` to Kafka at `target`, until it has copied every record of `topic`. */
async function reverseCopy(source: string, target: string, topic: string): Promise<number> {
  const started = performance.now();
  const log = pino({ level: 'warn' });
  const bridge = await Bridge.start({
    source,
    sourceOptions: {},
    topics: new RegExp(topic),
    groups: null,
    target: await KafkaTarget.start({ bootstrap: target, options: {}, compression: CompressionCodec.None, log }),
    refreshIntervalMs: 60_000,
    log,
  });
  while (bridge.progress().copied < RECORDS) await sleep(20);
  const seconds = (performance.now() - started) / 1000;
  await bridge.stop();
  return seconds;
}

async function produceRecords(bootstrap: string, topic: string): Promise<void> {
  await createTopic(bootstrap, topic, PARTITIONS);
  const producer = await connectProducer(bootstrap, { 'compression.codec': 'lz4', 'linger.ms': 20 });
  const payload = 'x'.repeat(RECORD_BYTES);
  const records = Array.from({ length: RECORDS }, (_, i) => ({ partition: i % PARTITIONS, key: `key-${i}`, value: `${i}:${payload}`.slice(0, RECORD_BYTES), headers: [['bench', String(i % 10)] as [string, string]], timestamp: Date.now() }));
  for (let at = 0; at < RECORDS; at += 20_000) expectDelivered(await produceAll(producer, topic, records.slice(at, at + 20_000), { timeoutMs: 300_000 }));
  await disconnect(producer);
}

const perSecond = (rates: number[]) => `${Math.round(Math.max(...rates)).toLocaleString('en-US').padStart(7)} records/s  (rounds: ${rates.map((r) => Math.round(r)).join(', ')})`;

const rounds = (rates: number[]) => rates.map((r) => Math.round(r));
const round2 = (x: number) => Math.round(x * 100) / 100;
const kafka = await startApacheKafka();
const results: Record<string, unknown> = { measuredAt: new Date().toISOString(), records: RECORDS, recordBytes: RECORD_BYTES, partitions: PARTITIONS, machine: { cpus: cpus().length, loadAverageBefore: loadavg().map(round2) } };
const { database } = await findTestDatabase();
try {
  await produceRecords(kafka.bootstrap, TOPIC);

  // The PostgreSQL target is the one a migration uses; the memory one shows what the bridge itself costs beside the source.
  const targets: { name: string; open(): Promise<Core> }[] = [
    ...(database ? [{ name: 'postgres', open: () => openCore({ engine: 'postgres', url: database.url, schema: database.freshSchema('bench_bridge') }) }] : []),
    { name: 'memory', open: () => openCore({ engine: 'memory' }) },
  ];
  const consumeRates: number[] = [];
  const perfRates: number[] = [];
  const { libs } = await apacheKafkaInstall();
  const bridgeRates = new Map<string, number[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    consumeRates.push(RECORDS / (await plainConsume(kafka.bootstrap)));
    perfRates.push((await perfConsume({ libs, bootstrap: kafka.bootstrap, topic: TOPIC, count: RECORDS, seconds: 600, timeoutSeconds: 120, from: 'earliest' }, () => {})).recordsPerSecond);
    for (const target of targets) {
      const core = await target.open();
      try {
        bridgeRates.get(target.name)!.push(RECORDS / (await bridgeCopy(kafka.bootstrap, core)));
      } finally {
        await core.close();
      }
    }
  }
  const consume = Math.max(...consumeRates);
  console.log(`bridge bench: ${RECORDS.toLocaleString('en-US')} records of ${RECORD_BYTES} B over ${PARTITIONS} partitions (lz4, a header each), Apache Kafka ${kafka.version} as the source`);
  const perf = Math.max(...perfRates);
  console.log(`  plain consume (librdkafka, read_committed): ${perSecond(consumeRates)}`);
  console.log(`  kafka-consumer-perf-test:                   ${perSecond(perfRates)}`);
  for (const [name, rates] of bridgeRates) {
    const best = Math.max(...rates);
    console.log(`  bridge copy to a ${name.padEnd(8)} core:      ${perSecond(rates)}  ratio bridge / consume: ${(best / consume).toFixed(2)}, bridge / kafka-consumer-perf-test: ${(best / perf).toFixed(2)}`);
  }
  results['forward'] = {
    consumeRecordsPerSecond: rounds(consumeRates),
    kafkaConsumerPerfTestRecordsPerSecond: rounds(perfRates),
    bridge: Object.fromEntries([...bridgeRates].map(([name, rates]) => [name, { recordsPerSecond: rounds(rates), ratioToConsumerPerfTest: round2(Math.max(...rates) / perf) }])),
  };

  if (REVERSE) {
    const gateway = await startGatewayProcess({ engine: { engine: 'memory' }, autoCreateTopics: false });
    try {
      const topics = Array.from({ length: ROUNDS }, (_, round) => `bench-reverse-${round}`);
      for (const topic of topics) await produceRecords(gateway.bootstrap, topic);
      const gatewayRates: number[] = [];
      const reverseRates: number[] = [];
      const producerPerfRates: number[] = [];
      for (const [round, topic] of topics.entries()) {
        gatewayRates.push(RECORDS / (await plainConsume(gateway.bootstrap, topic)));
        reverseRates.push(RECORDS / (await reverseCopy(gateway.bootstrap, kafka.bootstrap, topic)));
        const perfTopic = `bench-producer-perf-${round}`;
        await createTopic(kafka.bootstrap, perfTopic, PARTITIONS);
        producerPerfRates.push((await perfProduce({ libs, bootstrap: kafka.bootstrap, topic: perfTopic, recordBytes: RECORD_BYTES, seconds: 10, warmupSeconds: 2 }, () => {})).recordsPerSecond);
      }
      const reverse = Math.max(...reverseRates);
      console.log(`reverse (--to-kafka): the same records on a gateway (child process, memory engine) as the source, the same Kafka as the target`);
      console.log(`  plain consume of the gateway:               ${perSecond(gatewayRates)}`);
      console.log(`  kafka-producer-perf-test into Kafka:        ${perSecond(producerPerfRates)}`);
      console.log(`  bridge copy to Kafka (transactions):        ${perSecond(reverseRates)}  ratio bridge / consume: ${(reverse / Math.max(...gatewayRates)).toFixed(2)}, bridge / kafka-producer-perf-test: ${(reverse / Math.max(...producerPerfRates)).toFixed(2)}`);
      results['reverse'] = {
        gatewayConsumeRecordsPerSecond: rounds(gatewayRates),
        kafkaProducerPerfTestRecordsPerSecond: rounds(producerPerfRates),
        bridgeRecordsPerSecond: rounds(reverseRates),
        ratioToProducerPerfTest: round2(reverse / Math.max(...producerPerfRates)),
      };
    } finally {
      await gateway.stop();
    }
  }
  writeFileSync(new URL('../../bench-results/bridge.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
} finally {
  await database?.release();
  await kafka.stop();
}

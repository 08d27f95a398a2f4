// The bridge's copy rate as a ratio to a plain consume of the same source in
// the same run. Apache Kafka 4.4 on loopback is the source: RECORDS records of
// RECORD_BYTES over 12 partitions (lz4, with headers) are written once; then,
// in turns (consume, bridge, consume, bridge) so drift on a shared machine hits
// both:
//
//   consume  a librdkafka consumer (read_committed, as the bridge reads) assigned every partition
//            from offset 0 until it has every record: the source's read ceiling for one client
//   bridge   Bridge.start with a fresh target core in this process until the target's high
//            watermarks reach the source's end: PostgreSQL (the test database, when there is
//            one: what a migration writes to) and memory (the bridge's own cost beside the source's)
//
// Figures are the better of the two rounds; each ratio is bridge ÷ consume.
// Run: npm run bench:bridge   (BRIDGE_BENCH_RECORDS to change the count)
import { performance } from 'node:perf_hooks';
import { pino } from 'pino';
import KafkaJavascript from '@confluentinc/kafka-javascript';
import { openCore, type QueenCore } from '../../src/core/index.js';
import { Bridge } from '../../src/bridge/bridge.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { startApacheKafka } from '../support/apache-kafka.js';
import { findTestDatabase } from '../support/postgres.js';
import { connectConsumer, connectProducer, createTopic, disconnect, expectDelivered, produceAll } from '../support/rdkafka.js';
import { sleep } from '../support/eventually.js';

const { CODES } = KafkaJavascript;
const RECORDS = Number(process.env['BRIDGE_BENCH_RECORDS'] ?? 200_000);
const RECORD_BYTES = 200;
const PARTITIONS = 12;
const ROUNDS = 2;
const TOPIC = 'bench-bridge';

async function plainConsume(bootstrap: string): Promise<number> {
  const consumer = await connectConsumer(bootstrap, { 'isolation.level': 'read_committed' }, TOPIC);
  const started = performance.now();
  let read = 0;
  consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic: TOPIC, partition, offset: 0 })));
  while (read < RECORDS) {
    read += await new Promise<number>((resolve) => consumer.consume(5_000, (err, messages) => resolve(err && err.code !== CODES.ERRORS.ERR__PARTITION_EOF ? 0 : messages.length)));
  }
  const seconds = (performance.now() - started) / 1000;
  await disconnect(consumer);
  return seconds;
}

async function bridgeCopy(bootstrap: string, core: QueenCore): Promise<number> {
  const started = performance.now();
  const bridge = await Bridge.start({
    source: bootstrap,
    sourceOptions: {},
    topics: new RegExp(TOPIC),
    groups: null,
    core,
    compression: CompressionCodec.None,
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

const kafka = await startApacheKafka();
const { database } = await findTestDatabase();
try {
  await createTopic(kafka.bootstrap, TOPIC, PARTITIONS);
  const producer = await connectProducer(kafka.bootstrap, { 'compression.codec': 'lz4', 'linger.ms': 20 });
  const payload = 'x'.repeat(RECORD_BYTES);
  const records = Array.from({ length: RECORDS }, (_, i) => ({ partition: i % PARTITIONS, key: `key-${i}`, value: `${i}:${payload}`.slice(0, RECORD_BYTES), headers: [['bench', String(i % 10)] as [string, string]], timestamp: Date.now() }));
  for (let at = 0; at < RECORDS; at += 20_000) expectDelivered(await produceAll(producer, TOPIC, records.slice(at, at + 20_000), { timeoutMs: 300_000 }));
  await disconnect(producer);

  // The PostgreSQL target is the one a migration uses; the memory one shows what the bridge itself costs beside the source.
  const targets: { name: string; open(): Promise<QueenCore> }[] = [
    ...(database ? [{ name: 'postgres', open: () => openCore({ engine: 'postgres', url: database.url, schema: database.freshSchema('bench_bridge') }) }] : []),
    { name: 'memory', open: () => openCore({ engine: 'memory' }) },
  ];
  const consumeRates: number[] = [];
  const bridgeRates = new Map<string, number[]>(targets.map((t) => [t.name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    consumeRates.push(RECORDS / (await plainConsume(kafka.bootstrap)));
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
  const perSecond = (rates: number[]) => `${Math.round(Math.max(...rates)).toLocaleString('en-US').padStart(7)} records/s  (rounds: ${rates.map((r) => Math.round(r)).join(', ')})`;
  console.log(`bridge bench: ${RECORDS.toLocaleString('en-US')} records of ${RECORD_BYTES} B over ${PARTITIONS} partitions (lz4, a header each), Apache Kafka ${kafka.version} as the source`);
  console.log(`  plain consume (librdkafka, read_committed): ${perSecond(consumeRates)}`);
  for (const [name, rates] of bridgeRates) {
    console.log(`  bridge copy to a ${name.padEnd(8)} core:      ${perSecond(rates)}  ratio bridge / consume: ${(Math.max(...rates) / consume).toFixed(2)}`);
  }
} finally {
  await database?.release();
  await kafka.stop();
}

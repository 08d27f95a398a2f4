/**
 * The migration bridge with Apache Kafka as the source: 12 partitions of
 * lz4-compressed records with headers, written on while the bridge runs and
 * is SIGKILLed three times; a compacted topic (its gaps copied as gaps); a
 * topic with committed and aborted transactions (aborted records and markers
 * become gaps, the trailing marker included); a consumer group that moves from
 * Kafka to the gateway mid-stream. Source and target are then compared
 * offset for offset, a checksum per partition (bridge-scenario.ts).
 *
 * The issue asks for 200,000 records; the normal suite runs 24,000 to keep
 * this file to a few minutes on the shared 2-core machine (BRIDGE_RECORDS
 * sets it: BRIDGE_RECORDS=200000 runs the full figure).
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { LibrdKafkaError, Producer } from '@confluentinc/kafka-javascript';
import { startApacheKafka, type ApacheKafka } from '../support/apache-kafka.js';
import { gapCount, readLogs, startTarget, type Target } from '../support/bridge.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { sleep, waitFor } from '../support/eventually.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { connectProducer, disconnect, expectDelivered, produceAll } from '../support/rdkafka.js';
import { uniqueTopic } from '../support/records.js';
import { runBridgeScenario } from './bridge-scenario.js';

const engines = await engineMatrix();
const postgres = engines.find((e) => e.name === 'postgres')!;
const engine = postgres.skipReason === null ? postgres : engines[0]!;
afterAll(releaseEngines);

const RECORDS = Number(process.env['BRIDGE_RECORDS'] ?? 24_000);

const call = (what: string, f: (cb: (err: LibrdKafkaError) => void) => void) =>
  new Promise<void>((resolve, reject) => f((err) => (err ? reject(new Error(`${what}: ${err.message}`)) : resolve())));

/** Rounds of the same keys, each in its own segment (segment.ms), until Kafka's cleaner has removed older values. */
async function writeCompacted(kafka: ApacheKafka, topic: string): Promise<void> {
  const producer = await connectProducer(kafka.bootstrap, { 'linger.ms': 0 });
  let round = 0;
  const gaps = async () => (await readLogs(kafka.bootstrap, topic, 3)).reduce((n, log) => n + gapCount(log), 0);
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
  // The bridge starts on a settled log: records compacted away after they were copied would stay on the target (README, Bridge).
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
async function writeTransactions(kafka: ApacheKafka, topic: string): Promise<void> {
  const producer: Producer = await connectProducer(kafka.bootstrap, { 'transactional.id': `bridge-txn-${process.pid}`, 'linger.ms': 0 });
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

describe(`bridge: Apache Kafka as the source, ${engine.name} target`, () => {
  let kafka: ApacheKafka;
  let target: Target;
  afterAll(async () => {
    await target?.stop();
    await kafka?.stop();
  });

  it('copies live, compacted and transactional topics offset for offset through three SIGKILLs; a group moves mid-stream without a duplicate or a miss', async () => {
    kafka = await startApacheKafka({ config: { 'log.cleaner.backoff.ms': 200, 'log.cleaner.threads': 1 } });
    target = await startTarget(engine.fresh());
    const main = { name: uniqueTopic('bridge-main'), partitions: 12 };
    const compacted = { name: uniqueTopic('bridge-compacted'), partitions: 3, expectGaps: true };
    const transactional = { name: uniqueTopic('bridge-txn'), partitions: 2, expectGaps: true };
    const admin = kafkajsClient(kafka.bootstrap).admin();
    await admin.connect();
    await admin.createTopics({
      waitForLeaders: true,
      topics: [
        { topic: main.name, numPartitions: 12 },
        { topic: compacted.name, numPartitions: 3, configEntries: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'segment.ms', value: '100' }, { name: 'min.cleanable.dirty.ratio', value: '0.01' }] },
        { topic: transactional.name, numPartitions: 2 },
      ],
    });
    await admin.disconnect();
    await writeCompacted(kafka, compacted.name);
    await writeTransactions(kafka, transactional.name);

    const { report } = await runBridgeScenario({ source: kafka.bootstrap, target, main, others: [compacted, transactional], initialRecords: RECORDS / 2, ongoingRecords: RECORDS / 2 });
    expect(report).toContain(`topic ${main.name}`);
    // The compacted topic's config reached the target as far as the target takes it.
    const info = await target.core.describeQueue({ name: compacted.name });
    expect(info?.config.retentionMs === -1 || info?.config.topicConfigs['cleanup.policy'] === 'compact').toBe(true);
  }, 1_200_000);
});

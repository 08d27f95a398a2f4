/**
 * Log compaction with real clients (librdkafka), on both engines and against
 * Apache Kafka: a compacted topic written with many updates over fewer keys,
 * with tombstones, read from the start holds exactly the latest record of
 * every key, at its own offset, in order (and after a restart on
 * PostgreSQL); Apache Kafka's cleaner leaves the same surviving set; a
 * reader that keeps up with the tail sees every record while compaction
 * runs behind it; tombstones go after delete.retention.ms.
 *
 * Size: COMPACTION_UPDATES updates (default 100,000) over COMPACTION_KEYS
 * keys (default 10,000). The full size, 1,000,000 updates, runs with
 * COMPACTION_UPDATES=1000000 (and in `npm run bench:compaction`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBroker } from '../../src/index.js';
import { startApacheKafka, type ApacheKafka } from '../support/apache-kafka.js';
import { engineMatrix, releaseEngines, type EngineChoice } from '../support/engines.js';
import { sleep } from '../support/eventually.js';
import { expectLatestPerKey, latestIndexByKey, liveSet, MARKER, planUpdates, produceUpdates, readCompacted, type Update } from '../support/compaction-scenario.js';
import { adminCall, connectConsumer, createAdmin, disconnect, readRecords } from '../support/rdkafka.js';
import type { ReadRecord } from '../support/records.js';
import { uniqueTopic } from '../support/records.js';

const UPDATES = Number(process.env.COMPACTION_UPDATES ?? 100_000);
const KEYS = Number(process.env.COMPACTION_KEYS ?? 10_000);
/** The active tail's time, short so the marker closes it (Kafka rolls its segment on the first append after segment.ms). */
const SEGMENT_MS = 1_000;

const engines = await engineMatrix();
afterAll(releaseEngines);

/** Kafka's topic configs for a compacted topic whose cleaner runs as soon as it can. */
function compactedTopicConfig(extra: Record<string, string> = {}): Record<string, string> {
  return { 'cleanup.policy': 'compact', 'segment.bytes': '1048576', 'segment.ms': String(SEGMENT_MS), 'min.cleanable.dirty.ratio': '0.01', ...extra };
}

async function createCompactedTopic(bootstrap: string, topic: string, config: Record<string, string>): Promise<void> {
  const admin = createAdmin(bootstrap);
  try {
    await adminCall<void>((cb) => admin.createTopic({ topic, num_partitions: 1, replication_factor: 1, config }, 30_000, cb));
  } finally {
    admin.disconnect();
  }
}

/** Writes the scenario's updates, waits out the tail's time and closes it with the marker. */
async function writeScenario(bootstrap: string, topic: string, updates: readonly Update[]): Promise<void> {
  await produceUpdates(bootstrap, topic, updates);
  await sleep(SEGMENT_MS + 200);
  await produceUpdates(bootstrap, topic, [MARKER]);
}

/** How many records the compacted log holds: one per key, tombstones included, and the marker. */
const compactedSize = (updates: readonly Update[]) => latestIndexByKey(updates).size + 1;

const scenario = planUpdates(UPDATES, KEYS);
/** What each broker's compacted log held, for the comparison with Apache Kafka. */
const surviving = new Map<string, Map<string, string>>();

for (const engine of engines) {
  const title = `compaction through the gateway with librdkafka, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let choice: EngineChoice;
    let broker: Awaited<ReturnType<typeof startBroker>>;
    const start = () =>
      startBroker({
        host: '127.0.0.1',
        port: 0,
        logLevel: 'warn',
        compactionIntervalMs: 100,
        ...(choice.engine === 'memory' ? { engine: 'memory' } : { engine: 'postgres', url: choice.url, schema: choice.schema }),
      });
    beforeAll(async () => {
      choice = engine.fresh();
      broker = await start();
    });
    afterAll(() => broker?.stop());

    it(`holds exactly the latest record per key, each at its own offset, after ${UPDATES.toLocaleString('en')} updates over ${KEYS.toLocaleString('en')} keys with tombstones`, async () => {
      const topic = uniqueTopic('compacted');
      await createCompactedTopic(broker.bootstrap, topic, compactedTopicConfig());
      await writeScenario(broker.bootstrap, topic, scenario);
      const read = await readCompacted(broker.bootstrap, topic, compactedSize(scenario));
      expectLatestPerKey(read, scenario);
      surviving.set(engine.name, liveSet(read));

      if (choice.engine === 'postgres') {
        await broker.stop();
        broker = await start();
        expectLatestPerKey(await readRecords(broker.bootstrap, topic, { partitions: [0], count: compactedSize(scenario) }), scenario);
      }
    }, 900_000);

    it('never changes what a reader keeping up with the tail reads: every record, every offset, while compaction runs behind it', async () => {
      const topic = uniqueTopic('compacted-tail');
      // The tail by size only: a reader that keeps within 1 MiB of the end is in it.
      await createCompactedTopic(broker.bootstrap, topic, compactedTopicConfig({ 'segment.ms': '604800000' }));
      // More than the 1 MiB tail, so compaction has something behind the reader.
      const updates = planUpdates(60_000, 500, 10);
      const consumer = await connectConsumer(broker.bootstrap, {}, topic);
      const seen: ReadRecord[] = [];
      try {
        consumer.assign([{ topic, partition: 0, offset: 0 }]);
        const ROUND = 3_000;
        for (let from = 0; from < updates.length; from += ROUND) {
          // Uncompressed, so the log outgrows the 1 MiB tail.
          await produceUpdates(broker.bootstrap, topic, updates.slice(from, from + ROUND), 'none');
          while (seen.length < from + ROUND) {
            const messages = await new Promise<KafkaMessage[]>((resolve) => consumer.consume(1000, (_err, m) => resolve((m ?? []) as KafkaMessage[])));
            for (const m of messages) seen.push({ partition: m.partition, offset: m.offset, key: m.key?.toString() ?? null, value: m.value?.toString() ?? '', headers: [], timestamp: -1 });
          }
          await sleep(150); // a compactor round or more between rounds
        }
      } finally {
        await disconnect(consumer);
      }
      expect(seen.map((r) => r.offset)).toEqual(updates.map((_, i) => i));
      expect(seen.map((r) => r.value)).toEqual(updates.map((u) => u.value ?? ''));
      // Compaction did run behind the reader: a read from the start no longer begins at offset 0.
      const fresh = await readRecords(broker.bootstrap, topic, { partitions: [0], count: 1, timeoutMs: 30_000 });
      expect(fresh[0]!.offset).toBeGreaterThan(0);
    }, 300_000);

    it('removes tombstones once delete.retention.ms has passed since the pass that kept them', async () => {
      const topic = uniqueTopic('compacted-tombstones');
      await createCompactedTopic(broker.bootstrap, topic, compactedTopicConfig({ 'delete.retention.ms': '15000' }));
      const updates: Update[] = [
        { key: 'a', value: 'a1' },
        { key: 'b', value: 'b1' },
        { key: 'a', value: null },
        { key: 'c', value: 'c1' },
      ];
      await writeScenario(broker.bootstrap, topic, updates);
      // First pass: a's value goes, its tombstone stays (as Kafka's does, until its delete horizon,
      // 15 s on: long enough that a slow read on a loaded machine still finds it).
      const first = await readCompacted(broker.bootstrap, topic, 4);
      expect(first.map((r) => [r.offset, r.key, r.value])).toEqual([
        [1, 'b', 'b1'],
        [2, 'a', ''],
        [3, 'c', 'c1'],
        [4, 'marker', 'end'],
      ]);
      // After delete.retention.ms a pass is due for the tombstone alone, with nothing new written (KIP-534).
      const deadline = Date.now() + 60_000;
      let after: ReadRecord[] = [];
      while (Date.now() < deadline) {
        await sleep(300);
        after = await readRecords(broker.bootstrap, topic, { partitions: [0], count: 3 });
        if (after.length === 3 && after.every((r) => r.value !== '')) break;
      }
      expect(after.map((r) => [r.offset, r.key, r.value])).toEqual([
        [1, 'b', 'b1'],
        [3, 'c', 'c1'],
        [4, 'marker', 'end'],
      ]);
    }, 120_000);
  });
}

type KafkaMessage = { partition: number; offset: number; key?: Buffer | null; value: Buffer | null };

describe('the same scenario against Apache Kafka leaves the same surviving set', () => {
  let kafka: ApacheKafka;
  beforeAll(async () => {
    kafka = await startApacheKafka({ autoCreateTopics: false, config: { 'log.cleaner.backoff.ms': 200 } });
  }, 120_000);
  afterAll(() => kafka?.stop());

  it('Apache Kafka\'s cleaner keeps the latest record per key at its own offset too, and the same live records as the gateway', async () => {
    const topic = uniqueTopic('compacted');
    await createCompactedTopic(kafka.bootstrap, topic, compactedTopicConfig());
    await writeScenario(kafka.bootstrap, topic, scenario);
    const read = await readCompacted(kafka.bootstrap, topic, compactedSize(scenario));
    expectLatestPerKey(read, scenario);
    const kafkaLive = liveSet(read);
    for (const [engine, live] of surviving) expect(live, `the ${engine} engine's surviving records`).toEqual(kafkaLive);
  }, 600_000);
});

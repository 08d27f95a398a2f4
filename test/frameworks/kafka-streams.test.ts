/**
 * Kafka Streams (Apache Kafka's own, from Maven Central, the version of the
 * reference broker) through the gateway on every engine and against Apache
 * Kafka itself, with the same applications, the same input and the same
 * assertions (test/java-frameworks, test/support/java-frameworks.ts):
 *
 * - a word count with processing.guarantee=exactly_once_v2: lines of text in,
 *   the running count per word out, through a repartition topic and a
 *   changelogged store, SIGKILLed mid-stream and started again. Read with
 *   read_committed, the output holds, for each word, exactly the counts 1,
 *   2, ... n in order (every update once: none lost, none doubled by the
 *   killed instance's unfinished transaction), the same as Apache Kafka's
 *   output for the same input;
 * - an aggregation (a running sum per key in the store "totals") stopped,
 *   its local state folder wiped, and started again: it restores the store
 *   from its changelog topic (which Streams creates compacted), and the sums
 *   continue from the restored values when more input arrives.
 *
 * Streams creates its internal topics itself (CreateTopics with its own
 * configs: cleanup.policy=compact for changelogs, the broker's default
 * replication factor); the tests create only the input and output topics.
 */
import type { Admin } from 'kafkajs';
import kafkajs from 'kafkajs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apacheKafkaInstall, startApacheKafka } from '../support/apache-kafka.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway } from '../support/gateway.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { readTopic, StreamsApp, type ReadRecordLine } from '../support/java-frameworks.js';
import { createTopics, expectedWordCountOutput, runWordCount, send, valuesPerKey, type Server } from '../support/streams-wordcount.js';
import { uniqueTopic } from '../support/records.js';

const { ConfigResourceTypes } = kafkajs;

const engines = await engineMatrix();
afterAll(releaseEngines);
const kafkaVersion = (await apacheKafkaInstall()).version;


interface Target {
  name: string;
  skipReason: string | null;
  start(): Promise<Server>;
}

const apacheKafka: Target = { name: `Apache Kafka ${kafkaVersion}`, skipReason: null, start: () => startApacheKafka({ autoCreateTopics: false }) };
const targets: Target[] = [
  apacheKafka,
  ...engines.map(
    (engine): Target => ({
      name: `the gateway, ${engine.name} engine`,
      skipReason: engine.skipReason,
      start: () => startGateway({ engine: engine.fresh(), autoCreateTopics: false, groups: { initialRebalanceDelayMs: 0 } }),
    }),
  ),
];

let kafkaWordCount: Promise<Record<string, string[]>> | null = null;

/**
 * Apache Kafka's output for the same input, run once per file: on Kafka's
 * own server when its tests run first, else (a gateway test run alone) on
 * a Kafka started for it.
 */
function referenceWordCount(kafka?: Server, workDir?: string): Promise<Record<string, string[]>> {
  kafkaWordCount ??= (async () => {
    if (kafka && workDir) return runWordCount(kafka, workDir);
    const server = await apacheKafka.start();
    const dir = mkdtempSync(join(tmpdir(), 'queen-streams-kafka-'));
    try {
      return await runWordCount(server, dir);
    } finally {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  })();
  return kafkaWordCount;
}


for (const target of targets) {
  const title = `Kafka Streams ${kafkaVersion} against ${target.name}` + (target.skipReason ? ` (skipped: ${target.skipReason})` : '');
  describe.skipIf(target.skipReason !== null)(title, () => {
    let workDir: string;
    let server: Server;
    beforeAll(async () => {
      workDir = mkdtempSync(join(tmpdir(), 'queen-streams-'));
      server = await target.start();
    }, 180_000);
    afterAll(async () => {
      await server?.stop();
      rmSync(workDir, { recursive: true, force: true });
    });

    it('a word count with exactly_once_v2, SIGKILLed mid-stream and restarted, commits every count once, in order, as Apache Kafka does for the same input', async () => {
      const reference = await referenceWordCount(target === apacheKafka ? server : undefined, workDir);
      expect(reference, 'Apache Kafka counts every word of the input once').toEqual(expectedWordCountOutput());
      if (target !== apacheKafka) expect(await runWordCount(server, workDir)).toEqual(reference);
    }, 240_000);

    it('an aggregation restores its store from its compacted changelog after its state folder is wiped, and its sums go on from there', async () => {
      const input = uniqueTopic('totals-in');
      const output = uniqueTopic('totals-out');
      const applicationId = uniqueTopic('totals');
      const changelog = `${applicationId}-totals-changelog`;
      const stateDir = join(workDir, 'totals-state');
      const keys = Array.from({ length: 12 }, (_, i) => `account-${String(i).padStart(2, '0')}`);
      // The same key always in the same partition: groupByKey reads the input as partitioned by key.
      const batch = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ partition: (from + i) % keys.length % 2, key: keys[(from + i) % keys.length]!, value: String(((from + i) % 7) + 1) }));
      const sums = (records: { key: string; value: string }[]) => {
        const out: Record<string, string> = {};
        for (const r of records) out[r.key] = String(Number(out[r.key] ?? 0) + Number(r.value));
        return out;
      };
      const latest = (records: ReadRecordLine[]) => Object.fromEntries(Object.entries(valuesPerKey(records)).map(([key, values]) => [key, values.at(-1)]));
      const first = batch(0, 180);
      const second = batch(180, 90);
      const admin = kafkajsClient(server.bootstrap).admin();
      let app: StreamsApp | null = null;
      try {
        await admin.connect();
        await createTopics(admin, [input, output], 2);
        await send(server.bootstrap, input, first);

        const start = () => StreamsApp.start({ bootstrap: server.bootstrap, applicationId, topology: 'totals', input, output, stateDir, config: { 'processing.guarantee': 'exactly_once_v2' } });
        // Each input record gives one output update (no record cache): wait for them all, then compare the sums.
        const settled = async (running: StreamsApp, updates: number) => {
          const read = await readTopic(server.bootstrap, output, { logDir: join(workDir, 'logs'), atLeast: updates, timeoutMs: 60_000 });
          if (running.fatal || read.timedOut) throw new Error(`the aggregation gave ${read.records.length} of ${updates} updates: ${running.describe()}`);
          return latest(read.records);
        };

        app = await start();
        await app.running(75_000);
        expect(await settled(app, first.length)).toEqual(sums(first));
        await app.stop();

        const described = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: changelog, configNames: ['cleanup.policy'] }], includeSynonyms: false });
        expect(described.resources[0]?.configEntries.find((c) => c.configName === 'cleanup.policy')?.configValue, `${changelog} as Streams created it`).toBe('compact');

        // A new machine: nothing local survives, only the topics.
        rmSync(stateDir, { recursive: true, force: true });
        await send(server.bootstrap, input, second);
        app = await start();
        await app.running(75_000);
        expect(await settled(app, first.length + second.length), 'the sums go on from the restored ones').toEqual(sums([...first, ...second]));
        const restored = app.restored.filter((r) => r.store === 'totals');
        expect(new Set(restored.map((r) => r.topic)), 'the store was restored from its changelog').toEqual(new Set([changelog]));
        // Compaction may have dropped superseded sums, never a key's latest one.
        const restoredRecords = restored.reduce((n, r) => n + r.records, 0);
        expect(restoredRecords).toBeGreaterThanOrEqual(keys.length);
        expect(restoredRecords).toBeLessThanOrEqual(first.length);
        await app.stop();
      } finally {
        await app?.kill();
        await admin.disconnect();
      }
    }, 180_000);
  });
}

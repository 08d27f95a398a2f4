/**
 * Kafka Connect in distributed mode (Apache Kafka's ConnectDistributed, the
 * version of the reference broker, with the FileStream connectors) through
 * the gateway on every engine and against Apache Kafka itself, with the same
 * steps and the same assertions (test/support/java-frameworks.ts):
 *
 * - a worker starts: it creates its config, offset and status topics
 *   compacted, and refuses to start unless they are;
 * - through its REST API (127.0.0.1, a free port) a FileStream source
 *   (file -> topic) and a FileStream sink (topic -> file) are created, and
 *   the lines written to the source file arrive in the topic and in the
 *   sink file, in order;
 * - the worker is stopped, more lines are written while it is down, and a
 *   new worker process with the same settings starts: it reads the two
 *   connectors' configs back from the config topic, both run again, the
 *   source resumes at its stored file position and the sink at its group's
 *   committed offset, so the topic and the sink file hold every line
 *   exactly once.
 */
import kafkajs from 'kafkajs';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apacheKafkaInstall, startApacheKafka } from '../support/apache-kafka.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { waitFor } from '../support/eventually.js';
import { startGateway } from '../support/gateway.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { ConnectWorker, readTopic, type ConnectWorkerOptions } from '../support/java-frameworks.js';
import { uniqueTopic } from '../support/records.js';

const { ConfigResourceTypes } = kafkajs;

const engines = await engineMatrix();
afterAll(releaseEngines);
const kafkaVersion = (await apacheKafkaInstall()).version;

interface Target {
  name: string;
  skipReason: string | null;
  start(): Promise<{ bootstrap: string; stop(): Promise<void> }>;
}

const targets: Target[] = [
  { name: `Apache Kafka ${kafkaVersion}`, skipReason: null, start: () => startApacheKafka({ autoCreateTopics: false }) },
  ...engines.map(
    (engine): Target => ({
      name: `the gateway, ${engine.name} engine`,
      skipReason: engine.skipReason,
      start: () => startGateway({ engine: engine.fresh(), autoCreateTopics: false, groups: { initialRebalanceDelayMs: 0 } }),
    }),
  ),
];

const SOURCE_CLASS = 'org.apache.kafka.connect.file.FileStreamSourceConnector';
const SINK_CLASS = 'org.apache.kafka.connect.file.FileStreamSinkConnector';

function fileLines(path: string): string[] {
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter((l) => l !== '') : [];
}

for (const target of targets) {
  const title = `Kafka Connect ${kafkaVersion} (distributed, FileStream connectors) against ${target.name}` + (target.skipReason ? ` (skipped: ${target.skipReason})` : '');
  describe.skipIf(target.skipReason !== null)(title, () => {
    let server: Awaited<ReturnType<Target['start']>>;
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'queen-connect-'));
      server = await target.start();
    }, 180_000);
    afterAll(async () => {
      await server?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('runs a source and a sink, and a restarted worker keeps their configs and resumes both without a line twice', async () => {
      const cluster = uniqueTopic('connect');
      const topic = `${cluster}-lines`;
      const sourceFile = join(dir, 'source.txt');
      const sinkFile = join(dir, 'sink.txt');
      writeFileSync(sourceFile, '');
      const options: ConnectWorkerOptions = {
        bootstrap: server.bootstrap,
        groupId: cluster,
        configTopic: `${cluster}-configs`,
        offsetTopic: `${cluster}-offsets`,
        statusTopic: `${cluster}-status`,
        dir: join(dir, 'worker'),
      };
      const admin = kafkajsClient(server.bootstrap).admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });

      const lines = (from: number, count: number) => Array.from({ length: count }, (_, i) => `line ${String(from + i).padStart(4, '0')} of the source file`);
      const first = lines(1, 60);
      const second = lines(61, 40);
      const connectors = {
        'file-source': { 'connector.class': SOURCE_CLASS, 'tasks.max': '1', file: sourceFile, topic },
        'file-sink': { 'connector.class': SINK_CLASS, 'tasks.max': '1', file: sinkFile, topics: topic },
      };

      let worker = await ConnectWorker.start(options);
      try {
        await worker.ready();
        // Connect made its three topics compacted (it stops at start when they are not).
        const described = await admin.describeConfigs({
          resources: [options.configTopic, options.offsetTopic, options.statusTopic].map((name) => ({ type: ConfigResourceTypes.TOPIC, name, configNames: ['cleanup.policy'] })),
          includeSynonyms: false,
        });
        expect(described.resources.map((r) => [r.resourceName, r.configEntries.find((c) => c.configName === 'cleanup.policy')?.configValue])).toEqual([
          [options.configTopic, 'compact'],
          [options.offsetTopic, 'compact'],
          [options.statusTopic, 'compact'],
        ]);

        for (const [name, config] of Object.entries(connectors)) {
          const created = await worker.rest('POST', '/connectors', { name, config });
          expect(created.status, `POST /connectors ${name}: ${JSON.stringify(created.body)}`).toBe(201);
        }
        appendFileSync(sourceFile, first.map((l) => `${l}\n`).join(''));
        await waitFor(() => fileLines(sinkFile).length >= first.length, { what: `the ${first.length} lines in the sink file`, timeoutMs: 60_000, intervalMs: 250, describe: () => `${fileLines(sinkFile).length} there; ${worker.describe()}` });
        expect(fileLines(sinkFile)).toEqual(first);

        // SIGTERM: Connect stops the connectors and commits the source's position and the sink's offsets.
        expect(await worker.stop(), worker.describe()).toBe(143);
        appendFileSync(sourceFile, second.map((l) => `${l}\n`).join(''));

        worker = await ConnectWorker.start({ ...options, restPort: worker.restPort });
        await worker.ready();
        const listed = await worker.rest('GET', '/connectors');
        expect((listed.body as string[]).sort(), 'the connectors the restarted worker read back from its config topic').toEqual(['file-sink', 'file-source']);
        for (const [name, config] of Object.entries(connectors)) {
          expect((await worker.rest('GET', `/connectors/${name}/config`)).body, `${name}'s config`).toEqual({ ...config, name });
        }
        await waitFor(
          async () => {
            const statuses = await Promise.all(Object.keys(connectors).map((name) => worker.rest('GET', `/connectors/${name}/status`)));
            return statuses.every((s) => {
              const body = s.body as { connector?: { state: string }; tasks?: { state: string }[] } | null;
              return s.status === 200 && body?.connector?.state === 'RUNNING' && body.tasks?.length === 1 && body.tasks[0]!.state === 'RUNNING';
            });
          },
          { what: 'both connectors and their tasks RUNNING after the restart', timeoutMs: 60_000, intervalMs: 500, describe: () => worker.describe() },
        );
        const all = [...first, ...second];
        await waitFor(() => fileLines(sinkFile).length >= all.length, { what: `all ${all.length} lines in the sink file`, timeoutMs: 60_000, intervalMs: 250, describe: () => `${fileLines(sinkFile).length} there; ${worker.describe()}` });
        const inTopic = await readTopic(server.bootstrap, topic, { logDir: dir, isolation: 'read_uncommitted' });
        expect(inTopic.records.map((r) => r.value), `${topic}: every line of the source file once, in order`).toEqual(all);
        expect(fileLines(sinkFile), 'the sink file: every line once, in order').toEqual(all);
        expect(await worker.stop(), worker.describe()).toBe(143);
      } finally {
        await worker.stop(5_000);
        await admin.disconnect();
      }
    }, 240_000);
  });
}

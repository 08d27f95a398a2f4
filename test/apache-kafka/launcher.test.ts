/**
 * startApacheKafka(): a real Apache Kafka on loopback, as the comparison
 * suites use it. kafkajs creates a topic, produces and reads back; a second
 * broker runs beside the first on its own ports and folder; stop() leaves no
 * process and no folder behind; and a test process that dies without
 * stopping its broker takes the JVM with it.
 */
import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApacheKafka, type ApacheKafka } from '../support/apache-kafka.js';
import { waitFor } from '../support/eventually.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { uniqueTopic } from '../support/records.js';

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('Apache Kafka on loopback (startApacheKafka)', () => {
  let kafka: ApacheKafka;

  beforeAll(async () => {
    kafka = await startApacheKafka({ autoCreateTopics: false });
  }, 180_000);
  afterAll(async () => {
    await kafka?.stop();
  });

  it('is a KRaft broker on 127.0.0.1 that kafkajs describes, writes to and reads from', async () => {
    expect(kafka.bootstrap).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(kafka.controllerPort).not.toBe(kafka.port);
    const client = kafkajsClient(kafka.bootstrap);
    const admin = client.admin();
    await admin.connect();
    const cluster = await admin.describeCluster();
    expect(cluster.brokers).toEqual([{ nodeId: kafka.nodeId, host: '127.0.0.1', port: kafka.port }]);
    expect(cluster.clusterId).toBe(kafka.clusterId);

    const topic = uniqueTopic('apache-kafka-launcher');
    expect(await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true })).toBe(true);
    await admin.disconnect();

    const producer = client.producer({ idempotent: true });
    await producer.connect();
    const sent = Array.from({ length: 10 }, (_, i) => ({ partition: i % 2, key: `k${i}`, value: `v${i}` }));
    await producer.send({ topic, acks: -1, messages: sent });
    await producer.disconnect();

    const consumer = client.consumer({ groupId: `${topic}-reader` });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const read: { partition: number; offset: string; key: string; value: string }[] = [];
    await consumer.run({
      eachMessage: async ({ partition, message }) => {
        read.push({ partition, offset: message.offset, key: message.key!.toString(), value: message.value!.toString() });
      },
    });
    await waitFor(() => read.length >= sent.length, { what: 'the 10 records read back', describe: () => JSON.stringify(read) });
    await consumer.disconnect();
    for (const partition of [0, 1]) {
      const expected = sent.filter((r) => r.partition === partition).map((r, offset) => ({ partition, offset: String(offset), key: r.key, value: r.value }));
      expect(read.filter((r) => r.partition === partition)).toEqual(expected);
    }
  });

  it('runs a second broker beside the first on its own ports and folder, and stop() leaves nothing behind', async () => {
    const second = await startApacheKafka();
    try {
      expect(second.port).not.toBe(kafka.port);
      expect(second.dir).not.toBe(kafka.dir);
      expect(second.clusterId).not.toBe(kafka.clusterId);
      const admin = kafkajsClient(second.bootstrap).admin();
      await admin.connect();
      expect((await admin.describeCluster()).clusterId).toBe(second.clusterId);
      await admin.disconnect();
    } finally {
      await second.stop();
    }
    expect(isRunning(second.pid), 'the JVM is gone after stop()').toBe(false);
    expect(existsSync(second.dir), 'its folder is removed').toBe(false);
    expect(isRunning(kafka.pid), 'the first broker runs on').toBe(true);
  }, 120_000);

  it('goes down with a test process that dies without stopping it', async () => {
    const fixture = fileURLToPath(new URL('./orphan-fixture.ts', import.meta.url));
    const parent = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    parent.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    parent.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    const parentExit = new Promise<void>((resolve) => parent.once('exit', () => resolve()));
    await waitFor(() => output.includes('"pid"') || parent.exitCode !== null, { what: 'the fixture to start its broker', timeoutMs: 120_000, intervalMs: 100, describe: () => output });
    const started = JSON.parse(output.split('\n').find((line) => line.includes('"pid"'))!) as { pid: number; dir: string };
    try {
      expect(isRunning(started.pid)).toBe(true);
      parent.kill('SIGKILL');
      await parentExit;
      await waitFor(() => !isRunning(started.pid), { what: `the orphaned JVM (pid ${started.pid}) to exit`, timeoutMs: 60_000, intervalMs: 100 });
    } finally {
      if (isRunning(started.pid)) process.kill(started.pid, 'SIGKILL');
      // Nobody was left to remove the folder of a broker whose parent was killed.
      rmSync(started.dir, { recursive: true, force: true });
    }
  }, 180_000);
});

/**
 * Kafka transactions when things go wrong, with kafkajs 2.2.4 through the
 * gateway. An abandoned transaction (its producer never ends it) is aborted
 * by the core after its transaction.timeout.ms, on every engine: the last
 * stable offset moves on, a read_committed consumer reads the records
 * committed after it and never the abandoned one, and the abandoned producer
 * is fenced. On PostgreSQL, the gateway process is SIGKILLed between
 * Produce and EndTxn and started again on the same port: the producer
 * finishes its transaction through the restarted gateway, because the
 * transaction's state lives in the database, not in the gateway.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Kafka } from 'kafkajs';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway, startGatewayProcess, type GatewayProcess, type RunningGateway } from '../support/gateway.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { uniqueTopic } from '../support/records.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

/** Reads `topic` with a fresh read_committed group until `until` holds; fails after `timeoutMs`. */
async function readCommitted(kafka: Kafka, topic: string, until: (values: string[]) => boolean, timeoutMs = 20_000): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: uniqueTopic('reader'), readUncommitted: false, maxWaitTimeInMs: 100 });
  const seen: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    let done: () => void;
    const finished = new Promise<void>((resolve) => (done = resolve));
    await consumer.run({
      eachMessage: async ({ message }) => {
        seen.push(message.value!.toString());
        if (until(seen)) done();
      },
    });
    await Promise.race([finished, new Promise((_, reject) => setTimeout(() => reject(new Error(`read_committed read only: ${seen.join(',')}`)), timeoutMs))]);
  } finally {
    await consumer.disconnect();
  }
  return seen;
}

for (const engine of engines) {
  const title = `Kafka transactions, abandoned transaction, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway;
    afterAll(async () => {
      await gateway?.stop();
    });

    it('is aborted by the core after its timeout; the LSO moves on and the abandoned producer is fenced', async () => {
      gateway = await startGateway({ engine: engine.fresh(), groups: { initialRebalanceDelayMs: 0 } });
      const kafka = kafkajsClient(gateway.bootstrap);
      const admin = kafka.admin();
      await admin.connect();
      const topic = uniqueTopic('txn-abandoned');
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });

      const abandoned = kafka.producer({ transactionalId: uniqueTopic('tid-abandoned'), idempotent: true, maxInFlightRequests: 1, transactionTimeout: 3_000 });
      const other = kafka.producer({ transactionalId: uniqueTopic('tid-other'), idempotent: true, maxInFlightRequests: 1 });
      await abandoned.connect();
      await other.connect();
      try {
        const open = await abandoned.transaction();
        await open.send({ topic, messages: [{ value: 'abandoned' }] });
        const later = await other.transaction();
        await later.send({ topic, messages: [{ value: 'committed-after' }] });
        await later.commit();
        // The abandoned transaction holds the LSO (kafkajs's admin lists offsets read_committed) below 'committed-after' until the core aborts it.
        expect((await admin.fetchTopicOffsets(topic))[0]!.high).toBe('0');
        const read = await readCommitted(kafka, topic, (values) => values.includes('committed-after'));
        expect(read).toEqual(['committed-after']);
        // abandoned, committed-after, its commit marker, the abort marker: nothing open, the LSO is the high watermark.
        expect((await admin.fetchTopicOffsets(topic))[0]!.high).toBe('4');
        const failure = await open.commit().then(
          () => null,
          (e: unknown) => e as Error,
        );
        expect(failure, 'the abandoned producer committed after its transaction timed out').not.toBeNull();
      } finally {
        await abandoned.disconnect().catch(() => {});
        await other.disconnect();
        await admin.disconnect();
      }
    });
  });
}

const postgres = engines.find((e) => e.name === 'postgres')!;
const restartTitle = 'Kafka transactions, gateway SIGKILLed between Produce and EndTxn, postgres engine' + (postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : '');
describe.skipIf(postgres.skipReason !== null)(restartTitle, () => {
  let gateway: GatewayProcess | null = null;
  afterAll(async () => {
    await gateway?.stop();
  });

  it('the producer finishes its transaction through the restarted gateway', { timeout: 90_000 }, async () => {
    gateway = await startGatewayProcess({ engine: postgres.fresh(), groups: { initialRebalanceDelayMs: 0 } });
    const running = gateway;
    const kafka = kafkajsClient(running.bootstrap);
    const admin = kafka.admin();
    await admin.connect();
    const topic = uniqueTopic('txn-restart');
    const group = uniqueTopic('txn-restart-group');
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
    await admin.disconnect();

    const producer = kafka.producer({ transactionalId: uniqueTopic('tid-restart'), idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const txn = await producer.transaction();
      await txn.send({ topic, messages: [{ value: 'before-kill', partition: 0 }] });
      await txn.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions: [{ partition: 1, offset: '4' }] }] });
      await running.kill();
      await running.restart();
      await txn.send({ topic, messages: [{ value: 'after-restart', partition: 1 }] });
      await txn.commit();
    } finally {
      await producer.disconnect();
    }
    expect(running.logs.matching('gateway listening').length, 'the gateway started twice').toBeGreaterThanOrEqual(2);
    const read = await readCommitted(kafka, topic, (values) => values.length >= 2);
    expect(read.sort()).toEqual(['after-restart', 'before-kill']);
    const check = kafka.admin();
    await check.connect();
    try {
      expect((await check.fetchOffsets({ groupId: group, topics: [topic] }))[0]!.partitions.find((p) => p.partition === 1)!.offset).toBe('4');
    } finally {
      await check.disconnect();
    }
  });
});

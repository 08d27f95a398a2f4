/**
 * A librdkafka consumer group reading 8 partitions from their end while a
 * librdkafka producer writes to them flat out, on every engine: the shape of
 * the bench's end-to-end phase (test/bench/e2e/run.ts), small and bounded.
 * On the PostgreSQL engine that phase once delivered one batch and then
 * nothing while the producer ran (issue 31); here every acknowledged record
 * must reach the consumer, and while the producer still runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type { ConsumerGlobalConfig, KafkaConsumer as KafkaConsumerType, LibrdKafkaError, Message, ProducerGlobalConfig } from '@confluentinc/kafka-javascript';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { createTopic, disconnect } from '../support/rdkafka.js';
import { uniqueTopic } from '../support/records.js';
import { waitFor } from '../support/eventually.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { FLAT_OUT_PRODUCER } from '../bench/flat-out-producer.js';

const { KafkaConsumer, Producer, CODES } = KafkaJavascript;

const PARTITIONS = 8;
const PRODUCE_MS = 4_000;
const BACKLOG_MS = 4_000;
const RECORD = Buffer.alloc(100, 7);
/** librdkafka's Fetch waits up to 500 ms (fetch.wait.max.ms); a reader that is served waits far less, a stalled one for the rest of the run. */
const MAX_GAP_MS = 2_500;

const engines = await engineMatrix();
afterAll(releaseEngines);

/**
 * Commits `group`'s offsets at the partitions' ends, so its members start
 * there as the bench's `latest` reader does, but at a known place: every
 * record produced afterwards must reach them.
 */
async function commitEnds(bootstrap: string, topic: string, group: string): Promise<void> {
  const admin = kafkajsClient(bootstrap).admin();
  await admin.connect();
  try {
    const ends = await admin.fetchTopicOffsets(topic);
    await admin.setOffsets({ groupId: group, topic, partitions: ends.map((e) => ({ partition: e.partition, offset: e.high })) });
  } finally {
    await admin.disconnect();
  }
}

/** A member of `group`, subscribed; counts what it is given. */
async function groupReader(bootstrap: string, topic: string, group: string): Promise<{ consumer: KafkaConsumerType; assigned: () => boolean; received: () => number; deliveredAt: number[]; stop: () => Promise<void> }> {
  const consumer = new KafkaConsumer(
    { 'bootstrap.servers': bootstrap, 'group.id': group, 'rebalance_cb': true, 'log_level': 3 } as unknown as ConsumerGlobalConfig,
    { 'auto.offset.reset': 'earliest' },
  );
  let assigned = false;
  let received = 0;
  const deliveredAt: number[] = [];
  let stopped = false;
  consumer.on('rebalance', (err: LibrdKafkaError, assignment) => {
    if (err.code === CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
      consumer.assign(assignment);
      assigned = true;
    } else consumer.unassign();
  });
  await new Promise<void>((resolve, reject) => consumer.connect({ topic }, (err) => (err ? reject(err) : resolve())));
  consumer.setDefaultConsumeTimeout(200);
  consumer.subscribe([topic]);
  const loop = (): void => {
    if (stopped) return;
    consumer.consume(1_000, (err, messages: Message[]) => {
      if (stopped) return;
      if (!err && messages.length > 0) {
        received += messages.length;
        deliveredAt.push(Date.now());
      }
      setImmediate(loop);
    });
  };
  loop();
  return {
    consumer,
    assigned: () => assigned,
    received: () => received,
    deliveredAt,
    stop: async () => {
      stopped = true;
      await disconnect(consumer);
    },
  };
}

/** Produces flat out for `ms`; answers how many records it handed librdkafka, every one of them delivered. */
async function produceFlatOut(bootstrap: string, topic: string, ms: number): Promise<number> {
  const producer = new Producer({ ...FLAT_OUT_PRODUCER, 'bootstrap.servers': bootstrap } as unknown as ProducerGlobalConfig);
  let failed = 0;
  producer.on('delivery-report', (err: LibrdKafkaError | null) => void (err && failed++));
  producer.setPollInterval(20);
  await new Promise<void>((resolve, reject) => producer.connect({ topic }, (err) => (err ? reject(err) : resolve())));
  const until = Date.now() + ms;
  let sent = 0;
  while (Date.now() < until) {
    try {
      producer.produce(topic, null, RECORD);
      sent++;
    } catch {
      // The local queue is full: let librdkafka send.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (sent % 1000 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise<void>((resolve, reject) => producer.flush(60_000, (err) => (err ? reject(err) : resolve())));
  await disconnect(producer);
  expect(failed, 'records the producer failed to deliver').toBe(0);
  return sent;
}

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`a consumer group reading ${PARTITIONS} partitions while a producer writes flat out, ${engine.name} engine`, () => {
    let gateway: RunningGateway;
    beforeAll(async () => {
      gateway = await startGateway({ engine: engine.fresh(), groups: { initialRebalanceDelayMs: 0 } });
    });
    afterAll(async () => {
      await gateway?.stop();
    });

    it('delivers every record produced, and keeps delivering while the producer runs', async () => {
      const topic = uniqueTopic('flat-out');
      await createTopic(gateway.bootstrap, topic, PARTITIONS);
      // A retained log behind the end, as the bench's produce phases leave: reading at the end must not cost more for it.
      const backlog = await produceFlatOut(gateway.bootstrap, topic, BACKLOG_MS);
      const group = `flat-out-${topic}`;
      await commitEnds(gateway.bootstrap, topic, group).catch((e: unknown) => {
        throw new Error(`${(e as Error).message}; the gateway logged: ${gateway.logs.tail(10)}`);
      });
      const reader = await groupReader(gateway.bootstrap, topic, group);
      try {
        await waitFor(() => reader.assigned(), { timeoutMs: 60_000, what: 'the consumer group member to be assigned its partitions' });
        const producing = Date.now();
        const sent = await produceFlatOut(gateway.bootstrap, topic, PRODUCE_MS);
        const producedUntil = Date.now();
        expect(sent).toBeGreaterThan(1_000);
        await waitFor(() => reader.received() >= sent, { timeoutMs: 60_000, what: `the consumer to receive all ${sent} records produced`, describe: () => `it has ${reader.received()}` });
        expect(reader.received()).toBe(sent);
        // The longest time the consumer went without records while the producer ran (from its start to its end).
        const times = [producing, ...reader.deliveredAt.filter((t) => t > producing && t < producedUntil), producedUntil];
        const longestGap = Math.max(...times.slice(1).map((t, i) => t - times[i]!));
        console.log(`${engine.name}: after a backlog of ${backlog}, ${sent} records in ${producedUntil - producing} ms, ${times.length - 2} deliveries meanwhile, longest gap ${longestGap} ms`);
        expect(longestGap, `the longest time without records while the producer ran (${times.length - 2} deliveries in ${producedUntil - producing} ms)`).toBeLessThan(MAX_GAP_MS);
      } finally {
        await reader.stop();
      }
    }, 180_000);
  });
}

/**
 * Kafka and Queen on one log, with real clients over real sockets: startBroker
 * serves the Kafka protocol and the native HTTP API on the same core; kafkajs
 * and librdkafka talk Kafka, QueenClient talks HTTP (global fetch).
 */
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type { KafkaConsumer as KafkaConsumerType, Message as RdkafkaMessage } from '@confluentinc/kafka-javascript';
import type { Admin, Kafka, Producer } from 'kafkajs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QueenClient } from '../../src/client/index.js';
import { startBroker, type Broker } from '../../src/index.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { waitFor } from '../support/eventually.js';
import { connectKafkajsProducer, kafkajsClient } from '../support/kafkajs.js';
import { uniqueTopic } from '../support/records.js';

const { KafkaConsumer } = KafkaJavascript;

const engines = await engineMatrix();
afterAll(() => releaseEngines());

/** A librdkafka consumer in a group, subscribed, reading until `count` messages arrived. */
async function consumeWithGroup(bootstrap: string, group: string, topic: string, count: number): Promise<RdkafkaMessage[]> {
  const consumer: KafkaConsumerType = new KafkaConsumer(
    {
      'bootstrap.servers': bootstrap,
      'group.id': group,
      'enable.auto.commit': false,
      'session.timeout.ms': 6000,
      'fetch.wait.max.ms': 100,
      'log_level': 3,
    } as never,
    { 'auto.offset.reset': 'earliest' },
  );
  await new Promise<void>((resolve, reject) => consumer.connect({ timeout: 20_000, topic, allTopics: false } as never, (err) => (err ? reject(err) : resolve())));
  try {
    consumer.subscribe([topic]);
    const got: RdkafkaMessage[] = [];
    await waitFor(
      async () => {
        const batch = await new Promise<RdkafkaMessage[]>((resolve) => consumer.consume(100, (_e, messages) => resolve(messages ?? [])));
        got.push(...batch);
        return got.length >= count;
      },
      { what: `${count} messages for group ${group} on ${topic}`, timeoutMs: 45_000, intervalMs: 1, describe: () => `${got.length} arrived` },
    );
    return got;
  } finally {
    await new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
  }
}

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`Kafka and Queen on one log: ${engine.name}${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
    let broker: Broker;
    let client: QueenClient;
    let kafka: Kafka;
    let admin: Admin;
    let producer: Producer;

    beforeEach(async () => {
      const choice = engine.fresh();
      broker = await startBroker({
        ...(choice.engine === 'memory' ? { engine: 'memory' as const } : { engine: 'postgres' as const, url: choice.url, schema: choice.schema }),
        autoCreateTopics: false,
        groups: { initialRebalanceDelayMs: 0 },
        http: { port: 0 },
      });
      client = new QueenClient(broker.httpUrl!);
      kafka = kafkajsClient(broker.bootstrap);
      admin = kafka.admin();
      await admin.connect();
      producer = await connectKafkajsProducer(kafka);
    });
    afterEach(async () => {
      await producer.disconnect();
      await admin.disconnect();
      await broker.stop();
    });

    it('records a kafkajs producer writes are popped over HTTP with the same key, headers, value and offsets', async () => {
      const topic = uniqueTopic('kafka-to-http');
      await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
      const sent = [
        { partition: 1, key: 'order-1', value: JSON.stringify({ orderId: 1 }), headers: { source: 'billing', trace: 'a1' } },
        { partition: 1, key: null, value: 'plain text, not JSON', headers: { source: 'billing' } },
        { partition: 1, key: 'order-3', value: JSON.stringify([3, 'three']), headers: {} },
      ];
      const [metadata] = await producer.send({ topic, acks: -1, messages: sent });
      const popped = await client.queue(topic).partition('1').pop({ consumerGroup: 'http-readers', batch: 10 });
      expect(popped.map((m) => m.offset)).toEqual([0, 1, 2].map((i) => Number(metadata!.baseOffset) + i));
      expect(popped.map((m) => m.key?.toString() ?? null)).toEqual(['order-1', null, 'order-3']);
      expect(popped.map((m) => Object.fromEntries(m.headers.map((h) => [h.key, h.value?.toString()])))).toEqual(sent.map((s) => s.headers));
      expect(popped.map((m) => m.data)).toEqual([{ orderId: 1 }, 'plain text, not JSON', [3, 'three']]);
      expect(popped.every((m) => m.partition === '1' && m.partitionIndex === 1)).toBe(true);
      // A Kafka record has no transactionId; its message id comes from its position, and stands in for one.
      expect(popped.every((m) => m.transactionId === m.messageId)).toBe(true);
    });

    it('messages pushed over HTTP are read by a librdkafka consumer group with the payload as value', async () => {
      const topic = uniqueTopic('http-to-kafka');
      await client.queue(topic).configure({}, 1);
      const data = [{ orderId: 1 }, { orderId: 2, note: 'ünïcode' }, 'a string payload'];
      const pushed = await client.queue(topic).partition('0').push(data.map((d, i) => ({ transactionId: `order-${i}`, data: d })));
      const got = await consumeWithGroup(broker.bootstrap, uniqueTopic('rdkafka-group'), topic, 3);
      expect(got.map((m) => m.value!.toString())).toEqual(data.map((d) => JSON.stringify(d)));
      expect(got.map((m) => m.offset)).toEqual(pushed.map((p) => p.offset));
      expect(got.map((m) => m.partition)).toEqual([0, 0, 0]);
    });

    it('a Kafka consumer group and a Queen consumer group of the same name share one position', async () => {
      const topic = uniqueTopic('shared-position');
      const group = uniqueTopic('shared-group');
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
      await producer.send({ topic, acks: -1, messages: Array.from({ length: 6 }, (_, i) => ({ partition: 0, value: JSON.stringify({ n: i }) })) });

      // Kafka side: a kafkajs group member reads the first three and commits past them.
      const consumer = kafka.consumer({ groupId: group, sessionTimeout: 6000, heartbeatInterval: 500 });
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      const seen: number[] = [];
      await consumer.run({
        autoCommit: false,
        eachMessage: async ({ message }) => {
          seen.push(Number(message.offset));
          if (Number(message.offset) === 2) {
            await consumer.commitOffsets([{ topic, partition: 0, offset: '3' }]);
            consumer.pause([{ topic }]);
          }
        },
      });
      await waitFor(async () => (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]!.partitions[0]!.offset === '3', {
        what: `the kafkajs group committing offset 3 on ${topic}`,
        timeoutMs: 30_000,
      });
      await consumer.disconnect();

      // Queen side: the same group pops from where Kafka left it, and acks two more.
      const popped = await client.queue(topic).pop({ consumerGroup: group, batch: 2 });
      expect(popped.map((m) => m.data)).toEqual([{ n: 3 }, { n: 4 }]);
      for (const m of popped) expect(await client.ack(m, 'completed')).toEqual({ acked: true });
      expect((await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]!.partitions[0]!.offset).toBe('5');

      // Kafka side again: a librdkafka member of the group continues at 5.
      const rest = await consumeWithGroup(broker.bootstrap, group, topic, 1);
      expect(rest.map((m) => m.offset)).toEqual([5]);
    });

    it('"Queues created for a topic of the Kafka facade are the exception: ... they get a window of 0."', async () => {
      const topic = uniqueTopic('kafka-made');
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
      const item = { transactionId: 'same-id', data: 'x' };
      const first = await client.queue(topic).partition('0').push([item]);
      const second = await client.queue(topic).partition('0').push([item]);
      expect([first[0]!.status, second[0]!.status]).toEqual(['queued', 'queued']);
      const described = (await (await fetch(`${broker.httpUrl}/api/v1/resources/queues/${topic}`)).json()) as { config: { dedup_window_seconds: number } };
      expect(described.config.dedup_window_seconds).toBe(0);
    });

    it('"A queue that already existed keeps its own setting."', async () => {
      const topic = uniqueTopic('queen-made');
      await client.queue(topic).configure({ dedupWindowSeconds: 600 }, 1);
      // Kafka clients find and use it as it is: CreateTopics refuses it, Produce appends to it.
      await expect(admin.createTopics({ topics: [{ topic, numPartitions: 1 }] })).resolves.toBe(false);
      await producer.send({ topic, acks: -1, messages: [{ partition: 0, value: 'from kafka' }] });
      const first = await client.queue(topic).partition('0').push([{ transactionId: 'same-id', data: 'x' }]);
      const second = await client.queue(topic).partition('0').push([{ transactionId: 'same-id', data: 'x' }]);
      expect(second[0]).toMatchObject({ status: 'duplicate', messageId: first[0]!.messageId, offset: 1 });
      const described = (await (await fetch(`${broker.httpUrl}/api/v1/resources/queues/${topic}`)).json()) as { config: { dedup_window_seconds: number } };
      expect(described.config.dedup_window_seconds).toBe(600);
    });
  });
}

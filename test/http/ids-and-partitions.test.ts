/**
 * Defects found while making the API Queen's, each on both engines:
 * transactionIds are compared as the exact text the client sent (U+0000 and
 * lone surrogates included), and a push that names no partition never adds
 * one to a queue a Kafka client created.
 */
import type { Admin } from 'kafkajs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../src/index.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { connectKafkajsProducer, kafkajsClient } from '../support/kafkajs.js';
import { uniqueTopic } from '../support/records.js';
import { httpEngines, releaseHttpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();
const brokers = await engineMatrix();
afterAll(async () => {
  await releaseHttpEngines();
  await releaseEngines();
});

// Three ids UTF-8 would make one, and one a PostgreSQL text column cannot hold.
const IDS = ['x\ud800y', 'x\udbffy', 'x\uFFFDy', 'nul\u0000inside'];

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`transactionIds are the exact text sent (${engine.name})${engine.skipReason ? `: ${engine.skipReason}` : ''}`, () => {
    let rig: HttpRig;
    beforeEach(async () => {
      rig = await engine.open();
    });
    afterEach(() => rig.close());

    const push = (ids: string[]) => rig.call('POST', '/api/v1/push', { items: ids.map((id, i) => ({ queue: 'ids', transactionId: id, payload: i })) });

    it('ids with U+0000 or lone surrogates are each stored once, popped as sent, and each deduplicated on its own', async () => {
      const first = await push(IDS);
      expect(first.status).toBe(201);
      expect(first.body.map((r: { status: string }) => r.status)).toEqual(['queued', 'queued', 'queued', 'queued']);
      expect(first.body.map((r: { transaction_id: string }) => r.transaction_id)).toEqual(IDS);
      const { body } = await rig.call('GET', '/api/v1/pop/queue/ids?consumerGroup=g&batch=10');
      expect(body.messages.map((m: { transactionId: string; data: number }) => [m.transactionId, m.data])).toEqual(IDS.map((id, i) => [id, i]));
      const again = await push([...IDS].reverse());
      expect(again.body.map((r: { status: string }) => r.status)).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate']);
      expect(again.body.map((r: { message_id: string }) => r.message_id)).toEqual(first.body.map((r: { message_id: string }) => r.message_id).reverse());
      // An ack names the message by the same exact id.
      const m = body.messages[0];
      const ack = await rig.call('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', consumerGroup: 'g' });
      expect(ack.body[0]).toMatchObject({ success: true, transactionId: IDS[0] });
    });
  });
}

for (const engine of brokers) {
  describe.skipIf(engine.skipReason !== null)(`a push into a Kafka topic never adds a partition (${engine.name})${engine.skipReason ? `: ${engine.skipReason}` : ''}`, () => {
    let broker: Broker;
    let admin: Admin;
    beforeEach(async () => {
      const choice = engine.fresh();
      broker = await startBroker({
        ...(choice.engine === 'memory' ? { engine: 'memory' as const } : { engine: 'postgres' as const, url: choice.url, schema: choice.schema }),
        autoCreateTopics: false,
        http: { port: 0 },
      });
      admin = kafkajsClient(broker.bootstrap).admin();
      await admin.connect();
    });
    afterEach(async () => {
      await admin.disconnect();
      await broker.stop();
    });

    const push = async (items: object[]) => {
      const response = await fetch(`${broker.httpUrl}/api/v1/push`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items }) });
      return { status: response.status, body: (await response.json()) as any };
    };
    const partitionCount = async (topic: string) => (await admin.fetchTopicMetadata({ topics: [topic] })).topics[0]!.partitions.length;

    it('a push naming no partition, or Queen\'s "Default", goes to one of the topic\'s partitions, the same one for the same id; a new partition name is refused', async () => {
      const topic = uniqueTopic('kafka-owned');
      await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] });
      // A Kafka topic's dedup window starts at 0; turn it on to see retries meet their first attempt.
      await fetch(`${broker.httpUrl}/api/v1/configure`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ queue: topic, options: { dedupWindowSeconds: 3600 } }) });
      const first = await push([{ queue: topic, transactionId: 'order-1', payload: 1 }, { queue: topic, partition: 'Default', transactionId: 'order-2', payload: 2 }]);
      expect(first.status).toBe(201);
      for (const item of first.body) expect(['0', '1', '2']).toContain(item.partition);
      expect(await partitionCount(topic)).toBe(3);
      // The same id, with or without "Default", lands where it did and is deduplicated there.
      const again = await push([{ queue: topic, partition: 'Default', transactionId: 'order-1', payload: 1 }, { queue: topic, transactionId: 'order-2', payload: 2 }]);
      expect(again.body.map((r: { status: string; partition: string }) => [r.status, r.partition])).toEqual(first.body.map((r: { partition: string }) => ['duplicate', r.partition]));
      const refused = await push([{ queue: topic, partition: 'customer-42', payload: 3 }]);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatch(/is a Kafka topic with 3 partitions.*cannot add partition "customer-42"/);
      expect(await partitionCount(topic)).toBe(3);
      // Named partitions of the topic are still taken as named.
      expect((await push([{ queue: topic, partition: '2', payload: 4 }])).body[0].partition).toBe('2');
    });

    it('the rule for a Kafka record carrying the transaction-id header: pops show that id, and nothing deduplicates it', async () => {
      const topic = uniqueTopic('kafka-headers');
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
      await fetch(`${broker.httpUrl}/api/v1/configure`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ queue: topic, options: { dedupWindowSeconds: 3600 } }) });
      const producer = await connectKafkajsProducer(kafkajsClient(broker.bootstrap));
      try {
        const record = { value: JSON.stringify({ n: 1 }), headers: { 'queen-transaction-id': 'order-1' } };
        await producer.send({ topic, acks: -1, messages: [record, record] });
      } finally {
        await producer.disconnect();
      }
      // A native push of the same id is not a duplicate of the Kafka records either.
      expect((await push([{ queue: topic, partition: '0', transactionId: 'order-1', payload: { n: 1 } }])).body[0].status).toBe('queued');
      const popped = await fetch(`${broker.httpUrl}/api/v1/pop/queue/${topic}?consumerGroup=g&batch=10`);
      const { messages } = (await popped.json()) as { messages: { transactionId: string; offset: number }[] };
      expect(messages.map((m) => [m.offset, m.transactionId])).toEqual([[0, 'order-1'], [1, 'order-1'], [2, 'order-1']]);
    });

    it('a queue Queen created still grows a partition for each new name', async () => {
      expect((await push([{ queue: 'queen-owned', partition: 'customer-42', payload: 1 }, { queue: 'queen-owned', payload: 2 }])).status).toBe(201);
      expect(await partitionCount('queen-owned')).toBe(2);
    });
  });
}

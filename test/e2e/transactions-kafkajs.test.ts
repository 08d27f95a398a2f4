/**
 * Kafka transactions with kafkajs 2.2.4 through the gateway, on every engine:
 * `producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 })`,
 * `transaction()` with send, sendOffsets, commit and abort. What a user
 * notices: a read_committed consumer never sees an aborted record and sees
 * every committed one in order, a read_uncommitted one sees both; offsets
 * sent with a transaction become the group's only at commit; a second
 * instance with the same transactional id fences the first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Admin, Kafka, Producer } from 'kafkajs';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { uniqueTopic } from '../support/records.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

/** kafkajs wraps the broker's error; the protocol error's type is what a user reads. */
function errorTypes(e: unknown): string[] {
  const types: string[] = [];
  let current = e as { type?: string; name?: string; originalError?: unknown; cause?: unknown; errors?: unknown[] } | undefined;
  for (let depth = 0; current && depth < 6; depth++) {
    if (current.type) types.push(current.type);
    if (current.name) types.push(current.name);
    current = (current.originalError ?? current.cause ?? current.errors?.[0]) as typeof current;
  }
  return types;
}

for (const engine of engines) {
  const title = `Kafka transactions, kafkajs 2.2.4, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway;
    let kafka: Kafka;
    let admin: Admin;

    beforeAll(async () => {
      gateway = await startGateway({ engine: engine.fresh(), groups: { initialRebalanceDelayMs: 0 } });
      kafka = kafkajsClient(gateway.bootstrap);
      admin = kafka.admin();
      await admin.connect();
    });
    afterAll(async () => {
      await admin?.disconnect();
      await gateway?.stop();
    });

    async function createTopic(topic: string, numPartitions: number): Promise<void> {
      await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true });
    }

    async function transactionalProducer(transactionalId: string): Promise<Producer> {
      const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await producer.connect();
      return producer;
    }

    /** Reads `topic` from the start with a fresh group until `until` says it has all it waits for. */
    async function consume(topic: string, readUncommitted: boolean, until: (values: string[]) => boolean): Promise<{ partition: number; value: string }[]> {
      const consumer = kafka.consumer({ groupId: uniqueTopic('reader'), readUncommitted, maxWaitTimeInMs: 100 });
      const seen: { partition: number; value: string }[] = [];
      await consumer.connect();
      try {
        await consumer.subscribe({ topic, fromBeginning: true });
        let done: () => void;
        const finished = new Promise<void>((resolve) => (done = resolve));
        await consumer.run({
          eachMessage: async ({ partition, message }) => {
            seen.push({ partition, value: message.value!.toString() });
            if (until(seen.map((s) => s.value))) done();
          },
        });
        await Promise.race([finished, new Promise((_, reject) => setTimeout(() => reject(new Error(`read ${seen.length} records: ${seen.map((s) => s.value).join(',')}`)), 20_000))]);
      } finally {
        await consumer.disconnect();
      }
      return seen;
    }

    it('read_committed sees every committed record in order and no aborted one; read_uncommitted sees both', async () => {
      const topic = uniqueTopic('txn-kjs');
      await createTopic(topic, 2);
      const producer = await transactionalProducer(uniqueTopic('tid'));
      try {
        const aborted = await producer.transaction();
        await aborted.send({ topic, messages: [0, 1, 2, 3].map((i) => ({ value: `aborted-${i}`, partition: i % 2 })) });
        await aborted.abort();
        const committed = await producer.transaction();
        await committed.send({ topic, messages: [0, 1, 2, 3, 4, 5].map((i) => ({ value: `committed-${i}`, partition: i % 2 })) });
        await committed.commit();
        const again = await producer.transaction();
        await again.send({ topic, messages: [{ value: 'committed-6', partition: 0 }] });
        await again.commit();
      } finally {
        await producer.disconnect();
      }

      const committedRead = await consume(topic, false, (v) => v.length >= 7);
      expect(committedRead.map((r) => r.value).sort()).toEqual(['committed-0', 'committed-1', 'committed-2', 'committed-3', 'committed-4', 'committed-5', 'committed-6']);
      for (const p of [0, 1]) {
        const inPartition = committedRead.filter((r) => r.partition === p).map((r) => Number(r.value.split('-')[1]));
        expect(inPartition, `partition ${p} in order`).toEqual([...inPartition].sort((a, b) => a - b));
      }
      const all = await consume(topic, true, (v) => v.length >= 11);
      expect(all.map((r) => r.value).filter((v) => v.startsWith('aborted')).sort()).toEqual(['aborted-0', 'aborted-1', 'aborted-2', 'aborted-3']);

      // ListOffsets read_committed and read_uncommitted both end after the markers once nothing is open.
      const offsets = await admin.fetchTopicOffsets(topic);
      expect(offsets.map((o) => Number(o.high)).reduce((a, b) => a + b)).toBe(4 + 2 + 6 + 2 + 1 + 1);
    });

    it('sendOffsets moves the group only when the transaction commits', async () => {
      const input = uniqueTopic('txn-in');
      const output = uniqueTopic('txn-out');
      const group = uniqueTopic('txn-group');
      await createTopic(input, 1);
      await createTopic(output, 1);
      const producer = await transactionalProducer(uniqueTopic('tid'));
      try {
        const first = await producer.transaction();
        await first.send({ topic: output, messages: [{ value: 'out-0' }] });
        await first.sendOffsets({ consumerGroupId: group, topics: [{ topic: input, partitions: [{ partition: 0, offset: '5' }] }] });
        await first.abort();
        expect((await admin.fetchOffsets({ groupId: group, topics: [input] }))[0]!.partitions[0]!.offset).toBe('-1');

        const second = await producer.transaction();
        await second.send({ topic: output, messages: [{ value: 'out-1' }] });
        await second.sendOffsets({ consumerGroupId: group, topics: [{ topic: input, partitions: [{ partition: 0, offset: '7' }] }] });
        await second.commit();
        expect((await admin.fetchOffsets({ groupId: group, topics: [input] }))[0]!.partitions[0]!.offset).toBe('7');
      } finally {
        await producer.disconnect();
      }
      const read = await consume(output, false, (v) => v.includes('out-1'));
      expect(read.map((r) => r.value)).toEqual(['out-1']);
    });

    it('a second instance with the same transactional id fences the first, and the first one\'s open transaction is aborted', async () => {
      const topic = uniqueTopic('txn-zombie');
      await createTopic(topic, 1);
      const transactionalId = uniqueTopic('tid');
      // kafkajs runs InitProducerId when a transactional producer connects: the successor's bumps the epoch.
      const zombie = await transactionalProducer(transactionalId);
      const zombieTxn = await zombie.transaction();
      await zombieTxn.send({ topic, messages: [{ value: 'zombie-before' }] });
      const successor = await transactionalProducer(transactionalId);
      try {
        const successorTxn = await successor.transaction();
        await successorTxn.send({ topic, messages: [{ value: 'successor' }] });
        const failure = await zombieTxn.send({ topic, messages: [{ value: 'zombie-after' }] }).then(
          () => zombieTxn.commit().then(() => null),
          (e: unknown) => e,
        ).catch((e: unknown) => e);
        expect(failure, 'the zombie was not fenced').not.toBeNull();
        expect(errorTypes(failure).join(' ')).toMatch(/INVALID_PRODUCER_EPOCH|PRODUCER_FENCED|INVALID_TXN_STATE/);
        await successorTxn.commit();
      } finally {
        await zombie.disconnect().catch(() => {});
        await successor.disconnect();
      }
      const read = await consume(topic, false, (v) => v.includes('successor'));
      expect(read.map((r) => r.value)).toEqual(['successor']);
    });
  });
}

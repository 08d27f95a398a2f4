/**
 * kafkajs 2.2.4 consumers in groups, on every engine: subscribe with
 * `eachMessage` and `eachBatch`, automatic and manual commits
 * (`autoCommit: false` + `commitOffsets`), pause and resume, seek, and three
 * consumers sharing six partitions. Every record is accounted for by the
 * sequence number in its value; a consumer that stops and comes back resumes
 * where its group committed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Admin, Consumer, ConsumerConfig, EachBatchPayload, Kafka } from 'kafkajs';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { sleep, waitFor } from '../support/eventually.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { expectDisjointCompleteAssignment, produceSequenced, sequenceCounts, type MemberRecord, type MemberView } from '../support/groups-members.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { createTopic } from '../support/rdkafka.js';
import { expectExactlyOnceInOrder, uniqueTopic } from '../support/records.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

/** Quick to notice rebalances and to stop: short heartbeats and fetch waits. */
const CONSUMER_DEFAULTS: Omit<ConsumerConfig, 'groupId'> = {
  sessionTimeout: 6_000,
  rebalanceTimeout: 10_000,
  heartbeatInterval: 300,
  maxWaitTimeInMs: 100,
  retry: { initialRetryTime: 50, maxRetryTime: 1_000, retries: 20 },
};

interface KafkajsMember extends MemberView {
  consumer: Consumer;
  assigned: Set<number>;
}

function toRecord(partition: number, message: { offset: string; value: Buffer | null }): MemberRecord {
  return { partition, offset: Number(message.offset), value: message.value?.toString() ?? '' };
}

for (const engine of engines) {
  const title = `consumer groups through kafkajs 2.2.4, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway;
    let kafka: Kafka;
    let admin: Admin;
    const consumers: Consumer[] = [];

    beforeAll(async () => {
      gateway = await startGateway({ engine: engine.fresh(), groups: { initialRebalanceDelayMs: 0 } });
      kafka = kafkajsClient(gateway.bootstrap);
      admin = kafka.admin();
      await admin.connect();
    });
    afterAll(async () => {
      await Promise.all(consumers.splice(0).map((c) => c.disconnect().catch(() => {})));
      await admin?.disconnect();
      await gateway?.stop();
    });

    async function consumer(groupId: string, topic: string, extra: Partial<ConsumerConfig> = {}): Promise<Consumer> {
      const c = kafka.consumer({ groupId, ...CONSUMER_DEFAULTS, ...extra });
      consumers.push(c);
      await c.connect();
      await c.subscribe({ topic, fromBeginning: true });
      return c;
    }

    async function stop(c: Consumer): Promise<void> {
      consumers.splice(consumers.indexOf(c), 1);
      await c.disconnect();
    }

    async function committed(groupId: string, topic: string): Promise<Map<number, number>> {
      const [found] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return new Map((found?.partitions ?? []).map((p) => [p.partition, Number(p.offset)]));
    }

    async function waitForRecords(label: string, total: number, read: () => MemberRecord[], timeoutMs = 30_000): Promise<void> {
      await waitFor(() => sequenceCounts(label, read()).size >= total, {
        what: `${total} records of ${label}`,
        timeoutMs,
        describe: () => `${sequenceCounts(label, read()).size} distinct read, ${read().length} in all`,
      });
    }

    it('eachMessage with automatic commits reads every record once, and a restarted consumer resumes after the commits', async () => {
      const topic = uniqueTopic('kjs-grp-auto');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, 3);
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 90, 3);
      const read: MemberRecord[] = [];
      const first = await consumer(group, topic);
      await first.run({ autoCommitInterval: 100, eachMessage: async ({ partition, message }) => void read.push(toRecord(partition, message)) });
      await waitForRecords(topic, 90, () => read);
      // kafkajs commits what eachMessage resolved on disconnect at the latest.
      await stop(first);
      expect([...(await committed(group, topic)).values()].sort(), 'committed offsets per partition after the first consumer').toEqual([30, 30, 30]);

      await produceSequenced(gateway.bootstrap, topic, topic, 90, 60, 3);
      const second = await consumer(group, topic);
      await second.run({ eachMessage: async ({ partition, message }) => void read.push(toRecord(partition, message)) });
      await waitForRecords(topic, 150, () => read);
      await sleep(300);
      expectExactlyOnceInOrder(topic, 150, read);
      await stop(second);
    });

    it('eachBatch with manual commits (autoCommit off, commitOffsets): a restart resumes exactly at the last commit', async () => {
      const topic = uniqueTopic('kjs-grp-batch');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, 2);
      // Ten produce runs: ten record batches per partition, so a small fetch hands out several batches.
      for (let i = 0; i < 10; i++) await produceSequenced(gateway.bootstrap, topic, topic, i * 20, 20, 2);
      const read: MemberRecord[] = [];
      let batches = 0;
      const eachBatch = (c: () => Consumer, stopAfter: number | null) => async ({ batch, resolveOffset, heartbeat, isRunning }: EachBatchPayload) => {
        for (const message of batch.messages) {
          if (!isRunning()) break;
          read.push(toRecord(batch.partition, message));
          resolveOffset(message.offset);
        }
        const last = batch.messages[batch.messages.length - 1];
        if (last) await c().commitOffsets([{ topic, partition: batch.partition, offset: String(Number(last.offset) + 1) }]);
        await heartbeat();
        batches += 1;
        if (stopAfter !== null && batches >= stopAfter) c().pause([{ topic }]);
      };
      const first: Consumer = await consumer(group, topic, { maxBytesPerPartition: 100 });
      await first.run({ autoCommit: false, eachBatch: eachBatch(() => first, 2) });
      await waitFor(() => batches >= 2, { what: 'two batches consumed by the first consumer' });
      await stop(first);
      const firstRead = read.length;
      const afterFirst = await committed(group, topic);
      const ends = new Map<number, number>();
      for (const r of read) ends.set(r.partition, Math.max(ends.get(r.partition) ?? 0, r.offset + 1));
      for (const [p, end] of ends) expect(afterFirst.get(p), `partition ${p}: read up to ${end}, committed`).toBe(end);
      expect(firstRead, 'the first consumer should stop before the end').toBeLessThan(200);

      const second: Consumer = await consumer(group, topic);
      await second.run({ autoCommit: false, eachBatch: eachBatch(() => second, null) });
      await waitForRecords(topic, 200, () => read);
      await sleep(300);
      // Nothing read twice, nothing skipped: the second consumer began at each partition's commit.
      expectExactlyOnceInOrder(topic, 200, read);
      await stop(second);
      expect([...(await committed(group, topic)).values()].reduce((a, b) => a + b, 0)).toBe(200);
    });

    it('pause stops one partition while the other flows; resume brings its records', async () => {
      const topic = uniqueTopic('kjs-grp-pause');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, 2);
      const read: MemberRecord[] = [];
      const c = await consumer(group, topic);
      await c.run({ eachMessage: async ({ partition, message }) => void read.push(toRecord(partition, message)) });
      c.pause([{ topic, partitions: [0] }]);
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 80, 2);
      await waitFor(() => read.filter((r) => r.partition === 1).length === 40, { what: 'the 40 records of the running partition 1' });
      await sleep(500);
      expect(read.filter((r) => r.partition === 0), 'records of the paused partition 0 arrived').toEqual([]);
      expect(c.paused()).toEqual([{ topic, partitions: [0] }]);
      c.resume([{ topic, partitions: [0] }]);
      await waitForRecords(topic, 80, () => read);
      expectExactlyOnceInOrder(topic, 80, read);
      await stop(c);
    });

    it('seek sends a partition back to an earlier offset: its records from there arrive again, in order', async () => {
      const topic = uniqueTopic('kjs-grp-seek');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, 2);
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 100, 2);
      const read: MemberRecord[] = [];
      const c = await consumer(group, topic);
      await c.run({ eachMessage: async ({ partition, message }) => void read.push(toRecord(partition, message)) });
      await waitForRecords(topic, 100, () => read);
      const before = read.length;
      c.seek({ topic, partition: 0, offset: '10' });
      await waitFor(() => read.length - before >= 40, { what: 'partition 0 re-read from offset 10 after the seek', describe: () => `${read.length - before} re-read` });
      await sleep(300);
      const again = read.slice(before);
      expect(again.every((r) => r.partition === 0), 'records from the other partition arrived again').toBe(true);
      expect(again.map((r) => r.offset)).toEqual(Array.from({ length: 40 }, (_, i) => 10 + i));
      await stop(c);
    });

    it('three consumers over six partitions get a disjoint, complete assignment and read every record once', async () => {
      const topic = uniqueTopic('kjs-grp-three');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, 6);
      const members: KafkajsMember[] = [];
      for (const name of ['a', 'b', 'c']) {
        const c = kafka.consumer({ groupId: group, ...CONSUMER_DEFAULTS });
        consumers.push(c);
        const m: KafkajsMember = { name, consumer: c, records: [], events: [], assigned: new Set(), committed: new Map(), errors: [] };
        c.on(c.events.GROUP_JOIN, (e) => {
          m.assigned = new Set(e.payload.memberAssignment[topic] ?? []);
          m.events.push({ kind: 'assigned', partitions: [...m.assigned], at: Date.now() });
        });
        await c.connect();
        await c.subscribe({ topic, fromBeginning: true });
        await c.run({ eachMessage: async ({ partition, message }) => void m.records.push(toRecord(partition, message)) });
        members.push(m);
      }
      await waitFor(
        () => {
          const seen = new Set<number>();
          for (const m of members) for (const p of m.assigned) seen.add(p);
          return seen.size === 6 && members.every((m) => m.assigned.size === 2);
        },
        { what: 'three kafkajs consumers to share six partitions two by two', describe: () => members.map((m) => `${m.name}: ${[...m.assigned].join(',')}`).join(' | ') },
      );
      expectDisjointCompleteAssignment(members, 6);
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 180, 6);
      const all = () => members.flatMap((m) => m.records);
      await waitForRecords(topic, 180, all);
      await sleep(300);
      expectExactlyOnceInOrder(topic, 180, all());
      for (const m of members) expect(m.records.filter((r) => !m.assigned.has(r.partition)), `${m.name} read partitions it was not assigned`).toEqual([]);
      await Promise.all(members.map((m) => stop(m.consumer)));
    });

    it('admin.resetOffsets returns, and the group reads back the -2 (earliest) and -1 (latest) it committed, as from Kafka', async () => {
      const topic = uniqueTopic('kjs-grp-reset');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, 2);
      const committed = async () => (await admin.fetchOffsets({ groupId: group, topics: [topic] }))[0]!.partitions.map((p) => [p.partition, p.offset]).sort();
      // kafkajs commits the logical offsets themselves; a gateway refusing them left this call hanging.
      await admin.resetOffsets({ groupId: group, topic, earliest: true });
      expect(await committed()).toEqual([
        [0, '-2'],
        [1, '-2'],
      ]);
      await admin.resetOffsets({ groupId: group, topic, earliest: false });
      expect(await committed()).toEqual([
        [0, '-1'],
        [1, '-1'],
      ]);
    });
  });
}

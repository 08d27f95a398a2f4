/**
 * librdkafka (@confluentinc/kafka-javascript, node-rdkafka-style API) against
 * the gateway, on every engine: keyed records with headers over several
 * partitions, every codec librdkafka has, acks 0/1/all, the AdminClient,
 * Metadata for an unknown topic with auto-create off, offsets by timestamp,
 * and DeleteRecords followed by a fetch below the new start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type {
  DeleteRecordsResult,
  LibrdKafkaError,
  ListOffsetsResult,
  Message,
  OffsetSpec as OffsetSpecType,
  TopicDescription,
  TopicPartitionOffset,
} from '@confluentinc/kafka-javascript';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { planRecords, expectSameRecords, uniqueTopic, type SentRecord } from '../support/records.js';
import {
  adminCall,
  connectConsumer,
  connectProducer,
  createAdmin,
  disconnect,
  expectDelivered,
  expectDeliveryOffsetsMatch,
  produceAll,
  readRecords,
  toReadRecord,
  type ProducerConfig,
} from '../support/rdkafka.js';
import { waitFor } from '../support/eventually.js';

const { CODES, OffsetSpec, librdkafkaVersion, features } = KafkaJavascript;
const ERR = CODES.ERRORS;

const engines = await engineMatrix();
afterAll(releaseEngines);

async function produceAndDeliver(bootstrap: string, topic: string, records: SentRecord[], config: ProducerConfig) {
  const producer = await connectProducer(bootstrap, config, topic);
  try {
    return await produceAll(producer, topic, records);
  } finally {
    await disconnect(producer);
  }
}

for (const engine of engines) {
  const title = `librdkafka ${librdkafkaVersion} through the gateway, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway;
    let admin: ReturnType<typeof createAdmin>;

    beforeAll(async () => {
      gateway = await startGateway({ engine: engine.fresh(), autoCreateTopics: false });
      admin = createAdmin(gateway.bootstrap);
    });
    afterAll(async () => {
      admin?.disconnect();
      await gateway?.stop();
    });

    const createTopic = (topic: string, partitions: number) =>
      adminCall<void>((cb) => admin.createTopic({ topic, num_partitions: partitions, replication_factor: 1 }, 15_000, cb));

    it('with default options (Metadata for all topics) clients connect, produce and read, and listTopics lists topics', async () => {
      const topic = uniqueTopic('rd-default-connect');
      await createTopic(topic, 1);
      const other = uniqueTopic('rd-default-connect-deleted');
      await createTopic(other, 1);
      await adminCall<void>((cb) => admin.deleteTopic(other, 10_000, cb));
      const listed = await adminCall<string[]>((cb) => admin.listTopics({ timeout: 10_000 }, cb));
      expect(listed).toContain(topic);
      expect(listed, `${other} is still listed after DeleteTopics`).not.toContain(other);

      const sent = planRecords({ label: topic, partitions: 1, perPartition: 5 });
      const producer = await connectProducer(gateway.bootstrap, { acks: 'all' }, { allTopics: true });
      try {
        expectDelivered(await produceAll(producer, topic, sent));
      } finally {
        await disconnect(producer);
      }
      const consumer = await connectConsumer(gateway.bootstrap, {}, { allTopics: true });
      await disconnect(consumer);
      expectSameRecords(sent, await readRecords(gateway.bootstrap, topic, { partitions: [0], count: sent.length }));
    });

    it.each(['none', 'gzip', 'snappy', 'lz4', 'zstd'] as const)(
      'keyed records with headers, %s-compressed, come back intact and in order per partition',
      async (codec) => {
        expect(codec === 'none' || features.includes(codec), `librdkafka was built without ${codec}`).toBe(true);
        const topic = uniqueTopic(`rd-codec-${codec}`);
        await createTopic(topic, 3);
        const sent = planRecords({ label: topic, partitions: 3, perPartition: 40, headers: [['origin', 'librdkafka'], ['codec', codec]] });
        // Everything is queued before the first send, so batches hold many records and the codec has work.
        const deliveries = await produceAndDeliver(gateway.bootstrap, topic, sent, { 'compression.codec': codec, 'linger.ms': 20, acks: 'all' });
        expectDelivered(deliveries);
        const read = await readRecords(gateway.bootstrap, topic, { partitions: [0, 1, 2], count: sent.length });
        expectSameRecords(sent, read);
        expectDeliveryOffsetsMatch(deliveries, read);
        expect(Math.min(...read.map((r) => r.offset)), 'a new topic starts at offset 0').toBe(0);
      },
    );

    it.each(['0', '1', 'all'])('acks=%s: every record is stored, in order per partition', async (acks) => {
      const topic = uniqueTopic(`rd-acks-${acks}`);
      await createTopic(topic, 2);
      const sent = planRecords({ label: topic, partitions: 2, perPartition: 50 });
      const deliveries = await produceAndDeliver(gateway.bootstrap, topic, sent, { acks, 'linger.ms': 5 });
      expectDelivered(deliveries);
      const read = await readRecords(gateway.bootstrap, topic, { partitions: [0, 1], count: sent.length });
      expectSameRecords(sent, read);
      // With acks=0 the producer is never told an offset; with 1 and all it must be told the right one.
      if (acks !== '0') expectDeliveryOffsetsMatch(deliveries, read);
    });

    it('AdminClient creates, describes, grows and deletes a topic', async () => {
      const topic = uniqueTopic('rd-admin');
      await createTopic(topic, 2);

      const again = await createTopic(topic, 2).then(
        () => null,
        (e: { code?: number }) => e,
      );
      expect(again?.code, 'creating an existing topic answers TOPIC_ALREADY_EXISTS').toBe(ERR.ERR_TOPIC_ALREADY_EXISTS);

      const [described] = await adminCall<TopicDescription[]>((cb) => admin.describeTopics([topic], { timeout: 10_000 }, cb));
      expect(described?.name).toBe(topic);
      expect(described?.error, `describing ${topic} failed`).toBeFalsy();
      expect(described?.partitions.map((p) => p.partition)).toEqual([0, 1]);
      for (const p of described!.partitions) expect(p.leader, `partition ${p.partition} has a leader`).toBeTruthy();

      await adminCall<void>((cb) => admin.createPartitions(topic, 4, 10_000, cb));
      const [grown] = await adminCall<TopicDescription[]>((cb) => admin.describeTopics([topic], { timeout: 10_000 }, cb));
      expect(grown?.partitions.map((p) => p.partition)).toEqual([0, 1, 2, 3]);

      // The new partitions take records like the old ones.
      const sent = planRecords({ label: topic, partitions: 4, perPartition: 3 });
      expectDelivered(await produceAndDeliver(gateway.bootstrap, topic, sent, { acks: 'all' }));
      expectSameRecords(sent, await readRecords(gateway.bootstrap, topic, { partitions: [0, 1, 2, 3], count: sent.length }));

      await adminCall<void>((cb) => admin.deleteTopic(topic, 10_000, cb));
      const [gone] = await adminCall<TopicDescription[]>((cb) => admin.describeTopics([topic], { timeout: 10_000 }, cb)).catch(
        (e: { code?: number }) => [{ error: e } as unknown as TopicDescription],
      );
      expect(gone?.error?.code, 'describing a deleted topic answers UNKNOWN_TOPIC_OR_PARTITION').toBe(ERR.ERR_UNKNOWN_TOPIC_OR_PART);
    });

    it('an unknown topic stays unknown with auto-create off: describe fails, records are refused', async () => {
      const topic = uniqueTopic('rd-unknown');
      const [described] = await adminCall<TopicDescription[]>((cb) => admin.describeTopics([topic], { timeout: 10_000 }, cb)).catch(
        (e: { code?: number }) => [{ error: e } as unknown as TopicDescription],
      );
      expect(described?.error?.code, 'Metadata for an unknown topic answers UNKNOWN_TOPIC_OR_PARTITION').toBe(ERR.ERR_UNKNOWN_TOPIC_OR_PART);

      // A producer asks for auto-creation by default (allow.auto.create.topics=true); the gateway must still refuse.
      const deliveries = await produceAndDeliver(gateway.bootstrap, topic, planRecords({ label: topic, partitions: 1, perPartition: 1 }), {
        'topic.metadata.propagation.max.ms': 1_000,
        'message.timeout.ms': 10_000,
      });
      expect(deliveries[0]?.error?.code, 'the record is failed as for an unknown topic').toBeOneOf([ERR.ERR__UNKNOWN_TOPIC, ERR.ERR_UNKNOWN_TOPIC_OR_PART]);
      const [after] = await adminCall<TopicDescription[]>((cb) => admin.describeTopics([topic], { timeout: 10_000 }, cb)).catch(
        (e: { code?: number }) => [{ error: e } as unknown as TopicDescription],
      );
      expect(after?.error?.code, 'the refused produce created the topic').toBe(ERR.ERR_UNKNOWN_TOPIC_OR_PART);
    });

    it('finds offsets by timestamp (consumer offsetsForTimes and AdminClient ListOffsets)', async () => {
      const topic = uniqueTopic('rd-times');
      await createTopic(topic, 2);
      const sent = planRecords({ label: topic, partitions: 2, perPartition: 20 });
      expectDelivered(await produceAndDeliver(gateway.bootstrap, topic, sent, { acks: 'all' }));
      // Record i of partition p has timestamp base + 2i + p: ask for partition 0's 10th record's time.
      const at = sent.find((r) => r.partition === 0 && r.headers[0]![1] === '10')!.timestamp;

      const consumer = await connectConsumer(gateway.bootstrap, {}, topic);
      try {
        const offsets = await new Promise<TopicPartitionOffset[]>((resolve, reject) =>
          consumer.offsetsForTimes(
            [0, 1].map((partition) => ({ topic, partition, offset: at })),
            10_000,
            (err, result) => (err ? reject(new Error(`offsetsForTimes failed: ${err.message}`)) : resolve(result)),
          ),
        );
        expect(offsets.map((o) => [o.partition, o.offset])).toEqual([
          [0, 10],
          [1, 10],
        ]);
      } finally {
        await disconnect(consumer);
      }

      const specs = (offset: OffsetSpecType) => [0, 1].map((partition) => ({ topic, partition, offset }));
      const listOffsets = (offset: OffsetSpecType) =>
        adminCall<ListOffsetsResult[]>((cb) => admin.listOffsets(specs(offset), { timeout: 10_000 }, cb)).then((rs) =>
          [...rs].sort((a, b) => a.partition - b.partition).map((r) => r.offset),
        );
      expect(await listOffsets(new OffsetSpec(at)), 'ListOffsets by timestamp').toEqual([10, 10]);
      expect(await listOffsets(OffsetSpec.EARLIEST), 'ListOffsets earliest').toEqual([0, 0]);
      expect(await listOffsets(OffsetSpec.LATEST), 'ListOffsets latest').toEqual([20, 20]);
      expect(await listOffsets(OffsetSpec.MAX_TIMESTAMP), 'ListOffsets max timestamp: the offset of the newest record').toEqual([19, 19]);
      expect(await listOffsets(new OffsetSpec(sent.at(-1)!.timestamp + 1_000)), 'a timestamp after every record finds none').toEqual([-1, -1]);
    });

    it('after DeleteRecords, a fetch below the new start is reset by auto.offset.reset', { timeout: 60_000 }, async () => {
      const topic = uniqueTopic('rd-delete-records');
      await createTopic(topic, 1);
      const sent = planRecords({ label: topic, partitions: 1, perPartition: 30 });
      expectDelivered(await produceAndDeliver(gateway.bootstrap, topic, sent, { acks: 'all' }));

      const deleted = await adminCall<DeleteRecordsResult[]>((cb) =>
        admin.deleteRecords([{ topic, partition: 0, offset: 12 }], { timeout: 10_000 }, cb),
      );
      expect(deleted.map((d) => [d.partition, d.lowWatermark, d.error?.code ?? 0])).toEqual([[0, 12, 0]]);

      // earliest: the consumer asked for offset 3, hears OFFSET_OUT_OF_RANGE, and restarts at 12.
      const read = await readRecords(gateway.bootstrap, topic, {
        partitions: [0],
        from: new Map([[0, 3]]),
        count: sent.length - 12,
        config: { 'auto.offset.reset': 'earliest' },
      });
      expectSameRecords(sent.slice(12), read);
      expect(read[0]?.offset).toBe(12);

      // error: the application is told instead.
      const consumer = await connectConsumer(gateway.bootstrap, { 'auto.offset.reset': 'error' }, topic);
      const errors: LibrdKafkaError[] = [];
      const got: Message[] = [];
      consumer.on('event.error', (e) => errors.push(e));
      try {
        consumer.assign([{ topic, partition: 0, offset: 3 }]);
        await waitFor(
          async () => {
            await new Promise<void>((resolve) =>
              consumer.consume(10, (err, messages) => {
                if (err) errors.push(err);
                got.push(...(messages ?? []));
                resolve();
              }),
            );
            return errors.some((e) => e.code === ERR.ERR__AUTO_OFFSET_RESET || e.code === ERR.ERR_OFFSET_OUT_OF_RANGE);
          },
          {
            what: 'librdkafka to report an offset reset failure for offset 3 below the new start 12',
            timeoutMs: 20_000,
            describe: () => `errors: ${errors.map((e) => `${e.code} ${e.message}`).join(' | ') || 'none'}; records: ${got.map((m) => m.offset).join(',') || 'none'}`,
          },
        );
        expect(got.map(toReadRecord).filter((r) => r.offset < 12), 'no record below the new start is served').toEqual([]);
      } finally {
        await disconnect(consumer);
      }

      const earliest = await adminCall<ListOffsetsResult[]>((cb) =>
        admin.listOffsets([{ topic, partition: 0, offset: OffsetSpec.EARLIEST }], { timeout: 10_000 }, cb),
      );
      expect(earliest[0]?.offset, 'ListOffsets earliest after DeleteRecords').toBe(12);
    });
  });
}

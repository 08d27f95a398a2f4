/**
 * kafkajs 2.2.4 against the gateway, on every engine, as a producer and an
 * admin client (its consumer needs consumer groups, a later issue: records are
 * read back with librdkafka, assigning partitions). Keyed records with
 * headers over several partitions, every codec (gzip built in; snappy, lz4
 * and zstd through codec plugins, as kafkajs users add them), acks 0/1/all,
 * the admin API, Metadata for an unknown topic with auto-create off, offsets
 * by timestamp, DeleteRecords then a fetch below the new start.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kafkajs, { type Admin, type CompressionTypes as CompressionType } from 'kafkajs';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { planRecords, expectSameRecords, uniqueTopic, type SentRecord } from '../support/records.js';
import { connectKafkajsProducer, kafkajsClient, kafkajsSend, registerKafkajsCodecs } from '../support/kafkajs.js';
import { readRecords } from '../support/rdkafka.js';

const { CompressionTypes, ConfigResourceTypes } = kafkajs;
registerKafkajsCodecs();

const engines = await engineMatrix();
afterAll(releaseEngines);

const CODECS = [
  ['none', CompressionTypes.None],
  ['gzip', CompressionTypes.GZIP],
  ['snappy (plugin)', CompressionTypes.Snappy],
  ['lz4 (plugin)', CompressionTypes.LZ4],
  ['zstd (plugin)', CompressionTypes.ZSTD],
] as const;

/** kafkajs wraps the broker's error in retry errors; the protocol error's type is what a user reads. */
function kafkajsErrorTypes(e: unknown): string[] {
  const types: string[] = [];
  let current = e as { type?: string; name?: string; originalError?: unknown; cause?: unknown } | undefined;
  for (let depth = 0; current && depth < 5; depth++) {
    if (current.type) types.push(current.type);
    if (current.name) types.push(current.name);
    current = (current.originalError ?? current.cause) as typeof current;
  }
  return types;
}

for (const engine of engines) {
  const title = `kafkajs 2.2.4 through the gateway, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway;
    let admin: Admin;

    beforeAll(async () => {
      gateway = await startGateway({ engine: engine.fresh(), autoCreateTopics: false });
      admin = kafkajsClient(gateway.bootstrap).admin();
      await admin.connect();
    });
    afterAll(async () => {
      await admin?.disconnect();
      await gateway?.stop();
    });

    async function createTopic(topic: string, numPartitions: number): Promise<void> {
      const created = await admin.createTopics({ topics: [{ topic, numPartitions }], waitForLeaders: true, timeout: 10_000 });
      expect(created, `CreateTopics said ${topic} already existed`).toBe(true);
    }

    async function sendAll(topic: string, records: SentRecord[], acks: number, compression: CompressionType = CompressionTypes.None) {
      const producer = await connectKafkajsProducer(kafkajsClient(gateway.bootstrap));
      try {
        return await kafkajsSend(producer, topic, records, { acks, compression, chunk: 60 });
      } finally {
        await producer.disconnect();
      }
    }

    it.each(CODECS)('keyed records with headers, %s, come back intact and in order per partition', async (name, compression) => {
      const topic = uniqueTopic(`kjs-codec-${name.split(' ')[0]}`);
      await createTopic(topic, 3);
      const sent = planRecords({ label: topic, partitions: 3, perPartition: 40, headers: [['origin', 'kafkajs'], ['codec', name]] });
      const results = await sendAll(topic, sent, -1, compression);
      for (const r of results) expect(r.errorCode, `partition ${r.partition} answered error ${r.errorCode}`).toBe(0);
      const read = await readRecords(gateway.bootstrap, topic, { partitions: [0, 1, 2], count: sent.length });
      expectSameRecords(sent, read);
      expect(Math.min(...read.map((r) => r.offset)), 'a new topic starts at offset 0').toBe(0);
    });

    it.each([0, 1, -1])('acks=%s: every record is stored, in order per partition', async (acks) => {
      const topic = uniqueTopic(`kjs-acks-${acks === -1 ? 'all' : acks}`);
      await createTopic(topic, 2);
      const sent = planRecords({ label: topic, partitions: 2, perPartition: 60 });
      const results = await sendAll(topic, sent, acks);
      if (acks !== 0) {
        // kafkajs reports the base offset of each send's batch per partition; the first batch starts at 0.
        const first = results.filter((r) => r.baseOffset === '0').map((r) => r.partition).sort();
        expect(first, 'the first batch of each partition was appended at offset 0').toEqual([0, 1]);
      }
      const read = await readRecords(gateway.bootstrap, topic, { partitions: [0, 1], count: sent.length });
      expectSameRecords(sent, read);
    });

    it('admin creates, describes, alters and deletes a topic', async () => {
      const topic = uniqueTopic('kjs-admin');
      const created = await admin.createTopics({
        topics: [{ topic, numPartitions: 2, configEntries: [{ name: 'retention.ms', value: '3600000' }] }],
        waitForLeaders: true,
      });
      expect(created).toBe(true);
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] }), 'creating it again reports "already exists" (false)').toBe(false);

      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(topics.map((t) => t.name)).toEqual([topic]);
      expect(topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1]);
      for (const p of topics[0]!.partitions) expect(p.leader, `partition ${p.partitionId} has a leader`).toBeGreaterThanOrEqual(0);

      const configValue = async (name: string) => {
        const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: [name] }] });
        const resource = described.resources[0]!;
        expect(resource.errorCode, `DescribeConfigs on ${topic}: ${resource.errorMessage}`).toBe(0);
        return resource.configEntries.find((c) => c.configName === name)?.configValue;
      };
      expect(await configValue('retention.ms'), 'the retention.ms given at creation').toBe('3600000');

      await admin.alterConfigs({
        validateOnly: false,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'retention.ms', value: '7200000' }] }],
      });
      expect(await configValue('retention.ms'), 'retention.ms after AlterConfigs').toBe('7200000');

      // AlterConfigs replaces the topic's whole set: retention.ms goes back to its default, and the topic is compacted.
      await admin.alterConfigs({
        validateOnly: false,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }],
      });
      expect(await configValue('cleanup.policy'), 'cleanup.policy after AlterConfigs').toBe('compact');
      const unknownPolicy = await admin
        .alterConfigs({
          validateOnly: false,
          resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configEntries: [{ name: 'cleanup.policy', value: 'shred' }] }],
        })
        .then(
          () => null,
          (e: unknown) => e,
        );
      expect(unknownPolicy, 'cleanup.policy=shred is refused').not.toBeNull();
      expect(await configValue('cleanup.policy'), 'a refused change changes nothing').toBe('compact');

      await admin.createPartitions({ topicPartitions: [{ topic, count: 5 }] });
      const grown = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(grown.topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2, 3, 4]);

      expect(await admin.listTopics()).toContain(topic);
      await admin.deleteTopics({ topics: [topic], timeout: 10_000 });
      expect(await admin.listTopics(), `${topic} is still listed after DeleteTopics`).not.toContain(topic);
    });

    it('Metadata for an unknown topic with auto-create off answers UNKNOWN_TOPIC_OR_PARTITION and creates nothing', async () => {
      const topic = uniqueTopic('kjs-unknown');
      // Few retries: kafkajs retries this error, and the test only needs to see it.
      const strict = kafkajsClient(gateway.bootstrap, { clientId: 'queen-e2e-impatient', retries: 1 });
      const strictAdmin = strict.admin();
      await strictAdmin.connect();
      try {
        const failure = await strictAdmin.fetchTopicMetadata({ topics: [topic] }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(failure, 'fetching metadata for an unknown topic succeeded').not.toBeNull();
        expect(kafkajsErrorTypes(failure)).toContain('UNKNOWN_TOPIC_OR_PARTITION');

        // A producer that asks for auto-creation is refused too.
        const producer = await connectKafkajsProducer(strict, { allowAutoTopicCreation: true });
        try {
          const sent = await producer.send({ topic, messages: [{ key: 'k', value: 'v' }] }).then(
            () => null,
            (e: unknown) => e,
          );
          expect(kafkajsErrorTypes(sent)).toContain('UNKNOWN_TOPIC_OR_PARTITION');
        } finally {
          await producer.disconnect();
        }
        expect(await strictAdmin.listTopics(), 'the unknown topic was created').not.toContain(topic);
      } finally {
        await strictAdmin.disconnect();
      }
    });

    it('finds offsets by timestamp, earliest and latest', async () => {
      const topic = uniqueTopic('kjs-times');
      await createTopic(topic, 2);
      const sent = planRecords({ label: topic, partitions: 2, perPartition: 20 });
      await sendAll(topic, sent, -1);
      const at = sent.find((r) => r.partition === 1 && r.headers[0]![1] === '7')!.timestamp;

      const byTime = await admin.fetchTopicOffsetsByTimestamp(topic, at);
      // Partition 1's 7th record has that time; partition 0's 8th is the first after it.
      expect(byTime.map((o) => [o.partition, o.offset]).sort()).toEqual([
        [0, '8'],
        [1, '7'],
      ]);
      const ends = await admin.fetchTopicOffsets(topic);
      expect(ends.map((o) => [o.partition, o.low, o.high]).sort()).toEqual([
        [0, '0', '20'],
        [1, '0', '20'],
      ]);
    });

    it('after DeleteRecords the start moves, and a fetch below it resumes at the new start', async () => {
      const topic = uniqueTopic('kjs-delete-records');
      await createTopic(topic, 2);
      const sent = planRecords({ label: topic, partitions: 2, perPartition: 25 });
      await sendAll(topic, sent, -1);

      // kafkajs's deleteTopicRecords finds leaders in metadata it already holds, so load it first.
      const before = await admin.fetchTopicOffsets(topic);
      expect(before.map((o) => [o.partition, o.low, o.high]).sort()).toEqual([
        [0, '0', '25'],
        [1, '0', '25'],
      ]);
      await admin.deleteTopicRecords({ topic, partitions: [{ partition: 1, offset: '10' }] });
      const ends = await admin.fetchTopicOffsets(topic);
      expect(ends.map((o) => [o.partition, o.low, o.high]).sort()).toEqual([
        [0, '0', '25'],
        [1, '10', '25'],
      ]);

      const read = await readRecords(gateway.bootstrap, topic, {
        partitions: [1],
        from: new Map([[1, 4]]),
        count: 15,
        config: { 'auto.offset.reset': 'earliest' },
      });
      expectSameRecords(
        sent.filter((r) => r.partition === 1).slice(10),
        read,
      );
    });
  });
}

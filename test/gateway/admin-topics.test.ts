/**
 * CreateTopics, DeleteTopics and CreatePartitions as an admin user sees them:
 * through kafkajs 2.2.4's admin client, and raw for the versions kafkajs does
 * not send (CreateTopics v5-v7 answers, DeleteTopics by topic id).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { configNamed, DEFAULT_PARTITIONS, failureTypes, NODE_ID, startAdminHarness, type AdminHarness } from './admin-support.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

function creatable(name: string, options: Partial<{ numPartitions: number; replicationFactor: number; assignments: Message[]; configs: Message[] }> = {}): Message {
  return { name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [], ...options };
}

describe('admin: topics', () => {
  let h: AdminHarness;
  beforeAll(async () => {
    h = await startAdminHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  const createRaw = (version: number, topics: Message[], validateOnly = false) =>
    h.request(ApiKey.CreateTopics, version, { topics, timeoutMs: 5000, validateOnly });

  describe('CreateTopics', () => {
    it('creates a topic with its partitions and configs, led by this gateway, with native dedup off', async () => {
      const created = await h.admin.createTopics({
        topics: [{ topic: 'orders', numPartitions: 4, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '60000' }] }],
      });
      expect(created).toBe(true);

      const { topics } = await h.admin.fetchTopicMetadata({ topics: ['orders'] });
      expect(topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2, 3]);
      expect(topics[0]!.partitions.every((p) => p.leader === NODE_ID && p.replicas.join() === String(NODE_ID))).toBe(true);

      const queue = await h.broker.core.describeQueue({ name: 'orders' });
      expect(queue?.config.retentionMs).toBe(60_000);
      expect(queue?.config.dedupWindowSeconds).toBe(0);
    });

    it('answers TOPIC_ALREADY_EXISTS for a topic that exists (kafkajs reports it as false)', async () => {
      await h.admin.createTopics({ topics: [{ topic: 'twice' }] });
      expect(await h.admin.createTopics({ topics: [{ topic: 'twice' }] })).toBe(false);

      const { topics } = await createRaw(7, [creatable('twice')]);
      expect(topics[0]).toMatchObject({ errorCode: ErrorCode.TOPIC_ALREADY_EXISTS, errorMessage: "Topic 'twice' already exists." });
    });

    it('uses the default partition count for -1', async () => {
      const { topics } = await createRaw(7, [creatable('defaulted', { numPartitions: -1, replicationFactor: -1 })]);
      expect(topics[0]).toMatchObject({ errorCode: 0, numPartitions: DEFAULT_PARTITIONS, replicationFactor: 1 });
      expect((await h.broker.core.describeQueue({ name: 'defaulted' }))?.partitions).toHaveLength(DEFAULT_PARTITIONS);
    });

    it('refuses names that break Kafka\'s rule with INVALID_TOPIC_EXCEPTION', async () => {
      expect(await failureTypes(h.admin.createTopics({ topics: [{ topic: 'no spaces' }] }))).toContain('INVALID_TOPIC_EXCEPTION');

      const { topics } = await createRaw(7, ['.', '..', 'x'.repeat(250), 'ok/not'].map((name) => creatable(name)));
      expect(topics.map((t: Message) => t.errorCode)).toEqual(Array(4).fill(ErrorCode.INVALID_TOPIC_EXCEPTION));
      expect(await h.broker.core.listQueues()).not.toContainEqual(expect.objectContaining({ name: '..' }));
    });

    it('refuses bad partition counts, replication factors, manual assignments and repeated names, each with a reason', async () => {
      const { topics } = await createRaw(7, [
        creatable('zero-partitions', { numPartitions: 0 }),
        creatable('minus-two', { numPartitions: -2 }),
        creatable('zero-replicas', { replicationFactor: 0 }),
        creatable('elsewhere', { numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [NODE_ID + 1] }] }),
        creatable('doubled', { numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [NODE_ID, NODE_ID] }] }),
        creatable('gap', { numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 1, brokerIds: [NODE_ID] }] }),
        creatable('counted-too', { numPartitions: 2, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [NODE_ID] }] }),
        creatable('repeated'),
        creatable('repeated'),
      ]);
      const byName = (name: string) => topics.filter((t: Message) => t.name === name);
      expect(byName('zero-partitions')[0]).toMatchObject({ errorCode: ErrorCode.INVALID_PARTITIONS, numPartitions: -1 });
      expect(byName('minus-two')[0].errorCode).toBe(ErrorCode.INVALID_PARTITIONS);
      expect(byName('zero-replicas')[0].errorCode).toBe(ErrorCode.INVALID_REPLICATION_FACTOR);
      expect(byName('elsewhere')[0].errorCode).toBe(ErrorCode.INVALID_REPLICA_ASSIGNMENT);
      expect(byName('elsewhere')[0].errorMessage).toContain(`broker ${NODE_ID + 1}, but no such broker is registered`);
      expect(byName('doubled')[0].errorCode).toBe(ErrorCode.INVALID_REPLICA_ASSIGNMENT);
      expect(byName('gap')[0].errorCode).toBe(ErrorCode.INVALID_REPLICA_ASSIGNMENT);
      expect(byName('counted-too')[0].errorCode).toBe(ErrorCode.INVALID_REQUEST);
      // Answered once, as Kafka does: the answer is keyed by topic name.
      expect(byName('repeated').map((t: Message) => t.errorCode)).toEqual([ErrorCode.INVALID_REQUEST]);

      const names = (await h.broker.core.listQueues()).map((q) => q.name);
      for (const name of ['zero-partitions', 'minus-two', 'zero-replicas', 'elsewhere', 'doubled', 'gap', 'counted-too', 'repeated']) expect(names).not.toContain(name);
    });

    it('creates topics asked for with replication factor 3, or assigned to this broker, listing the one replica it has', async () => {
      await h.admin.createTopics({ topics: [{ topic: 'rf-three', numPartitions: 2, replicationFactor: 3 }] });
      const { topics } = await createRaw(7, [creatable('assigned', { numPartitions: -1, replicationFactor: -1, assignments: [0, 1, 2].map((i) => ({ partitionIndex: i, brokerIds: [NODE_ID] })) })]);
      expect(topics[0]).toMatchObject({ errorCode: 0, numPartitions: 3, replicationFactor: 1 });
      const metadata = await h.admin.fetchTopicMetadata({ topics: ['rf-three', 'assigned'] });
      const listed = metadata.topics.map((t) => [t.name, t.partitions.length, t.partitions.every((p) => p.replicas.length === 1 && p.replicas[0] === NODE_ID)]);
      expect(listed.sort()).toEqual([
        ['assigned', 3, true],
        ['rf-three', 2, true],
      ]);
    });

    it('creates compacted topics, and refuses unknown configs and bad values with INVALID_CONFIG naming the key', async () => {
      expect(await h.admin.createTopics({ topics: [{ topic: 'compacted', configEntries: [{ name: 'cleanup.policy', value: 'compact' }] }] })).toBe(true);
      expect((await h.broker.core.describeQueue({ name: 'compacted' }))?.config).toMatchObject({ retentionMs: -1, compaction: { minCleanableDirtyRatio: 0.5, deleteRetentionMs: 86_400_000 } });

      const { topics } = await createRaw(7, [
        creatable('compacted-too', { configs: [{ name: 'cleanup.policy', value: 'compact,delete' }, { name: 'min.cleanable.dirty.ratio', value: '0.01' }] }),
        creatable('segmented', { configs: [{ name: 'segment.bytes', value: '1024' }] }), // below Kafka's 1 MiB minimum
        creatable('bad-retention', { configs: [{ name: 'retention.ms', value: 'a week' }] }),
      ]);
      expect(topics.map((t: Message) => t.errorCode)).toEqual([0, ErrorCode.INVALID_CONFIG, ErrorCode.INVALID_CONFIG]);
      expect(topics[1].errorMessage).toContain('segment.bytes');
      expect(topics[2].errorMessage).toContain('retention.ms');
      expect((await h.broker.core.describeQueue({ name: 'compacted-too' }))?.config).toMatchObject({ retentionMs: 604_800_000, compaction: { minCleanableDirtyRatio: 0.01 } });
      expect(await h.broker.core.describeQueue({ name: 'segmented' })).toBeNull();
    });

    it('validateOnly checks and answers as a creation would, and creates nothing', async () => {
      expect(await h.admin.createTopics({ validateOnly: true, waitForLeaders: false, topics: [{ topic: 'dry-run', numPartitions: 2 }] })).toBe(true);
      const { topics } = await createRaw(7, [creatable('dry-run', { numPartitions: 2, configs: [{ name: 'retention.bytes', value: '1000' }] })], true);
      expect(topics[0]).toMatchObject({ errorCode: 0, numPartitions: 2, replicationFactor: 1, topicId: ZERO_UUID });
      expect(configNamed(topics[0].configs, 'retention.bytes').value).toBe('1000');
      expect(await h.broker.core.describeQueue({ name: 'dry-run' })).toBeNull();

      await h.admin.createTopics({ topics: [{ topic: 'dry-run-exists' }] });
      const again = await createRaw(7, [creatable('dry-run-exists')], true);
      expect(again.topics[0].errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
    });

    it('answers partitions, replication factor and configs from v5 and the topic id from v7', async () => {
      const { topics } = await createRaw(7, [creatable('described', { numPartitions: 2, configs: [{ name: 'max.message.bytes', value: '2048' }] })]);
      const answer = topics[0];
      expect(answer).toMatchObject({ errorCode: 0, numPartitions: 2, replicationFactor: 1 });
      expect(configNamed(answer.configs, 'max.message.bytes')).toMatchObject({ value: '2048', readOnly: false, configSource: 1 });
      expect(configNamed(answer.configs, 'retention.ms')).toMatchObject({ value: String(7 * 24 * 3600 * 1000), configSource: 5 });
      expect(configNamed(answer.configs, 'cleanup.policy').value).toBe('delete');
      expect(answer.topicId).toBe((await h.broker.core.describeQueue({ name: 'described' }))!.id);

      const v4 = await createRaw(4, [creatable('described-v4')]);
      expect(v4.topics[0]).toMatchObject({ errorCode: 0, numPartitions: -1 });
      const v0 = await createRaw(0, [creatable('described-v0'), creatable('..')]);
      expect(v0.topics.map((t: Message) => t.errorCode)).toEqual([0, ErrorCode.INVALID_TOPIC_EXCEPTION]);
    });
  });

  describe('DeleteTopics', () => {
    it('deletes topics by name; the topic and its records are gone', async () => {
      await h.admin.createTopics({ topics: [{ topic: 'doomed', numPartitions: 2 }] });
      const producer = h.kafka.producer();
      await producer.connect();
      await producer.send({ topic: 'doomed', messages: [{ value: 'x' }] });
      await producer.disconnect();

      await h.admin.deleteTopics({ topics: ['doomed'] });
      expect(await h.admin.listTopics()).not.toContain('doomed');
      expect(await h.broker.core.describeQueue({ name: 'doomed' })).toBeNull();

      // A topic of the same name created afterwards starts empty.
      await h.admin.createTopics({ topics: [{ topic: 'doomed' }] });
      const offsets = await h.admin.fetchTopicOffsets('doomed');
      expect(offsets.map((o) => [o.low, o.high])).toEqual(Array(DEFAULT_PARTITIONS).fill(['0', '0']));
    });

    it('answers UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist', async () => {
      expect(await failureTypes(h.admin.deleteTopics({ topics: ['never-was'] }))).toContain('UNKNOWN_TOPIC_OR_PARTITION');
      const { responses } = await h.request(ApiKey.DeleteTopics, 5, { topicNames: ['never-was', 'bad name'], timeoutMs: 1000 });
      expect(responses.map((r: Message) => r.errorCode)).toEqual([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
      expect(responses[0].errorMessage).toContain('never-was');
    });

    it('deletes by topic id from v6, and answers UNKNOWN_TOPIC_ID for an id no topic has', async () => {
      await h.admin.createTopics({ topics: [{ topic: 'by-id' }] });
      const id = (await h.broker.core.describeQueue({ name: 'by-id' }))!.id;
      const unknownId = '11111111-2222-4333-8444-555555555555';

      const { responses } = await h.request(ApiKey.DeleteTopics, 6, {
        topics: [
          { name: null, topicId: id },
          { name: null, topicId: unknownId },
          { name: 'by-id', topicId: id },
        ],
        timeoutMs: 1000,
      });
      expect(responses[0]).toMatchObject({ name: 'by-id', topicId: id, errorCode: 0 });
      expect(responses[1]).toMatchObject({ topicId: unknownId, errorCode: ErrorCode.UNKNOWN_TOPIC_ID });
      expect(responses[2].errorCode).toBe(ErrorCode.INVALID_REQUEST);
      expect(await h.broker.core.describeQueue({ name: 'by-id' })).toBeNull();

      // The old id does not reach a new topic of the same name.
      await h.admin.createTopics({ topics: [{ topic: 'by-id' }] });
      const stale = await h.request(ApiKey.DeleteTopics, 6, { topics: [{ name: null, topicId: id }], timeoutMs: 1000 });
      expect(stale.responses[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_ID);
      expect(await h.broker.core.describeQueue({ name: 'by-id' })).not.toBeNull();
    });
  });

  describe('CreatePartitions', () => {
    it('adds partitions; the new ones are led by this gateway and accept records', async () => {
      await h.admin.createTopics({ topics: [{ topic: 'growing', numPartitions: 2 }] });
      await h.admin.createPartitions({ topicPartitions: [{ topic: 'growing', count: 5 }] });

      const { topics } = await h.admin.fetchTopicMetadata({ topics: ['growing'] });
      expect(topics[0]!.partitions.map((p) => p.partitionId).sort()).toEqual([0, 1, 2, 3, 4]);

      const producer = h.kafka.producer();
      await producer.connect();
      await producer.send({ topic: 'growing', messages: [{ value: 'new', partition: 4 }] });
      await producer.disconnect();
      expect((await h.admin.fetchTopicOffsets('growing')).find((o) => o.partition === 4)?.high).toBe('1');
    });

    it('refuses to shrink or keep the count with INVALID_PARTITIONS and a reason', async () => {
      await h.admin.createTopics({ topics: [{ topic: 'fixed', numPartitions: 3 }] });
      expect(await failureTypes(h.admin.createPartitions({ topicPartitions: [{ topic: 'fixed', count: 2 }] }))).toContain('INVALID_PARTITIONS');

      const { results } = await h.request(ApiKey.CreatePartitions, 3, {
        topics: [
          { name: 'fixed', count: 3, assignments: null },
          { name: 'fixed-2', count: 1, assignments: null },
        ],
        timeoutMs: 1000,
        validateOnly: false,
      });
      expect(results[0]).toMatchObject({ name: 'fixed', errorCode: ErrorCode.INVALID_PARTITIONS });
      expect(results[0].errorMessage).toMatch(/already has 3 partitions/);
      expect(results[1].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      expect((await h.broker.core.describeQueue({ name: 'fixed' }))?.partitions).toHaveLength(3);
    });

    it('validateOnly changes nothing; manual assignments are taken for this broker only, one per new partition', async () => {
      await h.admin.createTopics({ topics: [{ topic: 'checked', numPartitions: 1 }] });
      await h.admin.createPartitions({ validateOnly: true, topicPartitions: [{ topic: 'checked', count: 4 }] });
      expect((await h.broker.core.describeQueue({ name: 'checked' }))?.partitions).toHaveLength(1);

      const grow = async (count: number, brokerIds: number[][]) =>
        (await h.request(ApiKey.CreatePartitions, 1, { topics: [{ name: 'checked', count, assignments: brokerIds.map((ids) => ({ brokerIds: ids })) }], timeoutMs: 1000, validateOnly: false })).results[0];
      expect((await grow(3, [[NODE_ID]])).errorCode).toBe(ErrorCode.INVALID_REPLICA_ASSIGNMENT);
      expect((await grow(2, [[NODE_ID + 1]])).errorCode).toBe(ErrorCode.INVALID_REPLICA_ASSIGNMENT);
      expect((await h.broker.core.describeQueue({ name: 'checked' }))?.partitions).toHaveLength(1);
      expect((await grow(3, [[NODE_ID], [NODE_ID]])).errorCode).toBe(0);
      expect((await h.broker.core.describeQueue({ name: 'checked' }))?.partitions).toHaveLength(3);
    });
  });
});

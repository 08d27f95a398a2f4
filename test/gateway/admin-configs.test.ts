/**
 * Topic and broker configs as an admin user sees them: DescribeConfigs and
 * AlterConfigs through kafkajs 2.2.4, and raw for DescribeConfigs v3-v4
 * (types, documentation) and IncrementalAlterConfigs, which kafkajs lacks.
 */
import { readFileSync } from 'node:fs';
import { ConfigResourceTypes } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { TOPIC_CONFIG_KEYS } from '../../src/topic-configs/index.js';
import { configNamed, DEFAULT_PARTITIONS, failureTypes, NODE_ID, startAdminHarness, type AdminHarness } from './admin-support.js';

const TOPIC = ConfigResourceTypes.TOPIC;
const BROKER = ConfigResourceTypes.BROKER;
const DEFAULT_RETENTION_MS = String(7 * 24 * 3600 * 1000);
const DEFAULT_MAX_MESSAGE_BYTES = String(1024 * 1024 + 12);
const SET = 0;
const DELETE = 1;
const APPEND = 2;
const SUBTRACT = 3;

describe('admin: configs', () => {
  let h: AdminHarness;
  beforeAll(async () => {
    h = await startAdminHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  async function createTopic(topic: string, configEntries: { name: string; value: string }[] = []) {
    await h.admin.createTopics({ topics: [{ topic, configEntries }] });
  }

  /** The topic's configs as kafkajs describes them, by name. */
  async function describedValues(topic: string): Promise<Record<string, string>> {
    const { resources } = await h.admin.describeConfigs({ resources: [{ type: TOPIC, name: topic }], includeSynonyms: false });
    return Object.fromEntries(resources[0]!.configEntries.map((e) => [e.configName, e.configValue]));
  }

  const incremental = (resources: Message[], validateOnly = false) =>
    h.request(ApiKey.IncrementalAlterConfigs, 1, { resources, validateOnly }).then((r) => r.responses as Message[]);

  const topicChange = (name: string, configs: { name: string; configOperation: number; value: string | null }[]) => ({ resourceType: TOPIC, resourceName: name, configs });

  it('docs/topic-configs.md has a row for every config the gateway accepts, and no other', () => {
    const page = readFileSync(new URL('../../docs/topic-configs.md', import.meta.url), 'utf8');
    const rows = [...page.matchAll(/^\| `([a-z0-9.]+)` \|/gm)].map((m) => m[1]);
    expect(rows).toEqual(TOPIC_CONFIG_KEYS.map((k) => k.name));
  });

  describe('DescribeConfigs', () => {
    it('describes a topic\'s configs: values set on the topic and defaults, with their sources', async () => {
      await createTopic('described', [{ name: 'retention.ms', value: '60000' }]);
      const { resources } = await h.admin.describeConfigs({ resources: [{ type: TOPIC, name: 'described' }], includeSynonyms: false });
      const entries = resources[0]!.configEntries;
      const entry = (name: string) => entries.find((e) => e.configName === name);

      // Every Kafka topic config (the differential tests hold the list to Apache Kafka's), and Queen's dedup window.
      expect(entries).toHaveLength(TOPIC_CONFIG_KEYS.length + 1);
      expect(entries.map((e) => e.configName)).toEqual(expect.arrayContaining(['segment.ms', 'min.insync.replicas', 'unclean.leader.election.enable', 'queen.dedup.window.seconds']));
      expect(entry('segment.ms')).toMatchObject({ configValue: DEFAULT_RETENTION_MS, configSource: 5, readOnly: false });
      expect(entry('retention.ms')).toMatchObject({ configValue: '60000', configSource: 1, isDefault: false, readOnly: false });
      expect(entry('max.message.bytes')).toMatchObject({ configValue: DEFAULT_MAX_MESSAGE_BYTES, configSource: 5, isDefault: true });
      expect(entry('retention.bytes')?.configValue).toBe('-1');
      expect(entry('message.timestamp.type')?.configValue).toBe('CreateTime');
      expect(entry('cleanup.policy')?.configValue).toBe('delete');
      expect(entry('queen.dedup.window.seconds')).toMatchObject({ configValue: '0', readOnly: true });
    });

    it('answers only the keys asked for, and synonyms when asked', async () => {
      await createTopic('filtered', [{ name: 'retention.bytes', value: '4096' }]);
      const { resources } = await h.admin.describeConfigs({
        resources: [{ type: TOPIC, name: 'filtered', configNames: ['retention.bytes', 'retention.ms', 'no.such.key'] }],
        includeSynonyms: true,
      });
      const entries = resources[0]!.configEntries;
      expect(entries.map((e) => e.configName).sort()).toEqual(['retention.bytes', 'retention.ms']);
      const synonyms = (name: string) => entries.find((e) => e.configName === name)!.configSynonyms.map((s) => [s.configName, s.configValue, s.configSource]);
      expect(synonyms('retention.bytes')).toEqual([
        ['retention.bytes', '4096', 1],
        ['log.retention.bytes', '-1', 5],
      ]);
      // As in Kafka: retention.ms has three broker keys behind it (ms, minutes, hours), and none is listed.
      expect(synonyms('retention.ms')).toEqual([]);
    });

    it('describes this broker\'s configs, read-only, by its id or the cluster default', async () => {
      const { resources } = await h.admin.describeConfigs({ resources: [{ type: BROKER, name: String(NODE_ID) }], includeSynonyms: false });
      const entries = resources[0]!.configEntries;
      const value = (name: string) => entries.find((e) => e.configName === name)?.configValue;
      expect(value('num.partitions')).toBe(String(DEFAULT_PARTITIONS));
      expect(value('auto.create.topics.enable')).toBe('false');
      expect(value('default.replication.factor')).toBe('1');
      expect(value('broker.id')).toBe(String(NODE_ID));
      // As in Kafka: the unset millisecond key is null, the hours key carries the built-in value.
      expect(value('log.retention.ms')).toBeNull();
      expect(value('log.retention.hours')).toBe('168');
      expect(value('message.max.bytes')).toBe(DEFAULT_MAX_MESSAGE_BYTES);
      expect(entries.every((e) => e.readOnly)).toBe(true);

      // kafkajs will not send the empty name (the cluster default); a raw request does.
      const clusterDefault = await h.request(ApiKey.DescribeConfigs, 4, {
        resources: [{ resourceType: BROKER, resourceName: '', configurationKeys: ['num.partitions'] }],
        includeSynonyms: false,
        includeDocumentation: false,
      });
      expect(clusterDefault.results[0].configs).toEqual([expect.objectContaining({ name: 'num.partitions', value: String(DEFAULT_PARTITIONS), readOnly: true })]);
      const other = await h.request(ApiKey.DescribeConfigs, 4, {
        resources: [{ resourceType: BROKER, resourceName: String(NODE_ID + 1), configurationKeys: null }],
        includeSynonyms: false,
        includeDocumentation: false,
      });
      expect(other.results[0].errorCode).toBe(ErrorCode.INVALID_REQUEST);
    });

    it('answers types and documentation from v3, IsDefault in v0', async () => {
      await createTopic('typed');
      const v4 = await h.request(ApiKey.DescribeConfigs, 4, {
        resources: [{ resourceType: TOPIC, resourceName: 'typed', configurationKeys: null }],
        includeSynonyms: false,
        includeDocumentation: true,
      });
      const configs = v4.results[0].configs;
      expect(configNamed(configs, 'retention.ms')).toMatchObject({ configType: 5, configSource: 5 });
      expect(configNamed(configs, 'max.message.bytes').configType).toBe(3);
      expect(configNamed(configs, 'message.timestamp.type').configType).toBe(2);
      expect(configNamed(configs, 'cleanup.policy').configType).toBe(7);
      expect(configNamed(configs, 'cleanup.policy').documentation).toMatch(/"compact" keeps the latest record per key/);
      expect(configNamed(configs, 'min.cleanable.dirty.ratio').configType).toBe(6);
      expect(configNamed(configs, 'min.insync.replicas').documentation).toMatch(/no effect here/);

      const v0 = await h.request(ApiKey.DescribeConfigs, 0, { resources: [{ resourceType: TOPIC, resourceName: 'typed', configurationKeys: ['retention.ms'] }] });
      expect(v0.results[0].configs).toEqual([expect.objectContaining({ name: 'retention.ms', value: DEFAULT_RETENTION_MS, isDefault: true })]);
    });

    it('answers UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist', async () => {
      expect(await failureTypes(h.admin.describeConfigs({ resources: [{ type: TOPIC, name: 'absent' }], includeSynonyms: false }))).toContain(
        'UNKNOWN_TOPIC_OR_PARTITION',
      );
    });
  });

  describe('AlterConfigs', () => {
    it('replaces the whole set: the keys given change, the others return to their defaults', async () => {
      await createTopic('replaced', [
        { name: 'max.message.bytes', value: '2048' },
        { name: 'retention.ms', value: '60000' },
      ]);
      await h.admin.alterConfigs({
        validateOnly: false,
        resources: [{ type: TOPIC, name: 'replaced', configEntries: [{ name: 'retention.ms', value: '1000' }, { name: 'message.timestamp.type', value: 'LogAppendTime' }] }],
      });
      const values = await describedValues('replaced');
      expect(values['retention.ms']).toBe('1000');
      expect(values['message.timestamp.type']).toBe('LogAppendTime');
      expect(values['max.message.bytes']).toBe(DEFAULT_MAX_MESSAGE_BYTES);
      expect((await h.broker.core.describeQueue({ name: 'replaced' }))?.config).toMatchObject({ retentionMs: 1000, timestampType: 'LogAppendTime', dedupWindowSeconds: 0 });
    });

    it('refuses unknown keys and bad values with INVALID_CONFIG naming the key, and changes nothing', async () => {
      await createTopic('guarded', [{ name: 'retention.ms', value: '60000' }]);
      const alter = (configEntries: { name: string; value: string }[]) =>
        h.admin.alterConfigs({ validateOnly: false, resources: [{ type: TOPIC, name: 'guarded', configEntries }] });
      expect(await failureTypes(alter([{ name: 'cleanup.policy', value: 'compact,shred' }]))).toContain('INVALID_CONFIG');
      expect(await failureTypes(alter([{ name: 'min.insync.replicas', value: '0' }]))).toContain('INVALID_CONFIG');
      expect(await failureTypes(alter([{ name: 'no.such.key', value: '2' }]))).toContain('INVALID_CONFIG');
      expect(await failureTypes(alter([{ name: 'message.timestamp.type', value: 'Sometime' }]))).toContain('INVALID_CONFIG');

      const { responses } = await h.request(ApiKey.AlterConfigs, 1, {
        resources: [
          { resourceType: TOPIC, resourceName: 'guarded', configs: [{ name: 'min.cleanable.dirty.ratio', value: '1.5' }] },
          { resourceType: TOPIC, resourceName: 'guarded-too', configs: [] },
        ],
        validateOnly: false,
      });
      expect(responses[0].errorCode).toBe(ErrorCode.INVALID_CONFIG);
      expect(responses[0].errorMessage).toMatch(/min.cleanable.dirty.ratio/);
      expect(responses[1].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      expect((await describedValues('guarded'))['retention.ms']).toBe('60000');
    });

    it('turns compaction on and off with cleanup.policy, driven by the compaction configs', async () => {
      await createTopic('becomes-compacted', [{ name: 'retention.ms', value: '60000' }]);
      const alter = (configEntries: { name: string; value: string }[]) =>
        h.admin.alterConfigs({ validateOnly: false, resources: [{ type: TOPIC, name: 'becomes-compacted', configEntries }] });
      await alter([
        { name: 'cleanup.policy', value: 'compact,delete' },
        { name: 'retention.ms', value: '60000' },
        { name: 'delete.retention.ms', value: '100' },
        { name: 'min.compaction.lag.ms', value: '5' },
        { name: 'segment.ms', value: '1000' },
      ]);
      expect((await describedValues('becomes-compacted'))['cleanup.policy']).toBe('compact,delete');
      expect((await h.broker.core.describeQueue({ name: 'becomes-compacted' }))?.config).toMatchObject({
        retentionMs: 60_000,
        compaction: { deleteRetentionMs: 100, minCompactionLagMs: 5, segmentMs: 1000, segmentBytes: 1073741824, minCleanableDirtyRatio: 0.5 },
      });
      await alter([{ name: 'cleanup.policy', value: 'compact' }]);
      expect((await h.broker.core.describeQueue({ name: 'becomes-compacted' }))?.config).toMatchObject({ retentionMs: -1, compaction: { deleteRetentionMs: 86_400_000 } });
      await alter([{ name: 'cleanup.policy', value: 'delete' }]);
      expect((await h.broker.core.describeQueue({ name: 'becomes-compacted' }))?.config).toMatchObject({ retentionMs: 604_800_000, compaction: null });
    });

    it('accepts cleanup.policy=delete; validateOnly changes nothing; broker configs cannot change', async () => {
      await createTopic('validated');
      await h.admin.alterConfigs({
        validateOnly: false,
        resources: [{ type: TOPIC, name: 'validated', configEntries: [{ name: 'cleanup.policy', value: 'delete' }, { name: 'retention.bytes', value: '100' }] }],
      });
      expect((await describedValues('validated'))['retention.bytes']).toBe('100');

      await h.admin.alterConfigs({ validateOnly: true, resources: [{ type: TOPIC, name: 'validated', configEntries: [{ name: 'retention.bytes', value: '999' }] }] });
      expect((await describedValues('validated'))['retention.bytes']).toBe('100');

      expect(
        await failureTypes(h.admin.alterConfigs({ validateOnly: false, resources: [{ type: BROKER, name: String(NODE_ID), configEntries: [{ name: 'num.partitions', value: '9' }] }] })),
      ).toContain('INVALID_REQUEST');
    });
  });

  describe('IncrementalAlterConfigs', () => {
    it('SET changes one key and leaves the others; DELETE returns a key to its default', async () => {
      await createTopic('stepwise', [{ name: 'retention.ms', value: '60000' }]);
      expect(await incremental([topicChange('stepwise', [{ name: 'retention.bytes', configOperation: SET, value: '5000' }])])).toEqual([
        expect.objectContaining({ errorCode: 0, resourceName: 'stepwise' }),
      ]);
      let values = await describedValues('stepwise');
      expect(values['retention.bytes']).toBe('5000');
      expect(values['retention.ms']).toBe('60000');

      await incremental([topicChange('stepwise', [{ name: 'retention.ms', configOperation: DELETE, value: null }])]);
      values = await describedValues('stepwise');
      expect(values['retention.ms']).toBe(DEFAULT_RETENTION_MS);
      expect(values['retention.bytes']).toBe('5000');
    });

    it('APPEND and SUBTRACT apply to list keys only: compact joins and leaves cleanup.policy', async () => {
      await createTopic('listed');
      const change = async (name: string, configOperation: number, value: string) =>
        (await incremental([topicChange('listed', [{ name, configOperation, value }])]))[0]!;
      const onLong = await change('retention.ms', APPEND, '5');
      expect(onLong.errorCode).toBe(ErrorCode.INVALID_CONFIG);
      expect(onLong.errorMessage).toContain('retention.ms');
      expect((await change('cleanup.policy', APPEND, 'compact')).errorCode).toBe(0);
      expect((await describedValues('listed'))['cleanup.policy']).toBe('delete,compact');
      expect((await h.broker.core.describeQueue({ name: 'listed' }))?.config.compaction).not.toBeNull();
      expect((await change('cleanup.policy', SUBTRACT, 'compact')).errorCode).toBe(0);
      expect((await describedValues('listed'))['cleanup.policy']).toBe('delete');
      expect((await h.broker.core.describeQueue({ name: 'listed' }))?.config.compaction).toBeNull();
    });

    it('refuses unknown keys, bad values, read-only keys and unknown topics; one bad change leaves the topic as it was', async () => {
      await createTopic('strict');
      const responses = await incremental([
        topicChange('strict', [
          { name: 'retention.ms', configOperation: SET, value: '1000' },
          { name: 'segment.ms', configOperation: SET, value: '0' },
        ]),
        topicChange('absent', [{ name: 'retention.ms', configOperation: SET, value: '1' }]),
      ]);
      expect(responses[0]).toMatchObject({ errorCode: ErrorCode.INVALID_CONFIG });
      expect(responses[0]!.errorMessage).toContain('segment.ms');
      expect(responses[1]!.errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      expect((await describedValues('strict'))['retention.ms']).toBe(DEFAULT_RETENTION_MS);

      const [badValue] = await incremental([topicChange('strict', [{ name: 'max.message.bytes', configOperation: SET, value: 'large' }])]);
      expect(badValue!.errorCode).toBe(ErrorCode.INVALID_CONFIG);
      expect(badValue!.errorMessage).toContain('max.message.bytes');

      const [readOnly] = await incremental([topicChange('strict', [{ name: 'queen.dedup.window.seconds', configOperation: SET, value: '60' }])]);
      expect(readOnly!.errorCode).toBe(ErrorCode.INVALID_CONFIG);
      expect((await h.broker.core.describeQueue({ name: 'strict' }))?.config.dedupWindowSeconds).toBe(0);
    });

    it('keeps keys that have no effect here, with their sources, and an empty cleanup.policy turns deletion off', async () => {
      await createTopic('inert', [{ name: 'retention.ms', value: '60000' }, { name: 'min.insync.replicas', value: '2' }]);
      await incremental([topicChange('inert', [
        { name: 'segment.ms', configOperation: SET, value: ' 1000 ' },
        { name: 'unclean.leader.election.enable', configOperation: SET, value: 'TRUE' },
        { name: 'cleanup.policy', configOperation: 3 /* SUBTRACT */, value: 'delete' },
      ])]);
      const { resources } = await h.admin.describeConfigs({ resources: [{ type: TOPIC, name: 'inert' }], includeSynonyms: false });
      const entry = (name: string) => resources[0]!.configEntries.find((e) => e.configName === name);
      expect(entry('segment.ms')).toMatchObject({ configValue: '1000', configSource: 1 });
      expect(entry('unclean.leader.election.enable')).toMatchObject({ configValue: 'true', configSource: 1 });
      expect(entry('min.insync.replicas')).toMatchObject({ configValue: '2', configSource: 1 });
      expect(entry('cleanup.policy')).toMatchObject({ configValue: '', configSource: 1 });
      // retention.ms still reads as set, but with nothing to delete by, the queue keeps everything.
      expect(entry('retention.ms')).toMatchObject({ configValue: '60000', configSource: 1 });
      expect((await h.broker.core.describeQueue({ name: 'inert' }))?.config).toMatchObject({ retentionMs: -1, retentionBytes: -1 });

      await incremental([topicChange('inert', [{ name: 'cleanup.policy', configOperation: DELETE, value: null }])]);
      expect((await h.broker.core.describeQueue({ name: 'inert' }))?.config).toMatchObject({ retentionMs: 60000, retentionBytes: -1 });

      // Changed natively (Queen's HTTP API alters the same setting): Kafka sees the new value, as set on the topic.
      await h.broker.core.alterQueue({ name: 'inert', config: { retentionBytes: 5000 } });
      expect((await describedValues('inert'))['retention.bytes']).toBe('5000');
    });

    it('takes effect for producers: a lowered max.message.bytes refuses a larger batch with MESSAGE_TOO_LARGE', async () => {
      await h.admin.createTopics({ topics: [{ topic: 'capped', numPartitions: 1 }] });
      const producer = h.kafka.producer({ retry: { retries: 0 } });
      await producer.connect();
      try {
        await producer.send({ topic: 'capped', messages: [{ value: 'x'.repeat(1000) }] });
        await incremental([topicChange('capped', [{ name: 'max.message.bytes', configOperation: SET, value: '200' }])]);
        expect(await failureTypes(producer.send({ topic: 'capped', messages: [{ value: 'x'.repeat(1000) }] }))).toContain('MESSAGE_TOO_LARGE');
        await producer.send({ topic: 'capped', messages: [{ value: 'small' }] });
      } finally {
        await producer.disconnect();
      }
      expect((await h.admin.fetchTopicOffsets('capped'))[0]!.high).toBe('2');
    });

    it('validateOnly checks and changes nothing (v0 as well)', async () => {
      await createTopic('dry');
      const { responses } = await h.request(ApiKey.IncrementalAlterConfigs, 0, {
        resources: [topicChange('dry', [{ name: 'message.timestamp.type', configOperation: SET, value: 'LogAppendTime' }])],
        validateOnly: true,
      });
      expect(responses[0].errorCode).toBe(0);
      expect((await describedValues('dry'))['message.timestamp.type']).toBe('CreateTime');
    });
  });
});

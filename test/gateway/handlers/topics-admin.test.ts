/**
 * The topic and admin handlers called in process (./in-process.ts): what a
 * Kafka admin client reads back at the oldest and newest version served, and
 * the error codes it meets for bad topics, partitions, configs and resources.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { parseVersions } from '../../../protocol/schema/definition.js';
import { handlers } from '../../../src/gateway/handlers/index.js';
import { InProcessGateway, named, UnservedRequest, versionEnds } from './in-process.js';

const NODE_ID = 3;
const ADVERTISED = { nodeId: NODE_ID, host: 'gateway.test', port: 19092, rack: null };
const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
/** Kafka's ConfigSource values the answers carry. */
const DYNAMIC_TOPIC_CONFIG = 1;
const DEFAULT_CONFIG = 5;
const TOPIC = 2;
const BROKER = 4;
const SET = 0;
const DELETE = 1;
const APPEND = 2;

let gw: InProcessGateway;

beforeAll(async () => {
  gw = await InProcessGateway.open({ settings: { advertised: ADVERTISED, clusterId: 'admin-cluster', defaultPartitions: 2 } });
});
afterAll(() => gw.close());

async function createTopic(name: string, partitions: number, configs: { name: string; value: string | null }[] = []): Promise<Message> {
  const response = await gw.answer(ApiKey.CreateTopics, 7, { topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs }] });
  expect(named(response.topics[0].errorCode)).toBe('NONE');
  return response.topics[0];
}

/** The topic as Metadata v12 answers it, without creating it. */
async function metadataOf(name: string): Promise<Message> {
  const response = await gw.answer(ApiKey.Metadata, 12, { topics: [{ name, topicId: ZERO_UUID }], allowAutoTopicCreation: false });
  return response.topics[0];
}

async function topicConfig(name: string, key: string): Promise<Message> {
  const response = await gw.answer(ApiKey.DescribeConfigs, 4, { resources: [{ resourceType: TOPIC, resourceName: name, configurationKeys: [key] }] });
  expect(named(response.results[0].errorCode)).toBe('NONE');
  return response.results[0].configs[0];
}

describe('ApiVersions', () => {
  it.each(versionEnds(ApiKey.ApiVersions))('v%i lists every handler with the versions it declares', async (version) => {
    const response = await gw.answer(ApiKey.ApiVersions, version, { clientSoftwareName: 'in-process', clientSoftwareVersion: '1' });
    expect(named(response.errorCode)).toBe('NONE');
    const listed = new Map(response.apiKeys.map((a: Message) => [a.apiKey, [a.minVersion, a.maxVersion]]));
    expect(listed.size).toBe(handlers.length);
    for (const handler of handlers) {
      const span = parseVersions(handler.versions)!;
      expect(listed.get(handler.api.apiKey), handler.api.name).toEqual([span.min, span.max]);
    }
  });

  it('answers INVALID_REQUEST, listing nothing, for a client software name or version Kafka\'s pattern refuses (v3+)', async () => {
    for (const [clientSoftwareName, clientSoftwareVersion] of [['my client', '1.0'], ['@scope/client', '1.0'], ['client', '1.0-'], ['', '1']]) {
      const response = await gw.answer(ApiKey.ApiVersions, 3, { clientSoftwareName, clientSoftwareVersion });
      expect([named(response.errorCode), response.apiKeys], `${clientSoftwareName} ${clientSoftwareVersion}`).toEqual(['INVALID_REQUEST', []]);
    }
    const fine = await gw.answer(ApiKey.ApiVersions, 4, { clientSoftwareName: 'apache-kafka-java', clientSoftwareVersion: '3.9.0' });
    expect(named(fine.errorCode)).toBe('NONE');
  });

  it('serves no handler outside its advertised range', async () => {
    for (const handler of handlers) {
      const { min, max } = gw.versionsOf(handler.api.apiKey);
      await expect(gw.call(handler.api.apiKey, max + 1, {}), `${handler.api.name} v${max + 1}`).rejects.toThrow(UnservedRequest);
      if (min > 0) await expect(gw.call(handler.api.apiKey, min - 1, {}), `${handler.api.name} v${min - 1}`).rejects.toThrow(UnservedRequest);
    }
  });
});

describe('Metadata', () => {
  it.each(versionEnds(ApiKey.Metadata))('v%i describes a topic: its partitions led by this gateway, the broker at its advertised address', async (version) => {
    const name = `md-v${version}`;
    await gw.core.createQueue({ name, partitions: 3, config: { dedupWindowSeconds: 0 } });
    const response = await gw.answer(ApiKey.Metadata, version, { topics: [{ name, topicId: ZERO_UUID }] });
    expect(response.brokers).toEqual([expect.objectContaining({ nodeId: NODE_ID, host: 'gateway.test', port: 19092 })]);
    const [topic] = response.topics;
    expect(named(topic.errorCode)).toBe('NONE');
    expect(topic.name).toBe(name);
    expect(topic.partitions.map((p: Message) => [p.partitionIndex, p.leaderId, p.replicaNodes, p.isrNodes])).toEqual([
      [0, NODE_ID, [NODE_ID], [NODE_ID]],
      [1, NODE_ID, [NODE_ID], [NODE_ID]],
      [2, NODE_ID, [NODE_ID], [NODE_ID]],
    ]);
    if (version >= 2) expect(response.clusterId).toBe('admin-cluster');
    if (version >= 10) expect(topic.topicId).not.toBe(ZERO_UUID);
  });

  it.each(versionEnds(ApiKey.Metadata))('v%i auto-creates an unknown topic with the default partition count', async (version) => {
    const name = `md-auto-v${version}`;
    const response = await gw.answer(ApiKey.Metadata, version, { topics: [{ name, topicId: ZERO_UUID }] });
    expect(named(response.topics[0].errorCode)).toBe('NONE');
    expect(response.topics[0].partitions).toHaveLength(2);
    expect((await gw.core.describeQueue({ name }))?.partitions).toHaveLength(2);
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION and creates nothing when the request forbids auto-creation (v4+)', async () => {
    const topic = await metadataOf('md-not-created');
    expect(named(topic.errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(topic.partitions).toEqual([]);
    expect(await gw.core.describeQueue({ name: 'md-not-created' })).toBeNull();
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION when the gateway does not auto-create, whatever the request allows', async () => {
    const strict = await InProcessGateway.open({ settings: { autoCreateTopics: false } });
    try {
      for (const version of versionEnds(ApiKey.Metadata)) {
        const response = await strict.answer(ApiKey.Metadata, version, { topics: [{ name: 'wanted', topicId: ZERO_UUID }], allowAutoTopicCreation: true });
        expect(named(response.topics[0].errorCode), `v${version}`).toBe('UNKNOWN_TOPIC_OR_PARTITION');
      }
      expect(await strict.core.describeQueue({ name: 'wanted' })).toBeNull();
    } finally {
      await strict.close();
    }
  });

  it('answers INVALID_TOPIC_EXCEPTION for a name Kafka forbids, and never creates it', async () => {
    for (const version of versionEnds(ApiKey.Metadata)) {
      const response = await gw.answer(ApiKey.Metadata, version, { topics: [{ name: 'no spaces!', topicId: ZERO_UUID }] });
      expect(named(response.topics[0].errorCode), `v${version}`).toBe('INVALID_TOPIC_EXCEPTION');
    }
    expect((await gw.core.listQueues()).map((q) => q.name)).not.toContain('no spaces!');
  });

  it('answers UNKNOWN_TOPIC_ID for an id no topic has (v10+), with a null name at v12', async () => {
    const unknownId = '0f0e0d0c-0b0a-4908-8706-050403020100';
    const response = await gw.answer(ApiKey.Metadata, 12, { topics: [{ name: null, topicId: unknownId }] });
    expect(named(response.topics[0].errorCode)).toBe('UNKNOWN_TOPIC_ID');
    expect(response.topics[0].name).toBeNull();
  });

  it('finds a topic by its id (v10+)', async () => {
    await createTopic('md-by-id', 1);
    const id = (await metadataOf('md-by-id')).topicId;
    const response = await gw.answer(ApiKey.Metadata, 12, { topics: [{ name: null, topicId: id }] });
    expect(named(response.topics[0].errorCode)).toBe('NONE');
    expect(response.topics[0].name).toBe('md-by-id');
  });

  it('lists every topic for null topics (v1+) and for an empty list at v0', async () => {
    await createTopic('md-listed', 1);
    const v0 = await gw.answer(ApiKey.Metadata, 0, { topics: [] });
    const v12 = await gw.answer(ApiKey.Metadata, 12, { topics: null });
    expect(v0.topics.map((t: Message) => t.name)).toContain('md-listed');
    expect(v12.topics.map((t: Message) => t.name)).toContain('md-listed');
    // From v1 an empty list asks for no topic at all.
    expect((await gw.answer(ApiKey.Metadata, 12, { topics: [] })).topics).toEqual([]);
  });
});

describe('CreateTopics', () => {
  it.each(versionEnds(ApiKey.CreateTopics))('v%i creates a topic with the partitions asked for', async (version) => {
    const name = `ct-v${version}`;
    const response = await gw.answer(ApiKey.CreateTopics, version, {
      topics: [{ name, numPartitions: 4, replicationFactor: 1, assignments: [], configs: [{ name: 'retention.ms', value: '60000' }] }],
    });
    const [topic] = response.topics;
    expect(topic.name).toBe(name);
    expect(named(topic.errorCode)).toBe('NONE');
    if (version >= 5) {
      expect(topic.numPartitions).toBe(4);
      expect(topic.replicationFactor).toBe(1);
      expect(topic.configs.find((c: Message) => c.name === 'retention.ms')?.value).toBe('60000');
    }
    if (version >= 7) expect(topic.topicId).toBe((await metadataOf(name)).topicId);
    expect((await metadataOf(name)).partitions).toHaveLength(4);
    expect((await topicConfig(name, 'retention.ms')).value).toBe('60000');
  });

  it('takes -1 partitions as the gateway default', async () => {
    await gw.answer(ApiKey.CreateTopics, 7, { topics: [{ name: 'ct-default', numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] }] });
    expect((await metadataOf('ct-default')).partitions).toHaveLength(2);
  });

  it.each(versionEnds(ApiKey.CreateTopics))('v%i answers each refused topic with Kafka\'s code and creates none of them', async (version) => {
    await createTopic(`ct-exists-v${version}`, 1);
    const topic = (name: string, more: Partial<Message> = {}) => ({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [], ...more });
    const refused: [Message, string][] = [
      [topic(`ct-exists-v${version}`), 'TOPIC_ALREADY_EXISTS'],
      [topic(`ct-zero-v${version}`, { numPartitions: 0 }), 'INVALID_PARTITIONS'],
      [topic(`ct-rf-v${version}`, { replicationFactor: 0 }), 'INVALID_REPLICATION_FACTOR'],
      [topic(`ct-key-v${version}`, { configs: [{ name: 'no.such.config', value: '1' }] }), 'INVALID_CONFIG'],
      [topic(`ct-value-v${version}`, { configs: [{ name: 'retention.ms', value: 'soon' }] }), 'INVALID_CONFIG'],
      [topic(`ct-policy-v${version}`, { configs: [{ name: 'cleanup.policy', value: 'shred' }] }), 'INVALID_CONFIG'],
      [topic('bad name'), 'INVALID_TOPIC_EXCEPTION'],
      [topic(`ct-broker-v${version}`, { numPartitions: -1, replicationFactor: -1, assignments: [{ partitionIndex: 0, brokerIds: [NODE_ID + 1] }] }), 'INVALID_REPLICA_ASSIGNMENT'],
      [topic(`ct-both-v${version}`, { numPartitions: 1, assignments: [{ partitionIndex: 0, brokerIds: [NODE_ID] }] }), 'INVALID_REQUEST'],
    ];
    const response = await gw.answer(ApiKey.CreateTopics, version, { topics: refused.map(([t]) => t) });
    expect(response.topics.map((t: Message) => [t.name, named(t.errorCode)])).toEqual(refused.map(([t, code]) => [t.name, code]));
    if (version >= 1) expect(response.topics.every((t: Message) => typeof t.errorMessage === 'string' && t.errorMessage.length > 0)).toBe(true);
    const names = new Set((await gw.core.listQueues()).map((q) => q.name));
    for (const [t] of refused.slice(1)) expect(names.has(t.name), t.name).toBe(false);
  });

  it('answers a name given twice once, with INVALID_REQUEST, and creates nothing', async () => {
    const twice = { name: 'ct-twice', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] };
    const response = await gw.answer(ApiKey.CreateTopics, 7, { topics: [twice, twice] });
    expect(response.topics.map((t: Message) => [t.name, named(t.errorCode)])).toEqual([['ct-twice', 'INVALID_REQUEST']]);
    expect(await gw.core.describeQueue({ name: 'ct-twice' })).toBeNull();
  });

  it('takes a manual assignment naming this gateway alone', async () => {
    const assignments = [0, 1, 2].map((partitionIndex) => ({ partitionIndex, brokerIds: [NODE_ID] }));
    const response = await gw.answer(ApiKey.CreateTopics, 7, { topics: [{ name: 'ct-assigned', numPartitions: -1, replicationFactor: -1, assignments, configs: [] }] });
    expect(named(response.topics[0].errorCode)).toBe('NONE');
    expect((await metadataOf('ct-assigned')).partitions).toHaveLength(3);
  });

  it('validates only (v1+): answers as if created, creates nothing', async () => {
    const response = await gw.answer(ApiKey.CreateTopics, 7, {
      topics: [{ name: 'ct-validate', numPartitions: 5, replicationFactor: 1, assignments: [], configs: [] }],
      validateOnly: true,
    });
    expect(named(response.topics[0].errorCode)).toBe('NONE');
    expect(response.topics[0].numPartitions).toBe(5);
    expect(await gw.core.describeQueue({ name: 'ct-validate' })).toBeNull();
  });
});

describe('CreatePartitions', () => {
  it.each(versionEnds(ApiKey.CreatePartitions))('v%i adds partitions to a topic', async (version) => {
    const name = `cp-v${version}`;
    await createTopic(name, 1);
    const response = await gw.answer(ApiKey.CreatePartitions, version, { topics: [{ name, count: 3, assignments: null }], timeoutMs: 1000, validateOnly: false });
    expect(response.results.map((r: Message) => [r.name, named(r.errorCode)])).toEqual([[name, 'NONE']]);
    expect((await metadataOf(name)).partitions.map((p: Message) => p.partitionIndex)).toEqual([0, 1, 2]);
  });

  it.each(versionEnds(ApiKey.CreatePartitions))('v%i refuses unknown topics, counts that do not grow and assignments that cannot be met', async (version) => {
    const name = `cp-refused-v${version}`;
    await createTopic(name, 2);
    const other = `cp-refused-other-v${version}`;
    await createTopic(other, 1);
    const response = await gw.answer(ApiKey.CreatePartitions, version, {
      topics: [
        { name: `cp-missing-v${version}`, count: 2, assignments: null },
        { name, count: 2, assignments: null },
        { name: other, count: 3, assignments: [{ brokerIds: [NODE_ID] }] },
      ],
      timeoutMs: 1000,
      validateOnly: false,
    });
    expect(response.results.map((r: Message) => named(r.errorCode))).toEqual(['UNKNOWN_TOPIC_OR_PARTITION', 'INVALID_PARTITIONS', 'INVALID_REPLICA_ASSIGNMENT']);
    expect((await metadataOf(name)).partitions).toHaveLength(2);
    expect((await metadataOf(other)).partitions).toHaveLength(1);
  });

  it('refuses a shrink, and a topic named twice (INVALID_REQUEST for each entry)', async () => {
    await createTopic('cp-shrink', 3);
    const shrink = await gw.answer(ApiKey.CreatePartitions, 3, { topics: [{ name: 'cp-shrink', count: 1, assignments: null }], timeoutMs: 1000, validateOnly: false });
    expect(named(shrink.results[0].errorCode)).toBe('INVALID_PARTITIONS');
    const twice = await gw.answer(ApiKey.CreatePartitions, 3, {
      topics: [{ name: 'cp-shrink', count: 4, assignments: null }, { name: 'cp-shrink', count: 5, assignments: null }],
      timeoutMs: 1000,
      validateOnly: false,
    });
    expect(twice.results.map((r: Message) => named(r.errorCode))).toEqual(['INVALID_REQUEST', 'INVALID_REQUEST']);
    expect((await metadataOf('cp-shrink')).partitions).toHaveLength(3);
  });

  it('validates only: answers NONE and adds nothing', async () => {
    await createTopic('cp-validate', 1);
    const response = await gw.answer(ApiKey.CreatePartitions, 3, { topics: [{ name: 'cp-validate', count: 4, assignments: null }], timeoutMs: 1000, validateOnly: true });
    expect(named(response.results[0].errorCode)).toBe('NONE');
    expect((await metadataOf('cp-validate')).partitions).toHaveLength(1);
  });
});

describe('DeleteTopics', () => {
  it.each(versionEnds(ApiKey.DeleteTopics))('v%i deletes a topic by name', async (version) => {
    const name = `dt-v${version}`;
    await createTopic(name, 1);
    const request = version >= 6 ? { topics: [{ name, topicId: ZERO_UUID }], timeoutMs: 1000 } : { topicNames: [name], timeoutMs: 1000 };
    const response = await gw.answer(ApiKey.DeleteTopics, version, request);
    expect(response.responses.map((r: Message) => [r.name, named(r.errorCode)])).toEqual([[name, 'NONE']]);
    expect(named((await metadataOf(name)).errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
  });

  it('deletes a topic by id (v6), and answers the id', async () => {
    const created = await createTopic('dt-by-id', 1);
    const response = await gw.answer(ApiKey.DeleteTopics, 6, { topics: [{ name: null, topicId: created.topicId }], timeoutMs: 1000 });
    expect(response.responses.map((r: Message) => [r.name, r.topicId, named(r.errorCode)])).toEqual([['dt-by-id', created.topicId, 'NONE']]);
    expect(await gw.core.describeQueue({ name: 'dt-by-id' })).toBeNull();
  });

  it.each(versionEnds(ApiKey.DeleteTopics))('v%i answers UNKNOWN_TOPIC_OR_PARTITION for a topic that does not exist', async (version) => {
    const request = version >= 6 ? { topics: [{ name: 'dt-missing', topicId: ZERO_UUID }], timeoutMs: 1000 } : { topicNames: ['dt-missing'], timeoutMs: 1000 };
    const response = await gw.answer(ApiKey.DeleteTopics, version, request);
    expect(named(response.responses[0].errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
  });

  it('answers UNKNOWN_TOPIC_ID for an unknown id and INVALID_REQUEST for a name and an id together (v6)', async () => {
    const created = await createTopic('dt-both', 1);
    const response = await gw.answer(ApiKey.DeleteTopics, 6, {
      topics: [
        { name: null, topicId: '0f0e0d0c-0b0a-4908-8706-050403020100' },
        { name: 'dt-both', topicId: created.topicId },
      ],
      timeoutMs: 1000,
    });
    expect(response.responses.map((r: Message) => named(r.errorCode))).toEqual(['UNKNOWN_TOPIC_ID', 'INVALID_REQUEST']);
    expect(await gw.core.describeQueue({ name: 'dt-both' })).not.toBeNull();
  });
});

describe('DescribeCluster', () => {
  it.each(versionEnds(ApiKey.DescribeCluster))('v%i names this gateway as the one broker and the controller', async (version) => {
    const response = await gw.answer(ApiKey.DescribeCluster, version, { includeClusterAuthorizedOperations: false, endpointType: 1 });
    expect(named(response.errorCode)).toBe('NONE');
    expect(response.clusterId).toBe('admin-cluster');
    expect(response.controllerId).toBe(NODE_ID);
    expect(response.brokers).toEqual([{ brokerId: NODE_ID, host: 'gateway.test', port: 19092, rack: null }]);
  });

  it('answers MISMATCHED_ENDPOINT_TYPE for controller endpoints and UNSUPPORTED_ENDPOINT_TYPE for a type Kafka lacks (v1)', async () => {
    const controllers = await gw.answer(ApiKey.DescribeCluster, 1, { includeClusterAuthorizedOperations: false, endpointType: 2 });
    expect(named(controllers.errorCode)).toBe('MISMATCHED_ENDPOINT_TYPE');
    expect(controllers.brokers).toEqual([]);
    const unknown = await gw.answer(ApiKey.DescribeCluster, 1, { includeClusterAuthorizedOperations: false, endpointType: 7 });
    expect(named(unknown.errorCode)).toBe('UNSUPPORTED_ENDPOINT_TYPE');
  });
});

describe('DescribeConfigs', () => {
  it.each(versionEnds(ApiKey.DescribeConfigs))('v%i describes a topic\'s configs: defaults and values set on the topic', async (version) => {
    const name = `dc-v${version}`;
    await createTopic(name, 1, [{ name: 'retention.ms', value: '1000' }]);
    const response = await gw.answer(ApiKey.DescribeConfigs, version, {
      resources: [{ resourceType: TOPIC, resourceName: name, configurationKeys: ['retention.ms', 'retention.bytes', 'no.such.key'] }],
    });
    const [result] = response.results;
    expect(named(result.errorCode)).toBe('NONE');
    const byName = new Map(result.configs.map((c: Message) => [c.name, c]));
    expect([...byName.keys()].sort()).toEqual(['retention.bytes', 'retention.ms']);
    expect(byName.get('retention.ms')).toMatchObject({ value: '1000', readOnly: false });
    expect(byName.get('retention.bytes')).toMatchObject({ value: '-1' });
    if (version === 0) {
      expect(byName.get('retention.ms')).toMatchObject({ isDefault: false });
      expect(byName.get('retention.bytes')).toMatchObject({ isDefault: true });
    } else {
      expect(byName.get('retention.ms')).toMatchObject({ configSource: DYNAMIC_TOPIC_CONFIG });
      expect(byName.get('retention.bytes')).toMatchObject({ configSource: DEFAULT_CONFIG });
    }
  });

  it.each(versionEnds(ApiKey.DescribeConfigs))('v%i describes this broker by "" and by its node id', async (version) => {
    const response = await gw.answer(ApiKey.DescribeConfigs, version, {
      resources: [
        { resourceType: BROKER, resourceName: '', configurationKeys: ['num.partitions'] },
        { resourceType: BROKER, resourceName: String(NODE_ID), configurationKeys: ['broker.id'] },
      ],
    });
    expect(response.results.map((r: Message) => [named(r.errorCode), r.configs.map((c: Message) => [c.name, c.value])])).toEqual([
      ['NONE', [['num.partitions', '2']]],
      ['NONE', [['broker.id', String(NODE_ID)]]],
    ]);
  });

  it.each(versionEnds(ApiKey.DescribeConfigs))('v%i refuses unknown topics, bad names, other brokers and other resource types', async (version) => {
    const response = await gw.answer(ApiKey.DescribeConfigs, version, {
      resources: [
        { resourceType: TOPIC, resourceName: 'dc-missing', configurationKeys: null },
        { resourceType: TOPIC, resourceName: 'bad name', configurationKeys: null },
        { resourceType: BROKER, resourceName: String(NODE_ID + 1), configurationKeys: null },
        { resourceType: 99, resourceName: 'x', configurationKeys: null },
      ],
    });
    expect(response.results.map((r: Message) => named(r.errorCode))).toEqual(['UNKNOWN_TOPIC_OR_PARTITION', 'INVALID_TOPIC_EXCEPTION', 'INVALID_REQUEST', 'INVALID_REQUEST']);
    expect(response.results.every((r: Message) => r.configs.length === 0)).toBe(true);
  });
});

describe('AlterConfigs', () => {
  it.each(versionEnds(ApiKey.AlterConfigs))('v%i replaces a topic\'s configs wholesale: keys left out return to their defaults', async (version) => {
    const name = `ac-v${version}`;
    await createTopic(name, 1, [{ name: 'retention.bytes', value: '4096' }]);
    const response = await gw.answer(ApiKey.AlterConfigs, version, {
      resources: [{ resourceType: TOPIC, resourceName: name, configs: [{ name: 'retention.ms', value: '5000' }] }],
      validateOnly: false,
    });
    expect(response.responses.map((r: Message) => [r.resourceName, named(r.errorCode)])).toEqual([[name, 'NONE']]);
    expect((await topicConfig(name, 'retention.ms')).value).toBe('5000');
    expect(await topicConfig(name, 'retention.bytes')).toMatchObject({ value: '-1', configSource: DEFAULT_CONFIG });
  });

  it.each(versionEnds(ApiKey.AlterConfigs))('v%i refuses bad keys, values, topics and resources, and changes nothing', async (version) => {
    const name = `ac-refused-v${version}`;
    await createTopic(name, 1, [{ name: 'retention.ms', value: '1000' }]);
    const resource = (resourceName: string, configs: Message[], resourceType = TOPIC) => ({ resourceType, resourceName, configs });
    const response = await gw.answer(ApiKey.AlterConfigs, version, {
      resources: [
        resource(name, [{ name: 'no.such.config', value: '1' }]),
        resource('ac-missing', [{ name: 'retention.ms', value: '1' }]),
        resource('bad name', [{ name: 'retention.ms', value: '1' }]),
        resource('', [{ name: 'num.partitions', value: '5' }], BROKER),
      ],
      validateOnly: false,
    });
    expect(response.responses.map((r: Message) => named(r.errorCode))).toEqual(['INVALID_CONFIG', 'UNKNOWN_TOPIC_OR_PARTITION', 'INVALID_TOPIC_EXCEPTION', 'INVALID_REQUEST']);
    const nulls = await gw.answer(ApiKey.AlterConfigs, version, { resources: [resource(name, [{ name: 'retention.ms', value: null }])], validateOnly: false });
    expect(named(nulls.responses[0].errorCode)).toBe('INVALID_REQUEST');
    expect((await topicConfig(name, 'retention.ms')).value).toBe('1000');
  });

  it('validates only: answers NONE and changes nothing', async () => {
    await createTopic('ac-validate', 1);
    const response = await gw.answer(ApiKey.AlterConfigs, 2, {
      resources: [{ resourceType: TOPIC, resourceName: 'ac-validate', configs: [{ name: 'retention.ms', value: '5000' }] }],
      validateOnly: true,
    });
    expect(named(response.responses[0].errorCode)).toBe('NONE');
    expect(await topicConfig('ac-validate', 'retention.ms')).toMatchObject({ configSource: DEFAULT_CONFIG });
  });
});

describe('IncrementalAlterConfigs', () => {
  it.each(versionEnds(ApiKey.IncrementalAlterConfigs))('v%i sets one key and deletes it back to its default, leaving the others', async (version) => {
    const name = `iac-v${version}`;
    await createTopic(name, 1, [{ name: 'retention.bytes', value: '4096' }]);
    const change = (configs: Message[]) =>
      gw.answer(ApiKey.IncrementalAlterConfigs, version, { resources: [{ resourceType: TOPIC, resourceName: name, configs }], validateOnly: false });
    expect(named((await change([{ name: 'retention.ms', configOperation: SET, value: '7000' }])).responses[0].errorCode)).toBe('NONE');
    expect((await topicConfig(name, 'retention.ms')).value).toBe('7000');
    expect((await topicConfig(name, 'retention.bytes')).value).toBe('4096');
    expect(named((await change([{ name: 'retention.ms', configOperation: DELETE, value: null }])).responses[0].errorCode)).toBe('NONE');
    expect(await topicConfig(name, 'retention.ms')).toMatchObject({ value: '604800000', configSource: DEFAULT_CONFIG });
    expect((await topicConfig(name, 'retention.bytes')).value).toBe('4096');
  });

  it.each(versionEnds(ApiKey.IncrementalAlterConfigs))('v%i refuses APPEND to a non-list key, an unknown cleanup policy, an unknown operation and an unknown topic; APPEND of compact makes the policy a list', async (version) => {
    const name = `iac-refused-v${version}`;
    await createTopic(name, 1);
    const response = await gw.answer(ApiKey.IncrementalAlterConfigs, version, {
      resources: [
        { resourceType: TOPIC, resourceName: name, configs: [{ name: 'retention.ms', configOperation: APPEND, value: '1' }] },
        { resourceType: TOPIC, resourceName: 'iac-missing', configs: [{ name: 'retention.ms', configOperation: SET, value: '1' }] },
      ],
      validateOnly: false,
    });
    expect(response.responses.map((r: Message) => named(r.errorCode))).toEqual(['INVALID_CONFIG', 'UNKNOWN_TOPIC_OR_PARTITION']);
    const unknownPolicy = await gw.answer(ApiKey.IncrementalAlterConfigs, version, {
      resources: [{ resourceType: TOPIC, resourceName: name, configs: [{ name: 'cleanup.policy', configOperation: APPEND, value: 'shred' }] }],
      validateOnly: false,
    });
    expect(named(unknownPolicy.responses[0].errorCode)).toBe('INVALID_CONFIG');
    const unknownOperation = await gw.answer(ApiKey.IncrementalAlterConfigs, version, {
      resources: [{ resourceType: TOPIC, resourceName: name, configs: [{ name: 'retention.ms', configOperation: 9, value: '1' }] }],
      validateOnly: false,
    });
    expect(named(unknownOperation.responses[0].errorCode)).toBe('INVALID_REQUEST');
    expect(await topicConfig(name, 'cleanup.policy')).toMatchObject({ value: 'delete', configSource: DEFAULT_CONFIG });
    const compact = await gw.answer(ApiKey.IncrementalAlterConfigs, version, {
      resources: [{ resourceType: TOPIC, resourceName: name, configs: [{ name: 'cleanup.policy', configOperation: APPEND, value: 'compact' }] }],
      validateOnly: false,
    });
    expect(named(compact.responses[0].errorCode)).toBe('NONE');
    expect(await topicConfig(name, 'cleanup.policy')).toMatchObject({ value: 'delete,compact' });
  });
});

describe('AlterPartitionReassignments and ListPartitionReassignments', () => {
  it('answers a move to where a partition already is as done, and refuses what cannot be met', async () => {
    await createTopic('apr', 2);
    const response = await gw.answer(ApiKey.AlterPartitionReassignments, 0, {
      timeoutMs: 1000,
      topics: [
        {
          name: 'apr',
          partitions: [
            { partitionIndex: 0, replicas: [NODE_ID] },
            { partitionIndex: 1, replicas: [NODE_ID, NODE_ID + 1] },
            { partitionIndex: 1, replicas: null },
            { partitionIndex: 7, replicas: [NODE_ID] },
          ],
        },
        { name: 'apr-missing', partitions: [{ partitionIndex: 0, replicas: [NODE_ID] }] },
      ],
    });
    expect(named(response.errorCode)).toBe('NONE');
    expect(response.responses.map((t: Message) => [t.name, t.partitions.map((p: Message) => named(p.errorCode))])).toEqual([
      ['apr', ['NONE', 'INVALID_REPLICA_ASSIGNMENT', 'NO_REASSIGNMENT_IN_PROGRESS', 'UNKNOWN_TOPIC_OR_PARTITION']],
      ['apr-missing', ['UNKNOWN_TOPIC_OR_PARTITION']],
    ]);
  });

  it('lists no reassignment in progress, for every topic and for named ones', async () => {
    const every = await gw.answer(ApiKey.ListPartitionReassignments, 0, { timeoutMs: 1000, topics: null });
    const named_ = await gw.answer(ApiKey.ListPartitionReassignments, 0, { timeoutMs: 1000, topics: [{ name: 'apr', partitionIndexes: [0, 1] }] });
    for (const response of [every, named_]) {
      expect(named(response.errorCode)).toBe('NONE');
      expect(response.topics).toEqual([]);
    }
  });
});

describe('DescribeTopicPartitions', () => {
  it('pages a topic\'s partitions by the response limit and the cursor', async () => {
    await createTopic('dtp-a', 3);
    await createTopic('dtp-b', 1);
    const first = await gw.answer(ApiKey.DescribeTopicPartitions, 0, { topics: [{ name: 'dtp-a' }, { name: 'dtp-b' }], responsePartitionLimit: 2, cursor: null });
    expect(first.topics.map((t: Message) => [t.name, named(t.errorCode), t.partitions.map((p: Message) => p.partitionIndex)])).toEqual([['dtp-a', 'NONE', [0, 1]]]);
    expect(first.topics[0].partitions[0]).toMatchObject({ leaderId: NODE_ID, replicaNodes: [NODE_ID], isrNodes: [NODE_ID] });
    expect(first.nextCursor).toEqual({ topicName: 'dtp-a', partitionIndex: 2 });
    const rest = await gw.answer(ApiKey.DescribeTopicPartitions, 0, { topics: [{ name: 'dtp-a' }, { name: 'dtp-b' }], responsePartitionLimit: 2, cursor: first.nextCursor });
    expect(rest.topics.map((t: Message) => [t.name, t.partitions.map((p: Message) => p.partitionIndex)])).toEqual([['dtp-a', [2]], ['dtp-b', [0]]]);
    expect(rest.nextCursor).toBeNull();
  });

  it('answers unknown topics and bad names, and INVALID_REQUEST for a cursor on a topic not asked for', async () => {
    const response = await gw.answer(ApiKey.DescribeTopicPartitions, 0, { topics: [{ name: 'dtp-missing' }, { name: 'bad name' }], responsePartitionLimit: 10, cursor: null });
    expect(new Map(response.topics.map((t: Message) => [t.name, named(t.errorCode)]))).toEqual(
      new Map([['dtp-missing', 'UNKNOWN_TOPIC_OR_PARTITION'], ['bad name', 'INVALID_TOPIC_EXCEPTION']]),
    );
    const stray = await gw.answer(ApiKey.DescribeTopicPartitions, 0, { topics: [{ name: 'dtp-a' }], responsePartitionLimit: 10, cursor: { topicName: 'dtp-b', partitionIndex: 0 } });
    expect(stray.topics.map((t: Message) => named(t.errorCode))).toEqual(['INVALID_REQUEST']);
  });
});

import { describe, expect, it } from 'vitest';
import { CompressionCodec, decodeBatches, decodeMessageSet, validateBatches } from '../../protocol/records/index.js';
import { kafkajsModule } from './support/clients.js';
import { expectDecodesAs, kafkajsRequestVersions, type Sent } from './support/decoded-request.js';

/**
 * kafkajs 2.2.4 as an independent oracle, request direction: for every API
 * and version kafkajs has a request encoder for, a request built with
 * realistic, distinctive arguments decodes with our codec into exactly the
 * fields kafkajs was asked to send, leaves no byte unread, and encodes back
 * to the same bytes. Produce requests also carry their records through
 * unchanged: our record-batch (v3+) or message-set (v0-v2) reader gets back
 * the keys, values, headers and producer state kafkajs wrote.
 *
 * The table maps kafkajs's argument names to Kafka's field names; where
 * kafkajs's arguments change shape between versions, rows are split. Fetch
 * v0-v3 are not served by the gateway, but our codec knows them and kafkajs
 * has them, so they are checked too.
 */

interface Row {
  versions: readonly number[];
  /** What differs from the API's other rows at the same versions. */
  label?: string;
  args: unknown;
  /** The decoded fields, by our names, at `version`. */
  sent: (version: number) => Sent;
  /** Further checks on the decoded message (records). */
  check?: (decoded: Record<string, unknown>, version: number) => void;
  /** kafkajs writes the request header's (empty) tag section at the start of what it encodes; the body follows. */
  headerTagsFirst?: true;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const only = <T extends object>(when: boolean, fields: T): T | Record<string, never> => (when ? fields : {});

const ANY_BYTES = expect.any(Buffer);
const TS = 1_700_000_000_000;

// kafkajs's SASL PLAIN mechanism builds the bytes a SaslAuthenticate request carries.
const plainSasl = kafkajsModule<(a: { username: string; password: string }) => { encode(): Promise<Buffer> }>(
  'kafkajs/src/protocol/sasl/plain/request.js',
);
const saslPlainBytes = await plainSasl({ username: 'alice', password: 's3cret' }).encode();

// ---------------------------------------------------------------- Produce

const produceMessages = [
  { key: 'order-17', value: 'created', timestamp: TS, headers: { source: 'web', trace: 'abc123' } },
  { key: null, value: 'x'.repeat(300), timestamp: TS + 40, headers: {} },
  { key: 'order-17', value: 'paid', timestamp: TS + 95, headers: { source: 'api' } },
];
const produceTopicData = [
  { topic: 'orders', partitions: [{ partition: 3, firstSequence: 11, messages: produceMessages }, { partition: 0, firstSequence: 0, messages: produceMessages.slice(0, 1) }] },
  { topic: 'audit', partitions: [{ partition: 7, firstSequence: 5, messages: produceMessages.slice(1) }] },
];
const produceSent = (acks: number, timeoutMs: number, transactionalId?: string | null): Sent => ({
  ...(transactionalId !== undefined && { transactionalId }),
  acks,
  timeoutMs,
  topicData: produceTopicData.map((t) => ({ name: t.topic, partitionData: t.partitions.map((p) => ({ index: p.partition, records: ANY_BYTES })) })),
});

type Partition = (typeof produceTopicData)[number]['partitions'][number];

function eachPartition(decoded: Record<string, unknown>, check: (records: Buffer, sent: Partition) => void): void {
  const topics = decoded.topicData as { partitionData: { records: Buffer }[] }[];
  topics.forEach((t, i) => t.partitionData.forEach((p, j) => check(p.records, produceTopicData[i]!.partitions[j]!)));
}

/** v0-v2: a legacy message set whose messages are the ones kafkajs was given. */
function carriesMessageSet(magic: 0 | 1, compression: CompressionCodec) {
  return (decoded: Record<string, unknown>): void =>
    eachPartition(decoded, (records, sent) => {
      expect(Buffer.isBuffer(records)).toBe(true);
      const messages = decodeMessageSet(records);
      expect(messages.map((m) => [m.magic, m.compression, m.key?.toString() ?? null, m.value?.toString()])).toEqual(
        sent.messages.map((m) => [magic, compression, m.key, m.value]),
      );
      if (magic === 1) expect(messages.map((m) => m.timestamp)).toEqual(sent.messages.map((m) => BigInt(m.timestamp)));
    });
}

/** v3+: one record batch a Produce handler accepts, carrying kafkajs's producer state and records. */
function carriesBatch(compression: CompressionCodec, producer: { id: bigint; epoch: number; transactional: boolean }) {
  return (decoded: Record<string, unknown>): void =>
    eachPartition(decoded, (records, sent) => {
      expect(Buffer.isBuffer(records)).toBe(true);
      const [valid] = validateBatches(records);
      expect(validateBatches(records)).toHaveLength(1);
      expect(valid!.compression).toBe(compression);
      expect(valid!.isTransactional).toBe(producer.transactional);
      expect(valid!.header.producerId).toBe(producer.id);
      expect(valid!.header.producerEpoch).toBe(producer.epoch);
      expect(valid!.header.baseSequence).toBe(sent.firstSequence);
      const [batch] = decodeBatches(records);
      expect(batch!.header.baseTimestamp).toBe(BigInt(sent.messages[0]!.timestamp));
      expect(
        batch!.records.map((r) => ({
          key: r.key?.toString() ?? null,
          value: r.value?.toString(),
          timestamp: Number(batch!.header.baseTimestamp) + r.timestampDelta,
          headers: Object.fromEntries(r.headers.map((h) => [h.key, h.value?.toString()])),
        })),
      ).toEqual(sent.messages);
    });
}

// ---------------------------------------------------------------- the table, by kafkajs's request folder

const fetchArgs = {
  replicaId: -1,
  maxWaitTime: 4800,
  minBytes: 3,
  maxBytes: 52_428_800,
  isolationLevel: 0,
  sessionId: 91,
  sessionEpoch: 6,
  rackId: 'rack-b',
  topics: [
    { topic: 'orders', partitions: [{ partition: 2, currentLeaderEpoch: 8, fetchOffset: '9007199254740993', logStartOffset: 17, maxBytes: 1_048_576 }] },
    { topic: 'audit', partitions: [{ partition: 0, fetchOffset: 42, maxBytes: 65_536 }, { partition: 5, fetchOffset: 0, maxBytes: 512 }] },
  ],
  forgottenTopics: [{ topic: 'old-topic', partitions: [1, 4] }],
};

const aclFilter = { resourceType: 2, resourceName: 'orders', resourcePatternType: 3, principal: 'User:alice', host: '10.0.0.7', operation: 3, permissionType: 3 };
const aclFilterSent = (v: number, prefix: 'filter' | 'creation'): Sent =>
  prefix === 'filter'
    ? { resourceTypeFilter: 2, resourceNameFilter: 'orders', ...only(v >= 1, { patternTypeFilter: 3 }), principalFilter: 'User:alice', hostFilter: '10.0.0.7', operation: 3, permissionType: 3 }
    : { resourceType: 2, resourceName: 'orders', ...only(v >= 1, { resourcePatternType: 3 }), principal: 'User:alice', host: '10.0.0.7', operation: 3, permissionType: 3 };
const aclFilter2 = { resourceType: 4, resourceName: 'payments-group', resourcePatternType: 4, principal: 'User:bob', host: '*', operation: 2, permissionType: 2 };
const aclFilter2Sent = (v: number, prefix: 'filter' | 'creation'): Sent =>
  prefix === 'filter'
    ? { resourceTypeFilter: 4, resourceNameFilter: 'payments-group', ...only(v >= 1, { patternTypeFilter: 4 }), principalFilter: 'User:bob', hostFilter: '*', operation: 2, permissionType: 2 }
    : { resourceType: 4, resourceName: 'payments-group', ...only(v >= 1, { resourcePatternType: 4 }), principal: 'User:bob', host: '*', operation: 2, permissionType: 2 };

const KAFKAJS: Record<string, Row[]> = {
  produce: [
    {
      versions: [0, 1],
      args: { acks: -1, timeout: 30_000, topicData: produceTopicData },
      sent: () => produceSent(-1, 30_000),
      check: carriesMessageSet(0, CompressionCodec.None),
    },
    {
      versions: [2],
      label: 'uncompressed',
      args: { acks: 1, timeout: 25_000, topicData: produceTopicData },
      sent: () => produceSent(1, 25_000),
      check: carriesMessageSet(1, CompressionCodec.None),
    },
    {
      versions: [2],
      label: 'gzip',
      args: { acks: -1, timeout: 26_000, compression: CompressionCodec.Gzip, topicData: produceTopicData },
      sent: () => produceSent(-1, 26_000),
      check: carriesMessageSet(1, CompressionCodec.Gzip),
    },
    {
      versions: range(3, 7),
      label: 'transactional, uncompressed',
      args: { acks: -1, timeout: 31_000, transactionalId: 'txn-orders-1', producerId: 4242, producerEpoch: 7, topicData: produceTopicData },
      sent: () => produceSent(-1, 31_000, 'txn-orders-1'),
      check: carriesBatch(CompressionCodec.None, { id: 4242n, epoch: 7, transactional: true }),
    },
    {
      versions: range(3, 7),
      label: 'idempotent, gzip',
      args: { acks: -1, timeout: 32_000, producerId: '9007199254740993', producerEpoch: 2, compression: CompressionCodec.Gzip, topicData: produceTopicData },
      sent: () => produceSent(-1, 32_000, null),
      check: carriesBatch(CompressionCodec.Gzip, { id: 9_007_199_254_740_993n, epoch: 2, transactional: false }),
    },
  ],
  fetch: [
    {
      versions: range(0, 11),
      args: fetchArgs,
      sent: (v) => ({
        replicaId: -1,
        maxWaitMs: 4800,
        minBytes: 3,
        ...only(v >= 3, { maxBytes: 52_428_800 }),
        ...only(v >= 4, { isolationLevel: 0 }),
        ...only(v >= 7, { sessionId: 91, sessionEpoch: 6 }),
        topics: [
          {
            topic: 'orders',
            partitions: [{ partition: 2, ...only(v >= 9, { currentLeaderEpoch: 8 }), fetchOffset: 9_007_199_254_740_993n, ...only(v >= 5, { logStartOffset: 17n }), partitionMaxBytes: 1_048_576 }],
          },
          {
            topic: 'audit',
            partitions: [
              { partition: 0, ...only(v >= 9, { currentLeaderEpoch: -1 }), fetchOffset: 42n, ...only(v >= 5, { logStartOffset: -1n }), partitionMaxBytes: 65_536 },
              { partition: 5, ...only(v >= 9, { currentLeaderEpoch: -1 }), fetchOffset: 0n, ...only(v >= 5, { logStartOffset: -1n }), partitionMaxBytes: 512 },
            ],
          },
        ],
        ...only(v >= 7, { forgottenTopicsData: [{ topic: 'old-topic', partitions: [1, 4] }] }),
        ...only(v >= 11, { rackId: 'rack-b' }),
      }),
    },
  ],
  listOffsets: [
    {
      versions: range(0, 3),
      args: {
        replicaId: -1,
        isolationLevel: 1,
        topics: [{ topic: 'orders', partitions: [{ partition: 4, timestamp: TS, maxNumOffsets: 3 }, { partition: 1, timestamp: -2 }] }],
      },
      sent: (v) => ({
        replicaId: -1,
        ...only(v >= 2, { isolationLevel: 1 }),
        topics: [
          {
            name: 'orders',
            partitions: [
              { partitionIndex: 4, timestamp: BigInt(TS), ...only(v === 0, { maxNumOffsets: 3 }) },
              { partitionIndex: 1, timestamp: -2n, ...only(v === 0, { maxNumOffsets: 1 }) },
            ],
          },
        ],
      }),
    },
  ],
  metadata: [
    {
      versions: range(0, 6),
      args: { topics: ['orders', 'audit'], allowAutoTopicCreation: false },
      sent: (v) => ({ topics: [{ name: 'orders' }, { name: 'audit' }], ...only(v >= 4, { allowAutoTopicCreation: false }) }),
    },
    {
      versions: range(0, 6),
      label: 'every topic',
      args: { topics: [] },
      // From v1 kafkajs writes an empty list as null, Kafka's "every topic"; v0 has no null, and empty means every topic there.
      sent: (v) => ({ topics: v === 0 ? [] : null, ...only(v >= 4, { allowAutoTopicCreation: true }) }),
    },
  ],
  offsetCommit: [
    {
      versions: range(0, 5),
      args: {
        groupId: 'billing',
        groupGenerationId: 23,
        memberId: 'consumer-1-6f1c',
        retentionTime: 86_400_000,
        topics: [
          { topic: 'orders', partitions: [{ partition: 3, offset: '1234567890123', timestamp: TS + 1, metadata: 'host-a' }, { partition: 0, offset: 7, timestamp: TS + 2 }] },
        ],
      },
      sent: (v) => ({
        groupId: 'billing',
        ...only(v >= 1, { generationIdOrMemberEpoch: 23, memberId: 'consumer-1-6f1c' }),
        ...only(v >= 2 && v <= 4, { retentionTimeMs: 86_400_000n }),
        topics: [
          {
            name: 'orders',
            partitions: [
              { partitionIndex: 3, committedOffset: 1_234_567_890_123n, ...only(v === 1, { commitTimestamp: BigInt(TS + 1) }), committedMetadata: 'host-a' },
              { partitionIndex: 0, committedOffset: 7n, ...only(v === 1, { commitTimestamp: BigInt(TS + 2) }), committedMetadata: null },
            ],
          },
        ],
      }),
    },
  ],
  offsetFetch: [
    {
      versions: range(1, 4),
      args: { groupId: 'billing', topics: [{ topic: 'orders', partitions: [{ partition: 0 }, { partition: 5 }] }, { topic: 'audit', partitions: [{ partition: 2 }] }] },
      sent: () => ({ groupId: 'billing', topics: [{ name: 'orders', partitionIndexes: [0, 5] }, { name: 'audit', partitionIndexes: [2] }] }),
    },
    {
      versions: range(1, 4),
      label: 'every partition',
      args: { groupId: 'billing', topics: [] },
      // v3 and later write an empty list as null, Kafka's "every partition the group has offsets for".
      sent: (v) => ({ groupId: 'billing', topics: v >= 3 ? null : [] }),
    },
  ],
  findCoordinator: [
    { versions: [0], args: { groupId: 'billing' }, sent: () => ({ key: 'billing' }) },
    { versions: [1, 2], args: { coordinatorKey: 'txn-orders-1', coordinatorType: 1 }, sent: () => ({ key: 'txn-orders-1', keyType: 1 }) },
  ],
  joinGroup: [
    {
      versions: range(0, 5),
      args: {
        groupId: 'billing',
        sessionTimeout: 30_000,
        rebalanceTimeout: 60_000,
        memberId: 'consumer-1-6f1c',
        groupInstanceId: 'billing-host-a',
        protocolType: 'consumer',
        groupProtocols: [{ name: 'RoundRobinAssigner', metadata: Buffer.from([0, 1, 0, 0, 0, 1, 0, 6, 111, 114, 100, 101, 114, 115]) }, { name: 'range' }],
      },
      sent: (v) => ({
        groupId: 'billing',
        sessionTimeoutMs: 30_000,
        ...only(v >= 1, { rebalanceTimeoutMs: 60_000 }),
        memberId: 'consumer-1-6f1c',
        ...only(v >= 5, { groupInstanceId: 'billing-host-a' }),
        protocolType: 'consumer',
        protocols: [
          { name: 'RoundRobinAssigner', metadata: Buffer.from([0, 1, 0, 0, 0, 1, 0, 6, 111, 114, 100, 101, 114, 115]) },
          { name: 'range', metadata: Buffer.alloc(0) },
        ],
      }),
    },
  ],
  heartbeat: [
    {
      versions: range(0, 3),
      args: { groupId: 'billing', groupGenerationId: 23, memberId: 'consumer-1-6f1c', groupInstanceId: 'billing-host-a' },
      sent: (v) => ({ groupId: 'billing', generationId: 23, memberId: 'consumer-1-6f1c', ...only(v >= 3, { groupInstanceId: 'billing-host-a' }) }),
    },
  ],
  leaveGroup: [
    { versions: range(0, 2), args: { groupId: 'billing', memberId: 'consumer-1-6f1c' }, sent: () => ({ groupId: 'billing', memberId: 'consumer-1-6f1c' }) },
    {
      versions: [3],
      args: { groupId: 'billing', members: [{ memberId: 'consumer-1-6f1c', groupInstanceId: 'billing-host-a' }, { memberId: 'consumer-2-09ab' }] },
      sent: () => ({ groupId: 'billing', members: [{ memberId: 'consumer-1-6f1c', groupInstanceId: 'billing-host-a' }, { memberId: 'consumer-2-09ab', groupInstanceId: null }] }),
    },
  ],
  syncGroup: [
    {
      versions: range(0, 3),
      args: {
        groupId: 'billing',
        generationId: 24,
        memberId: 'consumer-1-6f1c',
        groupInstanceId: 'billing-host-a',
        groupAssignment: [{ memberId: 'consumer-1-6f1c', memberAssignment: Buffer.from('assignment-1') }, { memberId: 'consumer-2-09ab', memberAssignment: Buffer.from('assignment-2') }],
      },
      sent: (v) => ({
        groupId: 'billing',
        generationId: 24,
        memberId: 'consumer-1-6f1c',
        ...only(v >= 3, { groupInstanceId: 'billing-host-a' }),
        assignments: [{ memberId: 'consumer-1-6f1c', assignment: Buffer.from('assignment-1') }, { memberId: 'consumer-2-09ab', assignment: Buffer.from('assignment-2') }],
      }),
    },
  ],
  describeGroups: [{ versions: range(0, 2), args: { groupIds: ['billing', 'shipping'] }, sent: () => ({ groups: ['billing', 'shipping'] }) }],
  listGroups: [{ versions: range(0, 2), args: undefined, sent: () => ({}) }],
  saslHandshake: [{ versions: [0, 1], args: { mechanism: 'SCRAM-SHA-512' }, sent: () => ({ mechanism: 'SCRAM-SHA-512' }) }],
  apiVersions: [{ versions: range(0, 2), args: undefined, sent: () => ({}) }],
  createTopics: [
    {
      versions: range(0, 3),
      args: {
        topics: [
          {
            topic: 'orders',
            numPartitions: 6,
            replicationFactor: 3,
            replicaAssignment: [{ partition: 0, replicas: [1, 2, 3] }, { partition: 1, replicas: [2, 3, 1] }],
            configEntries: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'retention.ms', value: '604800000' }],
          },
          { topic: 'audit' },
        ],
        timeout: 15_000,
        validateOnly: true,
      },
      sent: (v) => ({
        topics: [
          {
            name: 'orders',
            numPartitions: 6,
            replicationFactor: 3,
            assignments: [{ partitionIndex: 0, brokerIds: [1, 2, 3] }, { partitionIndex: 1, brokerIds: [2, 3, 1] }],
            configs: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'retention.ms', value: '604800000' }],
          },
          { name: 'audit', numPartitions: -1, replicationFactor: -1, assignments: [], configs: [] },
        ],
        timeoutMs: 15_000,
        ...only(v >= 1, { validateOnly: true }),
      }),
    },
  ],
  deleteTopics: [{ versions: [0, 1], args: { topics: ['orders', 'audit'], timeout: 12_000 }, sent: () => ({ topicNames: ['orders', 'audit'], timeoutMs: 12_000 }) }],
  deleteRecords: [
    {
      versions: [0, 1],
      args: { topics: [{ topic: 'orders', partitions: [{ partition: 1, offset: '5000' }, { partition: 4, offset: -1 }] }], timeout: 9_000 },
      sent: () => ({ topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, offset: 5000n }, { partitionIndex: 4, offset: -1n }] }], timeoutMs: 9_000 }),
    },
  ],
  initProducerId: [
    { versions: [0, 1], args: { transactionalId: 'txn-orders-1', transactionTimeout: 60_000 }, sent: () => ({ transactionalId: 'txn-orders-1', transactionTimeoutMs: 60_000 }) },
    { versions: [0, 1], label: 'idempotent', args: { transactionalId: null, transactionTimeout: 5_000 }, sent: () => ({ transactionalId: null, transactionTimeoutMs: 5_000 }) },
  ],
  addPartitionsToTxn: [
    {
      versions: [0, 1],
      args: { transactionalId: 'txn-orders-1', producerId: 4242, producerEpoch: 7, topics: [{ topic: 'orders', partitions: [0, 3] }, { topic: 'audit', partitions: [7] }] },
      sent: () => ({
        v3AndBelowTransactionalId: 'txn-orders-1',
        v3AndBelowProducerId: 4242n,
        v3AndBelowProducerEpoch: 7,
        v3AndBelowTopics: [{ name: 'orders', partitions: [0, 3] }, { name: 'audit', partitions: [7] }],
      }),
    },
  ],
  addOffsetsToTxn: [
    {
      versions: [0, 1],
      args: { transactionalId: 'txn-orders-1', producerId: 4242, producerEpoch: 7, groupId: 'billing' },
      sent: () => ({ transactionalId: 'txn-orders-1', producerId: 4242n, producerEpoch: 7, groupId: 'billing' }),
    },
  ],
  endTxn: [
    {
      versions: [0, 1],
      args: { transactionalId: 'txn-orders-1', producerId: 4242, producerEpoch: 7, transactionResult: true },
      sent: () => ({ transactionalId: 'txn-orders-1', producerId: 4242n, producerEpoch: 7, committed: true }),
    },
  ],
  txnOffsetCommit: [
    {
      versions: [0, 1],
      args: {
        transactionalId: 'txn-orders-1',
        groupId: 'billing',
        producerId: 4242,
        producerEpoch: 7,
        topics: [{ topic: 'orders', partitions: [{ partition: 3, offset: '88', metadata: 'host-a' }, { partition: 0, offset: 12, metadata: null }] }],
      },
      sent: () => ({
        transactionalId: 'txn-orders-1',
        groupId: 'billing',
        producerId: 4242n,
        producerEpoch: 7,
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 3, committedOffset: 88n, committedMetadata: 'host-a' }, { partitionIndex: 0, committedOffset: 12n, committedMetadata: null }] }],
      }),
    },
  ],
  describeAcls: [{ versions: [0, 1], args: aclFilter, sent: (v) => aclFilterSent(v, 'filter') }],
  createAcls: [{ versions: [0, 1], args: { creations: [aclFilter, aclFilter2] }, sent: (v) => ({ creations: [aclFilterSent(v, 'creation'), aclFilter2Sent(v, 'creation')] }) }],
  deleteAcls: [{ versions: [0, 1], args: { filters: [aclFilter, aclFilter2] }, sent: (v) => ({ filters: [aclFilterSent(v, 'filter'), aclFilter2Sent(v, 'filter')] }) }],
  describeConfigs: [
    {
      versions: range(0, 2),
      args: { resources: [{ type: 2, name: 'orders', configNames: ['retention.ms', 'cleanup.policy'] }, { type: 4, name: '1' }], includeSynonyms: true },
      // kafkajs writes an empty list of names as null, Kafka's "every config".
      sent: (v) => ({
        resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms', 'cleanup.policy'] }, { resourceType: 4, resourceName: '1', configurationKeys: null }],
        ...only(v >= 1, { includeSynonyms: true }),
      }),
    },
  ],
  alterConfigs: [
    {
      versions: [0, 1],
      args: { resources: [{ type: 2, name: 'orders', configEntries: [{ name: 'retention.ms', value: '86400000' }, { name: 'max.message.bytes', value: '2097152' }] }], validateOnly: true },
      sent: () => ({
        resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', value: '86400000' }, { name: 'max.message.bytes', value: '2097152' }] }],
        validateOnly: true,
      }),
    },
  ],
  saslAuthenticate: [{ versions: [0, 1], args: { authBytes: saslPlainBytes }, sent: () => ({ authBytes: Buffer.from('\0alice\0s3cret') }) }],
  createPartitions: [
    {
      versions: [0, 1],
      args: { topicPartitions: [{ topic: 'orders', count: 12, assignments: [[1, 2], [2, 3]] }, { topic: 'audit', count: 4 }], timeout: 20_000, validateOnly: true },
      // kafkajs writes an empty assignment list as null, Kafka's "let the controller assign".
      sent: () => ({
        topics: [
          { name: 'orders', count: 12, assignments: [{ brokerIds: [1, 2] }, { brokerIds: [2, 3] }] },
          { name: 'audit', count: 4, assignments: null },
        ],
        timeoutMs: 20_000,
        validateOnly: true,
      }),
    },
  ],
  deleteGroups: [{ versions: [0, 1], args: ['billing', 'shipping'], sent: () => ({ groupsNames: ['billing', 'shipping'] }) }],
  alterPartitionReassignments: [
    {
      versions: [0],
      headerTagsFirst: true,
      args: { topics: [{ topic: 'orders', partitionAssignment: [{ partition: 0, replicas: [1, 2] }, { partition: 3, replicas: [3] }] }], timeout: 20_000 },
      sent: () => ({ timeoutMs: 20_000, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, replicas: [1, 2] }, { partitionIndex: 3, replicas: [3] }] }] }),
    },
  ],
  listPartitionReassignments: [
    {
      versions: [0],
      headerTagsFirst: true,
      args: { topics: [{ topic: 'orders', partitions: [2, 0] }], timeout: 20_000 },
      sent: () => ({ timeoutMs: 20_000, topics: [{ name: 'orders', partitionIndexes: [2, 0] }] }),
    },
    { versions: [0], label: 'every topic', headerTagsFirst: true, args: { timeout: 20_000 }, sent: () => ({ timeoutMs: 20_000, topics: null }) },
  ],
};

// ---------------------------------------------------------------- generated cases

const { versions, unmatched } = kafkajsRequestVersions();
const rowsFor = (name: string, version: number): Row[] => (KAFKAJS[name] ?? []).filter((r) => r.versions.includes(version));

async function encodeWithKafkajs(request: (args: never) => { encode(): Promise<{ buffer: Buffer }> }, args: unknown): Promise<Buffer> {
  return (await request(args as never).encode()).buffer;
}

const cases = versions.flatMap((c) =>
  rowsFor(c.name, c.version).map((row) => [`${c.api.name} v${c.version}${row.label ? ` (${row.label})` : ''}`, c, row] as const),
);

describe('our codec decodes the requests kafkajs encodes', () => {
  it('covers every request encoder kafkajs has for an API we define', () => {
    expect(versions.length).toBeGreaterThan(80);
    expect(versions.filter((c) => rowsFor(c.name, c.version).length === 0).map((c) => `${c.name} v${c.version}`)).toEqual([]);
    expect(unmatched).toEqual([]);
  });

  it('has no table rows for versions kafkajs lacks', () => {
    const stale = Object.entries(KAFKAJS).flatMap(([name, rows]) =>
      rows.flatMap((r) => r.versions.filter((v) => !versions.some((c) => c.name === name && c.version === v)).map((v) => `${name} v${v}`)),
    );
    expect(stale).toEqual([]);
  });

  it('notices a field that decodes to something other than what was sent', async () => {
    const [, c, row] = cases.find(([title]) => title === 'OffsetCommit v2')!;
    const body = await encodeWithKafkajs(c.request, row.args);
    const wrong = { ...row.sent(2), retentionTimeMs: 86_400_001n };
    expect(() => expectDecodesAs(c.api, 2, body, wrong)).toThrow();
    const forgotten = { ...row.sent(2) };
    delete forgotten.memberId;
    expect(() => expectDecodesAs(c.api, 2, body, forgotten)).toThrow(/memberId is on the wire/);
  });

  it.each(cases)('%s', async (_title, c, row) => {
    const request = c.request(row.args as never);
    expect(request.apiKey).toBe(c.api.apiKey);
    expect(request.apiVersion).toBe(c.version);
    const encoded = (await request.encode()).buffer;
    if (row.headerTagsFirst) expect(encoded[0]).toBe(0);
    const body = row.headerTagsFirst ? encoded.subarray(1) : encoded;
    const decoded = expectDecodesAs(c.api, c.version, body, row.sent(c.version));
    row.check?.(decoded, c.version);
  });
});

import { describe, expect, it } from 'vitest';
import { CompressionCodec, decodeBatches, validateBatches } from '../../protocol/records/index.js';
import { platformaticVersions } from './support/clients.js';
import { expectDecodesAs, type Sent } from './support/decoded-request.js';
import { ZERO_UUID } from './support/layout.js';

/**
 * @platformatic/kafka 1.35 as an independent oracle, request direction; it
 * covers the flexible versions kafkajs lacks. For every API and version it
 * has within what we serve, the body its createRequest writes (the bytes
 * its connection sends after the request header) decodes with our codec
 * into exactly the fields it was given, leaves no byte unread (so every
 * tagged-field section it writes is read as one), and encodes back to the
 * same bytes. Produce record batches arrive unchanged and validate.
 *
 * createRequest takes positional arguments; each row lists them in order.
 */

interface Row {
  versions: readonly number[];
  label?: string;
  args: readonly unknown[];
  sent: (version: number) => Sent;
  check?: (decoded: Record<string, unknown>) => void;
  /** Set where platformatic's encoder departs from Kafka's spec (the case then runs as an expected failure). */
  departs?: string;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);
const only = <T extends object>(when: boolean, fields: T): T | Record<string, never> => (when ? fields : {});

const ANY_BYTES = expect.any(Buffer);
const TS = 1_700_000_000_000n;
const ORDERS_ID = '3f2a9c1e-5b7d-4e88-9a01-6c2b4d8e0f17';
const AUDIT_ID = '9b0e4d21-77c3-4a5f-8e6d-1f2a3b4c5d6e';
const OLD_ID = 'c4d5e6f7-0811-4233-8455-667788990aab';

// ---------------------------------------------------------------- Produce

function produceMessages() {
  return [
    { topic: 'orders', partition: 3, key: Buffer.from('order-17'), value: Buffer.from('created'), timestamp: TS, headers: new Map([[Buffer.from('source'), Buffer.from('web')]]) },
    { topic: 'orders', partition: 3, key: null, value: Buffer.from('x'.repeat(300)), timestamp: TS + 40n, headers: new Map() },
    { topic: 'orders', partition: 0, key: Buffer.from('order-18'), value: Buffer.from('paid'), timestamp: TS + 95n, headers: new Map() },
    { topic: 'audit', partition: 7, key: Buffer.from('evt-1'), value: Buffer.from('login'), timestamp: TS + 5n, headers: new Map([[Buffer.from('trace'), Buffer.from('abc123')]]) },
  ];
}
// platformatic groups messages by topic, then by partition in ascending order.
const producePartitions = [
  { topic: 'orders', partition: 0 },
  { topic: 'orders', partition: 3 },
  { topic: 'audit', partition: 7 },
];
const produceSent = (acks: number, timeoutMs: number, transactionalId: string | null): Sent => ({
  transactionalId,
  acks,
  timeoutMs,
  topicData: [
    { name: 'orders', partitionData: [{ index: 0, records: ANY_BYTES }, { index: 3, records: ANY_BYTES }] },
    { name: 'audit', partitionData: [{ index: 7, records: ANY_BYTES }] },
  ],
});

function carriesBatch(compression: CompressionCodec, producer: { id: bigint; epoch: number; transactional: boolean }) {
  return (decoded: Record<string, unknown>): void => {
    const topics = decoded.topicData as { partitionData: { records: Buffer }[] }[];
    const all = topics.flatMap((t) => t.partitionData.map((p) => p.records));
    expect(all).toHaveLength(producePartitions.length);
    all.forEach((records, i) => {
      expect(Buffer.isBuffer(records)).toBe(true);
      const batches = validateBatches(records);
      expect(batches).toHaveLength(1);
      expect(batches[0]!.compression).toBe(compression);
      expect(batches[0]!.isTransactional).toBe(producer.transactional);
      expect(batches[0]!.header.producerId).toBe(producer.id);
      expect(batches[0]!.header.producerEpoch).toBe(producer.epoch);
      const want = produceMessages().filter((m) => m.topic === producePartitions[i]!.topic && m.partition === producePartitions[i]!.partition);
      const [batch] = decodeBatches(records);
      expect(
        batch!.records.map((r) => ({
          key: r.key?.toString() ?? null,
          value: r.value?.toString(),
          timestamp: batch!.header.baseTimestamp + BigInt(r.timestampDelta),
          headers: r.headers.map((h) => [h.key, h.value?.toString()]),
        })),
      ).toEqual(
        want.map((m) => ({
          key: m.key?.toString() ?? null,
          value: m.value.toString(),
          timestamp: m.timestamp,
          headers: [...m.headers].map(([k, v]) => [k.toString(), v.toString()]),
        })),
      );
    });
  };
}

// ---------------------------------------------------------------- the table, by our API name

const fetchPartitions = [{ partition: 2, currentLeaderEpoch: 8, fetchOffset: 9_007_199_254_740_993n, lastFetchedEpoch: 7, partitionMaxBytes: 1_048_576 }];
const fetchPartitionsSent = [{ partition: 2, currentLeaderEpoch: 8, fetchOffset: 9_007_199_254_740_993n, lastFetchedEpoch: 7, logStartOffset: -1n, partitionMaxBytes: 1_048_576 }];
const fetchHead = [4800, 3, 52_428_800, 1, 91, 6] as const;
const fetchHeadSent = (v: number): Sent => ({ ...only(v <= 14, { replicaId: -1 }), maxWaitMs: 4800, minBytes: 3, maxBytes: 52_428_800, isolationLevel: 1, sessionId: 91, sessionEpoch: 6 });

const aclFilter = { resourceType: 2, resourceName: 'orders', resourcePatternType: 3, principal: 'User:alice', host: '10.0.0.7', operation: 3, permissionType: 3 };
const aclFilterSent = { resourceTypeFilter: 2, resourceNameFilter: 'orders', patternTypeFilter: 3, principalFilter: 'User:alice', hostFilter: '10.0.0.7', operation: 3, permissionType: 3 };
const aclCreation = { resourceType: 4, resourceName: 'billing', resourcePatternType: 4, principal: 'User:bob', host: '*', operation: 2, permissionType: 2 };
const aclCreationSent = { ...aclCreation };

const PLATFORMATIC: Record<string, Row[]> = {
  Produce: [
    {
      versions: range(7, 11),
      label: 'transactional, uncompressed',
      args: [-1, 31_000, produceMessages(), { transactionalId: 'txn-orders-1', producerId: 4242n, producerEpoch: 7 }],
      sent: () => produceSent(-1, 31_000, 'txn-orders-1'),
      check: carriesBatch(CompressionCodec.None, { id: 4242n, epoch: 7, transactional: true }),
    },
    {
      versions: range(7, 11),
      label: 'idempotent, gzip',
      args: [1, 32_000, produceMessages(), { producerId: 9_007_199_254_740_993n, producerEpoch: 2, compression: 'gzip' }],
      sent: () => produceSent(1, 32_000, null),
      check: carriesBatch(CompressionCodec.Gzip, { id: 9_007_199_254_740_993n, epoch: 2, transactional: false }),
    },
  ],
  Fetch: [
    {
      versions: [12],
      args: [...fetchHead, [{ topicId: 'orders', partitions: fetchPartitions }], [], 'rack-b'],
      sent: (v) => ({ ...fetchHeadSent(v), topics: [{ topic: 'orders', partitions: fetchPartitionsSent }], forgottenTopicsData: [], rackId: 'rack-b' }),
    },
    {
      versions: [12],
      label: 'forgotten topics',
      args: [...fetchHead, [{ topicId: 'orders', partitions: fetchPartitions }], [{ topic: 'old-topic', partitions: [1, 4] }], 'rack-b'],
      sent: (v) => ({ ...fetchHeadSent(v), topics: [{ topic: 'orders', partitions: fetchPartitionsSent }], forgottenTopicsData: [{ topic: 'old-topic', partitions: [1, 4] }], rackId: 'rack-b' }),
      departs: 'writes a forgotten topic as a uuid at v12, where the spec has its name (a string; TopicId comes in v13)',
    },
    {
      versions: range(13, 17),
      args: [...fetchHead, [{ topicId: ORDERS_ID, partitions: fetchPartitions }], [{ topic: OLD_ID, partitions: [1, 4] }], 'rack-b'],
      sent: (v) => ({
        ...fetchHeadSent(v),
        topics: [{ topicId: ORDERS_ID, partitions: fetchPartitionsSent }],
        forgottenTopicsData: [{ topicId: OLD_ID, partitions: [1, 4] }],
        rackId: 'rack-b',
      }),
    },
  ],
  ListOffsets: [
    {
      versions: range(5, 9),
      args: [-1, 1, [{ name: 'orders', partitions: [{ partitionIndex: 4, currentLeaderEpoch: 9, timestamp: TS }, { partitionIndex: 1, currentLeaderEpoch: -1, timestamp: -2n }] }]],
      sent: () => ({
        replicaId: -1,
        isolationLevel: 1,
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 4, currentLeaderEpoch: 9, timestamp: TS }, { partitionIndex: 1, currentLeaderEpoch: -1, timestamp: -2n }] }],
      }),
    },
  ],
  Metadata: [
    {
      versions: range(9, 12),
      args: [['orders', 'audit'], true, false],
      sent: (v) => ({
        topics: v >= 10 ? [{ topicId: ZERO_UUID, name: 'orders' }, { topicId: ZERO_UUID, name: 'audit' }] : [{ name: 'orders' }, { name: 'audit' }],
        allowAutoTopicCreation: true,
        ...only(v <= 10, { includeClusterAuthorizedOperations: false }),
        includeTopicAuthorizedOperations: false,
      }),
    },
    {
      versions: [12],
      label: 'every topic, with authorized operations',
      args: [null, false, true],
      sent: () => ({ topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: true }),
    },
  ],
  OffsetCommit: [
    {
      versions: [8, 9],
      args: [
        'billing',
        23,
        'consumer-1-6f1c',
        'billing-host-a',
        [{ name: 'orders', partitions: [{ partitionIndex: 3, committedOffset: 1_234_567_890_123n, committedLeaderEpoch: 5, committedMetadata: 'host-a' }, { partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      ],
      sent: () => ({
        groupId: 'billing',
        generationIdOrMemberEpoch: 23,
        memberId: 'consumer-1-6f1c',
        groupInstanceId: 'billing-host-a',
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 3, committedOffset: 1_234_567_890_123n, committedLeaderEpoch: 5, committedMetadata: 'host-a' }, { partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      }),
    },
  ],
  OffsetFetch: [
    {
      versions: [8, 9],
      args: [
        [
          { groupId: 'billing', memberId: 'consumer-1-6f1c', memberEpoch: 14, topics: [{ name: 'orders', partitionIndexes: [0, 5] }] },
          { groupId: 'shipping', memberId: null, memberEpoch: -1, topics: null },
        ],
        true,
      ],
      sent: (v) => ({
        groups: [
          { groupId: 'billing', ...only(v >= 9, { memberId: 'consumer-1-6f1c', memberEpoch: 14 }), topics: [{ name: 'orders', partitionIndexes: [0, 5] }] },
          { groupId: 'shipping', ...only(v >= 9, { memberId: null, memberEpoch: -1 }), topics: null },
        ],
        requireStable: true,
      }),
    },
  ],
  FindCoordinator: [{ versions: range(4, 6), args: [1, ['txn-orders-1', 'txn-orders-2']], sent: () => ({ keyType: 1, coordinatorKeys: ['txn-orders-1', 'txn-orders-2'] }) }],
  JoinGroup: [
    {
      versions: range(6, 9),
      args: ['billing', 30_000, 60_000, 'consumer-1-6f1c', 'billing-host-a', 'consumer', [{ name: 'roundrobin', metadata: Buffer.from('subscription-1') }, { name: 'range' }], 'rejoining after restart'],
      sent: (v) => ({
        groupId: 'billing',
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 60_000,
        memberId: 'consumer-1-6f1c',
        groupInstanceId: 'billing-host-a',
        protocolType: 'consumer',
        protocols: [{ name: 'roundrobin', metadata: Buffer.from('subscription-1') }, { name: 'range', metadata: Buffer.alloc(0) }],
        ...only(v >= 8, { reason: 'rejoining after restart' }),
      }),
    },
  ],
  Heartbeat: [{ versions: [4], args: ['billing', 23, 'consumer-1-6f1c', null], sent: () => ({ groupId: 'billing', generationId: 23, memberId: 'consumer-1-6f1c', groupInstanceId: null }) }],
  LeaveGroup: [
    {
      versions: [4, 5],
      args: ['billing', [{ memberId: 'consumer-1-6f1c', groupInstanceId: 'billing-host-a', reason: 'shutting down' }, { memberId: 'consumer-2-09ab', groupInstanceId: null, reason: null }]],
      sent: (v) => ({
        groupId: 'billing',
        members: [
          { memberId: 'consumer-1-6f1c', groupInstanceId: 'billing-host-a', ...only(v >= 5, { reason: 'shutting down' }) },
          { memberId: 'consumer-2-09ab', groupInstanceId: null, ...only(v >= 5, { reason: null }) },
        ],
      }),
    },
  ],
  SyncGroup: [
    {
      versions: [4, 5],
      args: ['billing', 24, 'consumer-1-6f1c', 'billing-host-a', 'consumer', 'roundrobin', [{ memberId: 'consumer-1-6f1c', assignment: Buffer.from('assignment-1') }, { memberId: 'consumer-2-09ab', assignment: Buffer.from('assignment-2') }]],
      sent: (v) => ({
        groupId: 'billing',
        generationId: 24,
        memberId: 'consumer-1-6f1c',
        groupInstanceId: 'billing-host-a',
        ...only(v >= 5, { protocolType: 'consumer', protocolName: 'roundrobin' }),
        assignments: [{ memberId: 'consumer-1-6f1c', assignment: Buffer.from('assignment-1') }, { memberId: 'consumer-2-09ab', assignment: Buffer.from('assignment-2') }],
      }),
    },
  ],
  DescribeGroups: [{ versions: [5], args: [['billing', 'shipping'], true], sent: () => ({ groups: ['billing', 'shipping'], includeAuthorizedOperations: true }) }],
  ListGroups: [
    // v4's states are given in platformatic's enum style and written as Kafka's state names.
    { versions: [4], args: [['PREPARING_REBALANCE', 'STABLE']], sent: () => ({ statesFilter: ['PreparingRebalance', 'Stable'] }) },
    { versions: [5], args: [['Stable', 'Empty'], ['consumer', 'classic']], sent: () => ({ statesFilter: ['Stable', 'Empty'], typesFilter: ['consumer', 'classic'] }) },
  ],
  SaslHandshake: [{ versions: [1], args: ['SCRAM-SHA-256'], sent: () => ({ mechanism: 'SCRAM-SHA-256' }) }],
  ApiVersions: [{ versions: [3, 4], args: ['queen-oracle-client', '1.35.0'], sent: () => ({ clientSoftwareName: 'queen-oracle-client', clientSoftwareVersion: '1.35.0' }) }],
  CreateTopics: [
    {
      versions: [7],
      args: [
        [
          {
            name: 'orders',
            numPartitions: -1,
            replicationFactor: -1,
            assignments: [{ partitionIndex: 0, brokerIds: [1, 2, 3] }, { partitionIndex: 1, brokerIds: [2, 3, 1] }],
            configs: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'retention.ms', value: null }],
          },
          { name: 'audit', numPartitions: 6, replicationFactor: 3, assignments: [], configs: [] },
        ],
        15_000,
        true,
      ],
      sent: () => ({
        topics: [
          {
            name: 'orders',
            numPartitions: -1,
            replicationFactor: -1,
            assignments: [{ partitionIndex: 0, brokerIds: [1, 2, 3] }, { partitionIndex: 1, brokerIds: [2, 3, 1] }],
            configs: [{ name: 'cleanup.policy', value: 'compact' }, { name: 'retention.ms', value: null }],
          },
          { name: 'audit', numPartitions: 6, replicationFactor: 3, assignments: [], configs: [] },
        ],
        timeoutMs: 15_000,
        validateOnly: true,
      }),
    },
  ],
  DeleteTopics: [
    {
      versions: [6],
      args: [[{ name: 'orders', topicId: ZERO_UUID }, { name: null, topicId: AUDIT_ID }], 12_000],
      sent: () => ({ topics: [{ name: 'orders', topicId: ZERO_UUID }, { name: null, topicId: AUDIT_ID }], timeoutMs: 12_000 }),
    },
  ],
  DeleteRecords: [
    {
      versions: [2],
      args: [[{ name: 'orders', partitions: [{ partitionIndex: 1, offset: 5000n }, { partitionIndex: 4, offset: -1n }] }], 9_000],
      sent: () => ({ topics: [{ name: 'orders', partitions: [{ partitionIndex: 1, offset: 5000n }, { partitionIndex: 4, offset: -1n }] }], timeoutMs: 9_000 }),
    },
  ],
  InitProducerId: [
    { versions: range(3, 5), args: ['txn-orders-1', 60_000, 4242n, 7], sent: () => ({ transactionalId: 'txn-orders-1', transactionTimeoutMs: 60_000, producerId: 4242n, producerEpoch: 7 }) },
    { versions: range(3, 5), label: 'idempotent', args: [null, 5_000, -1n, -1], sent: () => ({ transactionalId: null, transactionTimeoutMs: 5_000, producerId: -1n, producerEpoch: -1 }) },
  ],
  OffsetForLeaderEpoch: [
    {
      versions: [4],
      args: [-1, [{ name: 'orders', partitions: [{ partitionIndex: 2, currentLeaderEpoch: 9, leaderEpoch: 8 }, { partitionIndex: 6, currentLeaderEpoch: -1, leaderEpoch: 3 }] }]],
      sent: () => ({ replicaId: -1, topics: [{ topic: 'orders', partitions: [{ partition: 2, currentLeaderEpoch: 9, leaderEpoch: 8 }, { partition: 6, currentLeaderEpoch: -1, leaderEpoch: 3 }] }] }),
    },
  ],
  AddPartitionsToTxn: [
    {
      versions: [3],
      args: [[{ transactionalId: 'txn-orders-1', producerId: 4242n, producerEpoch: 7, verifyOnly: false, topics: [{ name: 'orders', partitions: [0, 3] }, { name: 'audit', partitions: [7] }] }]],
      sent: () => ({
        v3AndBelowTransactionalId: 'txn-orders-1',
        v3AndBelowProducerId: 4242n,
        v3AndBelowProducerEpoch: 7,
        v3AndBelowTopics: [{ name: 'orders', partitions: [0, 3] }, { name: 'audit', partitions: [7] }],
      }),
    },
    {
      versions: [4, 5],
      args: [
        [
          { transactionalId: 'txn-orders-1', producerId: 4242n, producerEpoch: 7, verifyOnly: true, topics: [{ name: 'orders', partitions: [0, 3] }] },
          { transactionalId: 'txn-audit-2', producerId: 5151n, producerEpoch: 1, verifyOnly: false, topics: [{ name: 'audit', partitions: [7] }] },
        ],
      ],
      sent: () => ({
        transactions: [
          { transactionalId: 'txn-orders-1', producerId: 4242n, producerEpoch: 7, verifyOnly: true, topics: [{ name: 'orders', partitions: [0, 3] }] },
          { transactionalId: 'txn-audit-2', producerId: 5151n, producerEpoch: 1, verifyOnly: false, topics: [{ name: 'audit', partitions: [7] }] },
        ],
      }),
    },
  ],
  AddOffsetsToTxn: [
    { versions: range(1, 4), args: ['txn-orders-1', 4242n, 7, 'billing'], sent: () => ({ transactionalId: 'txn-orders-1', producerId: 4242n, producerEpoch: 7, groupId: 'billing' }) },
  ],
  EndTxn: [{ versions: [3, 4], args: ['txn-orders-1', 4242n, 7, true], sent: () => ({ transactionalId: 'txn-orders-1', producerId: 4242n, producerEpoch: 7, committed: true }) }],
  TxnOffsetCommit: [
    {
      versions: [3, 4],
      args: [
        'txn-orders-1',
        'billing',
        4242n,
        7,
        24,
        'consumer-1-6f1c',
        'billing-host-a',
        [{ name: 'orders', partitions: [{ partitionIndex: 3, committedOffset: 88n, committedLeaderEpoch: 5, committedMetadata: 'host-a' }, { partitionIndex: 0, committedOffset: 12n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      ],
      sent: () => ({
        transactionalId: 'txn-orders-1',
        groupId: 'billing',
        producerId: 4242n,
        producerEpoch: 7,
        generationId: 24,
        memberId: 'consumer-1-6f1c',
        groupInstanceId: 'billing-host-a',
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 3, committedOffset: 88n, committedLeaderEpoch: 5, committedMetadata: 'host-a' }, { partitionIndex: 0, committedOffset: 12n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      }),
    },
  ],
  DescribeAcls: [{ versions: [2, 3], args: [aclFilter], sent: () => aclFilterSent }],
  CreateAcls: [{ versions: [2, 3], args: [[aclCreation, { ...aclCreation, principal: 'User:carol', operation: 4 }]], sent: () => ({ creations: [aclCreationSent, { ...aclCreationSent, principal: 'User:carol', operation: 4 }] }) }],
  DeleteAcls: [
    {
      versions: [2, 3],
      args: [[aclFilter, { ...aclFilter, resourceName: null, principal: null, host: null }]],
      sent: () => ({ filters: [aclFilterSent, { ...aclFilterSent, resourceNameFilter: null, principalFilter: null, hostFilter: null }] }),
    },
  ],
  DescribeConfigs: [
    {
      versions: [2, 3, 4],
      args: [[{ resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms', 'cleanup.policy'] }, { resourceType: 4, resourceName: '1', configurationKeys: null }], true, true],
      sent: (v) => ({
        resources: [{ resourceType: 2, resourceName: 'orders', configurationKeys: ['retention.ms', 'cleanup.policy'] }, { resourceType: 4, resourceName: '1', configurationKeys: null }],
        includeSynonyms: true,
        ...only(v >= 3, { includeDocumentation: true }),
      }),
    },
  ],
  AlterConfigs: [
    {
      versions: [2],
      args: [[{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', value: '86400000' }, { name: 'max.message.bytes', value: null }] }], true],
      sent: () => ({ resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', value: '86400000' }, { name: 'max.message.bytes', value: null }] }], validateOnly: true }),
    },
  ],
  SaslAuthenticate: [{ versions: [2], args: [Buffer.from('\0alice\0s3cret')], sent: () => ({ authBytes: Buffer.from('\0alice\0s3cret') }) }],
  CreatePartitions: [
    {
      versions: [1, 2, 3],
      args: [[{ name: 'orders', count: 12, assignments: [{ brokerIds: [1, 2] }, { brokerIds: [2, 3] }] }, { name: 'audit', count: 4, assignments: null }], 20_000, true],
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
  DeleteGroups: [{ versions: [2], args: [['billing', 'shipping']], sent: () => ({ groupsNames: ['billing', 'shipping'] }) }],
  AlterPartitionReassignments: [
    {
      versions: [0],
      args: [20_000, false, [{ name: 'orders', partitions: [{ partitionIndex: 0, replicas: [1, 2] }, { partitionIndex: 3, replicas: [3] }] }]],
      sent: () => ({ timeoutMs: 20_000, topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, replicas: [1, 2] }, { partitionIndex: 3, replicas: [3] }] }] }),
    },
  ],
  ListPartitionReassignments: [
    {
      versions: [0],
      args: [20_000, [{ name: 'orders', partitionIndexes: [2, 0] }]],
      sent: () => ({ timeoutMs: 20_000, topics: [{ name: 'orders', partitionIndexes: [2, 0] }] }),
    },
  ],
  IncrementalAlterConfigs: [
    {
      versions: [1],
      args: [[{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', configOperation: 0, value: '86400000' }, { name: 'cleanup.policy', configOperation: 1, value: null }] }], false],
      sent: () => ({
        resources: [{ resourceType: 2, resourceName: 'orders', configs: [{ name: 'retention.ms', configOperation: 0, value: '86400000' }, { name: 'cleanup.policy', configOperation: 1, value: null }] }],
        validateOnly: false,
      }),
    },
  ],
  OffsetDelete: [
    {
      versions: [0],
      args: ['billing', [{ name: 'orders', partitions: [{ partitionIndex: 3 }, { partitionIndex: 0 }] }]],
      sent: () => ({ groupId: 'billing', topics: [{ name: 'orders', partitions: [{ partitionIndex: 3 }, { partitionIndex: 0 }] }] }),
    },
  ],
  DescribeClientQuotas: [
    {
      versions: [0],
      args: [[{ entityType: 'user', matchType: 0, match: 'alice' }, { entityType: 'client-id', matchType: 1, match: null }], true],
      sent: () => ({ components: [{ entityType: 'user', matchType: 0, match: 'alice' }, { entityType: 'client-id', matchType: 1, match: null }], strict: true }),
      departs: 'writes v1\'s flexible layout (compact strings, tagged fields) under v0, which the spec has non-flexible',
    },
  ],
  AlterClientQuotas: [
    {
      versions: [1],
      args: [[{ entities: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }, { key: 'consumer_byte_rate', remove: true }] }], false],
      sent: () => ({
        entries: [{ entity: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }, { key: 'consumer_byte_rate', value: 0, remove: true }] }],
        validateOnly: false,
      }),
    },
  ],
  DescribeUserScramCredentials: [{ versions: [0], args: [[{ name: 'alice' }, { name: 'bob' }]], sent: () => ({ users: [{ name: 'alice' }, { name: 'bob' }] }) }],
  AlterUserScramCredentials: [
    {
      versions: [0],
      args: [[{ name: 'bob', mechanism: 1 }], [{ name: 'alice', mechanism: 2, iterations: 8192, salt: Buffer.from('salt-1'), saltedPassword: Buffer.from('salted-password-1') }]],
      sent: () => ({
        deletions: [{ name: 'bob', mechanism: 1 }],
        upsertions: [{ name: 'alice', mechanism: 2, iterations: 8192, salt: Buffer.from('salt-1'), saltedPassword: Buffer.from('salted-password-1') }],
      }),
      departs: 'writes the request\'s tagged-field section twice: one byte more than the spec\'s message',
    },
  ],
  DescribeCluster: [
    { versions: [0, 1], args: [true, 2], sent: (v) => ({ includeClusterAuthorizedOperations: true, ...only(v >= 1, { endpointType: 2 }) }) },
  ],
  DescribeLogDirs: [
    { versions: [2, 3, 4], args: [[{ name: 'orders', partitions: [0, 3] }, { name: 'audit', partitions: [7] }]], sent: () => ({ topics: [{ topic: 'orders', partitions: [0, 3] }, { topic: 'audit', partitions: [7] }] }) },
  ],
  DescribeQuorum: [
    { versions: [2], args: [[{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }]], sent: () => ({ topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }) },
  ],
  DescribeProducers: [
    { versions: [0], args: [[{ name: 'orders', partitionIndexes: [0, 3] }, { name: 'audit', partitionIndexes: [7] }]], sent: () => ({ topics: [{ name: 'orders', partitionIndexes: [0, 3] }, { name: 'audit', partitionIndexes: [7] }] }) },
  ],
  DescribeTransactions: [{ versions: [0], args: [['txn-orders-1', 'txn-audit-2']], sent: () => ({ transactionalIds: ['txn-orders-1', 'txn-audit-2'] }) }],
  ListTransactions: [
    {
      versions: [0, 1],
      args: [['Ongoing', 'PrepareCommit'], [4242n, 5151n], 600_000n, null],
      sent: (v) => ({ stateFilters: ['Ongoing', 'PrepareCommit'], producerIdFilters: [4242n, 5151n], ...only(v >= 1, { durationFilter: 600_000n }) }),
    },
  ],
  ConsumerGroupHeartbeat: [
    {
      versions: [0, 1],
      args: ['billing', 'member-7Hq2', 3, 'billing-host-a', 'rack-b', 45_000, ['orders', 'audit'], 'orders-.*', 'uniform', [{ topicId: ORDERS_ID, partitions: [0, 3] }, { topicId: AUDIT_ID, partitions: [7] }]],
      sent: (v) => ({
        groupId: 'billing',
        memberId: 'member-7Hq2',
        memberEpoch: 3,
        instanceId: 'billing-host-a',
        rackId: 'rack-b',
        rebalanceTimeoutMs: 45_000,
        subscribedTopicNames: ['orders', 'audit'],
        ...only(v >= 1, { subscribedTopicRegex: 'orders-.*' }),
        serverAssignor: 'uniform',
        topicPartitions: [{ topicId: ORDERS_ID, partitions: [0, 3] }, { topicId: AUDIT_ID, partitions: [7] }],
      }),
    },
    {
      versions: [0, 1],
      label: 'leaving, nothing changed',
      args: ['billing', 'member-7Hq2', -1, null, null, -1, null, null, null, null],
      sent: (v) => ({
        groupId: 'billing',
        memberId: 'member-7Hq2',
        memberEpoch: -1,
        instanceId: null,
        rackId: null,
        rebalanceTimeoutMs: -1,
        subscribedTopicNames: null,
        ...only(v >= 1, { subscribedTopicRegex: null }),
        serverAssignor: null,
        topicPartitions: null,
      }),
    },
  ],
  ConsumerGroupDescribe: [{ versions: [0], args: [['billing', 'shipping'], true], sent: () => ({ groupIds: ['billing', 'shipping'], includeAuthorizedOperations: true }) }],
  DescribeTopicPartitions: [
    {
      versions: [0],
      label: 'from a cursor',
      args: [[{ name: 'orders' }, { name: 'audit' }], 2000, { topicName: 'orders', partitionIndex: 17 }],
      sent: () => ({ topics: [{ name: 'orders' }, { name: 'audit' }], responsePartitionLimit: 2000, cursor: { topicName: 'orders', partitionIndex: 17 } }),
    },
    {
      versions: [0],
      label: 'from the start',
      args: [[{ name: 'orders' }], 500, undefined],
      sent: () => ({ topics: [{ name: 'orders' }], responsePartitionLimit: 500, cursor: null }),
    },
  ],
};

// Departures that apply to a whole version rather than to one row's arguments.
const VERSION_DEPARTS: Record<string, string> = {
  'Metadata v11': 'writes IncludeClusterAuthorizedOperations, which the spec has only in v8-v10',
  'DescribeConfigs v2': 'writes IncludeDocumentation, which the spec adds in v3',
};

// ---------------------------------------------------------------- generated cases

const versions = await platformaticVersions();
const rowsFor = (name: string, version: number): Row[] => (PLATFORMATIC[name] ?? []).filter((r) => r.versions.includes(version));

const cases = versions.flatMap((c) =>
  rowsFor(c.api.name, c.version).map((row) => {
    const title = `${c.api.name} v${c.version}`;
    return [`${title}${row.label ? ` (${row.label})` : ''}`, c, row, row.departs ?? VERSION_DEPARTS[title]] as const;
  }),
);

describe('our codec decodes the requests @platformatic/kafka encodes', () => {
  it('covers every version it has within what we serve', () => {
    expect(versions.length).toBeGreaterThan(80);
    expect(versions.filter((c) => rowsFor(c.api.name, c.version).length === 0).map((c) => `${c.api.name} v${c.version}`)).toEqual([]);
  });

  it('has no table rows for versions it lacks', () => {
    const stale = Object.entries(PLATFORMATIC).flatMap(([name, rows]) =>
      rows.flatMap((r) => r.versions.filter((v) => !versions.some((c) => c.api.name === name && c.version === v)).map((v) => `${name} v${v}`)),
    );
    expect(stale).toEqual([]);
    expect(Object.keys(VERSION_DEPARTS).filter((t) => !cases.some(([title]) => title === t))).toEqual([]);
  });

  it('notices a tagged-field section read as anything but one', () => {
    const [, c, row] = cases.find(([title]) => title === 'Heartbeat v4')!;
    const body = c.module.createRequest(...row.args).buffer;
    expect(() => expectDecodesAs(c.api, 4, Buffer.concat([body, Buffer.from([0])]), row.sent(4))).toThrow();
    expect(() => expectDecodesAs(c.api, 4, body.subarray(0, body.length - 1), row.sent(4))).toThrow();
    expect(() => expectDecodesAs(c.api, 4, body, { ...row.sent(4), generationId: 22 })).toThrow();
  });

  it('reads the tagged fields a newer client puts where platformatic leaves its section empty', () => {
    const [, c, row] = cases.find(([title]) => title === 'Fetch v15')!;
    const body = c.module.createRequest(...row.args).buffer;
    expect(body.at(-1), 'platformatic ends the request with an empty tagged section').toBe(0);
    // ClusterId (tag 0, compact string "cl"), then ReplicaState (tag 1, 13 bytes: replica 5, epoch 9, empty section).
    const tags = Buffer.from('02' + '00' + '03' + '03636c' + '01' + '0d' + '00000005' + '0000000000000009' + '00', 'hex');
    const filled = Buffer.concat([body.subarray(0, -1), tags]);
    expectDecodesAs(c.api, 15, filled, { ...row.sent(15), clusterId: 'cl', replicaState: { replicaId: 5, replicaEpoch: 9n } });
  });

  describe.each(cases)('%s', (_title, c, row, departs) => {
    (departs ? it.fails : it)(departs ? `departs from the spec: ${departs}` : 'decodes field for field, every byte read', () => {
      const body = c.module.createRequest(...row.args).buffer;
      const decoded = expectDecodesAs(c.api, c.version, body, row.sent(c.version));
      row.check?.(decoded);
    });
  });
});

/**
 * The cluster as an admin user sees it: kafkajs 2.2.4's describeCluster and
 * fetchTopicMetadata, DescribeCluster v0-v1 raw, and DescribeTopicPartitions
 * (KIP-966, which kafkajs lacks) raw, with its cursor paging.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { CLUSTER_ID, NODE_ID, startAdminHarness, type AdminHarness } from './admin-support.js';

describe('admin: cluster', () => {
  let h: AdminHarness;
  beforeAll(async () => {
    h = await startAdminHarness();
    await h.admin.createTopics({
      topics: [
        { topic: 'alpha', numPartitions: 3 },
        { topic: 'beta', numPartitions: 2 },
        { topic: 'gamma', numPartitions: 1 },
      ],
    });
  });
  afterAll(async () => {
    await h?.stop();
  });

  describe('DescribeCluster', () => {
    it('kafkajs sees one broker, this gateway, which is also the controller', async () => {
      const cluster = await h.admin.describeCluster();
      expect(cluster).toEqual({ clusterId: CLUSTER_ID, controller: NODE_ID, brokers: [{ nodeId: NODE_ID, host: h.broker.host, port: h.broker.port }] });
    });

    it('answers the cluster id, controller and brokers in v0 and v1, with the endpoint type in v1', async () => {
      for (const version of [0, 1]) {
        const answer = await h.request(ApiKey.DescribeCluster, version, { includeClusterAuthorizedOperations: false, endpointType: 1 });
        expect(answer).toMatchObject({
          errorCode: 0,
          clusterId: CLUSTER_ID,
          controllerId: NODE_ID,
          brokers: [{ brokerId: NODE_ID, host: h.broker.host, port: h.broker.port, rack: null }],
        });
        if (version === 1) expect(answer.endpointType).toBe(1);
      }
    });

    it('refuses controller endpoints (v1) with MISMATCHED_ENDPOINT_TYPE and unknown types with UNSUPPORTED_ENDPOINT_TYPE', async () => {
      const controller = await h.request(ApiKey.DescribeCluster, 1, { includeClusterAuthorizedOperations: false, endpointType: 2 });
      expect(controller).toMatchObject({ errorCode: ErrorCode.MISMATCHED_ENDPOINT_TYPE, brokers: [] });
      expect(controller.errorMessage).toMatch(/broker endpoints/);
      const unknown = await h.request(ApiKey.DescribeCluster, 1, { includeClusterAuthorizedOperations: false, endpointType: 9 });
      expect(unknown.errorCode).toBe(ErrorCode.UNSUPPORTED_ENDPOINT_TYPE);
    });
  });

  it('kafkajs fetchTopicMetadata shows each partition led by this gateway', async () => {
    const { topics } = await h.admin.fetchTopicMetadata({ topics: ['alpha', 'beta'] });
    expect(topics.map((t) => [t.name, t.partitions.length]).sort()).toEqual([
      ['alpha', 3],
      ['beta', 2],
    ]);
    for (const p of topics.flatMap((t) => t.partitions)) expect(p).toMatchObject({ leader: NODE_ID, replicas: [NODE_ID], isr: [NODE_ID] });
  });

  describe('DescribeTopicPartitions', () => {
    const describeTopics = (topics: string[], responsePartitionLimit = 2000, cursor: { topicName: string; partitionIndex: number } | null = null) =>
      h.request(ApiKey.DescribeTopicPartitions, 0, { topics: topics.map((name) => ({ name })), responsePartitionLimit, cursor });

    /** [topic, partition] pairs an answer carries, in order. */
    const pairs = (answer: Message) => answer.topics.flatMap((t: Message) => t.partitions.map((p: Message) => [t.name, p.partitionIndex]));

    it('describes topics in name order with ids, leader, replicas and ISR', async () => {
      const answer = await describeTopics(['gamma', 'alpha']);
      expect(answer.topics.map((t: Message) => t.name)).toEqual(['alpha', 'gamma']);
      expect(answer.topics[0].topicId).toBe((await h.broker.core.describeQueue({ name: 'alpha' }))!.id);
      expect(answer.topics[0].partitions[1]).toMatchObject({
        errorCode: 0,
        partitionIndex: 1,
        leaderId: NODE_ID,
        leaderEpoch: 0,
        replicaNodes: [NODE_ID],
        isrNodes: [NODE_ID],
        offlineReplicas: [],
        eligibleLeaderReplicas: [],
        lastKnownElr: [],
      });
      expect(answer.nextCursor).toBeNull();
    });

    it('pages by the response partition limit, and the cursor picks up where the last page stopped', async () => {
      const first = await describeTopics(['alpha', 'beta', 'gamma'], 4);
      expect(pairs(first)).toEqual([
        ['alpha', 0],
        ['alpha', 1],
        ['alpha', 2],
        ['beta', 0],
      ]);
      expect(first.nextCursor).toEqual({ topicName: 'beta', partitionIndex: 1 });

      const second = await describeTopics(['alpha', 'beta', 'gamma'], 4, first.nextCursor);
      expect(pairs(second)).toEqual([
        ['beta', 1],
        ['gamma', 0],
      ]);
      expect(second.nextCursor).toBeNull();

      // A page that ends exactly at a topic's end points the cursor at the next topic.
      const exact = await describeTopics(['alpha', 'beta'], 3);
      expect(pairs(exact)).toEqual([
        ['alpha', 0],
        ['alpha', 1],
        ['alpha', 2],
      ]);
      expect(exact.nextCursor).toEqual({ topicName: 'beta', partitionIndex: 0 });
    });

    it('describes every topic when none are named', async () => {
      const answer = await describeTopics([]);
      expect(answer.topics.map((t: Message) => t.name)).toEqual(['alpha', 'beta', 'gamma']);
    });

    it('answers UNKNOWN_TOPIC_OR_PARTITION for a missing topic, and INVALID_REQUEST for a cursor outside the named topics', async () => {
      const answer = await describeTopics(['alpha', 'missing']);
      expect(answer.topics.map((t: Message) => [t.name, t.errorCode, t.partitions.length])).toEqual([
        ['alpha', 0, 3],
        ['missing', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 0],
      ]);

      const stray = await describeTopics(['alpha'], 10, { topicName: 'beta', partitionIndex: 0 });
      expect(stray.topics.map((t: Message) => [t.name, t.errorCode])).toEqual([['alpha', ErrorCode.INVALID_REQUEST]]);
    });
  });
});

/**
 * DescribeQuorum and DescribeLogDirs called in process (./in-process.ts), at
 * every version served: the live gateways as the metadata quorum's voters
 * with the lowest id leading, the topic catalogue's partition count as its
 * offsets; one log dir per gateway holding each partition with the bytes the
 * core stores for it; and the cluster ACL both need.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import type { ClusterNode } from '../../../src/cluster/membership.js';
import { recordBatch } from '../../core/behaviour.js';
import { InProcessGateway, named } from './in-process.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

function gatewayNode(nodeId: number, port: number): ClusterNode {
  return { nodeId, host: 'gateway.test', port, rack: null, listeners: { PLAINTEXT: { host: 'gateway.test', port } }, core: 'core-a:7070', startedAt: 0 };
}

function versions(apiKey: number, gw: InProcessGateway): number[] {
  const { min, max } = gw.versionsOf(apiKey);
  return Array.from({ length: max - min + 1 }, (_, i) => min + i);
}

describe('DescribeQuorum', () => {
  // Three live gateways, this one (node 7) not the lowest.
  const self = gatewayNode(7, 19097);
  const nodes = [gatewayNode(4, 19094), self, gatewayNode(9, 19099)];
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await InProcessGateway.open({ settings: { advertised: { nodeId: 7, host: 'gateway.test', port: 19097, rack: null }, cluster: { self, liveNodes: () => nodes } } });
    await gw.core.createQueue({ name: 'quorum-a', partitions: 3 });
    await gw.core.createQueue({ name: 'quorum-b', partitions: 2 });
  });
  afterAll(() => gw.close());

  const asked = { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] };

  it('serves v0 to v2, what kafka-metadata-quorum.sh asks', () => {
    expect(gw.versionsOf(ApiKey.DescribeQuorum)).toEqual({ min: 0, max: 2 });
  });

  it.each([0, 1, 2])('v%i: every live gateway a caught-up voter, the lowest id leading, the partition count as the offsets', async (version) => {
    const response = await gw.answer(ApiKey.DescribeQuorum, version, asked);
    expect(named(response.errorCode)).toBe('NONE');
    const [partition] = response.topics[0].partitions;
    expect(named(partition.errorCode)).toBe('NONE');
    expect(partition).toMatchObject({ partitionIndex: 0, leaderId: 4, leaderEpoch: 0, highWatermark: 5n, observers: [] });
    expect(partition.currentVoters.map((v: Message) => [v.replicaId, v.logEndOffset])).toEqual([[4, 5n], [7, 5n], [9, 5n]]);
    if (version >= 1) {
      const leader = partition.currentVoters[0];
      expect(leader.lastFetchTimestamp).toBe(-1n);
      expect(Number(leader.lastCaughtUpTimestamp)).toBeGreaterThan(Date.now() - 60_000);
      expect(Number(partition.currentVoters[1].lastFetchTimestamp)).toBeGreaterThan(Date.now() - 60_000);
    }
    if (version >= 2) {
      expect(partition.currentVoters.every((v: Message) => v.replicaDirectoryId === ZERO_UUID)).toBe(true);
      expect(response.nodes).toEqual([
        { nodeId: 4, listeners: [{ name: 'PLAINTEXT', host: 'gateway.test', port: 19094 }] },
        { nodeId: 7, listeners: [{ name: 'PLAINTEXT', host: 'gateway.test', port: 19097 }] },
        { nodeId: 9, listeners: [{ name: 'PLAINTEXT', host: 'gateway.test', port: 19099 }] },
      ]);
    }
  });

  it('moves its high watermark when a topic is created', async () => {
    await gw.core.createQueue({ name: 'quorum-c', partitions: 4 });
    const response = await gw.answer(ApiKey.DescribeQuorum, 2, asked);
    expect(response.topics[0].partitions[0].highWatermark).toBe(9n);
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION for anything but __cluster_metadata-0', async () => {
    const response = await gw.answer(ApiKey.DescribeQuorum, 2, { topics: [{ topicName: 'quorum-a', partitions: [{ partitionIndex: 0 }] }, { topicName: '__cluster_metadata', partitions: [{ partitionIndex: 1 }] }] });
    expect(named(response.errorCode)).toBe('NONE');
    for (const topic of response.topics) {
      expect(named(topic.partitions[0].errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
      expect(topic.partitions[0].errorMessage).toMatch(/__cluster_metadata partition 0/);
    }
    expect(response.nodes).toEqual([]);
  });
});

describe('DescribeLogDirs', () => {
  let gw: InProcessGateway;
  const stored = { a: [recordBatch(['one']), recordBatch(['two', 'three'])], b: [recordBatch(['four'])] };
  beforeAll(async () => {
    gw = await InProcessGateway.open({ settings: { advertised: { nodeId: 0, host: '127.0.0.1', port: 19092, rack: null } } });
    await gw.core.createQueue({ name: 'dirs-a', partitions: 2 });
    await gw.core.createQueue({ name: 'dirs-b', partitions: 1 });
    for (const records of stored.a) await gw.core.append({ partitions: [{ queue: 'dirs-a', partition: 0, records }] });
    for (const records of stored.b) await gw.core.append({ partitions: [{ queue: 'dirs-b', partition: 0, records }] });
  });
  afterAll(() => gw.close());

  const bytes = (batches: Buffer[]) => BigInt(batches.reduce((sum, b) => sum + b.length, 0));

  it('serves v1 to v4 (Kafka 4 clients start at v1)', () => {
    expect(gw.versionsOf(ApiKey.DescribeLogDirs)).toEqual({ min: 1, max: 4 });
  });

  it.each([1, 2, 3, 4])('v%i: one log dir, the core, holding every partition with its stored bytes', async (version) => {
    const response = await gw.answer(ApiKey.DescribeLogDirs, version, { topics: null });
    expect(response.results).toHaveLength(1);
    const [dir] = response.results;
    expect(named(dir.errorCode)).toBe('NONE');
    expect(dir.logDir).toBe('queen-core://in-process:127.0.0.1:19092');
    const sizes = Object.fromEntries(dir.topics.flatMap((t: Message) => t.partitions.map((p: Message) => [`${t.name}-${p.partitionIndex}`, p.partitionSize])));
    expect(sizes).toEqual({ 'dirs-a-0': bytes(stored.a), 'dirs-a-1': 0n, 'dirs-b-0': bytes(stored.b) });
    expect(dir.topics.flatMap((t: Message) => t.partitions).every((p: Message) => p.offsetLag === 0n && p.isFutureKey === false)).toBe(true);
    if (version >= 4) expect([dir.totalBytes, dir.usableBytes]).toEqual([-1n, -1n]);
  });

  it('answers only the partitions asked for that exist, leaving out unknown topics, names no topic can have, and unknown partitions', async () => {
    const response = await gw.answer(ApiKey.DescribeLogDirs, 4, { topics: [{ topic: 'dirs-a', partitions: [0, 5] }, { topic: 'no-such-topic', partitions: [0] }, { topic: 'no such topic ✯', partitions: [0] }] });
    expect(response.results[0].topics).toEqual([{ name: 'dirs-a', partitions: [{ partitionIndex: 0, partitionSize: bytes(stored.a), offsetLag: 0n, isFutureKey: false }] }]);
  });
});

describe('the cluster ACL both need', () => {
  let gw: InProcessGateway;
  beforeAll(async () => {
    gw = await InProcessGateway.open({ authorization: { enabled: true, superUsers: ['User:admin'] } });
  });
  afterAll(() => gw.close());

  it('answers CLUSTER_AUTHORIZATION_FAILED without DESCRIBE on the cluster, and the quorum and log dirs to a principal that has it', async () => {
    const stranger = gw.openConnection().as('User:stranger');
    const quorum = await gw.answer(ApiKey.DescribeQuorum, 2, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }, { connection: stranger });
    expect(named(quorum.errorCode)).toBe('CLUSTER_AUTHORIZATION_FAILED');
    expect(quorum.errorMessage).toMatch(/DESCRIBE on the cluster/);
    const dirs = await gw.answer(ApiKey.DescribeLogDirs, 4, { topics: null }, { connection: stranger });
    expect(named(dirs.errorCode)).toBe('CLUSTER_AUTHORIZATION_FAILED');
    expect(dirs.results).toEqual([]);

    const admin = gw.openConnection().as('User:admin');
    expect(named((await gw.answer(ApiKey.DescribeQuorum, 2, { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] }, { connection: admin })).errorCode)).toBe('NONE');
    expect((await gw.answer(ApiKey.DescribeLogDirs, 4, { topics: null }, { connection: admin })).results).toHaveLength(1);
  });
});

/**
 * Several gateways as one Kafka cluster, through a real Redis and a real
 * client (kafkajs admin): each gateway registers in the node registry, every
 * gateway lists all live ones in Metadata and DescribeCluster with the same
 * cluster id, the same controller and the same leader for each partition; a
 * gateway that stops leaves the list and its partitions move; a Redis that
 * goes away leaves each gateway listing itself alone after a TTL, and its
 * return brings the full list back. (The gateways here share one memory
 * core in this process; the cluster's data paths, over PostgreSQL and the
 * RPC, are in test/e2e/cluster.test.ts.)
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core/index.js';
import { startBroker, type Broker, type StartBrokerOptions } from '../../src/index.js';
import { derivedNodeId, partitionLeader } from '../../src/cluster/leadership.js';
import { ApiKey } from '../../protocol/api-keys.js';
import { sleep, waitFor } from '../support/eventually.js';
import { freePort } from '../support/gateway.js';
import { RawConnection } from '../support/raw-connection.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { redisServerMissing, startRedis, type TestRedis } from '../support/redis.js';

const missing = redisServerMissing();
const TTL_MS = 900;

describe.skipIf(missing !== null)('gateways registered in Redis', () => {
  let redis: TestRedis;
  let core: Core;
  const running: Broker[] = [];
  let prefixCounter = 0;

  beforeAll(async () => {
    redis = await startRedis();
    core = await openCore({ engine: 'memory' });
  });
  afterAll(async () => {
    await redis?.stop();
    await core?.close();
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((b) => b.stop()));
    if (!redis.running) await redis.start();
  });

  async function gateways(count: number, extra: Partial<StartBrokerOptions> = {}): Promise<Broker[]> {
    const keyPrefix = `membership-${process.pid}-${++prefixCounter}`;
    const started: Broker[] = [];
    // One at a time: each may derive its node id from its own free port only.
    for (let i = 0; i < count; i++) {
      const broker = await startBroker({ core, defaultPartitions: 12, cluster: { redisUrl: redis.url, nodeTtlMs: TTL_MS, keyPrefix }, ...extra });
      running.push(broker);
      started.push(broker);
    }
    // A gateway reads the registry on its heartbeat: the first one learns of the later ones within a beat.
    for (const broker of started) {
      await waitFor(async () => (await clusterSeenThrough(broker)).brokers.length === count, { what: `${broker.bootstrap} to list all ${count} gateways`, timeoutMs: 10_000 });
    }
    return started;
  }

  async function clusterSeenThrough(broker: Broker) {
    const admin = kafkajsClient(broker.bootstrap, { retries: 2 }).admin();
    await admin.connect();
    try {
      const cluster = await admin.describeCluster();
      return { ...cluster, brokers: cluster.brokers.map((b) => ({ nodeId: b.nodeId, address: `${b.host}:${b.port}` })).sort((a, b) => a.nodeId - b.nodeId) };
    } finally {
      await admin.disconnect();
    }
  }

  async function leadersSeenThrough(broker: Broker, topic: string) {
    const admin = kafkajsClient(broker.bootstrap, { retries: 2 }).admin();
    await admin.connect();
    try {
      await admin.createTopics({ topics: [{ topic, numPartitions: 12 }] });
      const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
      return topics[0]!.partitions.sort((a, b) => a.partitionId - b.partitionId).map((p) => ({ partition: p.partitionId, leader: p.leader, replicas: p.replicas, isr: p.isr }));
    } finally {
      await admin.disconnect();
    }
  }

  it('lists every live gateway from every gateway, with one cluster id, one controller and the same leaders', async () => {
    const three = await gateways(3);
    const ids = three.map((b) => derivedNodeId(b.host, b.port)).sort((a, b) => a - b);
    const views = await Promise.all(three.map(clusterSeenThrough));
    for (const view of views) {
      expect(view.brokers).toEqual(three.map((b) => ({ nodeId: derivedNodeId(b.host, b.port), address: b.bootstrap })).sort((a, b) => a.nodeId - b.nodeId));
      expect(view.controller).toBe(ids[0]);
      expect(view.clusterId).toBe(views[0]!.clusterId);
    }

    const leaders = await Promise.all(three.map((b) => leadersSeenThrough(b, 'spread')));
    expect(leaders[1]).toEqual(leaders[0]);
    expect(leaders[2]).toEqual(leaders[0]);
    // Every gateway is a replica and in sync; the leader comes first.
    for (const p of leaders[0]!) {
      expect([...p.replicas].sort((a, b) => a - b)).toEqual(ids);
      expect(p.isr).toEqual(p.replicas);
      expect(p.replicas[0]).toBe(p.leader);
    }
    // Twelve partitions over three gateways: each leads some.
    expect(new Set(leaders[0]!.map((p) => p.leader))).toEqual(new Set(ids));
  });

  it("moves a stopped gateway's partitions to the others and keeps the rest where they were", async () => {
    const [a, b, c] = await gateways(3);
    const before = await leadersSeenThrough(a!, 'moves');
    const goneId = derivedNodeId(c!.host, c!.port);
    await c!.stop();
    running.splice(running.indexOf(c!), 1);
    // It left the registry as it stopped; the others read it on their next heartbeat.
    for (const broker of [a!, b!]) {
      await waitFor(async () => !(await clusterSeenThrough(broker)).brokers.some((x) => x.nodeId === goneId), { what: `${broker.bootstrap} to drop the stopped gateway`, timeoutMs: 10_000 });
    }
    const after = await leadersSeenThrough(b!, 'moves');
    expect(after.map((p) => p.leader)).not.toContain(goneId);
    for (const [i, p] of before.entries()) {
      if (p.leader !== goneId) expect(after[i]!.leader).toBe(p.leader);
    }
    expect((await clusterSeenThrough(a!)).brokers.map((x) => x.nodeId)).not.toContain(goneId);
  });

  it('refuses a second gateway at another address under a live node id, saying which', async () => {
    const [first] = await gateways(1, { nodeId: 7 });
    const keyPrefix = `membership-${process.pid}-${prefixCounter}`;
    await expect(startBroker({ core, nodeId: 7, cluster: { redisUrl: redis.url, nodeTtlMs: TTL_MS, keyPrefix } })).rejects.toThrow(
      `Node id 7 is already held by the live gateway at ${first!.bootstrap}; give this gateway another --node-id`,
    );
  });

  it('refuses to start against a Redis that does not answer, naming it', async () => {
    await redis.stop();
    await expect(startBroker({ core, cluster: { redisUrl: redis.url } })).rejects.toThrow(`Redis at redis://127.0.0.1:${redis.port} could not be reached`);
  });

  it('lists itself alone a TTL after Redis goes away, and everyone again once it is back', async () => {
    const two = await gateways(2);
    await waitFor(async () => (await clusterSeenThrough(two[0]!)).brokers.length === 2, { what: 'both gateways listed' });
    await redis.stop();
    for (const broker of two) {
      await waitFor(async () => (await clusterSeenThrough(broker)).brokers.length === 1, { what: `${broker.bootstrap} to list itself alone`, timeoutMs: 15_000 });
    }
    for (const broker of two) expect((await clusterSeenThrough(broker)).brokers).toEqual([{ nodeId: derivedNodeId(broker.host, broker.port), address: broker.bootstrap }]);
    // Alone, a gateway leads every partition, which it can: any gateway serves any partition.
    const alone = await leadersSeenThrough(two[0]!, 'alone');
    expect(new Set(alone.map((p) => p.leader))).toEqual(new Set([derivedNodeId(two[0]!.host, two[0]!.port)]));

    await redis.start();
    for (const broker of two) {
      await waitFor(async () => (await clusterSeenThrough(broker)).brokers.length === 2, { what: `${broker.bootstrap} to list both gateways again`, timeoutMs: 15_000 });
    }
  });

  it('a gateway whose core stops answering leaves every list, its own included, and comes back with its core', async () => {
    let coreAnswers = true;
    const [a, b] = await gateways(2);
    const keyPrefix = `membership-${process.pid}-${prefixCounter}`;
    const c = await startBroker({ core, defaultPartitions: 12, cluster: { redisUrl: redis.url, nodeTtlMs: TTL_MS, keyPrefix, serving: () => coreAnswers } });
    running.push(c);
    const cId = derivedNodeId(c.host, c.port);
    for (const broker of [a!, b!, c]) await waitFor(async () => (await clusterSeenThrough(broker)).brokers.length === 3, { what: `${broker.bootstrap} to list all three`, timeoutMs: 10_000 });

    coreAnswers = false;
    for (const broker of [a!, b!, c]) {
      await waitFor(async () => !(await clusterSeenThrough(broker)).brokers.some((x) => x.nodeId === cId), { what: `${broker.bootstrap} to drop the gateway without a core`, timeoutMs: 10_000 });
    }
    // Clients asking the withdrawn gateway are sent to the two that can serve them, and no partition is led by it.
    expect((await clusterSeenThrough(c)).brokers.map((x) => x.address).sort()).toEqual([a!.bootstrap, b!.bootstrap].sort());
    expect((await leadersSeenThrough(a!, 'withdrawn')).map((p) => p.leader)).not.toContain(cId);

    coreAnswers = true;
    for (const broker of [a!, b!, c]) await waitFor(async () => (await clusterSeenThrough(broker)).brokers.length === 3, { what: `${broker.bootstrap} to list it again`, timeoutMs: 10_000 });
  });

  it('answers no Kafka request before it has joined: a client that connects meanwhile waits, then sees every gateway', async () => {
    // Answered as a lone gateway, a Metadata request made a client drop its handles to the others ("Broker handle destroyed").
    const [a] = await gateways(1);
    const keyPrefix = `membership-${process.pid}-${prefixCounter}`;
    const port = await freePort();
    process.kill(redis.pid!, 'SIGSTOP');
    let joining: Promise<Broker> | null = null;
    let raw: RawConnection | null = null;
    try {
      // Its listener is bound at once; its join waits on the frozen Redis.
      joining = startBroker({ core, port, defaultPartitions: 12, cluster: { redisUrl: redis.url, nodeTtlMs: TTL_MS, keyPrefix } });
      joining.catch(() => {});
      await waitFor(async () => (raw = await RawConnection.open(port).catch(() => null)) !== null, { what: `the new gateway to listen on ${port}`, timeoutMs: 10_000 });
      let answered = false;
      const metadata = raw!.request(ApiKey.Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }, 30_000).finally(() => (answered = true));
      await sleep(1_000);
      expect(answered, 'a gateway that has not joined answered Metadata').toBe(false);
      process.kill(redis.pid!, 'SIGCONT');
      const listed = ((await metadata).brokers as { port: number }[]).map((b) => b.port).sort((x, y) => x - y);
      expect(listed).toEqual([a!.port, port].sort((x, y) => x - y));
      running.push(await joining);
    } finally {
      process.kill(redis.pid!, 'SIGCONT');
      (raw as RawConnection | null)?.destroy();
    }
  });

  it('a gateway without Redis is node 0 and alone, as before', async () => {
    const broker = await startBroker({ core });
    running.push(broker);
    const view = await clusterSeenThrough(broker);
    expect(view.brokers).toEqual([{ nodeId: 0, address: broker.bootstrap }]);
    expect(view.controller).toBe(0);
  });
});

describe('partition leadership by rendezvous hash', () => {
  it('spreads partitions evenly and moves only the dead node\'s when one leaves', () => {
    const nodes = [1001, 2002, 3003];
    const led = new Map<number, number>();
    const moved: number[] = [];
    for (let p = 0; p < 3000; p++) {
      const leader = partitionLeader(nodes, 'orders', p);
      led.set(leader, (led.get(leader) ?? 0) + 1);
      const after = partitionLeader([1001, 2002], 'orders', p);
      if (after !== leader) moved.push(leader);
    }
    for (const n of nodes) expect(led.get(n)).toBeGreaterThan(800);
    expect(new Set(moved)).toEqual(new Set([3003]));
    expect(moved.length).toBe(led.get(3003));
  });

  it('gives the same answer whatever order the nodes are listed in', () => {
    for (let p = 0; p < 100; p++) expect(partitionLeader([3, 1, 2], 't', p)).toBe(partitionLeader([1, 2, 3], 't', p));
  });
});

/**
 * Coordinator leases with real processes and real clients: two `serve` nodes
 * (each a gateway and its own core) on one PostgreSQL schema and one Redis.
 *
 * - A consumer group with one member bootstrapped on each node works, and
 *   when the node whose core coordinates it is SIGKILLed, the lease moves to
 *   the other core within the session timeout and the members carry on with
 *   their membership (no rebalance), their committed offsets kept and no
 *   record read twice (every commit was acknowledged before the kill); the
 *   same for a KIP-848 group (librdkafka, group.protocol=consumer), whose
 *   group and member epochs the new coordinator holds unchanged.
 * - An owner frozen (SIGSTOP) past its lease deadline, then thawed, has the
 *   member's commit it received while frozen refused with NOT_COORDINATOR
 *   (what clients answer by finding the coordinator again), and nothing it
 *   would have written is written.
 * - A transactional producer whose coordinator's node is SIGKILLed between
 *   its sends and its commit completes the transaction on the new owner:
 *   a read_committed consumer reads every record once.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { encodeRequestFrame } from '../../protocol/frames.js';
import { waitFor } from '../support/eventually.js';
import { coordinatorOf, startNode, untilEachListsAll, type QueenNode } from '../support/coordinator-nodes.js';
import { produceSequenced, sequenceCounts, spawnMembers, waitForAllRecords, waitForCover, type MemberProcess } from '../support/groups-members.js';
import { findTestDatabase } from '../support/postgres.js';
import { RawConnection } from '../support/raw-connection.js';
import { createTopic, readRecords } from '../support/rdkafka.js';
import { redisServerMissing, startRedis, type TestRedis } from '../support/redis.js';
import { Kafka, logLevel } from 'kafkajs';

const LEASE_MS = 3_000;
const NODE_TTL_MS = 1_500;
const SESSION_MS = 15_000;
const PARTITIONS = 4;

const found = await findTestDatabase();
const skipReason = found.database === null ? found.skipReason : redisServerMissing();

describe.skipIf(skipReason !== null)(`coordinator leases across processes${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  const database = found.database!;
  let redis: TestRedis;
  let schema: string;
  let nodes: QueenNode[] = [];
  let members: MemberProcess | null = null;

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
    await database?.release();
  });
  afterEach(async () => {
    await members?.close().catch(() => {});
    members = null;
    await Promise.all(nodes.map((n) => n.stop()));
    nodes = [];
  });

  async function startCluster(count: number): Promise<QueenNode[]> {
    schema = database.freshSchema('queen_leases');
    const clusterId = randomBytes(16).toString('base64url');
    const prefix = `leases-${randomBytes(4).toString('hex')}`;
    const redisUrl = `${redis.url}`;
    // One at a time: the first migrates the schema.
    for (let i = 0; i < count; i++) {
      nodes.push(await startNode({ databaseUrl: database.url, schema, redisUrl, clusterId, leaseMs: LEASE_MS, nodeTtlMs: NODE_TTL_MS, keyPrefix: prefix }));
    }
    // Clients bootstrapped from any node must learn of all of them, to move when one dies.
    await untilEachListsAll(nodes);
    return nodes;
  }

  async function storedGroup(group: string): Promise<{ generationId: number; members: { memberId: string }[] } | null> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT state FROM "${schema}".group_states WHERE group_name = $1`, [group]);
      return (rows[0]?.state as { generationId: number; members: { memberId: string }[] } | undefined) ?? null;
    } finally {
      await client.end();
    }
  }

  /** A KIP-848 group's stored state (migration 010): its group epoch and each member's epoch. */
  async function storedConsumerGroup(group: string): Promise<{ groupEpoch: number; members: { memberId: string; memberEpoch: number }[] } | null> {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT state FROM "${schema}".consumer_group_states WHERE group_name = $1`, [group]);
      return (rows[0]?.state as { groupEpoch: number; members: { memberId: string; memberEpoch: number }[] } | undefined) ?? null;
    } finally {
      await client.end();
    }
  }

  /** What says the group was not rebuilt: the classic generation, or the KIP-848 group epoch and member epochs. */
  async function membershipOf(group: string, protocol: 'classic' | 'consumer'): Promise<unknown> {
    if (protocol === 'classic') return (await storedGroup(group))?.generationId;
    const stored = await storedConsumerGroup(group);
    return stored && { groupEpoch: stored.groupEpoch, members: stored.members.map((m) => `${m.memberId}@${m.memberEpoch}`).sort() };
  }

  it.each(['classic', 'consumer'] as const)('moves a %s group to the surviving core when its coordinator\'s node is SIGKILLed: members keep their membership and offsets, nothing read twice', async (groupProtocol) => {
    const [a, b] = await startCluster(2);
    const topic = `moves-${randomBytes(4).toString('hex')}`;
    await createTopic(a!.bootstrap, topic, PARTITIONS);
    const group = `group-${randomBytes(4).toString('hex')}`;
    members = await spawnMembers([
      { bootstrap: a!.bootstrap, group, topic, name: 'on-a', sessionTimeoutMs: SESSION_MS, commit: 'sync', groupProtocol },
      { bootstrap: b!.bootstrap, group, topic, name: 'on-b', sessionTimeoutMs: SESSION_MS, commit: 'sync', groupProtocol },
    ]);
    const views = members.members;
    await waitForCover(views, PARTITIONS, 'the group over both nodes', 60_000);
    await produceSequenced(`${a!.bootstrap},${b!.bootstrap}`, topic, 'first', 0, 400, PARTITIONS);
    await waitForAllRecords('first', 400, views, 60_000);
    // Every record read so far is committed (synchronous commits after each batch).
    await waitFor(() => [...Array(PARTITIONS).keys()].every((p) => views.some((m) => m.committed.get(p) === 100)), {
      what: 'the commits of all 400 records',
      timeoutMs: 30_000,
      describe: () => views.map((m) => `${m.name}: ${JSON.stringify([...m.committed])}`).join(' | '),
    });
    const owner = await coordinatorOf(nodes, group);
    const survivor = owner === a ? b! : a!;
    const assignedBefore = views.map((m) => m.events.filter((e) => e.kind === 'assigned').length);
    const membershipBefore = await membershipOf(group, groupProtocol);
    expect(membershipBefore, 'the group is stored').toBeTruthy();

    await owner.kill();
    nodes = nodes.filter((n) => n !== owner);
    expect(await coordinatorOf([survivor], group, 0, SESSION_MS), 'the lease moves within the session timeout').toBe(survivor);
    await produceSequenced(survivor.bootstrap, topic, 'second', 0, 400, PARTITIONS);
    await waitForAllRecords('second', 400, views, 60_000);

    const read = views.flatMap((m) => m.records);
    const doubled = [...sequenceCounts('first', read), ...sequenceCounts('second', read)].filter(([, n]) => n > 1);
    expect(doubled, 'records read twice').toEqual([]);
    expect(views.map((m) => m.events.filter((e) => e.kind === 'assigned').length), 'rebalances after the move').toEqual(assignedBefore);
    expect(await membershipOf(group, groupProtocol), 'the membership the new coordinator holds').toEqual(membershipBefore);
  }, 240_000);

  it('refuses with NOT_COORDINATOR the commit a frozen owner took in while another core took its lease, and writes nothing of it', async () => {
    const [a, b] = await startCluster(2);
    const topic = `stale-${randomBytes(4).toString('hex')}`;
    await createTopic(a!.bootstrap, topic, PARTITIONS);
    const group = `group-${randomBytes(4).toString('hex')}`;
    members = await spawnMembers([{ bootstrap: `${a!.bootstrap},${b!.bootstrap}`, group, topic, name: 'member', sessionTimeoutMs: SESSION_MS, commit: 'sync' }]);
    const views = members.members;
    await waitForCover(views, PARTITIONS, 'the group', 60_000);
    await produceSequenced(a!.bootstrap, topic, 'first', 0, 200, PARTITIONS);
    await waitForAllRecords('first', 200, views, 60_000);
    await waitFor(() => [...Array(PARTITIONS).keys()].every((p) => views[0]!.committed.get(p) === 50), { what: 'the commits of all 200 records', timeoutMs: 30_000 });
    const owner = await coordinatorOf(nodes, group);
    const other = owner === a ? b! : a!;
    const stored = (await storedGroup(group))!;
    const raw = await RawConnection.open(owner.port);

    owner.freeze();
    try {
      // The member's own identity, sent to the frozen owner: it sits in the socket until the owner thaws.
      raw.write(
        Buffer.concat(
          encodeRequestFrame({ apiKey: ApiKey.OffsetCommit, apiVersion: 7, correlationId: 1, clientId: 'stale-commit' }, {
            groupId: group,
            generationIdOrMemberEpoch: stored.generationId,
            memberId: stored.members[0]!.memberId,
            groupInstanceId: null,
            topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, committedMetadata: null }] }],
          }),
        ),
      );
      expect(await coordinatorOf([other], group, 0, SESSION_MS), 'the other core takes the lease once it ran out').toBe(other);
      // The member carries on through the new owner before the old one wakes.
      await produceSequenced(other.bootstrap, topic, 'second', 0, 200, PARTITIONS);
      await waitForAllRecords('second', 200, views, 60_000);
      await waitFor(() => views[0]!.committed.get(0) === 100, { what: 'the member\'s commit of partition 0 on the new owner', timeoutMs: 30_000 });
    } finally {
      owner.thaw();
    }
    const answer = await raw.readResponse(ApiKey.OffsetCommit, 7, 30_000);
    raw.destroy();
    const errorCode = (answer.body.topics as { partitions: { errorCode: number }[] }[])[0]!.partitions[0]!.errorCode;
    expect(errorCode, 'the stale owner\'s answer').toBe(ErrorCode.NOT_COORDINATOR);

    // The committed position is the member's, not the stale rewind to 0.
    const admin = new Kafka({ clientId: 'stale-check', brokers: [other.bootstrap], logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const [offsets] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
      expect(offsets!.partitions.find((p) => p.partition === 0)?.offset).toBe('100');
    } finally {
      await admin.disconnect();
    }
    const read = views[0]!.records;
    expect([...sequenceCounts('first', read), ...sequenceCounts('second', read)].filter(([, n]) => n > 1), 'records read twice').toEqual([]);
  }, 240_000);

  it('finishes a transaction on the new owner when the node coordinating its transactional id is SIGKILLed before the commit', async () => {
    const [a, b] = await startCluster(2);
    const topic = `txn-${randomBytes(4).toString('hex')}`;
    await createTopic(a!.bootstrap, topic, PARTITIONS);
    const transactionalId = `tid-${randomBytes(4).toString('hex')}`;
    const kafka = new Kafka({ clientId: 'txn-move', brokers: [a!.bootstrap, b!.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 200, maxRetryTime: 1_000 } });
    const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const txn = await producer.transaction();
      const values = Array.from({ length: 40 }, (_, i) => `txn:${i}`);
      await txn.send({ topic, messages: values.map((value, i) => ({ value, partition: i % PARTITIONS })) });
      const owner = await coordinatorOf(nodes, transactionalId, 1);
      const survivor = owner === a ? b! : a!;
      await owner.kill();
      nodes = nodes.filter((n) => n !== owner);
      // kafkajs sends EndTxn once to the coordinator it finds, without a retry of its own on a refused
      // connection (as it would against Apache Kafka while a dead coordinator's partition has no new leader):
      // the commit goes once the lease has moved, which takes one lease time.
      expect(await coordinatorOf([survivor], transactionalId, 1, SESSION_MS), 'the lease moves to the surviving core').toBe(survivor);
      await txn.commit();
      const read = await readRecords(survivor.bootstrap, topic, { partitions: [...Array(PARTITIONS).keys()], count: values.length, config: { 'isolation.level': 'read_committed' }, timeoutMs: 30_000 });
      expect(read.map((r) => r.value).sort()).toEqual([...values].sort());
    } finally {
      await producer.disconnect().catch(() => {});
    }
  }, 240_000);
});

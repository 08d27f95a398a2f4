import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core/index.js';
import type { JoinGroupRequest, JoinGroupResult } from '../../src/core/groups/types.js';
import { assignment, subscription } from '../support/consumer-protocol.js';
import { findTestDatabase } from '../support/postgres.js';
import { uniqueName } from './behaviour.js';

/**
 * Several cores on one PostgreSQL schema share groups and transactional ids
 * through coordinator leases: one core serves a key, the others answer
 * not_coordinator; a core that stops hands its groups over with their
 * members, generation and assignments; a core that lost its lease while it
 * was not looking (its deadline passed on the others' clocks) has its writes
 * refused. Each core here is a process of its own in all but address space:
 * its own pool, its own coordinator, its own node id. A core's clock may run
 * ahead of another's: that is how "the deadline has passed" is reached
 * without waiting. The real processes (SIGKILL, SIGSTOP) are in
 * test/e2e/coordinator-leases.test.ts.
 */

const LEASE_MS = 60_000;
const found = await findTestDatabase();

if (found.database === null) {
  describe.skip(`coordinator leases (skipped: ${found.skipReason})`, () => {
    it('needs a PostgreSQL server', () => {});
  });
} else {
  const database = found.database;
  afterAll(() => database.release());

  describe(`coordinator leases on PostgreSQL (${database.source})`, () => {
    const opened: Core[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((c) => c.close()));
    });

    /** A core on `schema` whose clock runs `aheadMs` ahead of the real one. */
    async function core(schema: string, aheadMs = 0): Promise<Core> {
      const opened_ = await openCore({
        engine: 'postgres',
        url: database.url,
        schema,
        clock: () => Date.now() + aheadMs,
        maintenanceIntervalMs: 0,
        poolSize: 4,
        coordinatorLeaseMs: LEASE_MS,
        // Two members joining together land in one rebalance.
        groups: { initialRebalanceDelayMs: 300 },
      });
      opened.push(opened_);
      return opened_;
    }

    function join(group: string, clientId: string, memberId = ''): JoinGroupRequest {
      return {
        group,
        memberId,
        groupInstanceId: null,
        clientId,
        clientHost: '/127.0.0.1',
        sessionTimeoutMs: 30_000,
        rebalanceTimeoutMs: 30_000,
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: subscription('orders') }],
        requireKnownMemberId: false,
        reason: null,
      };
    }

    /** Two members join and sync on `at`; answers their join results (the leader first). */
    async function formGroup(at: Core, group: string): Promise<JoinGroupResult[]> {
      const joined = await Promise.all([at.joinGroup(join(group, 'c0')), at.joinGroup(join(group, 'c1'))]);
      for (const j of joined) expect(j.error).toBeNull();
      const leader = joined.find((j) => j.memberId === j.leader)!;
      const follower = joined.find((j) => j !== leader)!;
      const sync = (j: JoinGroupResult, assignments: { memberId: string; assignment: Buffer }[]) =>
        at.syncGroup({ group, generationId: j.generationId, memberId: j.memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments });
      const [followerSync, leaderSync] = await Promise.all([
        sync(follower, []),
        sync(leader, [
          { memberId: leader.memberId, assignment: assignment('orders', [0]) },
          { memberId: follower.memberId, assignment: assignment('orders', [1]) },
        ]),
      ]);
      expect(followerSync.error).toBeNull();
      expect(leaderSync.error).toBeNull();
      return [leader, follower];
    }

    async function topic(at: Core): Promise<string> {
      const name = uniqueName('orders');
      await at.createQueue({ name, partitions: 2 });
      return name;
    }

    const commit = (at: Core, group: string, member: JoinGroupResult, queue: string, offset: number) =>
      at.commitGroupOffsets({ group, generationId: member.generationId, memberId: member.memberId, groupInstanceId: null, offsets: [{ queue, partition: 0, offset, leaderEpoch: -1, metadata: null }] });

    const committed = async (at: Core, group: string, queue: string) =>
      (await at.fetchOffsets({ group, partitions: [{ queue, partition: 0 }] })).offsets[0]!.offset;

    it('serves a group on one core: the other answers not_coordinator and names the holder', async () => {
      const schema = database.freshSchema();
      const [a, b] = [await core(schema), await core(schema)];
      const group = uniqueName('g');
      const [leader] = await formGroup(a, group);
      const self = (await a.findCoordinators({ kind: 'group', keys: [] })).node;
      expect(await b.findCoordinators({ kind: 'group', keys: [group] })).toEqual({ node: expect.not.stringMatching(self), coordinators: [{ key: group, owner: self }] });
      expect((await b.joinGroup(join(group, 'c2'))).error).toBe('not_coordinator');
      expect(await b.heartbeat({ group, generationId: leader!.generationId, memberId: leader!.memberId, groupInstanceId: null })).toEqual({ error: 'not_coordinator' });
      expect((await a.heartbeat({ group, generationId: leader!.generationId, memberId: leader!.memberId, groupInstanceId: null })).error).toBeNull();
    });

    it('hands a stopped core\'s group to the next: members carry on with their ids, generation and assignments, offsets kept', async () => {
      const schema = database.freshSchema();
      const a = await core(schema);
      const b = await core(schema);
      const queue = await topic(a);
      const group = uniqueName('g');
      const [leader, follower] = await formGroup(a, group);
      expect(await commit(a, group, leader!, queue, 5)).toEqual({ error: null });
      await a.close();
      opened.splice(opened.indexOf(a), 1);

      expect((await b.findCoordinators({ kind: 'group', keys: [group] })).coordinators[0]!.owner).toBe((await b.findCoordinators({ kind: 'group', keys: [] })).node);
      for (const m of [leader!, follower!]) {
        expect(await b.heartbeat({ group, generationId: m.generationId, memberId: m.memberId, groupInstanceId: null })).toEqual({ error: null });
      }
      expect(await committed(b, group, queue)).toBe(5);
      expect(await commit(b, group, follower!, queue, 7)).toEqual({ error: null });
      expect(await committed(b, group, queue)).toBe(7);
      const [described] = (await b.describeGroups({ groups: [group] })).groups;
      expect(described).toMatchObject({ state: 'Stable', generationId: leader!.generationId, error: null });
      expect(new Map(described!.members.map((m) => [m.memberId, m.assignment]))).toEqual(
        new Map([
          [leader!.memberId, assignment('orders', [0])],
          [follower!.memberId, assignment('orders', [1])],
        ]),
      );
    });

    it('fences a stale owner: once another core took the lease past its deadline, its commit is refused and changes nothing', async () => {
      const schema = database.freshSchema();
      const stale = await core(schema);
      // A clock past the stale owner's deadline: to this core the lease has run out.
      const next = await core(schema, LEASE_MS + 1000);
      const queue = await topic(stale);
      const group = uniqueName('g');
      const [leader, follower] = await formGroup(stale, group);
      expect(await commit(stale, group, leader!, queue, 3)).toEqual({ error: null });

      const nextNode = (await next.findCoordinators({ kind: 'group', keys: [] })).node;
      expect((await next.findCoordinators({ kind: 'group', keys: [group] })).coordinators).toEqual([{ key: group, owner: nextNode }]);
      expect(await commit(stale, group, follower!, queue, 9)).toEqual({ error: 'not_coordinator' });
      expect(await committed(next, group, queue)).toBe(3);
      // The stale owner has let go: its members are sent to the new one, which knows them.
      expect((await stale.heartbeat({ group, generationId: follower!.generationId, memberId: follower!.memberId, groupInstanceId: null })).error).toBe('not_coordinator');
      expect(await commit(next, group, follower!, queue, 9)).toEqual({ error: null });
      expect(await committed(next, group, queue)).toBe(9);
    });

    it('refuses a commitOffsets whose fence is not the lease held now, writing nothing, and a malformed fence as invalid', async () => {
      const schema = database.freshSchema();
      const a = await core(schema);
      const queue = await topic(a);
      const group = uniqueName('g');
      await formGroup(a, group);
      const node = (await a.findCoordinators({ kind: 'group', keys: [] })).node;
      const offsets = [{ queue, partition: 0, offset: 4, leaderEpoch: -1, metadata: null }];
      await expect(a.commitOffsets({ group, offsets, fence: { owner: 'another-core', epoch: 1 } })).rejects.toMatchObject({ code: 'not_coordinator' });
      expect(await committed(a, group, queue)).toBe(-1);
      await expect(a.commitOffsets({ group, offsets, fence: { owner: '', epoch: 1 } })).rejects.toMatchObject({ code: 'invalid_argument' });
      await expect(a.commitOffsets({ group, offsets, fence: { owner: node, epoch: -2 } })).rejects.toMatchObject({ code: 'invalid_argument' });
      expect(await committed(a, group, queue)).toBe(-1);
    });

    it('serves a transactional id on one core: another is refused while the lease holds, and takes it over once it ran out', async () => {
      const schema = database.freshSchema();
      const holder = await core(schema);
      const other = await core(schema);
      const later = await core(schema, LEASE_MS + 1000);
      const queue = await topic(holder);
      const transactionalId = uniqueName('tid');
      const { producerId, producerEpoch } = await holder.initProducer({ transactionalId, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
      const who = { transactionalId, producerId, producerEpoch };
      await holder.addPartitionsToTxn({ ...who, partitions: [{ queue, partition: 0 }] });

      await expect(other.endTxn({ ...who, commit: true })).rejects.toMatchObject({ code: 'not_coordinator' });
      const laterNode = (await later.findCoordinators({ kind: 'transaction', keys: [] })).node;
      expect((await later.findCoordinators({ kind: 'transaction', keys: [transactionalId] })).coordinators).toEqual([{ key: transactionalId, owner: laterNode }]);
      // The new holder finishes what the old one opened; the old one is refused.
      await expect(holder.addPartitionsToTxn({ ...who, partitions: [{ queue, partition: 1 }] })).rejects.toMatchObject({ code: 'not_coordinator' });
      expect(await later.endTxn({ ...who, commit: true })).toEqual({ producerId, producerEpoch });
      expect((await later.describeTransactions({ transactionalIds: [transactionalId] })).transactions[0]).toMatchObject({ state: 'CompleteCommit' });
    });
  });
}

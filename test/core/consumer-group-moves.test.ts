import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core/index.js';
import type { ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResult } from '../../src/core/groups/consumer/types.js';
import { findTestDatabase } from '../support/postgres.js';
import { uniqueName } from './behaviour.js';

/**
 * A KIP-848 consumer group's state survives a coordinator move on
 * PostgreSQL (migration 010): two cores on one schema, the group formed on
 * the first, the first stopped (or overtaken past its lease), and the
 * members' next heartbeats, at the epochs they had, answered by the second
 * as if nothing had happened: same epochs, same partitions, commits at the
 * member epoch taken; meanwhile the other core lists the group as stored. A
 * stale owner's change is refused (not_coordinator)
 * and never lands. (The memory engine is one core: there is no move.)
 */

const LEASE_MS = 60_000;
const found = await findTestDatabase();

if (found.database === null) {
  describe.skip(`consumer group moves (skipped: ${found.skipReason})`, () => {
    it('needs a PostgreSQL server', () => {});
  });
} else {
  const database = found.database;
  afterAll(() => database.release());

  describe(`KIP-848 consumer groups across a coordinator move on PostgreSQL (${database.source})`, () => {
    const opened: Core[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((c) => c.close()));
    });

    async function core(schema: string, aheadMs = 0): Promise<Core> {
      const c = await openCore({ engine: 'postgres', url: database.url, schema, clock: () => Date.now() + aheadMs, maintenanceIntervalMs: 0, poolSize: 4, coordinatorLeaseMs: LEASE_MS });
      opened.push(c);
      return c;
    }

    const heartbeat = (at: Core, group: string, topic: string, memberId: string, memberEpoch: number, owned: ConsumerGroupHeartbeatRequest['topicPartitions'] = null): Promise<ConsumerGroupHeartbeatResult> =>
      at.consumerGroupHeartbeat({
        group, memberId, memberEpoch, instanceId: null, rackId: null,
        rebalanceTimeoutMs: memberEpoch === 0 ? 30_000 : -1,
        subscribedTopicNames: memberEpoch === 0 ? [topic] : null,
        subscribedTopicRegex: null, serverAssignor: null,
        topicPartitions: memberEpoch === 0 ? [] : owned,
        clientId: 'moves', clientHost: '/127.0.0.1', apiVersion: 1,
      });

    const partitionsOf = (r: ConsumerGroupHeartbeatResult | { assignment: ConsumerGroupHeartbeatResult['assignment'] }) => (r.assignment ?? []).flatMap((t) => t.partitions).sort();

    /** Two members on a 4-partition topic, reconciled to two partitions each on `at`; answers their last answers. */
    async function formGroup(at: Core, group: string, topic: string): Promise<{ a: ConsumerGroupHeartbeatResult; b: ConsumerGroupHeartbeatResult; aOwned: ConsumerGroupHeartbeatResult['assignment'] }> {
      const a0 = await heartbeat(at, group, topic, 'member-a', 0);
      expect(partitionsOf(a0)).toEqual([0, 1, 2, 3]);
      const b0 = await heartbeat(at, group, topic, 'member-b', 0);
      expect(b0.error).toBeNull();
      // member-a gives up two partitions, then member-b is given them.
      const a1 = await heartbeat(at, group, topic, 'member-a', a0.memberEpoch, a0.assignment);
      expect(partitionsOf(a1)).toHaveLength(2);
      const a2 = await heartbeat(at, group, topic, 'member-a', a1.memberEpoch, a1.assignment);
      const b1 = await heartbeat(at, group, topic, 'member-b', b0.memberEpoch, []);
      expect(partitionsOf(b1)).toHaveLength(2);
      return { a: a2.assignment === null ? { ...a2, assignment: a1.assignment } : a2, b: b1, aOwned: a1.assignment };
    }

    it('hands a stopped core\'s consumer group to the next: members carry on at their epochs with their partitions, and commit at them', async () => {
      const schema = database.freshSchema();
      const first = await core(schema);
      const second = await core(schema);
      const topic = uniqueName('moves');
      await first.createQueue({ name: topic, partitions: 4 });
      const group = uniqueName('kip848');
      const { a, b, aOwned } = await formGroup(first, group, topic);
      const [before] = (await first.consumerGroupDescribe({ groups: [group] })).groups;
      expect(before!.state).toBe('Stable');
      // The other core lists the group as its coordinator stored it.
      expect((await second.listGroupStates({})).groups.filter((g) => g.group === group)).toEqual([{ group, protocolType: 'consumer', state: 'Stable', groupType: 'consumer' }]);
      await first.close();
      opened.splice(opened.indexOf(first), 1);

      const aNext = await heartbeat(second, group, topic, 'member-a', a.memberEpoch, aOwned);
      const bNext = await heartbeat(second, group, topic, 'member-b', b.memberEpoch, b.assignment);
      expect([aNext.error, aNext.memberEpoch, bNext.error, bNext.memberEpoch]).toEqual([null, a.memberEpoch, null, b.memberEpoch]);
      const [after] = (await second.consumerGroupDescribe({ groups: [group] })).groups;
      expect(after).toEqual(before);
      const offsets = [{ queue: topic, partition: partitionsOf(b)[0]!, offset: 11, leaderEpoch: -1, metadata: null }];
      expect(await second.commitGroupOffsets({ group, generationId: b.memberEpoch, memberId: 'member-b', groupInstanceId: null, offsets })).toEqual({ error: null });
      // A third member joining on the new coordinator moves the group on from where it was.
      const c0 = await heartbeat(second, group, topic, 'member-c', 0);
      expect([c0.error, c0.memberEpoch > b.memberEpoch]).toEqual([null, true]);
    });

    it('refuses a stale owner\'s change once another core took the lease: not_coordinator, and the change never lands', async () => {
      const schema = database.freshSchema();
      const stale = await core(schema);
      const next = await core(schema, LEASE_MS + 1000);
      const topic = uniqueName('moves');
      await stale.createQueue({ name: topic, partitions: 4 });
      const group = uniqueName('kip848');
      const { b } = await formGroup(stale, group, topic);
      const nextNode = (await next.findCoordinators({ kind: 'group', keys: [] })).node;
      expect((await next.findCoordinators({ kind: 'group', keys: [group] })).coordinators).toEqual([{ key: group, owner: nextNode }]);

      const joined = await heartbeat(stale, group, topic, 'member-late', 0);
      expect(joined.error).toBe('not_coordinator');
      const [described] = (await next.consumerGroupDescribe({ groups: [group] })).groups;
      expect(described!.members.map((m) => m.memberId).sort()).toEqual(['member-a', 'member-b']);
      expect((await heartbeat(next, group, topic, 'member-b', b.memberEpoch, b.assignment)).error).toBeNull();
    });
  });
}

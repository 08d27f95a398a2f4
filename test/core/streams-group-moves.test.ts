import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core/index.js';
import type { StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResult, TaskIds } from '../../src/core/groups/streams/types.js';
import { findTestDatabase } from '../support/postgres.js';
import { uniqueName } from './behaviour.js';

/**
 * A streams group's state (KIP-1071) survives a coordinator move on
 * PostgreSQL (migration 016): two cores on one schema, the group formed on
 * the first with two members running two tasks each, the first stopped, and
 * the members' next heartbeats, at the epochs they had, answered by the
 * second with the same epochs and tasks; a commit at the member epoch is
 * taken. Meanwhile the second lists the group as stored. (The memory engine
 * is one core: there is no move.)
 */

const found = await findTestDatabase();

if (found.database === null) {
  describe.skip(`streams group moves (skipped: ${found.skipReason})`, () => {
    it('needs a PostgreSQL server', () => {});
  });
} else {
  const database = found.database;
  afterAll(() => database.release());

  describe(`streams groups across a coordinator move on PostgreSQL (${database.source})`, () => {
    const opened: Core[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((c) => c.close()));
    });

    async function core(schema: string): Promise<Core> {
      const c = await openCore({ engine: 'postgres', url: database.url, schema, maintenanceIntervalMs: 0, poolSize: 4, coordinatorLeaseMs: 60_000, groups: { initialRebalanceDelayMs: 0 } });
      opened.push(c);
      return c;
    }

    const heartbeat = (at: Core, group: string, topic: string, memberId: string, memberEpoch: number, activeTasks: TaskIds[] | null = null): Promise<StreamsGroupHeartbeatResult> => {
      const joining = memberEpoch === 0;
      const req: StreamsGroupHeartbeatRequest = {
        group, memberId, memberEpoch, endpointInformationEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: joining ? 30_000 : -1,
        topology: joining ? { epoch: 0, subtopologies: [{ subtopologyId: '0', sourceTopics: [topic], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [], repartitionSourceTopics: [], copartitionGroups: [] }] } : null,
        activeTasks: joining ? [] : activeTasks, standbyTasks: joining || activeTasks ? [] : null, warmupTasks: joining || activeTasks ? [] : null,
        processId: `process-${memberId}`, userEndpoint: null, clientTags: null, shutdownApplication: false, clientId: 'moves', clientHost: '/127.0.0.1',
      };
      return at.streamsGroupHeartbeat(req);
    };
    const partitionsOf = (tasks: TaskIds[] | null) => (tasks ?? []).flatMap((t) => t.partitions).sort();

    it("hands a stopped core's streams group to the next: members carry on at their epochs with their tasks, and commit at them", async () => {
      const schema = database.freshSchema();
      const first = await core(schema);
      const second = await core(schema);
      const topic = uniqueName('streams-moves');
      await first.createQueue({ name: topic, partitions: 4 });
      const group = uniqueName('app');
      const a0 = await heartbeat(first, group, topic, 'member-a', 0);
      expect(partitionsOf(a0.activeTasks)).toEqual([0, 1, 2, 3]);
      const b0 = await heartbeat(first, group, topic, 'member-b', 0);
      const a1 = await heartbeat(first, group, topic, 'member-a', a0.memberEpoch, a0.activeTasks);
      expect(partitionsOf(a1.activeTasks)).toHaveLength(2);
      const a2 = await heartbeat(first, group, topic, 'member-a', a1.memberEpoch, a1.activeTasks);
      const b1 = await heartbeat(first, group, topic, 'member-b', b0.memberEpoch, []);
      expect(partitionsOf(b1.activeTasks)).toHaveLength(2);
      expect((await first.streamsGroupDescribe({ groups: [group] })).groups[0]!.state).toBe('Stable');
      expect((await second.listGroupStates({})).groups.filter((g) => g.group === group)).toEqual([{ group, protocolType: 'streams', state: 'Stable', groupType: 'streams' }]);

      await first.close();
      const aAfter = await heartbeat(second, group, topic, 'member-a', a2.memberEpoch, a1.activeTasks);
      const bAfter = await heartbeat(second, group, topic, 'member-b', b1.memberEpoch, b1.activeTasks);
      expect([aAfter.error, aAfter.memberEpoch, bAfter.error, bAfter.memberEpoch]).toEqual([null, a2.memberEpoch, null, b1.memberEpoch]);
      const [described] = (await second.streamsGroupDescribe({ groups: [group] })).groups;
      expect(described!.state).toBe('Stable');
      expect(Object.fromEntries(described!.members.map((m) => [m.memberId, partitionsOf(m.assignment.activeTasks)]))).toEqual({ 'member-a': partitionsOf(a1.activeTasks), 'member-b': partitionsOf(b1.activeTasks) });
      const offsets = [{ queue: topic, partition: partitionsOf(b1.activeTasks)[0]!, offset: 7, leaderEpoch: -1, metadata: null }];
      expect(await second.commitGroupOffsets({ group, generationId: b1.memberEpoch, memberId: 'member-b', groupInstanceId: null, offsets })).toEqual({ error: null });
    });
  });
}

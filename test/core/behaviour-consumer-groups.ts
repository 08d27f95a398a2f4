import { describe, expect, it } from 'vitest';
import type { ConsumerGroupHeartbeatRequest, Core } from '../../src/core/index.js';

/**
 * KIP-848 consumer groups as part of the behaviour suite (./behaviour.ts): on
 * every engine and through the RPC, so the heartbeat, its answers and the
 * member-epoch checks on commits survive the hop. What a member would notice:
 * the partitions it is given by topic id, revocation before a partition
 * moves, and commits refused at a stale epoch.
 */
export function describeConsumerGroups(fx: { core: () => Core; newQueue: (partitions: number) => Promise<string> }): void {
  describe('KIP-848 consumer groups', () => {
    const request = (group: string, topic: string, memberId: string, memberEpoch: number, owned: ConsumerGroupHeartbeatRequest['topicPartitions'] = null): ConsumerGroupHeartbeatRequest => ({
      group,
      memberId,
      memberEpoch,
      instanceId: null,
      rackId: null,
      rebalanceTimeoutMs: memberEpoch === 0 ? 30_000 : -1,
      subscribedTopicNames: memberEpoch === 0 ? [topic] : null,
      subscribedTopicRegex: null,
      serverAssignor: null,
      topicPartitions: memberEpoch === 0 ? [] : owned,
      clientId: 'behaviour',
      clientHost: '/127.0.0.1',
      apiVersion: 1,
    });

    it('two members share a topic: the second gets partitions only after the first released them; stale commits are refused', async () => {
      const core = fx.core();
      const topic = await fx.newQueue(4);
      const topicId = (await core.describeQueue({ name: topic }))!.id;
      const group = `${topic}-group`;
      const a = await core.consumerGroupHeartbeat(request(group, topic, 'member-a', 0));
      expect(a).toMatchObject({ error: null, memberEpoch: 1, assignment: [{ topicId, partitions: [0, 1, 2, 3] }] });
      const b = await core.consumerGroupHeartbeat(request(group, topic, 'member-b', 0));
      expect(b).toMatchObject({ error: null, memberEpoch: 2, assignment: [] });
      const revoke = await core.consumerGroupHeartbeat(request(group, topic, 'member-a', 1, a.assignment));
      expect(revoke.memberEpoch).toBe(1);
      expect(revoke.assignment![0]!.partitions).toHaveLength(2);
      expect((await core.consumerGroupHeartbeat(request(group, topic, 'member-a', 1, revoke.assignment))).memberEpoch).toBe(2);
      const taken = await core.consumerGroupHeartbeat(request(group, topic, 'member-b', 2, []));
      expect([...taken.assignment![0]!.partitions, ...revoke.assignment![0]!.partitions].sort()).toEqual([0, 1, 2, 3]);

      const offsets = [{ queue: topic, partition: 0, offset: 7, leaderEpoch: -1, metadata: null }];
      expect(await core.commitGroupOffsets({ group, generationId: 1, memberId: 'member-a', groupInstanceId: null, offsets })).toEqual({ error: 'stale_member_epoch' });
      expect(await core.commitGroupOffsets({ group, generationId: 2, memberId: 'member-a', groupInstanceId: null, offsets })).toEqual({ error: null });
      expect((await core.fetchOffsets({ group, partitions: [{ queue: topic, partition: 0 }] })).offsets[0]!.offset).toBe(7);
      expect(await core.checkOffsetFetchMember({ group, memberId: 'member-b', memberEpoch: 1 })).toEqual({ error: 'stale_member_epoch' });

      const [described] = (await core.consumerGroupDescribe({ groups: [group] })).groups;
      expect(described).toMatchObject({ error: null, state: 'Stable', groupEpoch: 2, assignorName: 'uniform' });
      expect(described!.members.map((m) => m.memberId).sort()).toEqual(['member-a', 'member-b']);
      expect((await core.listGroupStates({})).groups.find((g) => g.group === group)).toEqual({ group, protocolType: 'consumer', state: 'Stable', groupType: 'consumer' });
    });
  });
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../../src/core/index.js';
import type { ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResult } from '../../../src/core/groups/consumer/types.js';
import type { JoinGroupRequest } from '../../../src/core/groups/types.js';
import { assignment, decodeAssignment, subscription } from '../../support/consumer-protocol.js';

/**
 * A classic member (JoinGroup, SyncGroup, Heartbeat) joining a KIP-848
 * consumer group that has members, as Kafka 4's migration policy allows: it
 * is asked for a member id, joins at the group's epoch as its generation, is
 * given partitions only once the consumer member released them (told
 * REBALANCE_IN_PROGRESS on a heartbeat, it rejoins to get them), commits at
 * its generation, and leaving hands its partitions back. And the way back,
 * as Kafka 4 downgrades: when the last member of the consumer protocol
 * leaves, the classic members remaining make it a classic group again, which
 * rebalances; an empty consumer group becomes classic when a classic member
 * joins it.
 */

let core: Core;
beforeAll(async () => {
  core = await openCore({ engine: 'memory', maintenanceIntervalMs: 0 });
});
afterAll(() => core.close());

const heartbeat = (group: string, topic: string, memberEpoch: number, owned: ConsumerGroupHeartbeatRequest['topicPartitions'] = null): Promise<ConsumerGroupHeartbeatResult> =>
  core.consumerGroupHeartbeat({
    group, memberId: 'consumer-a', memberEpoch, instanceId: null, rackId: null,
    rebalanceTimeoutMs: memberEpoch === 0 ? 30_000 : -1,
    subscribedTopicNames: memberEpoch === 0 ? [topic] : null,
    subscribedTopicRegex: null, serverAssignor: null,
    topicPartitions: memberEpoch === 0 ? [] : owned,
    clientId: 'kip848', clientHost: '/127.0.0.1', apiVersion: 1,
  });

const join = (group: string, topic: string, memberId: string): JoinGroupRequest => ({
  group, memberId, groupInstanceId: null, clientId: 'classic', clientHost: '/127.0.0.1', sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 30_000,
  protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription(topic) }], requireKnownMemberId: true, reason: null,
});

/** A classic member `b` that joined the group and was given its half, the consumer member holding the other half. */
async function classicBeside(group: string, topic: string) {
  const a0 = await heartbeat(group, topic, 0);
  const first = await core.joinGroup(join(group, topic, ''));
  const b = first.memberId;
  const joined = await core.joinGroup(join(group, topic, b));
  const a1 = await heartbeat(group, topic, a0.memberEpoch, a0.assignment);
  const a2 = await heartbeat(group, topic, a1.memberEpoch, a1.assignment);
  expect(await core.heartbeat({ group, generationId: joined.generationId, memberId: b, groupInstanceId: null })).toEqual({ error: 'rebalance_in_progress' });
  const rejoined = await core.joinGroup(join(group, topic, b));
  const given = await core.syncGroup({ group, generationId: rejoined.generationId, memberId: b, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] });
  expect(decodeAssignment(given.assignment)).toMatchObject({ partitions: { [topic]: expect.any(Array) } });
  return { b, generationId: rejoined.generationId, a: a2.error === null ? a2 : a1 };
}

const count = (r: ConsumerGroupHeartbeatResult) => (r.assignment ?? []).reduce((n, t) => n + t.partitions.length, 0);

describe('a classic member in a KIP-848 consumer group', () => {
  it('joins with an id it is given, gets partitions once released, commits at its generation, and hands them back when it leaves', async () => {
    const topic = `classic-in-848-${Date.now()}`;
    await core.createQueue({ name: topic, partitions: 4 });
    const group = `${topic}-group`;
    const a0 = await heartbeat(group, topic, 0);
    expect(count(a0)).toBe(4);

    const first = await core.joinGroup(join(group, topic, ''));
    expect(first.error).toBe('member_id_required');
    const joined = await core.joinGroup(join(group, topic, first.memberId));
    expect(joined).toMatchObject({ error: null, protocolType: 'consumer', protocolName: 'range', leader: '', members: [], memberId: first.memberId });
    const b = joined.memberId;
    const sync = (generationId: number) => core.syncGroup({ group, generationId, memberId: b, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] });
    // The consumer member still holds everything: nothing yet.
    const empty = await sync(joined.generationId);
    expect([empty.error, decodeAssignment(empty.assignment)]).toEqual([null, { version: 0, partitions: {} }]);

    // The consumer member gives two partitions up, then shows it released them.
    const a1 = await heartbeat(group, topic, a0.memberEpoch, a0.assignment);
    expect(count(a1)).toBe(2);
    const a2 = await heartbeat(group, topic, a1.memberEpoch, a1.assignment);
    expect(a2.error).toBeNull();

    expect(await core.heartbeat({ group, generationId: joined.generationId, memberId: b, groupInstanceId: null })).toEqual({ error: 'rebalance_in_progress' });
    const rejoined = await core.joinGroup(join(group, topic, b));
    expect(rejoined.error).toBeNull();
    const given = await sync(rejoined.generationId);
    const partitions = (decodeAssignment(given.assignment) as { partitions: Record<string, number[]> }).partitions[topic]!;
    expect(partitions).toHaveLength(2);
    expect(await core.heartbeat({ group, generationId: rejoined.generationId, memberId: b, groupInstanceId: null })).toEqual({ error: null });
    expect(await core.heartbeat({ group, generationId: joined.generationId - 1, memberId: b, groupInstanceId: null })).toEqual({ error: 'illegal_generation' });

    const offsets = [{ queue: topic, partition: partitions[0]!, offset: 3, leaderEpoch: -1, metadata: null }];
    expect(await core.commitGroupOffsets({ group, generationId: rejoined.generationId, memberId: b, groupInstanceId: null, offsets })).toEqual({ error: null });
    const [described] = (await core.consumerGroupDescribe({ groups: [group] })).groups;
    expect(described!.members.map((m) => m.memberId).sort()).toEqual([b, 'consumer-a'].sort());

    expect((await core.leaveGroup({ group, members: [{ memberId: b, groupInstanceId: null, reason: null }] })).members[0]!.error).toBeNull();
    const back = await heartbeat(group, topic, a2.memberEpoch, a2.assignment ?? a1.assignment);
    expect(back.error).toBeNull();
    expect(count(back)).toBe(4);
  });
});

describe('a consumer group becoming classic again (KIP-848 downgrade)', () => {
  it('when its last consumer-protocol member leaves, the classic member left rebalances in a classic group, leads it, assigns itself everything and commits', async () => {
    const topic = `downgrade-${Date.now()}`;
    await core.createQueue({ name: topic, partitions: 4 });
    const group = `${topic}-group`;
    const { b, generationId, a } = await classicBeside(group, topic);

    expect((await heartbeat(group, topic, -1)).error).toBeNull();
    const listed = (await core.listGroupStates({ states: [] })).groups.find((g) => g.group === group);
    expect(listed, 'a classic group of the consumer protocol, rebalancing').toMatchObject({ protocolType: 'consumer', state: 'PreparingRebalance' });
    expect(listed?.groupType ?? 'classic').toBe('classic');
    const [described] = (await core.describeGroups({ groups: [group] })).groups;
    expect(described).toMatchObject({ error: null, state: 'PreparingRebalance', protocolType: 'consumer' });
    expect(described!.members.map((m) => m.memberId)).toEqual([b]);
    const [asConsumer] = (await core.consumerGroupDescribe({ groups: [group] })).groups;
    expect(asConsumer!.errorMessage).toBe(`Group ${group} is not a consumer group.`);

    // The member learns of the rebalance at its next heartbeat and rejoins under its id; alone, it leads.
    expect(await core.heartbeat({ group, generationId, memberId: b, groupInstanceId: null })).toEqual({ error: 'rebalance_in_progress' });
    const rejoined = await core.joinGroup(join(group, topic, b));
    expect(rejoined).toMatchObject({ error: null, leader: b, memberId: b, protocolName: 'range' });
    expect(rejoined.generationId).toBeGreaterThan(generationId);
    expect(rejoined.members.map((m) => m.memberId)).toEqual([b]);
    const everything = assignment(topic, [0, 1, 2, 3]);
    const synced = await core.syncGroup({ group, generationId: rejoined.generationId, memberId: b, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [{ memberId: b, assignment: everything }] });
    expect(decodeAssignment(synced.assignment)).toEqual({ version: 0, partitions: { [topic]: [0, 1, 2, 3] } });
    expect(await core.heartbeat({ group, generationId: rejoined.generationId, memberId: b, groupInstanceId: null })).toEqual({ error: null });
    const offsets = [{ queue: topic, partition: 0, offset: 5, leaderEpoch: -1, metadata: null }];
    expect(await core.commitGroupOffsets({ group, generationId: rejoined.generationId, memberId: b, groupInstanceId: null, offsets })).toEqual({ error: null });
    expect((await core.describeGroups({ groups: [group] })).groups[0]).toMatchObject({ state: 'Stable', protocolName: 'range' });

    // The old consumer member's epoch means nothing now; joining again, it upgrades the Stable classic group once more.
    expect(a.memberEpoch).toBeGreaterThan(0);
    const again = await heartbeat(group, topic, 0);
    expect(again.error).toBeNull();
    expect((await core.listGroupStates({ states: [] })).groups.find((g) => g.group === group)?.groupType).toBe('consumer');
  });

  it('an empty consumer group becomes a classic group when a classic member joins it', async () => {
    const topic = `downgrade-empty-${Date.now()}`;
    await core.createQueue({ name: topic, partitions: 2 });
    const group = `${topic}-group`;
    expect((await heartbeat(group, topic, 0)).error).toBeNull();
    expect((await heartbeat(group, topic, -1)).error).toBeNull();
    expect((await core.listGroupStates({ states: [] })).groups.find((g) => g.group === group)).toMatchObject({ groupType: 'consumer', state: 'Empty' });

    const first = await core.joinGroup(join(group, topic, ''));
    const joined = await core.joinGroup(join(group, topic, first.memberId));
    expect(joined).toMatchObject({ error: null, leader: first.memberId, protocolName: 'range' });
    const listed = (await core.listGroupStates({ states: [] })).groups.find((g) => g.group === group);
    expect(listed).toMatchObject({ protocolType: 'consumer', state: 'CompletingRebalance' });
    expect(listed?.groupType ?? 'classic').toBe('classic');
  });
});

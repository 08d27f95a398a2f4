import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConsumerGroupCoordinator } from '../../../src/core/groups/consumer/coordinator.js';
import { rangeAssignor, uniformAssignor } from '../../../src/core/groups/consumer/assignors.js';
import type { ConsumerGroupHeartbeatRequest, ConsumerGroupHeartbeatResult, TopicMetadata, TopicPartitions } from '../../../src/core/groups/consumer/types.js';

/**
 * The KIP-848 consumer group coordinator as members see it through their
 * heartbeats: epochs, the server-side assignment, revocation before a
 * partition moves, leaving, session and rebalance timeouts, static members,
 * subscriptions by name and by expression, topics that appear later, and
 * Kafka's errors. Time is simulated, so timeouts are exact.
 */

const ORDERS: TopicMetadata = { name: 'orders', id: 'a0a0a0a0-0000-0000-0000-000000000001', partitions: 4 };
const PAYMENTS: TopicMetadata = { name: 'payments', id: 'a0a0a0a0-0000-0000-0000-000000000002', partitions: 4 };

function heartbeat(overrides: Partial<ConsumerGroupHeartbeatRequest>): ConsumerGroupHeartbeatRequest {
  return {
    group: 'g',
    memberId: 'm1',
    memberEpoch: 0,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: 30_000,
    subscribedTopicNames: ['orders'],
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: [],
    clientId: 'client',
    clientHost: '/127.0.0.1',
    apiVersion: 1,
    ...overrides,
  };
}

/** A member's assignment as "topic:partition" keys, for comparisons. */
function owned(result: ConsumerGroupHeartbeatResult | TopicPartitions[] | null): string[] {
  const list = Array.isArray(result) ? result : result?.assignment ?? [];
  return list.flatMap((t) => t.partitions.map((p) => `${t.topicId === ORDERS.id ? 'orders' : 'payments'}:${p}`)).sort();
}

describe('KIP-848 consumer group coordinator', () => {
  let coordinator: ConsumerGroupCoordinator;
  let topics: TopicMetadata[];
  /** The next heartbeat of a member at its epoch, reporting what it owns. */
  const beat = (memberId: string, epoch: number, holding: TopicPartitions[] | null, more: Partial<ConsumerGroupHeartbeatRequest> = {}) =>
    coordinator.heartbeat(heartbeat({ memberId, memberEpoch: epoch, rebalanceTimeoutMs: -1, subscribedTopicNames: null, topicPartitions: holding, ...more }), topics);

  beforeEach(() => {
    vi.useFakeTimers();
    coordinator = new ConsumerGroupCoordinator();
    topics = [ORDERS, PAYMENTS];
  });
  afterEach(() => {
    coordinator.close();
    vi.useRealTimers();
  });

  it('a first member gets every partition at epoch 1 and the heartbeat interval to come back at', () => {
    const joined = coordinator.heartbeat(heartbeat({}), topics);
    expect(joined).toMatchObject({ error: null, memberId: 'm1', memberEpoch: 1, heartbeatIntervalMs: 5000 });
    expect(owned(joined)).toEqual(['orders:0', 'orders:1', 'orders:2', 'orders:3']);
    // Nothing changed: the next heartbeat carries no assignment.
    expect(beat('m1', 1, null).assignment).toBeNull();
    expect(coordinator.state('g')).toBe('Stable');
  });

  it('a partition moves to a new member only after its owner shows it released it', () => {
    const first = coordinator.heartbeat(heartbeat({}), topics);
    const second = coordinator.heartbeat(heartbeat({ memberId: 'm2' }), topics);
    // m2 is at the new epoch but gets nothing m1 still holds.
    expect(second.memberEpoch).toBe(2);
    expect(owned(second)).toEqual([]);
    expect(coordinator.state('g')).toBe('Reconciling');

    // m1 is asked to keep two partitions and stays at its epoch until it gives the others up.
    const revoke = beat('m1', 1, first.assignment);
    expect(revoke.memberEpoch).toBe(1);
    expect(owned(revoke)).toHaveLength(2);
    // m2 still waits: m1 has not released anything yet.
    expect(owned(beat('m2', 2, []))).toEqual([]);

    const released = beat('m1', 1, revoke.assignment);
    expect(released.memberEpoch).toBe(2);
    const taken = beat('m2', 2, []);
    expect(owned(taken)).toHaveLength(2);
    expect([...owned(taken), ...owned(revoke)].sort()).toEqual(['orders:0', 'orders:1', 'orders:2', 'orders:3']);
    beat('m2', 2, taken.assignment);
    expect(coordinator.state('g')).toBe('Stable');
  });

  it('a member leaving with epoch -1 frees its partitions for the others at their next heartbeat', () => {
    const first = coordinator.heartbeat(heartbeat({}), topics);
    coordinator.heartbeat(heartbeat({ memberId: 'm2' }), topics);
    const kept = beat('m1', 1, first.assignment);
    beat('m1', 1, kept.assignment);
    const m2 = beat('m2', 2, []);
    expect(coordinator.heartbeat(heartbeat({ memberId: 'm2', memberEpoch: -1 }), topics)).toMatchObject({ error: null, memberEpoch: -1 });
    const after = beat('m1', 2, kept.assignment);
    expect(after.memberEpoch).toBe(3);
    expect(owned(after)).toEqual(['orders:0', 'orders:1', 'orders:2', 'orders:3']);
    expect(owned(m2)).toHaveLength(2);
  });

  it('a member not heard from within the session timeout (45 s) is removed and the group epoch moves on', async () => {
    coordinator.heartbeat(heartbeat({}), topics);
    coordinator.heartbeat(heartbeat({ memberId: 'm2' }), topics);
    await vi.advanceTimersByTimeAsync(44_000);
    beat('m2', 2, []);
    await vi.advanceTimersByTimeAsync(1_001);
    expect(beat('m1', 1, null)).toMatchObject({ error: 'unknown_member_id', errorMessage: 'Member m1 is not a member of group g.' });
    const alone = beat('m2', 2, []);
    expect(alone.memberEpoch).toBe(3);
    expect(owned(alone)).toHaveLength(4);
  });

  it('a member that keeps revoked partitions past its rebalance timeout is removed, and they move', async () => {
    const first = coordinator.heartbeat(heartbeat({ rebalanceTimeoutMs: 5_000 }), topics);
    coordinator.heartbeat(heartbeat({ memberId: 'm2' }), topics);
    beat('m1', 1, first.assignment); // asked to revoke; keeps reporting everything
    await vi.advanceTimersByTimeAsync(4_000);
    beat('m1', 1, first.assignment);
    beat('m2', 2, []);
    await vi.advanceTimersByTimeAsync(1_001);
    expect(beat('m1', 1, first.assignment).error).toBe('unknown_member_id');
    expect(owned(beat('m2', 2, []))).toHaveLength(4);
  });

  it('a static member leaving with epoch -2 keeps its place; its successor under the instance id takes its epoch and partitions', () => {
    const first = coordinator.heartbeat(heartbeat({ instanceId: 'host-1' }), topics);
    const clash = coordinator.heartbeat(heartbeat({ memberId: 'm9', instanceId: 'host-1' }), topics);
    expect(clash.error).toBe('unreleased_instance_id');
    expect(clash.errorMessage).toContain('host-1');
    expect(coordinator.heartbeat(heartbeat({ memberEpoch: -2, instanceId: 'host-1' }), topics)).toMatchObject({ error: null, memberEpoch: -2 });
    const back = coordinator.heartbeat(heartbeat({ memberId: 'm9', instanceId: 'host-1' }), topics);
    expect(back).toMatchObject({ error: null, memberId: 'm9', memberEpoch: first.memberEpoch });
    expect(owned(back)).toEqual(owned(first));
    expect(beat('m1', 1, null).error).toBe('unknown_member_id');
  });

  it('answers Kafka\'s errors with their sentences', () => {
    expect(coordinator.heartbeat(heartbeat({ rebalanceTimeoutMs: -1 }), topics)).toMatchObject({ error: 'invalid_request', errorMessage: 'RebalanceTimeoutMs must be provided in first request.' });
    expect(coordinator.heartbeat(heartbeat({ topicPartitions: null }), topics)).toMatchObject({ error: 'invalid_request', errorMessage: 'TopicPartitions must be empty when (re-)joining.' });
    expect(coordinator.heartbeat(heartbeat({ subscribedTopicNames: null }), topics)).toMatchObject({ error: 'invalid_request', errorMessage: 'Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.' });
    expect(coordinator.heartbeat(heartbeat({ memberId: '' }), topics)).toMatchObject({ error: 'invalid_request', errorMessage: "MemberId can't be empty." });
    expect(coordinator.heartbeat(heartbeat({ memberEpoch: -2 }), topics)).toMatchObject({ error: 'invalid_request', errorMessage: "InstanceId can't be null." });
    expect(coordinator.heartbeat(heartbeat({ serverAssignor: 'sticky' }), topics)).toMatchObject({ error: 'unsupported_assignor', errorMessage: 'ServerAssignor sticky is not supported. Supported assignors: uniform, range.' });
    expect(coordinator.heartbeat(heartbeat({ subscribedTopicNames: null, subscribedTopicRegex: 'orders(?=x)' }), topics).error).toBe('invalid_regular_expression');
    expect(coordinator.heartbeat(heartbeat({ subscribedTopicNames: null, subscribedTopicRegex: 'orders[' }), topics).error).toBe('invalid_regular_expression');
    // Version 0 lets the coordinator name a joining member.
    const named = coordinator.heartbeat(heartbeat({ memberId: '', apiVersion: 0 }), topics);
    expect(named.error).toBeNull();
    expect(named.memberId).toMatch(/^[0-9a-f-]{36}$/);

    coordinator.heartbeat(heartbeat({}), topics);
    expect(beat('m1', 7, null)).toMatchObject({ error: 'fenced_member_epoch' });
    expect(beat('nobody', 1, null)).toMatchObject({ error: 'unknown_member_id' });
    expect(beat('m1', 1, null, { group: 'unknown-group' }).error).toBe('unknown_member_id');
  });

  it('refuses a member past the group size with GROUP_MAX_SIZE_REACHED', () => {
    const small = new ConsumerGroupCoordinator({ maxGroupSize: 1 });
    try {
      expect(small.heartbeat(heartbeat({}), topics).error).toBeNull();
      expect(small.heartbeat(heartbeat({ memberId: 'm2' }), topics).error).toBe('group_max_size_reached');
    } finally {
      small.close();
    }
  });

  it('a subscription by expression picks up a topic created later, and the group epoch moves on', () => {
    topics = [ORDERS];
    const joined = coordinator.heartbeat(heartbeat({ subscribedTopicNames: null, subscribedTopicRegex: 'orders|pay.*' }), topics);
    expect(owned(joined)).toHaveLength(4);
    topics = [ORDERS, PAYMENTS];
    const grown = beat('m1', joined.memberEpoch, joined.assignment);
    expect(grown.memberEpoch).toBe(joined.memberEpoch + 1);
    expect(owned(grown)).toEqual([...owned(joined), 'payments:0', 'payments:1', 'payments:2', 'payments:3'].sort());
    // A topic gaining partitions counts too.
    topics = [ORDERS, { ...PAYMENTS, partitions: 6 }];
    expect(owned(beat('m1', grown.memberEpoch, grown.assignment))).toContain('payments:5');
  });

  it('checks commits by member and epoch: a stale epoch is STALE_MEMBER_EPOCH, a stranger UNKNOWN_MEMBER_ID', () => {
    const joined = coordinator.heartbeat(heartbeat({}), topics);
    expect(coordinator.checkMember('g', 'm1', joined.memberEpoch)).toBeNull();
    expect(coordinator.checkMember('g', 'm1', joined.memberEpoch - 1)).toBe('stale_member_epoch');
    expect(coordinator.checkMember('g', 'other', 1)).toBe('unknown_member_id');
    expect(coordinator.checkMember('g', '', -1)).toBe('unknown_member_id');
    coordinator.heartbeat(heartbeat({ memberEpoch: -1 }), topics);
    // An empty group takes commits from outside (admin tools).
    expect(coordinator.checkMember('g', '', -1)).toBeNull();
    expect(coordinator.state('g')).toBe('Empty');
  });

  it('describes the group: epochs, assignor, members with their assignment and target', () => {
    const joined = coordinator.heartbeat(heartbeat({ serverAssignor: 'range', instanceId: 'i1', rackId: 'r1' }), topics);
    const [described] = coordinator.describe(['g'], topics);
    expect(described).toMatchObject({ error: null, state: 'Stable', groupEpoch: 1, assignmentEpoch: 1, assignorName: 'range' });
    expect(described!.members[0]).toMatchObject({ memberId: 'm1', instanceId: 'i1', rackId: 'r1', memberEpoch: joined.memberEpoch, subscribedTopicNames: ['orders'] });
    expect(described!.members[0]!.assignment).toEqual([{ topicId: ORDERS.id, topicName: 'orders', partitions: [0, 1, 2, 3] }]);
    expect(coordinator.describe(['none'], topics)[0]).toMatchObject({ error: 'group_id_not_found', errorMessage: 'Group none not found.' });
  });
});

describe('server-side assignors', () => {
  const spec = (members: [string, string[]][], previous = new Map()) => ({
    members: members.map(([memberId, topicIds]) => ({ memberId, topicIds: new Set(topicIds) })),
    topics: new Map([['t1', 3], ['t2', 3]]),
    previous,
  });
  const flat = (a: Map<string, Map<string, Set<number>>>) =>
    Object.fromEntries([...a].map(([m, t]) => [m, [...t].flatMap(([id, ps]) => [...ps].sort().map((p) => `${id}:${p}`)).sort()]));

  it('range gives each member contiguous ranges of every topic, co-partitioned', () => {
    expect(flat(rangeAssignor(spec([['b', ['t1', 't2']], ['a', ['t1', 't2']]])))).toEqual({
      a: ['t1:0', 't1:1', 't2:0', 't2:1'],
      b: ['t1:2', 't2:2'],
    });
  });

  it('uniform spreads evenly, respects subscriptions, and keeps what members had', () => {
    const first = uniformAssignor(spec([['a', ['t1', 't2']], ['b', ['t1', 't2']]]));
    expect(Object.values(flat(first)).map((ps) => ps.length)).toEqual([3, 3]);
    const withC = uniformAssignor(spec([['a', ['t1', 't2']], ['b', ['t1', 't2']], ['c', ['t1', 't2']]], first));
    const after = flat(withC);
    expect(Object.values(after).map((ps) => ps.length)).toEqual([2, 2, 2]);
    // Sticky: a and b keep two of their three each.
    for (const m of ['a', 'b']) expect(after[m]!.every((p) => flat(first)[m]!.includes(p))).toBe(true);
    const mixed = flat(uniformAssignor(spec([['a', ['t1']], ['b', ['t1', 't2']]])));
    expect(mixed.a!.every((p) => p.startsWith('t1:'))).toBe(true);
    expect(mixed.a!.length + mixed.b!.length).toBe(6);
    expect(Math.abs(mixed.a!.length - mixed.b!.length)).toBeLessThanOrEqual(1);
  });
});

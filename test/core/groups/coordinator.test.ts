import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GroupCoordinator } from '../../../src/core/groups/coordinator.js';
import type { JoinGroupRequest, JoinGroupResult } from '../../../src/core/groups/types.js';
import { subscription } from '../../support/consumer-protocol.js';

/**
 * The classic group protocol as a consumer sees it: joins held until the
 * rebalance completes, assignments handed out by the leader, heartbeats that
 * tell members to rejoin, session expiry, static membership and generation
 * fencing on commits. Time is simulated, so timeouts are exact.
 */

const SESSION = 10_000;
const REBALANCE = 30_000;

function joinRequest(overrides: Partial<JoinGroupRequest> = {}): JoinGroupRequest {
  return {
    group: 'orders',
    memberId: '',
    groupInstanceId: null,
    clientId: 'client',
    clientHost: '/127.0.0.1',
    sessionTimeoutMs: SESSION,
    rebalanceTimeoutMs: REBALANCE,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: subscription('orders') }],
    requireKnownMemberId: false,
    reason: null,
    ...overrides,
  };
}

describe('group coordinator', () => {
  let coordinator: GroupCoordinator;

  beforeEach(() => {
    vi.useFakeTimers();
    coordinator = new GroupCoordinator({ initialRebalanceDelayMs: 3000 });
  });

  afterEach(() => {
    coordinator.close();
    vi.useRealTimers();
  });

  /** Joins `n` members together and completes the first rebalance; returns their join results. */
  async function formGroup(n: number, overrides: Partial<JoinGroupRequest> = {}): Promise<JoinGroupResult[]> {
    const joins = Array.from({ length: n }, (_, i) => coordinator.join(joinRequest({ clientId: `c${i}`, ...overrides })));
    // Members that arrive during the initial delay extend it by one more delay.
    await vi.advanceTimersByTimeAsync(n > 1 ? 6000 : 3000);
    return Promise.all(joins);
  }

  async function syncAll(results: JoinGroupResult[], assignment = (memberId: string) => Buffer.from(memberId)) {
    const leader = results.find((r) => r.memberId === r.leader)!;
    const followers = results.filter((r) => r !== leader).map((r) =>
      coordinator.sync({ group: 'orders', generationId: r.generationId, memberId: r.memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] }),
    );
    const leaderSync = coordinator.sync({
      group: 'orders',
      generationId: leader.generationId,
      memberId: leader.memberId,
      groupInstanceId: null,
      protocolType: 'consumer',
      protocolName: 'range',
      assignments: leader.members.map((m) => ({ memberId: m.memberId, assignment: assignment(m.memberId) })),
    });
    return Promise.all([leaderSync, ...followers]);
  }

  it('holds the first joins for the initial rebalance delay, then answers all with one generation and one leader', async () => {
    const first = coordinator.join(joinRequest({ clientId: 'a' }));
    let settled = false;
    void first.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(2999);
    expect(settled).toBe(false);
    const second = coordinator.join(joinRequest({ clientId: 'b' }));
    await vi.advanceTimersByTimeAsync(3001 + 3000);
    const [a, b] = await Promise.all([first, second]);
    expect(a.error).toBeNull();
    expect(b.error).toBeNull();
    expect(a.generationId).toBe(1);
    expect(b.generationId).toBe(1);
    expect(a.leader).toBe(b.leader);
    const leader = a.memberId === a.leader ? a : b;
    const follower = leader === a ? b : a;
    expect(leader.members.map((m) => m.memberId).sort()).toEqual([a.memberId, b.memberId].sort());
    expect(follower.members).toEqual([]);
    expect(leader.protocolName).toBe('range');
  });

  it('answers member_id_required to a first join from v4 on, then admits the member with that id', async () => {
    const first = await coordinator.join(joinRequest({ requireKnownMemberId: true }));
    expect(first.error).toBe('member_id_required');
    expect(first.memberId).toMatch(/^client-/);
    const second = coordinator.join(joinRequest({ memberId: first.memberId, requireKnownMemberId: true }));
    await vi.advanceTimersByTimeAsync(3000);
    const joined = await second;
    expect(joined.error).toBeNull();
    expect(joined.memberId).toBe(first.memberId);
    expect(joined.leader).toBe(first.memberId);
  });

  it('hands out the leader\'s assignments through SyncGroup and becomes Stable', async () => {
    const joined = await formGroup(3);
    const synced = await syncAll(joined);
    for (const s of synced) expect(s.error).toBeNull();
    expect(synced.map((s) => s.assignment.toString()).sort()).toEqual(joined.map((j) => j.memberId).sort());
    const [description] = coordinator.describe(['orders']);
    expect(description!.state).toBe('Stable');
    for (const m of description!.members) expect(m.assignment.toString()).toBe(m.memberId);
  });

  it('tells members to rejoin with rebalance_in_progress when a new member joins a stable group', async () => {
    const joined = await formGroup(2);
    await syncAll(joined);
    const newcomer = coordinator.join(joinRequest({ clientId: 'late' }));
    const hb = coordinator.heartbeat({ group: 'orders', generationId: 1, memberId: joined[0]!.memberId, groupInstanceId: null });
    expect(hb.error).toBe('rebalance_in_progress');
    const rejoins = joined.map((j) => coordinator.join(joinRequest({ memberId: j.memberId, clientId: 'x' })));
    const results = await Promise.all([newcomer, ...rejoins]);
    for (const r of results) expect(r.generationId).toBe(2);
  });

  it('removes a member whose session timeout passes without a heartbeat, and rebalances the rest', async () => {
    const joined = await formGroup(2);
    await syncAll(joined);
    const [alive, silent] = joined as [JoinGroupResult, JoinGroupResult];
    // Keep one member alive; the other goes quiet.
    for (let t = 0; t < SESSION + 1000; t += 3000) {
      await vi.advanceTimersByTimeAsync(3000);
      coordinator.heartbeat({ group: 'orders', generationId: 1, memberId: alive.memberId, groupInstanceId: null });
    }
    const [description] = coordinator.describe(['orders']);
    expect(description!.members.map((m) => m.memberId)).toEqual([alive.memberId]);
    expect(description!.state).toBe('PreparingRebalance');
    expect(coordinator.heartbeat({ group: 'orders', generationId: 1, memberId: silent.memberId, groupInstanceId: null }).error).toBe('unknown_member_id');
    const rejoin = await coordinator.join(joinRequest({ memberId: alive.memberId }));
    expect(rejoin.generationId).toBe(2);
    expect(rejoin.leader).toBe(alive.memberId);
  });

  it('drops members that do not rejoin within the rebalance timeout', async () => {
    const joined = await formGroup(2);
    await syncAll(joined);
    const rejoin = coordinator.join(joinRequest({ memberId: joined[0]!.memberId }));
    // The other member keeps heartbeating but never rejoins.
    for (let t = 0; t < REBALANCE; t += 3000) {
      await vi.advanceTimersByTimeAsync(3000);
      coordinator.heartbeat({ group: 'orders', generationId: 1, memberId: joined[1]!.memberId, groupInstanceId: null });
    }
    const result = await rejoin;
    expect(result.generationId).toBe(2);
    expect(result.members.map((m) => m.memberId)).toEqual([joined[0]!.memberId]);
  });

  it('moves a leaving member\'s partitions at once: LeaveGroup triggers the rebalance', async () => {
    const joined = await formGroup(3);
    await syncAll(joined);
    const left = coordinator.leave({ group: 'orders', members: [{ memberId: joined[2]!.memberId, groupInstanceId: null, reason: null }] });
    expect(left.members[0]!.error).toBeNull();
    const rejoins = await Promise.all(joined.slice(0, 2).map((j) => coordinator.join(joinRequest({ memberId: j.memberId }))));
    for (const r of rejoins) expect(r.generationId).toBe(2);
    const leader = rejoins.find((r) => r.memberId === r.leader)!;
    expect(leader.members).toHaveLength(2);
  });

  it('lets a static member that restarts within its session timeout keep its assignment without a rebalance', async () => {
    const joins = [
      coordinator.join(joinRequest({ clientId: 'a', groupInstanceId: 'instance-a' })),
      coordinator.join(joinRequest({ clientId: 'b', groupInstanceId: 'instance-b' })),
    ];
    await vi.advanceTimersByTimeAsync(6000);
    const joined = await Promise.all(joins);
    await syncAll(joined);
    const before = coordinator.describe(['orders'])[0]!;
    const oldB = joined.find((j) => before.members.find((m) => m.memberId === j.memberId)!.groupInstanceId === 'instance-b')!;
    const assignmentB = before.members.find((m) => m.groupInstanceId === 'instance-b')!.assignment;

    // instance-b restarts: a fresh join with no member id, same instance id and protocols.
    const restarted = await coordinator.join(joinRequest({ clientId: 'b', groupInstanceId: 'instance-b' }));
    expect(restarted.error).toBeNull();
    expect(restarted.generationId).toBe(1);
    expect(restarted.memberId).not.toBe(oldB.memberId);
    const sync = await coordinator.sync({ group: 'orders', generationId: 1, memberId: restarted.memberId, groupInstanceId: 'instance-b', protocolType: 'consumer', protocolName: 'range', assignments: [] });
    expect(sync.assignment.equals(assignmentB)).toBe(true);
    expect(coordinator.describe(['orders'])[0]!.state).toBe('Stable');
    // The old incarnation is fenced.
    expect(coordinator.heartbeat({ group: 'orders', generationId: 1, memberId: oldB.memberId, groupInstanceId: 'instance-b' }).error).toBe('fenced_instance_id');
  });

  it('refuses a member whose protocols share nothing with the group: inconsistent_group_protocol, and the group carries on', async () => {
    const joined = await formGroup(1);
    await syncAll(joined);
    const odd = await coordinator.join(joinRequest({ protocols: [{ name: 'roundrobin', metadata: subscription('orders') }] }));
    expect(odd.error).toBe('inconsistent_group_protocol');
    const otherType = await coordinator.join(joinRequest({ protocolType: 'connect' }));
    expect(otherType.error).toBe('inconsistent_group_protocol');
    expect(coordinator.describe(['orders'])[0]!.state).toBe('Stable');
    expect(coordinator.heartbeat({ group: 'orders', generationId: 1, memberId: joined[0]!.memberId, groupInstanceId: null }).error).toBeNull();
  });

  it('chooses the protocol every member supports that most prefer', async () => {
    const joins = [
      coordinator.join(joinRequest({ clientId: 'a', protocols: [{ name: 'cooperative-sticky', metadata: subscription('t') }, { name: 'range', metadata: subscription('t') }] })),
      coordinator.join(joinRequest({ clientId: 'b', protocols: [{ name: 'roundrobin', metadata: subscription('t') }, { name: 'range', metadata: subscription('t') }] })),
    ];
    await vi.advanceTimersByTimeAsync(6000);
    const [a, b] = await Promise.all(joins);
    expect(a!.protocolName).toBe('range');
    expect(b!.protocolName).toBe('range');
  });

  it('fences commits: an old generation gets illegal_generation, an unknown member unknown_member_id', async () => {
    const joined = await formGroup(1);
    await syncAll(joined);
    const member = joined[0]!;
    expect(coordinator.checkCommit({ group: 'orders', generationId: 1, memberId: member.memberId, groupInstanceId: null })).toBeNull();
    expect(coordinator.checkCommit({ group: 'orders', generationId: 0, memberId: member.memberId, groupInstanceId: null })).toBe('illegal_generation');
    expect(coordinator.checkCommit({ group: 'orders', generationId: 1, memberId: 'stranger', groupInstanceId: null })).toBe('unknown_member_id');
    expect(coordinator.checkCommit({ group: 'orders', generationId: -1, memberId: '', groupInstanceId: null })).toBe('unknown_member_id');
    // A group nobody has joined takes commits from outside, as assign-mode consumers make them.
    expect(coordinator.checkCommit({ group: 'standalone', generationId: -1, memberId: '', groupInstanceId: null })).toBeNull();
    expect(coordinator.checkCommit({ group: 'standalone', generationId: 3, memberId: 'x', groupInstanceId: null })).toBe('illegal_generation');
  });

  it('answers unknown_member_id to a heartbeat from a member it does not know', () => {
    expect(coordinator.heartbeat({ group: 'orders', generationId: 1, memberId: 'ghost', groupInstanceId: null }).error).toBe('unknown_member_id');
  });

  it('refuses an empty group id and one over the size limit with invalid_group_id', async () => {
    expect((await coordinator.join(joinRequest({ group: '' }))).error).toBe('invalid_group_id');
    expect((await coordinator.join(joinRequest({ group: 'g'.repeat(256) }))).error).toBe('invalid_group_id');
  });

  it('refuses session timeouts outside the allowed range', async () => {
    expect((await coordinator.join(joinRequest({ sessionTimeoutMs: 10 }))).error).toBe('invalid_session_timeout');
  });

  it('refuses members beyond the maximum group size with group_max_size_reached', async () => {
    coordinator.close();
    coordinator = new GroupCoordinator({ initialRebalanceDelayMs: 100, maxGroupSize: 2 });
    const joins = [coordinator.join(joinRequest()), coordinator.join(joinRequest())];
    const third = await coordinator.join(joinRequest());
    expect(third.error).toBe('group_max_size_reached');
    await vi.advanceTimersByTimeAsync(200);
    for (const j of await Promise.all(joins)) expect(j.error).toBeNull();
  });

  it('reports the topics live members subscribe to, for OffsetDelete', async () => {
    const joined = await formGroup(1, { protocols: [{ name: 'range', metadata: subscription('orders', 'payments') }] });
    await syncAll(joined);
    expect([...coordinator.subscribedTopics('orders')].sort()).toEqual(['orders', 'payments']);
    expect(coordinator.hasMembers('orders')).toBe(true);
    coordinator.leave({ group: 'orders', members: [{ memberId: joined[0]!.memberId, groupInstanceId: null, reason: null }] });
    expect(coordinator.hasMembers('orders')).toBe(false);
    expect(coordinator.describe(['orders'])[0]!.state).toBe('Empty');
  });
});

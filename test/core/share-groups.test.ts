import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/core.js';
import { MemoryEngine } from '../../src/core/engines/memory/index.js';
import { openPostgresEngine } from '../../src/core/engines/postgres/index.js';
import { CoreFront } from '../../src/core/front.js';
import type { ShareFetchResult } from '../../src/core/groups/share/types.js';
import { connectCore, RpcServer } from '../../src/rpc/index.js';
import { findTestDatabase } from '../support/postgres.js';

/**
 * Share groups (KIP-932) in the core, on both engines: what members of a
 * share group notice. Records are acquired under locks, one member at a time;
 * ACCEPT, RELEASE and REJECT; a lock that runs out hands the record to the
 * next fetch with its delivery count raised; the delivery-count limit
 * archives; a member leaving frees its records; the locks outlive the core
 * that took them (PostgreSQL, a second core on the same schema); the admin
 * calls describe, reset and delete the group's offsets.
 */
interface Fixture {
  core: Core;
  /** A second core on the same store (PostgreSQL), as another gateway's; null for memory. */
  second: (() => Promise<Core>) | null;
  close: () => Promise<void>;
}

const found = await findTestDatabase();
afterAll(() => found.database?.release());

const engines: [string, () => Promise<Fixture>][] = [
  ['memory', async () => {
    const core = new CoreFront(new MemoryEngine({ maintenanceIntervalMs: 0 }));
    return { core, second: null, close: () => core.close() };
  }],
  ['memory over RPC (loopback TCP)', async () => {
    const front = new CoreFront(new MemoryEngine({ maintenanceIntervalMs: 0 }));
    const server = new RpcServer({ core: front, secret: 'share-groups-secret' });
    const core = await connectCore({ address: await server.listen({ host: '127.0.0.1', port: 0 }), secret: 'share-groups-secret' });
    return {
      core,
      second: null,
      close: async () => {
        await core.close();
        await server.close();
        await front.close();
      },
    };
  }],
];
if (found.database !== null) {
  const database = found.database;
  engines.push(['postgres', async () => {
    const schema = database.freshSchema();
    const open = async () => new CoreFront(await openPostgresEngine({ url: database.url, schema, maintenanceIntervalMs: 0, poolSize: 4 }));
    const cores = [await open()];
    return {
      core: cores[0]!,
      second: async () => {
        const core = await open();
        cores.push(core);
        return core;
      },
      close: async () => {
        for (const c of cores) await c.close();
      },
    };
  }]);
}

let counter = 0;

describe.each(engines)('share groups: %s', (_name, open) => {
  let fx: Fixture;
  let core: Core;
  let queue: string;
  let group: string;
  beforeEach(async (context) => {
    fx = await open();
    core = fx.core;
    queue = `share-q-${process.pid}-${++counter}`;
    group = `${queue}-group`;
    await core.createQueue({ name: queue, partitions: 1 });
    await core.push({ items: Array.from({ length: 5 }, (_, i) => ({ queue, partition: '0', payload: { n: i } })) });
    await core.alterShareGroupConfig({ group, changes: { 'share.auto.offset.reset': 'earliest' } });
    context.onTestFinished(() => fx.close());
  });

  const join = async (memberId: string, on: Core = core) => on.shareGroupHeartbeat({ group, memberId, memberEpoch: 0, rackId: null, subscribedTopicNames: [queue], clientId: 'test', clientHost: '/127.0.0.1' });
  const fetch = (memberId: string, maxRecords: number, options: { maxWaitMs?: number; on?: Core; acks?: { firstOffset: number; lastOffset: number; types: number[] }[] } = {}) =>
    (options.on ?? core).shareFetch({
      group, memberId, maxRecords, maxBytes: 1 << 20, maxWaitMs: options.maxWaitMs ?? 0,
      partitions: [{ queue, partition: 0 }],
      acknowledgements: options.acks ? [{ queue, partition: 0, batches: options.acks }] : [],
    });
  const acquired = (r: ShareFetchResult) => r.partitions[0]!.acquired;
  const startOffset = async () => (await core.describeShareGroupOffsets({ group, partitions: null })).partitions[0]?.startOffset;

  it('members get disjoint records; RELEASE redelivers with the count raised, REJECT archives, ACCEPT moves the start offset', async () => {
    const a = await join('member-a');
    const topicId = (await core.describeQueue({ name: queue }))!.id;
    expect(a).toMatchObject({ error: null, memberEpoch: 1, assignment: [{ topicId, partitions: [0] }] });
    expect((await join('member-b')).memberEpoch).toBe(2);
    const first = await fetch('member-a', 3);
    expect(acquired(first)).toEqual([{ firstOffset: 0, lastOffset: 2, deliveryCount: 1 }]);
    expect(first.partitions[0]!.records.length).toBeGreaterThan(0);
    expect(acquired(await fetch('member-b', 10))).toEqual([{ firstOffset: 3, lastOffset: 4, deliveryCount: 1 }]);
    expect(acquired(await fetch('member-b', 10))).toEqual([]);

    const acked = await core.shareAcknowledge({ group, memberId: 'member-a', acknowledgements: [{ queue, partition: 0, batches: [{ firstOffset: 0, lastOffset: 2, types: [1, 2, 3] }] }] });
    expect(acked.partitions).toEqual([{ queue, partition: 0, error: null }]);
    expect(await startOffset()).toBe(1);
    // The rejected record went to Queen's dead-letter queue, as a native message whose retries ran out does.
    const dead = (await core.kvGetPrefix({ ns: 'queen.dlq', prefix: `${queue}/` })).map((e) => e.value);
    expect(dead).toEqual([expect.objectContaining({ queue, partition: '0', offset: 2, consumerGroup: group, data: { n: 2 }, errorMessage: expect.stringContaining('REJECT') })]);
    expect(acquired(await fetch('member-b', 10))).toEqual([{ firstOffset: 1, lastOffset: 1, deliveryCount: 2 }]);
    // Another member's records are not this member's to acknowledge.
    const wrong = await core.shareAcknowledge({ group, memberId: 'member-a', acknowledgements: [{ queue, partition: 0, batches: [{ firstOffset: 3, lastOffset: 4, types: [1] }] }] });
    expect(wrong.partitions[0]!.error).toBe('invalid_record_state');
    await fetch('member-b', 1, { acks: [{ firstOffset: 1, lastOffset: 1, types: [1] }, { firstOffset: 3, lastOffset: 4, types: [1] }] });
    expect(await startOffset()).toBe(5);
    const [described] = (await core.describeShareGroupOffsets({ group, partitions: [{ queue, partition: 0 }] })).partitions;
    expect(described).toMatchObject({ startOffset: 5, lag: 0, error: null });
    const [state] = (await core.shareGroupDescribe({ groups: [group] })).groups;
    expect(state).toMatchObject({ error: null, state: 'Stable', groupEpoch: 2, assignorName: 'simple' });
    expect(state!.members.map((m) => m.memberId).sort()).toEqual(['member-a', 'member-b']);
    expect((await core.listGroupStates({})).groups.find((g) => g.group === group)).toMatchObject({ groupType: 'share', state: 'Stable' });
  });

  it('a lock that runs out hands the records to the next fetch, delivery count raised; the limit archives them', async () => {
    await core.alterShareGroupConfig({ group, changes: { 'share.record.lock.duration.ms': '1000', 'share.delivery.count.limit': '2' } });
    await join('member-a');
    await join('member-b');
    expect(acquired(await fetch('member-a', 5))).toEqual([{ firstOffset: 0, lastOffset: 4, deliveryCount: 1 }]);
    // member-a goes silent; member-b's long poll is answered once the lock has run out.
    const redelivered = await fetch('member-b', 5, { maxWaitMs: 20_000 });
    expect(acquired(redelivered)).toEqual([{ firstOffset: 0, lastOffset: 4, deliveryCount: 2 }]);
    expect(redelivered.lockDurationMs).toBe(1000);
    // The second delivery was the last: released, they are archived and the start offset passes them.
    await core.shareAcknowledge({ group, memberId: 'member-b', acknowledgements: [{ queue, partition: 0, batches: [{ firstOffset: 0, lastOffset: 4, types: [2] }] }] });
    expect(acquired(await fetch('member-a', 5))).toEqual([]);
    expect(await startOffset()).toBe(5);
    const dead = (await core.kvGetPrefix({ ns: 'queen.dlq', prefix: `${queue}/` })).map((e) => e.value as { offset: number; retryCount: number });
    expect(dead.map((d) => [d.offset, d.retryCount])).toEqual([[0, 1], [1, 1], [2, 1], [3, 1], [4, 1]]);
  });

  it('a member that leaves frees its records at once; offsets are reset and deleted only while the group is empty', async () => {
    await join('member-a');
    await join('member-b');
    expect(acquired(await fetch('member-a', 2))).toEqual([{ firstOffset: 0, lastOffset: 1, deliveryCount: 1 }]);
    const left = await core.shareGroupHeartbeat({ group, memberId: 'member-a', memberEpoch: -1, rackId: null, subscribedTopicNames: null, clientId: 'test', clientHost: '/127.0.0.1' });
    expect(left.memberEpoch).toBe(-1);
    expect(acquired(await fetch('member-b', 5))).toEqual([{ firstOffset: 0, lastOffset: 1, deliveryCount: 2 }, { firstOffset: 2, lastOffset: 4, deliveryCount: 1 }]);
    expect((await core.alterShareGroupOffsets({ group, partitions: [{ queue, partition: 0, startOffset: 0 }] })).error).toBe('non_empty_group');
    await core.shareGroupHeartbeat({ group, memberId: 'member-b', memberEpoch: -1, rackId: null, subscribedTopicNames: null, clientId: 'test', clientHost: '/127.0.0.1' });
    expect((await core.alterShareGroupOffsets({ group, partitions: [{ queue, partition: 0, startOffset: 3 }] })).partitions).toEqual([{ queue, partition: 0, error: null }]);
    await join('member-c');
    expect(acquired(await fetch('member-c', 5))).toEqual([{ firstOffset: 3, lastOffset: 4, deliveryCount: 1 }]);
    await core.shareGroupHeartbeat({ group, memberId: 'member-c', memberEpoch: -1, rackId: null, subscribedTopicNames: null, clientId: 'test', clientHost: '/127.0.0.1' });
    expect((await core.deleteShareGroupOffsets({ group, queues: [queue] })).queues).toEqual([{ queue, error: null }]);
    expect((await core.describeShareGroupOffsets({ group, partitions: null })).partitions).toEqual([]);
    expect((await core.deleteGroups({ groups: [group] })).groups).toEqual([{ group, error: null }]);
  });

  it('a deleted queue takes its share state with it', async () => {
    await join('member-a');
    expect(acquired(await fetch('member-a', 2))).toEqual([{ firstOffset: 0, lastOffset: 1, deliveryCount: 1 }]);
    await core.deleteQueue({ name: queue });
    expect((await core.describeShareGroupOffsets({ group, partitions: null })).partitions).toEqual([]);
    await core.createQueue({ name: queue, partitions: 1 });
    await core.push({ items: [{ queue, partition: '0', payload: { again: true } }] });
    expect(acquired(await fetch('member-a', 5))).toEqual([{ firstOffset: 0, lastOffset: 0, deliveryCount: 1 }]);
  });

  it('locks are stored: another core sees them held, and the holder acknowledges through it', async (context) => {
    if (fx.second === null) return context.skip();
    await join('member-a');
    expect(acquired(await fetch('member-a', 5))).toEqual([{ firstOffset: 0, lastOffset: 4, deliveryCount: 1 }]);
    const other = await fx.second();
    expect(acquired(await fetch('member-b', 5, { on: other }))).toEqual([]);
    // A core that does not hold the group still lists it, from its stored state.
    expect((await other.listGroupStates({})).groups.find((g) => g.group === group)).toMatchObject({ groupType: 'share' });
    const acked = await other.shareAcknowledge({ group, memberId: 'member-a', acknowledgements: [{ queue, partition: 0, batches: [{ firstOffset: 0, lastOffset: 4, types: [1] }] }] });
    expect(acked.partitions[0]!.error).toBeNull();
    // The admin calls go to the group's coordinator, the first core; the other says so.
    expect((await other.describeShareGroupOffsets({ group, partitions: null })).error).toBe('not_coordinator');
    expect(await startOffset()).toBe(5);
  });

  it('locks outlive the core that took them: after it is gone, another core redelivers them once they run out', async (context) => {
    if (fx.second === null) return context.skip();
    await core.alterShareGroupConfig({ group, changes: { 'share.record.lock.duration.ms': '1000' } });
    await join('member-a');
    expect(acquired(await fetch('member-a', 5))).toEqual([{ firstOffset: 0, lastOffset: 4, deliveryCount: 1 }]);
    const other = await fx.second();
    await core.close(); // the gateway and core member-a fetched through are gone
    await join('member-b', other);
    const redelivered = await fetch('member-b', 5, { on: other, maxWaitMs: 20_000 });
    expect(acquired(redelivered)).toEqual([{ firstOffset: 0, lastOffset: 4, deliveryCount: 2 }]);
  });

  it('members fetching at once (through two cores where the store is shared) each get records no other got, and all are acknowledged', async () => {
    await core.push({ items: Array.from({ length: 195 }, (_, i) => ({ queue, partition: '0', payload: { n: 5 + i } })) });
    const cores = fx.second === null ? [core] : [core, await fx.second()];
    const members = Array.from({ length: 6 }, (_, i) => `member-${i}`);
    for (const m of members) await join(m, cores[0]);
    const seen: number[] = [];
    const deadline = Date.now() + 120_000;
    await Promise.all(members.map(async (m, i) => {
      let held: { firstOffset: number; lastOffset: number; types: number[] }[] = [];
      while (seen.length < 200) {
        if (Date.now() > deadline) throw new Error(`waited 120 s for 200 records to be acquired; ${seen.length} were`);
        const got = acquired(await fetch(m, 7, { on: cores[i % cores.length], acks: held }));
        for (const r of got) for (let o = r.firstOffset; o <= r.lastOffset; o++) seen.push(o);
        held = got.map((r) => ({ firstOffset: r.firstOffset, lastOffset: r.lastOffset, types: [1] }));
      }
      if (held.length > 0) await cores[i % cores.length]!.shareAcknowledge({ group, memberId: m, acknowledgements: [{ queue, partition: 0, batches: held }] });
    }));
    expect([...seen].sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(await startOffset()).toBe(200);
  });

  it('group configs: set, described, refused when bad', async () => {
    expect(await core.alterShareGroupConfig({ group, changes: { 'share.delivery.count.limit': '99' } })).toEqual({ error: expect.stringContaining('share.delivery.count.limit') });
    expect(await core.alterShareGroupConfig({ group, changes: { 'share.unknown': '1' } })).toEqual({ error: expect.stringContaining('share.unknown') });
    await core.alterShareGroupConfig({ group, changes: { 'share.isolation.level': 'read_committed' } });
    const { config, set } = await core.describeShareGroupConfig({ group });
    expect(config).toMatchObject({ 'share.isolation.level': 'read_committed', 'share.auto.offset.reset': 'earliest', 'share.record.lock.duration.ms': 30_000, 'share.delivery.count.limit': 5 });
    expect(set.sort()).toEqual(['share.auto.offset.reset', 'share.isolation.level']);
  });
});

/**
 * Consumer-group scenarios: kafkajs and librdkafka members joining, sharing
 * and handing over partitions; the classic protocol driven raw (join, sync,
 * heartbeat, UNKNOWN_MEMBER_ID, ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS,
 * leave); static membership and FENCED_INSTANCE_ID; committing -1 and -2
 * (kafkajs admin.resetOffsets); OffsetFetch of a missing group;
 * describe/list/delete; lag.
 *
 * Member ids are `<client id>-<uuid>` on both; the UUID part is normalised.
 * Which member gets which partitions depends on how the member ids sort, so
 * assignments are observed as a sorted list of partition sets.
 */
import kafkajs, { type Admin, type Consumer, type Kafka } from 'kafkajs';
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { buildBatch } from '../../../protocol/records/record-batch.js';
import { assignment, decodeAssignment, subscription } from '../../support/consumer-protocol.js';
import { waitFor } from '../../support/eventually.js';
import { kafkajsClient } from '../../support/kafkajs.js';
import { startMember, type GroupMember } from '../../support/groups-members.js';
import { adminCall, createAdmin } from '../../support/rdkafka.js';
import type { RawConnection } from '../../support/raw-connection.js';
import { code, type Normaliser, type Scenario, type ScenarioContext } from '../harness.js';
import { awaitCoordinator, awaitLed, openRaw, rawProduce, V, withRaw } from '../observe.js';

const { AssignerProtocol } = kafkajs;
const T0 = Date.UTC(2024, 6, 1);

function client(ctx: ScenarioContext, retries = 5): Kafka {
  return kafkajsClient(ctx.target.bootstrap, { retries, clientId: 'queen-diff' });
}

async function withAdmin<T>(ctx: ScenarioContext, body: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = client(ctx).admin();
  await admin.connect();
  try {
    return await body(admin);
  } finally {
    await admin.disconnect();
  }
}

/** Creates the topic and writes `perPartition` records into each partition. */
async function topicWithRecords(ctx: ScenarioContext, topic: string, partitions: number, perPartition: number): Promise<void> {
  await withAdmin(ctx, (admin) => admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }] }));
  await withRaw(ctx, async (raw) => {
    await awaitLed(raw, topic, partitions);
    for (let p = 0; p < partitions; p++) {
      const batch = buildBatch({ records: Array.from({ length: perPartition }, (_, i) => ({ value: `${topic}:${p}:${i}`, timestamp: T0 + i })) });
      const answer = await rawProduce(raw, topic, p, batch);
      if (answer.errorCode !== 0) throw new Error(`producing to ${topic}[${p}] on ${ctx.target.name} answered ${code(answer.errorCode)}`);
    }
    // The scenario's groups start with the topic's name; the raw ones find no coordinator for themselves.
    await awaitCoordinator(raw, topic);
  });
}

/** A member id with its UUID part as `<uuid>`: the shape two brokers share. */
function anonymousMemberId(id: string): string {
  return id.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, '<uuid>');
}

// ─── Raw group calls ─────────────────────────────────────────────────────────

interface JoinOptions {
  group: string;
  memberId: string;
  instanceId?: string | null;
  topic: string;
  sessionTimeoutMs?: number;
  rebalanceTimeoutMs?: number;
}

function join(raw: RawConnection, o: JoinOptions): Promise<Message> {
  return raw.request(
    ApiKey.JoinGroup,
    V.joinGroup,
    {
      groupId: o.group,
      sessionTimeoutMs: o.sessionTimeoutMs ?? 10_000,
      rebalanceTimeoutMs: o.rebalanceTimeoutMs ?? 10_000,
      memberId: o.memberId,
      groupInstanceId: o.instanceId ?? null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: subscription(o.topic) }],
    },
    30_000,
  );
}

function joinView(a: Message, n: Normaliser, self?: string) {
  return {
    error: code(a.errorCode),
    generationId: a.generationId,
    protocolType: a.protocolType,
    protocolName: a.protocolName,
    leaderIsSelf: a.leader === '' ? 'no leader' : a.leader === (self ?? a.memberId),
    leader: n.text(a.leader),
    memberId: n.text(a.memberId),
    members: (a.members as Message[]).map((m) => ({ memberId: n.text(m.memberId), groupInstanceId: m.groupInstanceId })).sort((x, y) => String(x.memberId).localeCompare(String(y.memberId))),
  };
}

function sync(raw: RawConnection, group: string, generationId: number, memberId: string, assignments: { memberId: string; assignment: Buffer }[], instanceId: string | null = null): Promise<Message> {
  return raw.request(ApiKey.SyncGroup, V.syncGroup, { groupId: group, generationId, memberId, groupInstanceId: instanceId, protocolType: 'consumer', protocolName: 'range', assignments }, 30_000);
}

function syncView(a: Message) {
  return { error: code(a.errorCode), protocolType: a.protocolType, protocolName: a.protocolName, assignment: decodeAssignment(a.assignment as Buffer | null) };
}

async function heartbeat(raw: RawConnection, group: string, generationId: number, memberId: string, instanceId: string | null = null): Promise<string> {
  const a = await raw.request(ApiKey.Heartbeat, V.heartbeat, { groupId: group, generationId, memberId, groupInstanceId: instanceId });
  return code(a.errorCode);
}

async function commit(raw: RawConnection, group: string, generationId: number, memberId: string, topic: string, offsets: [number, number][], instanceId: string | null = null): Promise<unknown> {
  const a = await raw.request(ApiKey.OffsetCommit, V.offsetCommit, {
    groupId: group,
    generationIdOrMemberEpoch: generationId,
    memberId,
    groupInstanceId: instanceId,
    topics: [{ name: topic, partitions: offsets.map(([partitionIndex, offset]) => ({ partitionIndex, committedOffset: BigInt(offset), committedLeaderEpoch: -1, committedMetadata: null })) }],
  });
  return (a.topics as { partitions: Message[] }[])[0]!.partitions.map((p) => [p.partitionIndex, code(p.errorCode)]);
}

async function fetchCommitted(raw: RawConnection, group: string, topics: { name: string; partitionIndexes: number[] }[] | null): Promise<unknown> {
  const a = await raw.request(ApiKey.OffsetFetch, V.offsetFetch, { groupId: group, topics, requireStable: false });
  return {
    error: code(a.errorCode),
    topics: (a.topics as Message[]).map((t) => ({
      name: t.name,
      partitions: (t.partitions as Message[])
        .map((p) => ({ partition: p.partitionIndex, offset: Number(p.committedOffset), leaderEpoch: p.committedLeaderEpoch, metadata: p.metadata, error: code(p.errorCode) }))
        .sort((x, y) => x.partition - y.partition),
    })),
  };
}

/**
 * DescribeGroups as an observation. Members are listed by id when the
 * scenario knows each member's id from its own joins (`byId`); for clients'
 * members, whose ids the scenario never saw, by assignment, with the id's
 * UUID part left out (which member got which partitions follows how the
 * random ids sort).
 */
async function describeRaw(raw: RawConnection, groups: string[], n: Normaliser, options: { includeAuthorizedOperations?: boolean; byId?: boolean } = {}): Promise<unknown> {
  const { includeAuthorizedOperations = false, byId = true } = options;
  const a = await raw.request(ApiKey.DescribeGroups, V.describeGroups, { groups, includeAuthorizedOperations });
  const memberId = (id: string) => (byId ? n.text(id) : anonymousMemberId(id));
  return (a.groups as Message[]).map((g) => ({
    error: code(g.errorCode),
    groupId: g.groupId,
    state: g.groupState,
    protocolType: g.protocolType,
    protocol: g.protocolData,
    members: (g.members as Message[])
      .map((m) => ({
        memberId: memberId(m.memberId as string),
        groupInstanceId: m.groupInstanceId,
        clientId: m.clientId,
        clientHost: m.clientHost,
        assignment: decodeAssignment(m.memberAssignment as Buffer),
      }))
      .sort((x, y) => (byId ? String(x.memberId).localeCompare(String(y.memberId)) : JSON.stringify(x.assignment).localeCompare(JSON.stringify(y.assignment)))),
    authorizedOperations: g.authorizedOperations,
  }));
}

async function leave(raw: RawConnection, group: string, members: { memberId: string; groupInstanceId: string | null }[], n: Normaliser): Promise<unknown> {
  const a = await raw.request(ApiKey.LeaveGroup, V.leaveGroup, { groupId: group, members });
  return { error: code(a.errorCode), members: (a.members as Message[]).map((m) => ({ memberId: n.text(m.memberId), groupInstanceId: m.groupInstanceId, error: code(m.errorCode) })) };
}

// ─── Scenarios ───────────────────────────────────────────────────────────────

/** A kafkajs consumer that records its assignments (GROUP_JOIN) and what it read. */
async function kafkajsMember(ctx: ScenarioContext, group: string, topic: string) {
  const consumer: Consumer = client(ctx).consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 300, rebalanceTimeout: 10_000, retry: { retries: 5 } });
  const joins: { generation: number; assigned: number[]; isLeader: boolean }[] = [];
  const read: string[] = [];
  consumer.on(consumer.events.GROUP_JOIN, (e) => {
    joins.push({ generation: -1, assigned: [...(e.payload.memberAssignment[topic] ?? [])].sort((a, b) => a - b), isLeader: e.payload.isLeader });
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({ eachMessage: async ({ partition, message }) => void read.push(`${partition}@${message.offset}`) });
  return { consumer, joins, read };
}

const kafkajsGroup: Scenario = {
  name: 'group: kafkajs members join, share, rebalance on leave',
  async run(ctx) {
    const n = ctx.normalise;
    const topic = 'diff-group-kafkajs';
    const group = 'diff-group-kafkajs';
    await topicWithRecords(ctx, topic, 4, 2);
    const a = await kafkajsMember(ctx, group, topic);
    await waitFor(() => a.read.length === 8, { what: `the first kafkajs member to read all 8 records on ${ctx.target.name}`, timeoutMs: 30_000 });
    const b = await kafkajsMember(ctx, group, topic);
    await waitFor(() => b.joins.length > 0 && a.joins.length > 1 && a.joins.at(-1)!.assigned.length + b.joins.at(-1)!.assigned.length === 4, {
      what: `both kafkajs members to share the 4 partitions on ${ctx.target.name}`,
      timeoutMs: 40_000,
    });
    const shared = [a.joins.at(-1)!.assigned, b.joins.at(-1)!.assigned].sort((x, y) => x[0]! - y[0]!);
    const leaders = [a.joins.at(-1)!.isLeader, b.joins.at(-1)!.isLeader].filter(Boolean).length;
    const whileTwo = await withRaw(ctx, (raw) => describeRaw(raw, [group], n, { byId: false }));
    const joinsBefore = a.joins.length;
    await b.consumer.disconnect();
    await waitFor(() => a.joins.length > joinsBefore && a.joins.at(-1)!.assigned.length === 4, { what: `the remaining member to take all 4 partitions on ${ctx.target.name}`, timeoutMs: 40_000 });
    const afterLeave = await withRaw(ctx, (raw) => describeRaw(raw, [group], n, { byId: false }));
    await a.consumer.disconnect();
    return {
      firstAssignment: a.joins[0]!.assigned,
      readByFirst: [...a.read].sort(),
      sharedAssignment: shared,
      leadersWhileTwo: leaders,
      readBySecond: b.read.length,
      describeWhileTwo: whileTwo,
      afterLeave: a.joins.at(-1)!.assigned,
      describeAfterLeave: afterLeave,
      describeAfterStop: await withRaw(ctx, (raw) => describeRaw(raw, [group], n, { byId: false })),
      committed: await withAdmin(ctx, (admin) => admin.fetchOffsets({ groupId: group, topics: [topic] })),
    };
  },
};

const librdkafkaGroup: Scenario = {
  name: 'group: librdkafka members (range), one leaves',
  async run(ctx) {
    const topic = 'diff-group-rdkafka';
    const group = 'diff-group-rdkafka';
    await topicWithRecords(ctx, topic, 4, 1);
    const members: GroupMember[] = [];
    try {
      // The first member holds all four before the second joins, so every broker sees the same rebalances.
      members.push(await startMember({ bootstrap: ctx.target.bootstrap, group, topic, name: 'rd-a', assignor: 'range' }));
      await waitFor(() => members[0]!.assigned.size === 4, { what: `the first librdkafka member to take all 4 partitions on ${ctx.target.name}`, timeoutMs: 40_000 });
      members.push(await startMember({ bootstrap: ctx.target.bootstrap, group, topic, name: 'rd-b', assignor: 'range' }));
      await waitFor(() => members.every((m) => m.assigned.size === 2), { what: `two librdkafka members with 2 partitions each on ${ctx.target.name}`, timeoutMs: 40_000 });
      const shared = members.map((m) => [...m.assigned].sort()).sort((x, y) => x[0]! - y[0]!);
      await waitFor(() => members.reduce((s, m) => s + m.records.length, 0) === 4, { what: `the 4 records read on ${ctx.target.name}`, timeoutMs: 30_000 });
      await members[1]!.close();
      await waitFor(() => members[0]!.assigned.size === 4, { what: `the remaining librdkafka member to take all 4 partitions on ${ctx.target.name}`, timeoutMs: 40_000 });
      const kinds = members[0]!.events.map((e) => `${e.kind} [${[...e.partitions].sort().join(',')}]`);
      return { shared, afterLeave: [...members[0]!.assigned].sort(), eventsOfRemaining: kinds, errors: members[0]!.errors };
    } finally {
      await Promise.all(members.map((m) => m.close()));
    }
  },
};

const rawProtocol: Scenario = {
  name: 'group: classic protocol raw (join, sync, heartbeat, fencing, leave)',
  async run(ctx) {
    const n = ctx.normalise;
    const topic = 'diff-group-raw';
    const group = 'diff-group-raw';
    await topicWithRecords(ctx, topic, 2, 1);
    const one = await openRaw(ctx);
    const two = await openRaw(ctx);
    try {
      const steps: Record<string, unknown> = {};
      const first = await join(one, { group, memberId: '', topic });
      steps.firstJoin = joinView(first, n);
      const m1 = first.memberId as string;
      const joined = await join(one, { group, memberId: m1, topic });
      steps.join = joinView(joined, n, m1);
      const gen1 = joined.generationId as number;
      steps.sync = syncView(await sync(one, group, gen1, m1, [{ memberId: m1, assignment: assignment(topic, [0, 1]) }]));
      steps.heartbeat = await heartbeat(one, group, gen1, m1);
      steps.heartbeatUnknownMember = await heartbeat(one, group, gen1, 'nobody-here');
      steps.heartbeatWrongGeneration = await heartbeat(one, group, gen1 + 5, m1);
      steps.commit = await commit(one, group, gen1, m1, topic, [[0, 1]]);
      steps.commitWrongGeneration = await commit(one, group, gen1 + 5, m1, topic, [[0, 1]]);
      steps.commitUnknownMember = await commit(one, group, gen1, 'nobody-here', topic, [[0, 1]]);
      steps.commitFromOutside = await commit(one, group, -1, '', topic, [[1, 1]]);
      steps.syncWrongGeneration = syncView(await sync(one, group, gen1 + 5, m1, []));
      steps.syncUnknownMember = syncView(await sync(one, group, gen1, 'nobody-here', []));
      steps.describeStable = await describeRaw(one, [group], n);

      // A second member: its join waits for the rebalance the first learns of by heartbeat.
      const required = await join(two, { group, memberId: '', topic });
      const m2 = required.memberId as string;
      const secondJoin = join(two, { group, memberId: m2, topic });
      let heartbeatDuringRebalance = 'NONE';
      for (let i = 0; i < 100 && heartbeatDuringRebalance === 'NONE'; i++) {
        heartbeatDuringRebalance = await heartbeat(one, group, gen1, m1);
        if (heartbeatDuringRebalance === 'NONE') await new Promise((r) => setTimeout(r, 100));
      }
      steps.heartbeatDuringRebalance = heartbeatDuringRebalance;
      steps.commitDuringRebalance = await commit(one, group, gen1, m1, topic, [[0, 1]]);
      const [rejoin1, join2] = await Promise.all([join(one, { group, memberId: m1, topic }), secondJoin]);
      steps.rejoinFirst = joinView(rejoin1, n, m1);
      steps.joinSecond = joinView(join2, n, m2);
      const gen2 = rejoin1.generationId as number;
      const leader = rejoin1.leader === m1 ? { raw: one, id: m1 } : { raw: two, id: m2 };
      const follower = leader.id === m1 ? { raw: two, id: m2 } : { raw: one, id: m1 };
      const followerSync = sync(follower.raw, group, gen2, follower.id, []);
      const leaderSync = await sync(leader.raw, group, gen2, leader.id, [
        { memberId: leader.id, assignment: assignment(topic, [0]) },
        { memberId: follower.id, assignment: assignment(topic, [1]) },
      ]);
      steps.leaderSync = syncView(leaderSync);
      steps.followerSync = syncView(await followerSync);
      steps.oldGenerationHeartbeat = await heartbeat(one, group, gen1, m1);
      steps.describeTwo = await describeRaw(one, [group], n);

      steps.leaveSecond = await leave(two, group, [{ memberId: m2, groupInstanceId: null }], n);
      let afterLeave = 'NONE';
      for (let i = 0; i < 100 && afterLeave === 'NONE'; i++) {
        afterLeave = await heartbeat(one, group, gen2, m1);
        if (afterLeave === 'NONE') await new Promise((r) => setTimeout(r, 100));
      }
      steps.heartbeatAfterLeave = afterLeave;
      const rejoinAlone = await join(one, { group, memberId: m1, topic });
      steps.rejoinAlone = joinView(rejoinAlone, n, m1);
      steps.leaveUnknown = await leave(one, group, [{ memberId: 'nobody-here', groupInstanceId: null }], n);
      steps.leaveFirst = await leave(one, group, [{ memberId: m1, groupInstanceId: null }], n);
      steps.describeEmpty = await describeRaw(one, [group], n);
      steps.committed = await fetchCommitted(one, group, [{ name: topic, partitionIndexes: [0, 1] }]);
      return steps;
    } finally {
      one.destroy();
      two.destroy();
    }
  },
};

const staticMembership: Scenario = {
  name: 'group: static membership and FENCED_INSTANCE_ID',
  async run(ctx) {
    const n = ctx.normalise;
    const topic = 'diff-group-static';
    const group = 'diff-group-static';
    await topicWithRecords(ctx, topic, 2, 1);
    const one = await openRaw(ctx);
    const two = await openRaw(ctx);
    try {
      const steps: Record<string, unknown> = {};
      const first = await join(one, { group, memberId: '', instanceId: 'static-1', topic });
      steps.join = joinView(first, n);
      const m1 = first.memberId as string;
      const gen1 = first.generationId as number;
      steps.sync = syncView(await sync(one, group, gen1, m1, [{ memberId: m1, assignment: assignment(topic, [0, 1]) }], 'static-1'));
      steps.heartbeatWithoutInstance = await heartbeat(one, group, gen1, m1);
      steps.heartbeat = await heartbeat(one, group, gen1, m1, 'static-1');
      steps.heartbeatOtherInstance = await heartbeat(one, group, gen1, m1, 'static-2');
      // The same instance comes back without its member id (a restarted process).
      const again = await join(two, { group, memberId: '', instanceId: 'static-1', topic });
      steps.rejoinSameInstance = { ...joinView(again, n), skipAssignment: again.skipAssignment, sameMemberId: again.memberId === m1 };
      const m2 = again.memberId as string;
      steps.oldMemberHeartbeat = await heartbeat(one, group, gen1, m1, 'static-1');
      steps.oldMemberCommit = await commit(one, group, gen1, m1, topic, [[0, 1]], 'static-1');
      steps.oldMemberSync = syncView(await sync(one, group, gen1, m1, [], 'static-1'));
      steps.newMemberHeartbeat = await heartbeat(two, group, again.generationId as number, m2, 'static-1');
      steps.newMemberSync = syncView(await sync(two, group, again.generationId as number, m2, [], 'static-1'));
      steps.describe = await describeRaw(two, [group], n);
      steps.leaveWrongMember = await leave(two, group, [{ memberId: m1, groupInstanceId: 'static-1' }], n);
      steps.leaveByInstance = await leave(two, group, [{ memberId: '', groupInstanceId: 'static-1' }], n);
      steps.describeAfterLeave = await describeRaw(two, [group], n);
      return steps;
    } finally {
      one.destroy();
      two.destroy();
    }
  },
};

const resetOffsets: Scenario = {
  name: 'group: OffsetCommit of -1 and -2, kafkajs resetOffsets',
  async run(ctx) {
    const topic = 'diff-group-reset';
    const group = 'diff-group-reset';
    await topicWithRecords(ctx, topic, 2, 3);
    const steps: Record<string, unknown> = {};
    await withAdmin(ctx, async (admin) => {
      await admin.setOffsets({ groupId: group, topic, partitions: [{ partition: 0, offset: '1' }, { partition: 1, offset: '2' }] });
      steps.afterSet = await admin.fetchOffsets({ groupId: group, topics: [topic] });
      await admin.resetOffsets({ groupId: group, topic, earliest: true });
      steps.afterResetEarliest = await admin.fetchOffsets({ groupId: group, topics: [topic] });
      await admin.resetOffsets({ groupId: group, topic, earliest: false });
      steps.afterResetLatest = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    });
    // kafkajs's setOffsets stops its consumer without leaving the group: the
    // member stays until its session times out (kafkajs's default, 30 s), and
    // until then commits from outside the group are refused.
    steps.stateAfterReset = await withAdmin(ctx, async (admin) => (await admin.describeGroups([group])).groups[0]!.state);
    await waitFor(async () => (await withAdmin(ctx, async (admin) => (await admin.describeGroups([group])).groups[0]!.state)) === 'Empty', {
      what: `the reset group to be empty again on ${ctx.target.name}`,
      timeoutMs: 60_000,
      intervalMs: 1_000,
    });
    await withRaw(ctx, async (raw) => {
      steps.rawCommitNegative = await commit(raw, group, -1, '', topic, [[0, -2], [1, -1]]);
      steps.rawFetchNegative = await fetchCommitted(raw, group, [{ name: topic, partitionIndexes: [0, 1] }]);
      steps.rawCommitBelowMinusTwo = await commit(raw, group, -1, '', topic, [[0, -7]]);
      steps.rawFetchAfterBelow = await fetchCommitted(raw, group, [{ name: topic, partitionIndexes: [0] }]);
    });
    return steps;
  },
};

const missingGroup: Scenario = {
  name: 'group: OffsetFetch and describe of a missing group',
  async run(ctx) {
    const n = ctx.normalise;
    const topic = 'diff-group-missing';
    await topicWithRecords(ctx, topic, 2, 1);
    const raw = await withRaw(ctx, async (raw) => {
      const v8 = await raw.request(ApiKey.OffsetFetch, 8, { groups: [{ groupId: 'diff-no-such-group', topics: null }, { groupId: 'diff-no-such-group-2', topics: [{ name: topic, partitionIndexes: [0] }] }], requireStable: false });
      return {
        namedPartitions: await fetchCommitted(raw, 'diff-no-such-group', [{ name: topic, partitionIndexes: [0, 1] }]),
        allPartitions: await fetchCommitted(raw, 'diff-no-such-group', null),
        unknownTopic: await fetchCommitted(raw, 'diff-no-such-group', [{ name: 'diff-no-such-topic', partitionIndexes: [0] }]),
        v8: (v8.groups as Message[]).map((g) => ({
          groupId: g.groupId,
          error: code(g.errorCode),
          topics: (g.topics as Message[]).map((t) => ({ name: t.name, partitions: (t.partitions as Message[]).map((p) => ({ partition: p.partitionIndex, offset: Number(p.committedOffset), error: code(p.errorCode) })) })),
        })),
        describe: await describeRaw(raw, ['diff-no-such-group'], n, { byId: false }),
      };
    });
    const kafkajsView = await withAdmin(ctx, async (admin) => ({
      fetchOffsets: await admin.fetchOffsets({ groupId: 'diff-no-such-group', topics: [topic] }),
      describeGroups: await admin.describeGroups(['diff-no-such-group']),
    }));
    const rd = createAdmin(ctx.target.bootstrap);
    let librdkafka;
    try {
      const offsets = await adminCall<{ groupId: string; error?: unknown; partitions: { topic: string; partition: number; offset: number; error?: unknown }[] }[]>((cb) =>
        rd.listConsumerGroupOffsets([{ groupId: 'diff-no-such-group', partitions: [{ topic, partition: 0 }, { topic, partition: 1 }] }], { timeout: 10_000 }, cb as never),
      );
      librdkafka = offsets.map((g) => ({ groupId: g.groupId, error: g.error ? String(g.error) : null, partitions: g.partitions.map((p) => ({ partition: p.partition, offset: p.offset, error: p.error ? String(p.error) : null })) }));
    } finally {
      rd.disconnect();
    }
    return { raw, kafkajs: kafkajsView, librdkafka };
  },
};

const adminGroups: Scenario = {
  name: 'group: describe, list and delete groups',
  async run(ctx) {
    const n = ctx.normalise;
    const topic = 'diff-group-admin';
    await topicWithRecords(ctx, topic, 2, 1);
    const live = 'diff-group-admin-live';
    const offsetsOnly = 'diff-group-admin-offsets';
    await withRaw(ctx, (raw) => commit(raw, offsetsOnly, -1, '', topic, [[0, 1]]));
    const member = await kafkajsMember(ctx, live, topic);
    try {
      await waitFor(() => member.read.length === 2, { what: `the live group's member to read both records on ${ctx.target.name}`, timeoutMs: 30_000 });
      const kafkajsView = await withAdmin(ctx, async (admin) => {
        const listed = (await admin.listGroups()).groups.filter((g) => g.groupId.startsWith('diff-group-admin')).sort((a, b) => a.groupId.localeCompare(b.groupId));
        const described = (await admin.describeGroups([live, offsetsOnly, 'diff-group-admin-missing'])).groups.map((g) => ({
          ...g,
          members: g.members.map((m) => ({
            memberId: anonymousMemberId(m.memberId),
            clientId: m.clientId,
            clientHost: m.clientHost,
            assignment: AssignerProtocol.MemberAssignment.decode(m.memberAssignment),
          })),
        }));
        const deleted = await admin.deleteGroups([offsetsOnly]).catch((e: unknown) => ({ error: String(e) }));
        const deleteLive = await admin.deleteGroups([live]).then(
          (r) => r,
          (e: { name?: string; groups?: unknown }) => ({ name: e.name, groups: e.groups }),
        );
        const deleteMissing = await admin.deleteGroups(['diff-group-admin-missing']).then(
          (r) => r,
          (e: { name?: string; groups?: unknown }) => ({ name: e.name, groups: e.groups }),
        );
        return { listed, described, deleted, deleteLive, deleteMissing };
      });
      const rawView = await withRaw(ctx, async (raw) => {
        const list = async (states: string[]) => {
          const a = await raw.request(ApiKey.ListGroups, 4, { statesFilter: states });
          return { error: code(a.errorCode), groups: (a.groups as Message[]).filter((g) => String(g.groupId).startsWith('diff-group-admin')).map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, state: g.groupState })) };
        };
        return {
          listStable: await list(['Stable']),
          listEmpty: await list(['Empty']),
          listAll: await list([]),
          describeWithOperations: await describeRaw(raw, [live], n, { includeAuthorizedOperations: true, byId: false }),
          describeDeleted: await describeRaw(raw, [offsetsOnly], n),
          offsetsOfDeleted: await fetchCommitted(raw, offsetsOnly, [{ name: topic, partitionIndexes: [0] }]),
        };
      });
      return { kafkajs: kafkajsView, raw: rawView };
    } finally {
      await member.consumer.disconnect();
    }
  },
};

const lag: Scenario = {
  name: 'group: lag from committed and end offsets',
  async run(ctx) {
    const topic = 'diff-group-lag';
    const group = 'diff-group-lag';
    await topicWithRecords(ctx, topic, 3, 4);
    await withRaw(ctx, (raw) => commit(raw, group, -1, '', topic, [[0, 1], [1, 4]]));
    const kafkajsView = await withAdmin(ctx, async (admin) => {
      const committed = await admin.fetchOffsets({ groupId: group, topics: [topic] });
      const ends = (await admin.fetchTopicOffsets(topic)).sort((a, b) => a.partition - b.partition);
      return {
        committed,
        ends,
        lag: committed[0]!.partitions
          .map((p) => {
            const end = Number(ends.find((e) => e.partition === p.partition)!.high);
            const at = Number(p.offset);
            return { partition: p.partition, lag: at < 0 ? null : end - at };
          })
          .sort((a, b) => a.partition - b.partition),
      };
    });
    const rd = createAdmin(ctx.target.bootstrap);
    let librdkafka;
    try {
      const [g] = await adminCall<{ partitions: { partition: number; offset: number }[] }[]>((cb) =>
        rd.listConsumerGroupOffsets([{ groupId: group, partitions: [0, 1, 2].map((partition) => ({ topic, partition })) }], { timeout: 10_000 }, cb as never),
      );
      librdkafka = g!.partitions.map((p) => ({ partition: p.partition, offset: p.offset })).sort((a, b) => a.partition - b.partition);
    } finally {
      rd.disconnect();
    }
    return { kafkajs: kafkajsView, librdkafka };
  },
};

const committedPastEnd: Scenario = {
  name: 'group: committed offset past the end, member resets',
  async run(ctx) {
    const topic = 'diff-group-past-end';
    const group = 'diff-group-past-end';
    await topicWithRecords(ctx, topic, 2, 3);
    const commits = await withRaw(ctx, (raw) => commit(raw, group, -1, '', topic, [[0, 10], [1, 1]]));
    // librdkafka with auto.offset.reset=earliest: partition 0's position is out of range, partition 1's is not.
    const member = await startMember({ bootstrap: ctx.target.bootstrap, group, topic, name: 'past-end', assignor: 'range' });
    let librdkafka;
    try {
      await waitFor(() => member.records.length >= 5, { what: `the member to read from its reset and committed positions on ${ctx.target.name}`, timeoutMs: 40_000, describe: () => JSON.stringify(member.records) });
      librdkafka = { read: member.records.map((r) => `${r.partition}@${r.offset}`).sort(), errors: member.errors };
    } finally {
      await member.close();
    }
    // The same for kafkajs (fromBeginning: its reset policy), in a group of its own.
    const kafkajsGroup = `${group}-kafkajs`;
    await withRaw(ctx, (raw) => commit(raw, kafkajsGroup, -1, '', topic, [[0, 10], [1, 1]]));
    const k = await kafkajsMember(ctx, kafkajsGroup, topic);
    try {
      await waitFor(() => k.read.length >= 5, { what: `the kafkajs member to read from its reset and committed positions on ${ctx.target.name}`, timeoutMs: 40_000, describe: () => k.read.join(', ') });
    } finally {
      await k.consumer.disconnect();
    }
    return { commits, librdkafka, kafkajs: [...k.read].sort() };
  },
};

export const GROUP_SCENARIOS: Scenario[] = [kafkajsGroup, librdkafkaGroup, rawProtocol, staticMembership, resetOffsets, committedPastEnd, missingGroup, adminGroups, lag];

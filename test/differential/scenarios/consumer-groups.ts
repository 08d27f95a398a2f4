/**
 * KIP-848 consumer-group scenarios, driven raw so each step is one request
 * both brokers answer: what a single member is given, then a second member
 * (revocation before assignment: the first gives partitions up at its old
 * epoch, the second gets them after), the errors Kafka answers with their
 * sentences, and the group as ConsumerGroupDescribe, ListGroups (v5, with
 * type) and DescribeGroups see it; and a member of the classic protocol
 * joining a consumer group (KIP-848's migration).
 *
 * Member ids are the client's (v1, KIP-1082): fixed UUIDs, so the same on
 * both. Epochs are observed relative to the first member's first one (that
 * one counts as 1): Kafka 4.4 can start a new group above 1. Which partitions a member gets depends on the assignor's tie-breaks,
 * so assignments are observed as partition counts and checked disjoint.
 */
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import type { RawConnection } from '../../support/raw-connection.js';
import { code, type Normaliser, type Scenario } from '../harness.js';
import { awaitCoordinator, awaitLed, createTopicRaw, openRaw } from '../observe.js';
import { assignment, decodeAssignment, subscription } from '../../support/consumer-protocol.js';

const MEMBER_A = '0000000a-0000-4000-8000-000000000001';
const MEMBER_B = '0000000b-0000-4000-8000-000000000002';

/** COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR. */
const RETRIABLE = new Set([14, 15, 16]);

type Owned = { topicId: string; partitions: number[] }[];

function heartbeatRequest(group: string, memberId: string, memberEpoch: number, more: Partial<Message> = {}): Message {
  const joining = memberEpoch === 0;
  return {
    groupId: group,
    memberId,
    memberEpoch,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: joining ? 30_000 : -1,
    subscribedTopicNames: null,
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: joining ? [] : null,
    ...more,
  };
}

async function heartbeat(raw: RawConnection, request: Message): Promise<Message> {
  return raw.request(ApiKey.ConsumerGroupHeartbeat, 1, request);
}

/** Epochs as steps from the first member's first epoch (which reads 1); 0 and the leave epochs stay as they are. */
type Epochs = (epoch: number) => number;

/** A heartbeat answer without what differs by nature (throttle), the assignment as a count. */
function view(a: Message, rel: Epochs = (e) => e): Record<string, unknown> {
  const partitions = a.assignment === null ? null : (a.assignment.topicPartitions as Owned).reduce((n, t) => n + t.partitions.length, 0);
  const errorMessage = typeof a.errorMessage === 'string' ? a.errorMessage.replace(/\((\d+)\)/g, (_, e: string) => `(${rel(Number(e))})`) : a.errorMessage;
  return { error: code(a.errorCode), errorMessage, memberEpoch: rel(a.memberEpoch), heartbeatIntervalMs: a.heartbeatIntervalMs, partitions };
}

function owned(a: Message): Owned {
  return a.assignment === null ? [] : (a.assignment.topicPartitions as Owned);
}

/** Heartbeats until the answer carries an assignment with `count` partitions (Kafka computes some steps asynchronously). */
async function heartbeatUntil(raw: RawConnection, request: () => Message, accept: (a: Message) => boolean): Promise<Message> {
  let last: Message | null = null;
  for (let i = 0; i < 60; i++) {
    last = await heartbeat(raw, request());
    if (accept(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  return last!;
}

function describedView(g: Message, n: Normaliser, rel: Epochs): Record<string, unknown> {
  return {
    error: code(g.errorCode),
    errorMessage: g.errorMessage,
    state: g.groupState,
    groupEpoch: rel(g.groupEpoch),
    assignmentEpoch: rel(g.assignmentEpoch),
    assignor: g.assignorName,
    members: (g.members as Message[])
      .map((m) => ({
        memberId: m.memberId,
        memberEpoch: rel(m.memberEpoch),
        clientHost: n.text(m.clientHost),
        subscribed: m.subscribedTopicNames,
        assigned: (m.assignment.topicPartitions as Message[]).reduce((k, t) => k + (t.partitions as number[]).length, 0),
        target: (m.targetAssignment.topicPartitions as Message[]).reduce((k, t) => k + (t.partitions as number[]).length, 0),
      }))
      .sort((x, y) => String(x.memberId).localeCompare(String(y.memberId))),
  };
}

const twoMembers: Scenario = {
  name: 'consumer group (KIP-848): one member, then a second; errors; describe and list',
  async run(ctx) {
    const n = ctx.normalise;
    const topic = 'diff-kip848';
    const group = 'diff-kip848-group';
    const raw = await openRaw(ctx);
    try {
      const created = await createTopicRaw(raw, topic, 4);
      if (created.errorCode !== 0) throw new Error(`creating ${topic} on ${ctx.target.name} answered ${code(created.errorCode)}`);
      await awaitLed(raw, topic, 4);
      await awaitCoordinator(raw, group);
      const steps: Record<string, unknown> = {};
      const subscribe = { subscribedTopicNames: [topic] };

      steps.invalidJoin = view(await heartbeat(raw, heartbeatRequest(group, MEMBER_A, 0, { ...subscribe, rebalanceTimeoutMs: -1 })));
      steps.noSubscription = view(await heartbeat(raw, heartbeatRequest(group, MEMBER_A, 0)));
      steps.unsupportedAssignor = view(await heartbeat(raw, heartbeatRequest(group, MEMBER_A, 0, { ...subscribe, serverAssignor: 'sticky' })));

      // Kafka may still be loading the group's coordinator partition: the join is sent again, as clients do.
      const a1 = await heartbeatUntil(raw, () => heartbeatRequest(group, MEMBER_A, 0, subscribe), (a) => !RETRIABLE.has(a.errorCode));
      const rel: Epochs = (e) => (e > 0 ? e - a1.memberEpoch + 1 : e);
      steps.aJoins = view(a1, rel);
      const aAll = await heartbeatUntil(raw, () => heartbeatRequest(group, MEMBER_A, a1.memberEpoch, { topicPartitions: owned(a1) }), (a) => a.assignment === null || owned(a).length > 0);
      steps.aSteady = view(aAll, rel);
      steps.unknownMember = view(await heartbeat(raw, heartbeatRequest(group, 'nobody', 1)), rel);
      steps.fencedEpoch = view(await heartbeat(raw, heartbeatRequest(group, MEMBER_A, a1.memberEpoch + 5)), rel);

      const b1 = await heartbeat(raw, heartbeatRequest(group, MEMBER_B, 0, subscribe));
      steps.bJoins = view(b1, rel);
      // a is asked to give two partitions up, at its old epoch.
      const aRevoke = await heartbeatUntil(raw, () => heartbeatRequest(group, MEMBER_A, a1.memberEpoch, { topicPartitions: owned(a1) }), (a) => a.assignment !== null && a.errorCode === 0);
      steps.aRevokes = view(aRevoke, rel);
      const aMoved = await heartbeat(raw, heartbeatRequest(group, MEMBER_A, aRevoke.memberEpoch, { topicPartitions: owned(aRevoke) }));
      steps.aReleased = view(aMoved, rel);
      const bGets = await heartbeatUntil(raw, () => heartbeatRequest(group, MEMBER_B, b1.memberEpoch, { topicPartitions: [] }), (a) => owned(a).length > 0);
      steps.bGets = view(bGets, rel);
      const taken = [...owned(aRevoke), ...owned(bGets)].flatMap((t) => t.partitions).sort();
      steps.disjointAndComplete = taken.join() === '0,1,2,3';
      await heartbeat(raw, heartbeatRequest(group, MEMBER_B, bGets.memberEpoch, { topicPartitions: owned(bGets) }));

      const described = await raw.request(ApiKey.ConsumerGroupDescribe, 0, { groupIds: [group, 'diff-kip848-missing'], includeAuthorizedOperations: false });
      steps.describe = (described.groups as Message[]).map((g) => describedView(g, n, rel));
      const listed = await raw.request(ApiKey.ListGroups, 5, { statesFilter: [], typesFilter: ['consumer'] });
      steps.list = (listed.groups as Message[]).filter((g) => String(g.groupId).startsWith('diff-kip848')).map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, state: g.groupState, type: g.groupType }));
      const classicOnly = await raw.request(ApiKey.ListGroups, 5, { statesFilter: [], typesFilter: ['classic'] });
      steps.listClassic = (classicOnly.groups as Message[]).filter((g) => String(g.groupId).startsWith('diff-kip848')).map((g) => g.groupId);
      const describedClassic = await raw.request(ApiKey.DescribeGroups, 5, { groups: [group], includeAuthorizedOperations: false });
      steps.describeGroups = (describedClassic.groups as Message[]).map((g) => ({ error: code(g.errorCode), state: g.groupState, protocolType: g.protocolType, members: (g.members as Message[]).length }));

      steps.aLeaves = view(await heartbeat(raw, heartbeatRequest(group, MEMBER_A, -1)), rel);
      steps.bLeaves = view(await heartbeat(raw, heartbeatRequest(group, MEMBER_B, -1)), rel);
      const emptied = await raw.request(ApiKey.ConsumerGroupDescribe, 0, { groupIds: [group], includeAuthorizedOperations: false });
      steps.describeEmpty = (emptied.groups as Message[]).map((g) => describedView(g, n, rel));
      return steps;
    } finally {
      raw.destroy();
    }
  },
};

/** A member of the classic protocol joining a consumer group that has a member (KIP-848's migration, Kafka 4's default policy). */
const classicMember: Scenario = {
  name: 'consumer group (KIP-848): a classic member joins, is given partitions once released, and leaves',
  async run(ctx) {
    const topic = 'diff-kip848-classic';
    const group = 'diff-kip848-classic-group';
    const raw = await openRaw(ctx);
    try {
      const created = await createTopicRaw(raw, topic, 4);
      if (created.errorCode !== 0) throw new Error(`creating ${topic} on ${ctx.target.name} answered ${code(created.errorCode)}`);
      await awaitLed(raw, topic, 4);
      await awaitCoordinator(raw, group);
      const steps: Record<string, unknown> = {};
      const a1 = await heartbeatUntil(raw, () => heartbeatRequest(group, MEMBER_A, 0, { subscribedTopicNames: [topic] }), (a) => !RETRIABLE.has(a.errorCode));
      const aAll = await heartbeatUntil(raw, () => heartbeatRequest(group, MEMBER_A, a1.memberEpoch, { topicPartitions: owned(a1) }), (a) => a.assignment === null || owned(a).length > 0);
      const aOwned = owned(aAll).length > 0 ? owned(aAll) : owned(a1);
      const join = (memberId: string) =>
        raw.request(ApiKey.JoinGroup, 9, { groupId: group, sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 30_000, memberId, groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription(topic) }, { name: 'cooperative-sticky', metadata: subscription(topic) }], reason: null });
      const joinView = (j: Message) => ({ error: code(j.errorCode), generationIsAMemberEpoch: j.generationId > 0, protocolType: j.protocolType, protocolName: j.protocolName, leader: j.leader, members: j.members, skipAssignment: j.skipAssignment });
      const first = await join('');
      steps.firstJoin = { ...joinView(first), memberIdGiven: (first.memberId as string).length > 0 };
      const joined = await join(first.memberId as string);
      steps.join = joinView(joined);
      const memberId = first.memberId as string;
      const sync = (generationId: number) => raw.request(ApiKey.SyncGroup, 5, { groupId: group, generationId, memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments: [] });
      const synced = await sync(joined.generationId as number);
      steps.syncWhileHeld = { error: code(synced.errorCode), protocolName: synced.protocolName, assignment: decodeAssignment(synced.assignment) };
      steps.wrongGeneration = code((await raw.request(ApiKey.Heartbeat, 4, { groupId: group, generationId: (joined.generationId as number) + 7, memberId, groupInstanceId: null })).errorCode);
      // The consumer member gives partitions up; the classic member is then told to rejoin, and gets them.
      const aRevoke = await heartbeatUntil(raw, () => heartbeatRequest(group, MEMBER_A, aAll.memberEpoch, { topicPartitions: aOwned }), (a) => a.assignment !== null && owned(a).length < 4);
      await heartbeat(raw, heartbeatRequest(group, MEMBER_A, aRevoke.memberEpoch, { topicPartitions: owned(aRevoke) }));
      let hb = -1;
      for (let i = 0; i < 60 && hb !== 27; i++) {
        hb = (await raw.request(ApiKey.Heartbeat, 4, { groupId: group, generationId: joined.generationId, memberId, groupInstanceId: null })).errorCode as number;
        if (hb !== 27) await new Promise((r) => setTimeout(r, 250));
      }
      steps.toldToRejoin = code(hb);
      const rejoined = await join(memberId);
      steps.rejoin = joinView(rejoined);
      const given = await sync(rejoined.generationId as number);
      const partitions = decodeAssignment(given.assignment);
      steps.given = { error: code(given.errorCode), partitions: partitions !== null && partitions !== '<empty>' ? Object.values(partitions.partitions).flat().length : partitions };
      steps.steady = code((await raw.request(ApiKey.Heartbeat, 4, { groupId: group, generationId: rejoined.generationId, memberId, groupInstanceId: null })).errorCode);
      const left = await raw.request(ApiKey.LeaveGroup, 5, { groupId: group, members: [{ memberId, groupInstanceId: null, reason: null }] });
      steps.leave = { error: code(left.errorCode), members: (left.members as Message[]).map((m) => code(m.errorCode)) };
      steps.aLeaves = code((await heartbeat(raw, heartbeatRequest(group, MEMBER_A, -1))).errorCode);
      return steps;
    } finally {
      raw.destroy();
    }
  },
};

/** The online upgrade: a Stable classic group with a member becomes a consumer group when a consumer-protocol member joins it. */
const onlineUpgrade: Scenario = {
  name: 'consumer group (KIP-848): a classic group with a member is upgraded when a consumer member joins',
  async run(ctx) {
    const topic = 'diff-kip848-upgrade';
    const group = 'diff-kip848-upgrade-group';
    const raw = await openRaw(ctx);
    try {
      const created = await createTopicRaw(raw, topic, 4);
      if (created.errorCode !== 0) throw new Error(`creating ${topic} on ${ctx.target.name} answered ${code(created.errorCode)}`);
      await awaitLed(raw, topic, 4);
      await awaitCoordinator(raw, group);
      const steps: Record<string, unknown> = {};
      const join = (memberId: string) =>
        raw.request(ApiKey.JoinGroup, 9, { groupId: group, sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 30_000, memberId, groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription(topic) }], reason: null });
      // Kafka may still be loading the group's coordinator partition: the join is sent again, as clients do.
      let first = await join('');
      for (let i = 0; i < 60 && RETRIABLE.has(first.errorCode as number); i++) {
        await new Promise((r) => setTimeout(r, 250));
        first = await join('');
      }
      const memberId = first.memberId as string;
      const joined = await join(memberId);
      steps.classicLeads = { error: code(joined.errorCode), leader: joined.leader === memberId };
      const sync = (generationId: number, assignments: Message[]) => raw.request(ApiKey.SyncGroup, 5, { groupId: group, generationId, memberId, groupInstanceId: null, protocolType: 'consumer', protocolName: 'range', assignments });
      const synced = await sync(joined.generationId as number, [{ memberId, assignment: assignment(topic, [0, 1, 2, 3]) }]);
      steps.classicSynced = { error: code(synced.errorCode), assignment: decodeAssignment(synced.assignment) };
      const b1 = await heartbeatUntil(raw, () => heartbeatRequest(group, MEMBER_B, 0, { subscribedTopicNames: [topic] }), (a) => !RETRIABLE.has(a.errorCode));
      steps.consumerJoins = { error: code(b1.errorCode), partitions: owned(b1).reduce((n, t) => n + t.partitions.length, 0) };
      const listed = await raw.request(ApiKey.ListGroups, 5, { statesFilter: [], typesFilter: [] });
      steps.listed = (listed.groups as Message[]).filter((g) => g.groupId === group).map((g) => ({ protocolType: g.protocolType, type: g.groupType }));
      let hb = -1;
      for (let i = 0; i < 60 && hb !== 27; i++) {
        hb = (await raw.request(ApiKey.Heartbeat, 4, { groupId: group, generationId: joined.generationId, memberId, groupInstanceId: null })).errorCode as number;
        if (hb !== 27) await new Promise((r) => setTimeout(r, 250));
      }
      steps.classicToldToRejoin = code(hb);
      // An eager member gives everything up and rejoins.
      const rejoined = await join(memberId);
      steps.classicRejoins = { error: code(rejoined.errorCode), leader: rejoined.leader, members: rejoined.members };
      const given = await sync(rejoined.generationId as number, []);
      const mine = decodeAssignment(given.assignment);
      steps.classicGiven = { error: code(given.errorCode), partitions: mine !== null && mine !== '<empty>' ? Object.values(mine.partitions).flat().length : mine };
      const bGets = await heartbeatUntil(raw, () => heartbeatRequest(group, MEMBER_B, b1.memberEpoch, { topicPartitions: owned(b1) }), (a) => owned(a).length > 0);
      steps.consumerGets = owned(bGets).reduce((n, t) => n + t.partitions.length, 0);
      const left = await raw.request(ApiKey.LeaveGroup, 5, { groupId: group, members: [{ memberId, groupInstanceId: null, reason: null }] });
      steps.classicLeaves = code(left.errorCode);
      steps.consumerLeaves = code((await heartbeat(raw, heartbeatRequest(group, MEMBER_B, -1))).errorCode);
      return steps;
    } finally {
      raw.destroy();
    }
  },
};

export const CONSUMER_GROUP_SCENARIOS: Scenario[] = [twoMembers, classicMember, onlineUpgrade];

/**
 * Consumer groups where a client library would hide the answer: raw requests
 * built with the project's own codecs against a live group of librdkafka
 * members, on every engine. The errors are Kafka's own codes
 * (INCONSISTENT_GROUP_PROTOCOL, ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID,
 * INVALID_GROUP_ID) and after each the live group carries on: its members see
 * no rebalance and keep reading. Then the admin side through kafkajs's admin,
 * librdkafka's AdminClient and raw requests: DescribeGroups, ListGroups with a
 * state filter, DeleteGroups (NON_EMPTY_GROUP, then accepted), OffsetDelete
 * (GROUP_SUBSCRIBED_TO_TOPIC) and OffsetFetch for several groups (v8).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AssignerProtocol, type Admin } from 'kafkajs';
import { ApiKey } from '../../protocol/api-keys.js';
import { ErrorCode, errorName } from '../../protocol/error-codes.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { sleep, waitFor } from '../support/eventually.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import {
  allRecords,
  produceSequenced,
  startMember,
  waitForAllRecords,
  waitForCover,
  type GroupMember,
} from '../support/groups-members.js';
import { subscription } from '../support/consumer-protocol.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { RawConnection } from '../support/raw-connection.js';
import { adminCall, createAdmin, createTopic } from '../support/rdkafka.js';
import { expectExactlyOnceInOrder, uniqueTopic } from '../support/records.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

const PARTITIONS = 6;

const NONE = 0;

/** An error code as a name and number, so a failed expectation reads as Kafka's error. */
function code(n: number): string {
  return n === NONE ? 'NONE (0)' : `${errorName(n)} (${n})`;
}

/**
 * OffsetCommit v2 from a tool outside the group (generation -1, no member id),
 * one partition; returns that partition's error code.
 */
async function commitFromOutside(raw: RawConnection, groupId: string, topic: string, partitionIndex: number, offset: bigint, metadata: string | null): Promise<number> {
  const answer = await raw.request(ApiKey.OffsetCommit, 2, {
    groupId,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    retentionTimeMs: -1n,
    topics: [{ name: topic, partitions: [{ partitionIndex, committedOffset: offset, committedMetadata: metadata }] }],
  });
  return (answer.topics as { partitions: { errorCode: number }[] }[])[0]!.partitions[0]!.errorCode;
}

for (const engine of engines) {
  const title = `consumer-group errors and admin over raw requests and admin clients, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway;
    let admin: Admin;
    let raw: RawConnection;
    const topic = uniqueTopic('grp-proto');
    const live = `${topic}-live`;
    const members: GroupMember[] = [];
    let produced = 0;

    beforeAll(async () => {
      gateway = await startGateway({ engine: engine.fresh(), groups: { initialRebalanceDelayMs: 0 } });
      admin = kafkajsClient(gateway.bootstrap).admin();
      await admin.connect();
      raw = await RawConnection.open(gateway.port);
      await createTopic(gateway.bootstrap, topic, PARTITIONS);
      for (const name of ['live-a', 'live-b']) members.push(await startMember({ bootstrap: gateway.bootstrap, group: live, topic, name, assignor: 'range' }));
      await waitForCover(members, PARTITIONS, `the live group ${live} to settle`);
    });
    afterAll(async () => {
      raw?.destroy();
      await Promise.all(members.map((m) => m.close()));
      await admin?.disconnect();
      await gateway?.stop();
    });

    /** Produces more records and waits for the live group to read them, with no rebalance on the way. */
    async function expectLiveGroupCarriesOn(after: string): Promise<void> {
      const eventsBefore = members.map((m) => m.events.length);
      await produceSequenced(gateway.bootstrap, topic, topic, produced, 60, PARTITIONS);
      produced += 60;
      await waitForAllRecords(topic, produced, members);
      expectExactlyOnceInOrder(topic, produced, allRecords(members));
      members.forEach((m, i) => expect(m.events.slice(eventsBefore[i]), `${m.name} was rebalanced after ${after}`).toEqual([]));
    }

    async function liveMemberId(): Promise<string> {
      const { groups } = await admin.describeGroups([live]);
      const memberId = groups[0]?.members[0]?.memberId;
      if (!memberId) throw new Error(`DescribeGroups named no member of ${live}: ${JSON.stringify(groups)}`);
      return memberId;
    }

    it('a consumer joining with a protocol no member supports gets INCONSISTENT_GROUP_PROTOCOL; the group carries on', async () => {
      const answer = await raw.request(ApiKey.JoinGroup, 5, {
        groupId: live,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId: '',
        groupInstanceId: null,
        protocolType: 'consumer',
        protocols: [{ name: 'roundrobin', metadata: subscription(topic) }],
      });
      expect(code(answer.errorCode as number)).toBe(code(ErrorCode.INCONSISTENT_GROUP_PROTOCOL));
      await expectLiveGroupCarriesOn('a mismatched join');
    });

    it('a kafkajs consumer (RoundRobinAssigner) joining the librdkafka range group is refused with INCONSISTENT_GROUP_PROTOCOL; the group carries on', async () => {
      const intruder = kafkajsClient(gateway.bootstrap, { clientId: 'intruder' }).consumer({ groupId: live, sessionTimeout: 6_000, heartbeatInterval: 300, maxWaitTimeInMs: 100 });
      const crashes: { type?: string; retriable?: boolean }[] = [];
      intruder.on(intruder.events.CRASH, (e) => void crashes.push(e.payload.error as { type?: string }));
      try {
        await intruder.connect();
        await intruder.subscribe({ topic, fromBeginning: true });
        await intruder.run({ eachMessage: async () => {} });
        await waitFor(() => crashes.length > 0, { what: 'the kafkajs consumer to be refused by the group', timeoutMs: 15_000 });
        expect(crashes[0]!.type, `kafkajs crashed with ${JSON.stringify(crashes[0])}`).toBe('INCONSISTENT_GROUP_PROTOCOL');
      } finally {
        await intruder.disconnect();
      }
      await expectLiveGroupCarriesOn('the kafkajs consumer was refused');
    });

    it('a commit from an old generation gets ILLEGAL_GENERATION and changes no offset; the group carries on', async () => {
      await expectLiveGroupCarriesOn('nothing');
      await waitFor(async () => {
        const [t] = await admin.fetchOffsets({ groupId: live, topics: [topic] });
        return (t?.partitions ?? []).reduce((sum, p) => sum + Math.max(Number(p.offset), 0), 0) === produced;
      }, { what: `the live group's commits to reach all ${produced} records` });
      const before = await admin.fetchOffsets({ groupId: live, topics: [topic] });
      const answer = await raw.request(ApiKey.OffsetCommit, 7, {
        groupId: live,
        // Members join at generation 1 or later; 0 is a generation this group has left behind.
        generationIdOrMemberEpoch: 0,
        memberId: await liveMemberId(),
        groupInstanceId: null,
        topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: 0n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
      const partitions = (answer.topics as { partitions: { errorCode: number }[] }[])[0]!.partitions;
      expect(code(partitions[0]!.errorCode)).toBe(code(ErrorCode.ILLEGAL_GENERATION));
      expect(await admin.fetchOffsets({ groupId: live, topics: [topic] }), 'the fenced commit moved an offset').toEqual(before);
      await expectLiveGroupCarriesOn('a stale commit');
    });

    it('a heartbeat from a member the group does not know gets UNKNOWN_MEMBER_ID; the group carries on', async () => {
      const answer = await raw.request(ApiKey.Heartbeat, 3, { groupId: live, generationId: 1, memberId: 'nobody-we-know', groupInstanceId: null });
      expect(code(answer.errorCode as number)).toBe(code(ErrorCode.UNKNOWN_MEMBER_ID));
      await expectLiveGroupCarriesOn('an unknown heartbeat');
    });

    it('a group id over 255 bytes gets INVALID_GROUP_ID; one of exactly 255 forms a group', async () => {
      const join = (groupId: string) =>
        raw.request(ApiKey.JoinGroup, 3, {
          groupId,
          sessionTimeoutMs: 10_000,
          rebalanceTimeoutMs: 10_000,
          memberId: '',
          protocolType: 'consumer',
          protocols: [{ name: 'range', metadata: subscription(topic) }],
        });
      const tooLong = await join('g'.repeat(256));
      expect(code(tooLong.errorCode as number)).toBe(code(ErrorCode.INVALID_GROUP_ID));
      // Multi-byte characters count as bytes: 128 two-byte characters are 256 bytes.
      const tooLongUtf8 = await join('é'.repeat(128));
      expect(code(tooLongUtf8.errorCode as number)).toBe(code(ErrorCode.INVALID_GROUP_ID));
      const longest = 'g'.repeat(255);
      const joined = await join(longest);
      expect(code(joined.errorCode as number)).toBe(code(NONE));
      expect(joined.leader).toBe(joined.memberId);
      const left = await raw.request(ApiKey.LeaveGroup, 0, { groupId: longest, memberId: joined.memberId });
      expect(code(left.errorCode as number)).toBe(code(NONE));
      await expectLiveGroupCarriesOn('the long group ids');
    });

    it('DescribeGroups names the members, their client ids and hosts, and their assignments (kafkajs and librdkafka admins)', async () => {
      const { groups } = await admin.describeGroups([live]);
      const group = groups[0]!;
      expect(group.state).toBe('Stable');
      expect(group.protocolType).toBe('consumer');
      expect(group.protocol).toBe('range');
      expect(group.members.map((m) => m.clientId).sort()).toEqual(['live-a', 'live-b']);
      for (const m of group.members) {
        // Kafka's form: the address without the client's port.
        expect(m.clientHost, `${m.clientId}'s host`).toBe('/127.0.0.1');
        const decoded = AssignerProtocol.MemberAssignment.decode(m.memberAssignment);
        const owner = members.find((x) => x.name === m.clientId)!;
        expect(decoded?.assignment[topic]?.slice().sort(), `${m.clientId}'s assignment as DescribeGroups tells it`).toEqual([...owner.assigned].sort());
      }

      const rdAdmin = createAdmin(gateway.bootstrap);
      try {
        const described = await adminCall<{ groups: { groupId: string; members: { clientId: string; clientHost: string; assignment?: { topicPartitions?: { topic: string; partition: number }[] } }[] }[] }>(
          (cb) => rdAdmin.describeGroups([live], { timeout: 10_000 } as never, cb as never),
        );
        const rdGroup = described.groups.find((g) => g.groupId === live)!;
        expect(rdGroup.members.map((m) => m.clientId).sort()).toEqual(['live-a', 'live-b']);
        for (const m of rdGroup.members) {
          expect(m.clientHost, `${m.clientId}'s host as librdkafka reads it`).toBe('/127.0.0.1');
          const owner = members.find((x) => x.name === m.clientId)!;
          const parts = (m.assignment?.topicPartitions ?? []).map((tp) => tp.partition).sort();
          expect(parts, `${m.clientId}'s assignment as librdkafka's AdminClient reads it`).toEqual([...owner.assigned].sort());
        }
      } finally {
        rdAdmin.disconnect();
      }
    });

    it('ListGroups filters by state: the live group is Stable, a group with only committed offsets is Empty', async () => {
      const offsetsOnly = `${topic}-offsets-only`;
      expect(code(await commitFromOutside(raw, offsetsOnly, topic, 1, 5n, 'tool'))).toBe(code(NONE));

      const list = async (states: string[]) => {
        const answer = await raw.request(ApiKey.ListGroups, 4, { statesFilter: states });
        expect(code(answer.errorCode as number)).toBe(code(NONE));
        return new Map((answer.groups as { groupId: string; groupState: string }[]).map((g) => [g.groupId, g.groupState]));
      };
      const stable = await list(['Stable']);
      expect(stable.get(live)).toBe('Stable');
      expect(stable.has(offsetsOnly), 'a group without members listed as Stable').toBe(false);
      const empty = await list(['Empty']);
      expect(empty.get(offsetsOnly)).toBe('Empty');
      expect(empty.has(live), 'the live group listed as Empty').toBe(false);
      const all = await list([]);
      expect(all.get(live)).toBe('Stable');
      expect(all.get(offsetsOnly)).toBe('Empty');
      // kafkajs lists without a filter.
      const { groups } = await admin.listGroups();
      expect(groups.map((g) => g.groupId)).toEqual(expect.arrayContaining([live, offsetsOnly]));
      // librdkafka's AdminClient filters by state (its ConsumerGroupStates: 3 Stable, 5 Empty).
      const rdAdmin = createAdmin(gateway.bootstrap);
      try {
        const rdList = async (states: number[]) => {
          const result = await adminCall<{ groups: { groupId: string; state: number }[] }>((cb) =>
            rdAdmin.listGroups({ timeout: 10_000, matchConsumerGroupStates: states as never }, cb as never),
          );
          return new Map(result.groups.map((g) => [g.groupId, g.state]));
        };
        const rdStable = await rdList([3]);
        expect(rdStable.get(live), 'librdkafka: the live group among the Stable').toBe(3);
        expect(rdStable.has(offsetsOnly), 'librdkafka: a group without members among the Stable').toBe(false);
        const rdEmpty = await rdList([5]);
        expect(rdEmpty.get(offsetsOnly), 'librdkafka: the offsets-only group among the Empty').toBe(5);
        expect(rdEmpty.has(live), 'librdkafka: the live group among the Empty').toBe(false);
      } finally {
        rdAdmin.disconnect();
      }
    });

    it('DeleteGroups refuses a group with members (NON_EMPTY_GROUP) and deletes it, offsets and all, once they leave', async () => {
      const doomed = `${topic}-doomed`;
      const m = await startMember({ bootstrap: gateway.bootstrap, group: doomed, topic, name: 'doomed-a' });
      try {
        await waitFor(() => m.assigned.size === PARTITIONS, { what: `${doomed}'s member to be assigned every partition` });
        await waitFor(() => m.committed.size > 0, { what: `${doomed}'s member to commit something` });
        const refused = await raw.request(ApiKey.DeleteGroups, 2, { groupsNames: [doomed] });
        const [result] = refused.results as { groupId: string; errorCode: number }[];
        expect(code(result!.errorCode)).toBe(code(ErrorCode.NON_EMPTY_GROUP));
        // librdkafka's AdminClient reports the same refusal for the group.
        const rdAdmin = createAdmin(gateway.bootstrap);
        try {
          const rdResult = await adminCall<{ groupId: string; errorCode?: number; error?: { code: number } }[]>((cb) =>
            rdAdmin.deleteGroups([doomed], { timeout: 10_000 }, cb as never),
          );
          const refusal = rdResult.find((r) => r.groupId === doomed);
          expect(refusal?.errorCode ?? refusal?.error?.code, `librdkafka's deleteGroups answered ${JSON.stringify(refusal)}`).toBe(ErrorCode.NON_EMPTY_GROUP);
        } finally {
          rdAdmin.disconnect();
        }
        const stillThere = await admin.fetchOffsets({ groupId: doomed, topics: [topic] });
        expect(stillThere[0]!.partitions.some((p) => Number(p.offset) >= 0), 'a refused delete removed offsets').toBe(true);
      } finally {
        await m.close();
      }
      // kafkajs's admin deletes it once the member has left.
      const deleted = await admin.deleteGroups([doomed]);
      expect(deleted.map((d) => [d.groupId, d.errorCode])).toEqual([[doomed, 0]]);
      const after = await admin.fetchOffsets({ groupId: doomed, topics: [topic] });
      expect(after[0]!.partitions.map((p) => Number(p.offset)), 'offsets survived the delete').toEqual(Array(PARTITIONS).fill(-1));
      const again = await raw.request(ApiKey.DeleteGroups, 2, { groupsNames: [doomed] });
      expect(code((again.results as { errorCode: number }[])[0]!.errorCode)).toBe(code(ErrorCode.GROUP_ID_NOT_FOUND));
    });

    it('OffsetDelete refuses the topics a live member subscribes to (GROUP_SUBSCRIBED_TO_TOPIC) and answers the others without error', async () => {
      const other = uniqueTopic('grp-proto-other');
      await createTopic(gateway.bootstrap, other, 1);
      // The live group's members subscribe to `topic` only; an outside tool commits to `other` for it.
      // Kafka takes no commit from outside a group that has members.
      expect(code(await commitFromOutside(raw, live, other, 0, 3n, null))).toBe(code(ErrorCode.UNKNOWN_MEMBER_ID));

      const before = await admin.fetchOffsets({ groupId: live, topics: [topic] });
      const answer = await raw.request(ApiKey.OffsetDelete, 0, {
        groupId: live,
        topics: [
          { name: topic, partitions: [{ partitionIndex: 0 }, { partitionIndex: 1 }] },
          { name: other, partitions: [{ partitionIndex: 0 }] },
        ],
      });
      expect(code(answer.errorCode as number)).toBe(code(NONE));
      const byTopic = new Map((answer.topics as { name: string; partitions: { partitionIndex: number; errorCode: number }[] }[]).map((t) => [t.name, t.partitions.map((p) => code(p.errorCode))]));
      expect(byTopic.get(topic)).toEqual([code(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC), code(ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC)]);
      expect(byTopic.get(other)).toEqual([code(NONE)]);
      expect(await admin.fetchOffsets({ groupId: live, topics: [topic] }), 'refused offsets were deleted').toEqual(before);
      await expectLiveGroupCarriesOn('OffsetDelete');
    });

    it('OffsetFetch v8 answers several groups at once, each with its own offsets, as kafkajs reads them one by one', async () => {
      const second = `${topic}-second`;
      expect(code(await commitFromOutside(raw, second, topic, 2, 7n, 'second'))).toBe(code(NONE));
      const unknown = `${topic}-never-used`;
      const partitionIndexes = Array.from({ length: PARTITIONS }, (_, i) => i);
      const answer = await raw.request(ApiKey.OffsetFetch, 8, {
        groups: [live, second, unknown].map((groupId) => ({ groupId, topics: [{ name: topic, partitionIndexes }] })),
        requireStable: false,
      });
      type FetchedGroup = { groupId: string; errorCode: number; topics: { name: string; partitions: { partitionIndex: number; committedOffset: bigint | number; metadata: string | null }[] }[] };
      const groups = new Map((answer.groups as FetchedGroup[]).map((g) => [g.groupId, g]));
      expect([...groups.keys()].sort()).toEqual([live, second, unknown].sort());
      const offsetsOf = (g: FetchedGroup | undefined) =>
        new Map((g?.topics.find((t) => t.name === topic)?.partitions ?? []).filter((p) => Number(p.committedOffset) >= 0).map((p) => [p.partitionIndex, Number(p.committedOffset)]));
      for (const g of groups.values()) expect(code(g.errorCode), `group ${g.groupId}`).toBe(code(NONE));

      const viaKafkajs = async (groupId: string) =>
        new Map((await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions.filter((p) => Number(p.offset) >= 0).map((p) => [p.partition, Number(p.offset)]));
      expect(offsetsOf(groups.get(live))).toEqual(await viaKafkajs(live));
      expect(offsetsOf(groups.get(live)).size, 'the live group has committed offsets').toBeGreaterThan(0);
      expect(offsetsOf(groups.get(second))).toEqual(new Map([[2, 7]]));
      expect(groups.get(second)!.topics[0]!.partitions.find((p) => p.partitionIndex === 2)!.metadata).toBe('second');
      expect(offsetsOf(groups.get(unknown))).toEqual(new Map());
    });
  });
}

describe('the default initial rebalance delay (3 s), memory engine', () => {
  let gateway: RunningGateway;
  const connections: RawConnection[] = [];
  beforeAll(async () => {
    gateway = await startGateway({ engine: { engine: 'memory' } });
  });
  afterAll(async () => {
    for (const c of connections) c.destroy();
    await gateway?.stop();
  });

  it('consumers arriving one after another within the delay form the group in a single rebalance', { timeout: 20_000 }, async () => {
    const group = uniqueTopic('grp-initial-delay');
    const join = async () => {
      const connection = await RawConnection.open(gateway.port);
      connections.push(connection);
      return connection.request(ApiKey.JoinGroup, 3, {
        groupId: group,
        sessionTimeoutMs: 10_000,
        rebalanceTimeoutMs: 10_000,
        memberId: '',
        protocolType: 'consumer',
        protocols: [{ name: 'range', metadata: subscription('orders') }],
      });
    };
    // Each join is held; the later ones arrive while the first is still waiting out the delay.
    const first = join();
    await sleep(400);
    const second = join();
    await sleep(400);
    const third = join();
    const answers = await Promise.all([first, second, third]);
    for (const a of answers) expect(code(a.errorCode as number)).toBe(code(NONE));
    expect(answers.map((a) => a.generationId), 'every member joined the first generation').toEqual([1, 1, 1]);
    const leader = answers.find((a) => a.memberId === a.leader)!;
    expect((leader.members as unknown[]).length, 'the leader was given all three members to assign').toBe(3);
  });
});

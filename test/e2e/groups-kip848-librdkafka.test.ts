/**
 * KIP-848 consumer groups (group.protocol=consumer) through librdkafka
 * (@confluentinc/kafka-javascript), on every engine: the coordinator assigns
 * server-side, members reconcile through ConsumerGroupHeartbeat. Two members
 * share a topic, one leaves and its partitions move, the group restarts from
 * its committed offsets. A member of the classic protocol joins such a group
 * (KIP-848's migration), eager or cooperative, and shares its partitions;
 * a classic group with a member becomes a consumer group when a KIP-848
 * member joins it (the online upgrade), and a consumer group becomes classic
 * again when its last KIP-848 member leaves (the downgrade).
 * kafkajs' admin client (classic APIs only) sees the
 * group as Kafka 4.4 shows a consumer group to them: listed with protocol type
 * "consumer", described "Dead" by DescribeGroups.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Admin } from 'kafkajs';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { waitFor } from '../support/eventually.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import {
  allRecords,
  describeAssignments,
  expectDisjointCompleteAssignment,
  produceSequenced,
  startMember,
  waitForAllRecords,
  waitForCover,
  type GroupMember,
  type MemberOptions,
} from '../support/groups-members.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { createTopic } from '../support/rdkafka.js';
import { expectExactlyOnceInOrder, uniqueTopic } from '../support/records.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

const PARTITIONS = 4;

for (const engine of engines) {
  const title = `KIP-848 consumer groups through librdkafka, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway;
    let admin: Admin;
    const running: GroupMember[] = [];

    beforeAll(async () => {
      // Members hear of a new target assignment at their next heartbeat: a short interval keeps the tests quick.
      gateway = await startGateway({ engine: engine.fresh(), consumerGroups: { heartbeatIntervalMs: 200 } });
      admin = kafkajsClient(gateway.bootstrap).admin();
      await admin.connect();
    });
    afterAll(async () => {
      await Promise.all(running.splice(0).map((m) => m.close().catch(() => {})));
      await admin?.disconnect();
      await gateway?.stop();
    });

    async function member(options: Omit<MemberOptions, 'bootstrap' | 'groupProtocol'>): Promise<GroupMember> {
      const started = await startMember({ bootstrap: gateway.bootstrap, groupProtocol: 'consumer', ...options });
      running.push(started);
      return started;
    }

    async function closeMember(m: GroupMember): Promise<void> {
      running.splice(running.indexOf(m), 1);
      await m.close();
    }

    it('a second member takes half the partitions, the first leaves and the second takes them all; every record read once', async () => {
      const topic = uniqueTopic('kip848-share');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, PARTITIONS);
      const a = await member({ group, topic, name: 'a' });
      await waitForCover([a], PARTITIONS, 'a alone');
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 80, PARTITIONS);
      await waitForAllRecords(topic, 80, [a]);

      const b = await member({ group, topic, name: 'b' });
      await waitForCover([a, b], PARTITIONS, 'a and b');
      expectDisjointCompleteAssignment([a, b], PARTITIONS);
      expect([a.assigned.size, b.assigned.size], describeAssignments([a, b])).toEqual([2, 2]);
      const listed = await admin.listGroups();
      expect(listed.groups.find((g) => g.groupId === group)?.protocolType).toBe('consumer');
      // Not a classic group: DescribeGroups before v6 answers a consumer group Dead, as Kafka 4.4 does.
      expect((await admin.describeGroups([group])).groups[0]?.state, 'the group is a KIP-848 consumer group').toBe('Dead');

      await produceSequenced(gateway.bootstrap, topic, topic, 80, 80, PARTITIONS);
      await waitForAllRecords(topic, 160, [a, b]);
      await closeMember(a);
      await waitForCover([b], PARTITIONS, 'b after a left');
      await produceSequenced(gateway.bootstrap, topic, topic, 160, 80, PARTITIONS);
      await waitForAllRecords(topic, 240, [a, b]);
      expectExactlyOnceInOrder(topic, 240, allRecords([a, b]));
      await closeMember(b);
    });

    it.each(['range', 'cooperative-sticky'] as const)('a classic member (%s) joins the KIP-848 group, shares the partitions, leaves, and every record is read once', async (assignor) => {
      const topic = uniqueTopic('kip848-classic');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, PARTITIONS);
      const a = await member({ group, topic, name: 'a' });
      await waitForCover([a], PARTITIONS, 'a alone');
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 80, PARTITIONS);
      await waitForAllRecords(topic, 80, [a]);

      // KIP-848's migration: a member of the classic protocol in a consumer group, as Kafka 4 takes it.
      const classic = await startMember({ bootstrap: gateway.bootstrap, group, topic, name: 'classic', groupProtocol: 'classic', assignor });
      running.push(classic);
      await waitForCover([a, classic], PARTITIONS, 'a and the classic member', 60_000);
      expectDisjointCompleteAssignment([a, classic], PARTITIONS);
      expect([a.assigned.size, classic.assigned.size], describeAssignments([a, classic])).toEqual([2, 2]);
      await produceSequenced(gateway.bootstrap, topic, topic, 80, 80, PARTITIONS);
      await waitForAllRecords(topic, 160, [a, classic]);

      await closeMember(classic);
      await waitForCover([a], PARTITIONS, 'a after the classic member left');
      await produceSequenced(gateway.bootstrap, topic, topic, 160, 80, PARTITIONS);
      await waitForAllRecords(topic, 240, [a, classic]);
      expectExactlyOnceInOrder(topic, 240, allRecords([a, classic]));
      await closeMember(a);
    }, 120_000);

    it('a classic group with members becomes a consumer group when a KIP-848 member joins it (online upgrade); every record is read once', async () => {
      const topic = uniqueTopic('kip848-upgrade');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, PARTITIONS);
      const classic = await startMember({ bootstrap: gateway.bootstrap, group, topic, name: 'classic', groupProtocol: 'classic' });
      running.push(classic);
      await waitForCover([classic], PARTITIONS, 'the classic member alone', 60_000);
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 80, PARTITIONS);
      await waitForAllRecords(topic, 80, [classic]);
      expect((await admin.describeGroups([group])).groups[0]?.state, 'a classic group first').toBe('Stable');

      const b = await member({ group, topic, name: 'b' });
      await waitForCover([classic, b], PARTITIONS, 'the classic member and the KIP-848 member', 60_000);
      expect([classic.assigned.size, b.assigned.size], describeAssignments([classic, b])).toEqual([2, 2]);
      expect((await admin.listGroups()).groups.find((g) => g.groupId === group)?.protocolType, 'a consumer group now').toBe('consumer');
      await produceSequenced(gateway.bootstrap, topic, topic, 80, 80, PARTITIONS);
      await waitForAllRecords(topic, 160, [classic, b]);
      expectExactlyOnceInOrder(topic, 160, allRecords([classic, b]));
      await closeMember(classic);
      await closeMember(b);
    }, 120_000);

    it.each(['range', 'cooperative-sticky'] as const)('a consumer group becomes classic again when its last KIP-848 member leaves (downgrade): the classic member (%s) takes every partition, every record read once', async (assignor) => {
      const topic = uniqueTopic('kip848-downgrade');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, PARTITIONS);
      const a = await member({ group, topic, name: 'a' });
      await waitForCover([a], PARTITIONS, 'a alone');
      const classic = await startMember({ bootstrap: gateway.bootstrap, group, topic, name: 'classic', groupProtocol: 'classic', assignor });
      running.push(classic);
      await waitForCover([a, classic], PARTITIONS, 'a and the classic member', 60_000);
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 80, PARTITIONS);
      await waitForAllRecords(topic, 80, [a, classic]);

      await closeMember(a);
      await waitForCover([classic], PARTITIONS, 'the classic member alone after the KIP-848 member left', 60_000);
      // A classic group now, as Kafka 4 downgrades it: DescribeGroups shows it Stable with its one member (a consumer group would be Dead).
      await waitFor(async () => (await admin.describeGroups([group])).groups[0]?.state === 'Stable', { what: `${group} described Stable by DescribeGroups`, timeoutMs: 30_000 });
      const [described] = (await admin.describeGroups([group])).groups;
      expect([described?.protocolType, described?.protocol, described?.members.length]).toEqual(['consumer', assignor, 1]);
      await produceSequenced(gateway.bootstrap, topic, topic, 80, 80, PARTITIONS);
      await waitForAllRecords(topic, 160, [a, classic]);
      expectExactlyOnceInOrder(topic, 160, allRecords([a, classic]));
      await closeMember(classic);
    }, 120_000);

    it('a group that restarts resumes from its committed offsets: nothing committed is read again', async () => {
      const topic = uniqueTopic('kip848-restart');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, PARTITIONS);
      const first = await member({ group, topic, name: 'first', remoteAssignor: 'range' });
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 100, PARTITIONS);
      await waitForAllRecords(topic, 100, [first]);
      await waitFor(() => [...first.committed.values()].reduce((n, o) => n + o, 0) === 100, {
        what: 'the first member committed all 100 records',
        describe: () => JSON.stringify([...first.committed]),
      });
      await closeMember(first);

      await produceSequenced(gateway.bootstrap, topic, topic, 100, 40, PARTITIONS);
      const second = await member({ group, topic, name: 'second', remoteAssignor: 'range' });
      await waitForAllRecords(topic, 140, [first, second]);
      const reread = second.records.filter((r) => Number(r.value.split(':')[1]) < 100);
      expect(reread, 'records the first member committed, read again').toEqual([]);
      expectExactlyOnceInOrder(topic, 140, allRecords([first, second]));
      await closeMember(second);
    });
  });
}

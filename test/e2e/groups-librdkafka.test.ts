/**
 * Consumer groups through librdkafka (@confluentinc/kafka-javascript's
 * KafkaConsumer) and kcat -G, on every engine: subscribe with rebalance
 * callbacks under the range, roundrobin and cooperative-sticky assignors,
 * asynchronous and synchronous commits. The scenarios the issue names, each
 * with every record accounted for by the sequence number in its value:
 * three consumers over six partitions; one leaving (its partitions move
 * within a second); all restarting from their committed offsets; a static
 * member coming back without a rebalance; two groups on one topic.
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
  sequenceCounts,
  spawnMembers,
  startMember,
  waitForAllRecords,
  waitForCover,
  type Assignor,
  type MemberOptions,
  type MemberView,
} from '../support/groups-members.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { runKcat } from '../support/kcat.js';
import { createTopic } from '../support/rdkafka.js';
import { expectExactlyOnceInOrder, uniqueTopic } from '../support/records.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

const PARTITIONS = 6;
const ASSIGNORS: Assignor[] = ['range', 'roundrobin', 'cooperative-sticky'];

interface Closable extends MemberView {
  close(): Promise<void>;
}

/** A live view of a member's state (the object itself, so later reports show through). */
function viewOf(m: MemberView): MemberView {
  return {
    name: m.name,
    records: m.records,
    events: m.events,
    get assigned() {
      return m.assigned;
    },
    committed: m.committed,
    errors: m.errors,
  };
}

for (const engine of engines) {
  const title = `consumer groups through librdkafka, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway;
    let admin: Admin;
    const running: Closable[] = [];

    beforeAll(async () => {
      // A short initial delay: members started together form the group in one rebalance, not three.
      gateway = await startGateway({ engine: engine.fresh(), groups: { initialRebalanceDelayMs: 500 } });
      admin = kafkajsClient(gateway.bootstrap).admin();
      await admin.connect();
    });
    afterAll(async () => {
      await Promise.all(running.splice(0).map((m) => m.close().catch(() => {})));
      await admin?.disconnect();
      await gateway?.stop();
    });

    async function member(options: Omit<MemberOptions, 'bootstrap'>): Promise<Closable> {
      const started = await startMember({ bootstrap: gateway.bootstrap, ...options });
      running.push(started);
      return started;
    }

    async function closeMember(m: Closable): Promise<void> {
      const i = running.indexOf(m);
      if (i >= 0) running.splice(i, 1);
      await m.close();
    }

    async function waitForStableAssignment(members: readonly MemberView[], what: string): Promise<void> {
      await waitForCover(members, PARTITIONS, what);
    }

    /** The group's committed offset per partition, as an admin client reads it (OffsetFetch). */
    async function committedOffsets(group: string, topic: string): Promise<Map<number, number>> {
      const [found] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
      // -1: nothing committed for that partition.
      return new Map((found?.partitions ?? []).filter((p) => Number(p.offset) >= 0).map((p) => [p.partition, Number(p.offset)]));
    }

    /** Waits until the members' acknowledged commits reach the end of every partition they read. */
    async function waitForCommits(members: readonly MemberView[], what: string): Promise<void> {
      await waitFor(
        () => {
          const ends = new Map<number, number>();
          for (const r of allRecords(members)) ends.set(r.partition, Math.max(ends.get(r.partition) ?? 0, r.offset + 1));
          return [...ends].every(([p, end]) => members.some((m) => m.committed.get(p) === end));
        },
        { what: `${what}: commits acknowledged up to the last record read`, timeoutMs: 15_000 },
      );
    }

    it.each(ASSIGNORS)('three %s consumers over six partitions get a disjoint, complete assignment and read every record once', async (assignor) => {
      const topic = uniqueTopic(`grp-three-${assignor}`);
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, PARTITIONS);
      const members = await Promise.all(['a', 'b', 'c'].map((name) => member({ group, topic, name, assignor })));
      await waitForStableAssignment(members, assignor);
      expectDisjointCompleteAssignment(members, PARTITIONS);
      for (const m of members) expect(m.assigned.size, `${m.name}'s share under ${assignor} (${describeAssignments(members)})`).toBe(2);

      await produceSequenced(gateway.bootstrap, topic, topic, 0, 240, PARTITIONS);
      await waitForAllRecords(topic, 240, members);
      expectExactlyOnceInOrder(topic, 240, allRecords(members));
      // Each member read exactly the partitions it was given.
      for (const m of members) {
        const foreign = m.records.filter((r) => !m.assigned.has(r.partition));
        expect(foreign, `${m.name} read partitions it was not assigned`).toEqual([]);
      }
      await Promise.all(members.map((m) => closeMember(m)));
    });

    it.each(['range', 'cooperative-sticky'] as const)('a %s consumer that leaves has its partitions moved to the others within a second', async (assignor) => {
      const topic = uniqueTopic(`grp-leave-${assignor}`);
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, PARTITIONS);
      // Members hear of a rebalance at their next heartbeat: a short interval keeps that wait small.
      const [a, b, c] = (await Promise.all(['a', 'b', 'c'].map((name) => member({ group, topic, name, assignor, heartbeatIntervalMs: 100 })))) as [Closable, Closable, Closable];
      await waitForStableAssignment([a, b, c], `${assignor} before the leave`);
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 120, PARTITIONS);
      await waitForAllRecords(topic, 120, [a, b, c]);
      await waitForCommits([a, b, c], 'before the leave');
      const leaversPartitions = [...c.assigned];
      const eventsBefore = new Map([a, b].map((m) => [m, m.events.length]));

      const closedAt = Date.now();
      const leaverEvents = c.events.length;
      await closeMember(c);
      // The leave begins when c gives its partitions up (its revoke callback), just before its LeaveGroup.
      const leftAt = c.events.slice(leaverEvents).find((e) => e.kind === 'revoked')?.at ?? closedAt;
      await waitForStableAssignment([a, b], `${assignor} after c left`);
      // When the last assignment that completed the cover arrived at a or b.
      const movedAt = Math.max(
        ...[a, b].flatMap((m) => m.events.slice(eventsBefore.get(m)).filter((e) => e.kind === 'assigned').map((e) => e.at)),
      );
      const tookMs = movedAt - leftAt;
      expect(
        tookMs,
        `c's partitions ${leaversPartitions.join(',')} reached the others ${tookMs} ms after c left (${describeAssignments([a, b])})`,
      ).toBeLessThan(1000);

      await produceSequenced(gateway.bootstrap, topic, topic, 120, 120, PARTITIONS);
      await waitForAllRecords(topic, 240, [a, b, c]);
      expectExactlyOnceInOrder(topic, 240, allRecords([a, b, c]));
      await Promise.all([a, b].map((m) => closeMember(m)));
    });

    for (const commit of ['async', 'sync'] as const) {
      const where = commit === 'sync' ? 'in their own processes' : 'in this process';
      it(`all members restart and resume from their ${commit}hronously committed offsets: no gap, no committed record read again (${where})`, { timeout: 90_000 }, async () => {
        const topic = uniqueTopic(`grp-restart-${commit}`);
        const group = `${topic}-g`;
        const total = 600;
        await createTopic(gateway.bootstrap, topic, PARTITIONS);
        // Synchronous commits block the calling thread until the broker answers: never in the gateway's process.
        const launch = async (names: string[]): Promise<Closable[]> => {
          if (commit === 'async') return Promise.all(names.map((name) => member({ group, topic, name, assignor: 'roundrobin', commit })));
          const child = await spawnMembers(names.map((name) => ({ bootstrap: gateway.bootstrap, group, topic, name, assignor: 'roundrobin' as const, commit })));
          const views = child.members.map((m, i) => ({ ...viewOf(m), close: i === 0 ? () => child.close() : async () => child.close() }));
          running.push(...views);
          return views;
        };
        const first = await launch(['a1', 'b1', 'c1']);
        await waitForStableAssignment(first, 'first run');
        await produceSequenced(gateway.bootstrap, topic, topic, 0, total, PARTITIONS);
        // Stop mid-stream, once a good part has been read.
        await waitFor(() => allRecords(first).length >= total / 3, { what: 'a third of the records read before the restart', timeoutMs: 30_000 });
        await Promise.all(first.map((m) => closeMember(m)));
        const committed = await committedOffsets(group, topic);
        for (const m of first) {
          for (const [p, offset] of m.committed) {
            expect(committed.get(p) ?? -1, `${m.name} was told partition ${p} committed at ${offset}, the group holds ${committed.get(p)}`).toBeGreaterThanOrEqual(offset);
          }
        }

        const second = await launch(['a2', 'b2', 'c2']);
        await waitForAllRecords(topic, total, [...first, ...second]);
        const firstRead = allRecords(first);
        const secondRead = allRecords(second);
        const problems: string[] = [];
        for (let p = 0; p < PARTITIONS; p++) {
          const from = committed.get(p) ?? 0;
          const offsets = secondRead.filter((r) => r.partition === p).map((r) => r.offset).sort((x, y) => x - y);
          if (offsets.length > 0 && offsets[0] !== from) problems.push(`partition ${p}: committed ${from}, the restarted group began at ${offsets[0]}`);
          const readAgain = firstRead.filter((r) => r.partition === p && offsets.includes(r.offset));
          const committedAgain = readAgain.filter((r) => r.offset < from);
          if (committedAgain.length > 0) problems.push(`partition ${p}: ${committedAgain.length} committed records were read again`);
        }
        expect(problems, 'the restarted group did not resume from the committed offsets').toEqual([]);
        // Every record arrived; the only repeats are records read but not yet committed when the members stopped.
        const counts = sequenceCounts(topic, [...firstRead, ...secondRead]);
        expect(counts.size).toBe(total);
        const uncommittedInFirstRun = firstRead.filter((r) => r.offset >= (committed.get(r.partition) ?? 0)).length;
        const repeats = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
        expect(repeats, 'records read twice beyond those left uncommitted at the stop').toBe(uncommittedInFirstRun);
        expectExactlyOnceInOrder(topic, total, secondRead.concat(firstRead.filter((r) => r.offset < (committed.get(r.partition) ?? 0))));
        await Promise.all(second.map((m) => closeMember(m)));
      });
    }

    it.each(['a follower', 'the leader'] as const)('a static member (%s) that restarts within its session timeout keeps its partitions, and the others see no rebalance', async (role) => {
      const topic = uniqueTopic('grp-static');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, PARTITIONS);
      const startStatic = () => member({ group, topic, name: 's', assignor: 'range', instanceId: `${topic}-s`, sessionTimeoutMs: 10_000 });
      // The first member to join leads the group.
      const early = role === 'the leader' ? await startStatic() : null;
      if (early) await waitFor(() => early.assigned.size === PARTITIONS, { what: 'the static member to form the group alone' });
      const a = await member({ group, topic, name: 'a', assignor: 'range' });
      const b = await member({ group, topic, name: 'b', assignor: 'range' });
      const s = early ?? (await startStatic());
      await waitForStableAssignment([a, b, s], 'before the static member restarts');
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 60, PARTITIONS);
      await waitForAllRecords(topic, 60, [a, b, s]);
      await waitForCommits([a, b, s], 'before the restart');
      const held = [...s.assigned].sort();
      const eventsBefore = new Map([a, b].map((m) => [m, m.events.length]));

      await closeMember(s);
      const again = await member({ group, topic, name: 's-again', assignor: 'range', instanceId: `${topic}-s`, sessionTimeoutMs: 10_000 });
      await waitFor(() => again.assigned.size > 0, { what: 'the restarted static member to be assigned', timeoutMs: 15_000, describe: () => describeAssignments([a, b, again]) });
      expect([...again.assigned].sort(), 'the static member came back to other partitions').toEqual(held);
      await produceSequenced(gateway.bootstrap, topic, topic, 60, 60, PARTITIONS);
      await waitForAllRecords(topic, 120, [a, b, s, again]);
      for (const m of [a, b]) {
        const later = m.events.slice(eventsBefore.get(m));
        expect(later, `${m.name} went through a rebalance while the static member restarted`).toEqual([]);
      }
      expectExactlyOnceInOrder(topic, 120, allRecords([a, b, s, again]));
      await Promise.all([a, b, again].map((m) => closeMember(m)));
    });

    it('two groups read the same topic independently, each every record once, each with its own offsets', async () => {
      const topic = uniqueTopic('grp-two');
      await createTopic(gateway.bootstrap, topic, PARTITIONS);
      const g1 = [await member({ group: `${topic}-g1`, topic, name: 'g1-a' }), await member({ group: `${topic}-g1`, topic, name: 'g1-b' })];
      const g2 = [await member({ group: `${topic}-g2`, topic, name: 'g2-a', assignor: 'cooperative-sticky' })];
      await waitForStableAssignment(g1, 'group 1');
      await waitForStableAssignment(g2, 'group 2');
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 180, PARTITIONS);
      await waitForAllRecords(topic, 180, g1);
      await waitForAllRecords(topic, 180, g2);
      expectExactlyOnceInOrder(topic, 180, allRecords(g1));
      expectExactlyOnceInOrder(topic, 180, allRecords(g2));
      await waitForCommits(g1, 'group 1');
      await waitForCommits(g2, 'group 2');
      // Closing group 2 moves nothing in group 1, and each holds its own commits.
      await Promise.all(g2.map((m) => closeMember(m)));
      await produceSequenced(gateway.bootstrap, topic, topic, 180, 60, PARTITIONS);
      await waitForAllRecords(topic, 240, g1);
      await waitForCommits(g1, 'group 1 after more records');
      const c1 = await committedOffsets(`${topic}-g1`, topic);
      const c2 = await committedOffsets(`${topic}-g2`, topic);
      expect([...c1.values()].reduce((a, b) => a + b, 0), 'group 1 committed every record it read').toBe(240);
      expect([...c2.values()].reduce((a, b) => a + b, 0), 'group 2 committed what it read, untouched by group 1').toBe(180);
      await Promise.all(g1.map((m) => closeMember(m)));
    });

    it('kcat -G consumes as a group member and a second run resumes after what the first committed', async () => {
      const topic = uniqueTopic('grp-kcat');
      const group = `${topic}-g`;
      await createTopic(gateway.bootstrap, topic, 3);
      await produceSequenced(gateway.bootstrap, topic, topic, 0, 60, 3);
      const settings = ['-X', 'auto.offset.reset=earliest', '-X', 'heartbeat.interval.ms=250', '-X', 'session.timeout.ms=6000'];
      const format = ['-f', '%s\\n', '-q'];
      const first = await runKcat(['-b', gateway.bootstrap, '-G', group, topic, '-c', '60', ...format, ...settings], '', 45_000);
      expect(first.code, `kcat -G failed: ${first.stderr.slice(-1500)}`).toBe(0);
      const firstValues = first.stdout.split('\n').filter((l) => l !== '');
      expectExactlyOnceInOrder(topic, 60, firstValues.map((value, i) => ({ partition: Number(value.split(':').pop()) % 3, offset: i, value })));
      // kcat commits what it consumed when it leaves.
      await waitFor(async () => [...(await committedOffsets(group, topic)).values()].reduce((a, b) => a + b, 0) === 60, {
        what: `kcat's group ${group} to have committed all 60 records`,
        timeoutMs: 10_000,
      });

      await produceSequenced(gateway.bootstrap, topic, topic, 60, 30, 3);
      const second = await runKcat(['-b', gateway.bootstrap, '-G', group, topic, '-c', '30', ...format, ...settings], '', 45_000);
      expect(second.code, `the second kcat -G failed: ${second.stderr.slice(-1500)}`).toBe(0);
      const secondValues = second.stdout.split('\n').filter((l) => l !== '').sort();
      const expected = Array.from({ length: 30 }, (_, i) => `${topic}:${60 + i}`).sort();
      expect(secondValues, 'the second run read something other than the 30 new records').toEqual(expected);
    });
  });
}

/**
 * Consumer groups when something dies. A member SIGKILLed in its own process
 * sends no LeaveGroup: its partitions stay with it until its session timeout
 * (6 s, the coordinator's minimum) passes, then move to the others. A gateway
 * process SIGKILLed and started again on the same port over the same
 * PostgreSQL schema loses the group's membership (it lives in memory) but not
 * its committed offsets: the members rejoin and carry on from what they had
 * committed. Every record is accounted for by its sequence number.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Admin, Consumer } from 'kafkajs';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { waitFor } from '../support/eventually.js';
import { startGateway, startGatewayProcess, type GatewayProcess, type RunningGateway } from '../support/gateway.js';
import {
  allRecords,
  produceSequenced,
  sequenceCounts,
  spawnMembers,
  startMember,
  waitForAllRecords,
  waitForCover,
  type GroupMember,
  type MemberRecord,
  type MemberView,
} from '../support/groups-members.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { createTopic } from '../support/rdkafka.js';
import { expectExactlyOnceInOrder, uniqueTopic } from '../support/records.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

const PARTITIONS = 6;
const SESSION_TIMEOUT_MS = 6_000;

async function waitForAckedCommits(members: readonly MemberView[], what: string): Promise<void> {
  await waitFor(
    () => {
      const ends = new Map<number, number>();
      for (const r of allRecords(members)) ends.set(r.partition, Math.max(ends.get(r.partition) ?? 0, r.offset + 1));
      return [...ends].every(([p, end]) => members.some((m) => m.committed.get(p) === end));
    },
    { what: `${what}: commits acknowledged up to the last record read`, timeoutMs: 15_000 },
  );
}

for (const engine of engines) {
  const title = `a SIGKILLed group member, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway | null = null;
    const closers: (() => Promise<void>)[] = [];
    afterAll(async () => {
      await Promise.all(closers.splice(0).map((close) => close().catch(() => {})));
      await gateway?.stop();
    });

    it.each(['a follower', 'the leader'] as const)('when it is %s, its partitions move to the others once its session timeout has passed, and no record is lost', { timeout: 60_000 }, async (role) => {
      gateway ??= await startGateway({ engine: engine.fresh(), groups: { initialRebalanceDelayMs: 0 } });
      const bootstrap = gateway.bootstrap;
      const topic = uniqueTopic('grp-sigkill');
      const group = `${topic}-g`;
      await createTopic(bootstrap, topic, PARTITIONS);
      const base = { bootstrap, group, topic, assignor: 'range' as const, sessionTimeoutMs: SESSION_TIMEOUT_MS };
      const spawnVictim = async () => {
        const child = await spawnMembers([{ ...base, name: 'k' }]);
        closers.push(() => child.kill());
        return child;
      };
      // The first member to join leads the group; a leader that dies must be replaced.
      const early = role === 'the leader' ? await spawnVictim() : null;
      if (early) await waitFor(() => early.members[0]!.assigned.size === PARTITIONS, { what: 'k to form the group alone', describe: () => early.stderr.slice(-500) });
      const a: GroupMember = await startMember({ ...base, name: 'a' });
      closers.push(() => a.close());
      const b: GroupMember = await startMember({ ...base, name: 'b' });
      closers.push(() => b.close());
      const victim = early ?? (await spawnVictim());
      const k = victim.members[0]!;
      await waitForCover([a, b, k], PARTITIONS, 'before the kill');

      await produceSequenced(bootstrap, topic, topic, 0, 120, PARTITIONS);
      await waitForAllRecords(topic, 120, [a, b, k]);
      await waitForAckedCommits([a, b, k], 'before the kill');
      const held = [...k.assigned];
      const eventsBefore = new Map([a, b].map((m) => [m, m.events.length]));

      const killedAt = Date.now();
      await victim.kill();
      await waitForCover([a, b], PARTITIONS, `after k was SIGKILLed (it held ${held.join(',')})`, 30_000);
      const movedAt = Math.max(...[a, b].flatMap((m) => m.events.slice(eventsBefore.get(m)).filter((e) => e.kind === 'assigned').map((e) => e.at)));
      // The coordinator only learns of the death from the silence: nothing may move before the session timeout
      // (less the one heartbeat interval by which k's last heartbeat may precede the kill).
      expect(movedAt - killedAt, `k's partitions moved ${movedAt - killedAt} ms after the kill`).toBeGreaterThanOrEqual(SESSION_TIMEOUT_MS - 500);

      await produceSequenced(bootstrap, topic, topic, 120, 120, PARTITIONS);
      await waitForAllRecords(topic, 240, [a, b, k]);
      expectExactlyOnceInOrder(topic, 240, allRecords([a, b, k]));
      await Promise.all([a.close(), b.close()]);
    });
  });
}

const postgres = engines.find((e) => e.name === 'postgres')!;
const restartTitle = 'a gateway restart under a consumer group, postgres engine' + (postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : '');
describe.skipIf(postgres.skipReason !== null)(restartTitle, () => {
  let gateway: GatewayProcess | null = null;
  const members: GroupMember[] = [];
  let kjs: Consumer | null = null;
  let admin: Admin | null = null;
  afterAll(async () => {
    await Promise.all(members.map((m) => m.close().catch(() => {})));
    await kjs?.disconnect().catch(() => {});
    await admin?.disconnect().catch(() => {});
    await gateway?.stop();
  });

  it('members rejoin the restarted gateway and resume from their committed offsets, losing nothing', { timeout: 90_000 }, async () => {
    // The CLI's default initial rebalance delay (3 s) stays on: the restarted gateway's groups start empty.
    gateway = await startGatewayProcess({ engine: postgres.fresh(), autoCreateTopics: false });
    const running = gateway;
    const topic = uniqueTopic('grp-gw-restart');
    const group = `${topic}-g`;
    await createTopic(running.bootstrap, topic, PARTITIONS);
    const base = { bootstrap: running.bootstrap, group, topic, assignor: 'range' as const, sessionTimeoutMs: SESSION_TIMEOUT_MS };
    members.push(await startMember({ ...base, name: 'a' }), await startMember({ ...base, name: 'b' }));
    const [a, b] = members as [GroupMember, GroupMember];
    // A kafkajs consumer in a group of its own reads the same topic through the restart.
    const kafka = kafkajsClient(running.bootstrap);
    const kjsGroup = `${topic}-kafkajs`;
    const kjsRead: MemberRecord[] = [];
    kjs = kafka.consumer({ groupId: kjsGroup, sessionTimeout: SESSION_TIMEOUT_MS, heartbeatInterval: 300, maxWaitTimeInMs: 100 });
    await kjs.connect();
    await kjs.subscribe({ topic, fromBeginning: true });
    await kjs.run({ eachMessage: async ({ partition, message }) => void kjsRead.push({ partition, offset: Number(message.offset), value: message.value?.toString() ?? '' }) });
    await waitForCover([a, b], PARTITIONS, 'before the restart');

    await produceSequenced(running.bootstrap, topic, topic, 0, 300, PARTITIONS);
    await waitForAllRecords(topic, 300, [a, b]);
    await waitForAckedCommits([a, b], 'before the restart');
    const kjsView = { name: 'kafkajs', records: kjsRead, events: [], assigned: new Set<number>(), committed: new Map<number, number>(), errors: [] };
    await waitForAllRecords(topic, 300, [kjsView]);
    admin = kafka.admin();
    await admin.connect();
    const kjsAdmin = admin;
    await waitFor(async () => {
      const [t] = await kjsAdmin.fetchOffsets({ groupId: kjsGroup, topics: [topic] });
      return (t?.partitions ?? []).reduce((sum, p) => sum + Math.max(Number(p.offset), 0), 0) === 300;
    }, { what: "the kafkajs group's commits to cover all 300 records before the restart", timeoutMs: 15_000 });
    await admin.disconnect();
    admin = null;
    // 300 records over six partitions: the kafkajs group committed offset 50 on each.
    const kjsReadAtKill = kjsRead.length;
    const ackedAtKill = new Map<number, number>();
    for (const m of [a, b]) for (const [p, o] of m.committed) ackedAtKill.set(p, Math.max(ackedAtKill.get(p) ?? 0, o));
    const readBefore = new Map([a, b].map((m) => [m, m.records.length]));
    const eventsBefore = new Map([a, b].map((m) => [m, m.events.length]));

    await running.kill();
    await running.restart();
    await produceSequenced(running.bootstrap, topic, topic, 300, 120, PARTITIONS);
    await waitForAllRecords(topic, 420, [a, b], 45_000);

    // They rejoined: each goes through a new assignment on the restarted gateway (one may
    // rejoin, take every partition and read all 420 before the other's rejoin is through).
    for (const m of [a, b]) {
      const assignedAgain = () => m.events.slice(eventsBefore.get(m)).some((e) => e.kind === 'assigned');
      await waitFor(assignedAgain, { what: `${m.name} to be assigned again after the restart`, timeoutMs: 30_000 });
    }
    await waitForCover([a, b], PARTITIONS, 'after the restart');
    // Nothing committed before the kill was read again; every record arrived once.
    const readAgain = [a, b].flatMap((m) => m.records.slice(readBefore.get(m))).filter((r) => r.offset < (ackedAtKill.get(r.partition) ?? 0));
    expect(readAgain.map((r) => `p${r.partition}@${r.offset}`), 'records committed before the restart were read again').toEqual([]);
    const counts = sequenceCounts(topic, allRecords([a, b]));
    expect(counts.size, 'records never read').toBe(420);
    // Membership lives in the core's memory: until a member has rejoined, the restarted gateway
    // refuses its commits (UNKNOWN_MEMBER_ID), so what it read in that window comes again from the
    // commit. Only those may repeat, and only once: everything before the restart was read once.
    expectExactlyOnceInOrder(topic, 300, allRecords([a, b]).filter((r) => r.offset < 50));
    const repeatedTwice = [...counts].filter(([, n]) => n > 2).map(([seq, n]) => `${seq}×${n}`);
    expect(repeatedTwice, 'records read more than twice across the restart').toEqual([]);
    // The kafkajs consumer came back too, from its group's commits: every record, and nothing it had
    // committed read again. A record it read but had not committed when the coordinator forgot it
    // may come again (kafkajs's commit with its old generation is refused, so it re-reads from the commit).
    await waitForAllRecords(topic, 420, [kjsView], 45_000);
    const kjsAgain = kjsRead.slice(kjsReadAtKill).filter((r) => r.offset < 50);
    expect(kjsAgain.map((r) => `p${r.partition}@${r.offset}`), 'kafkajs read again records its group committed before the restart').toEqual([]);
    expectExactlyOnceInOrder(topic, 300, kjsRead.slice(0, kjsReadAtKill));
    const kjsAfter = kjsRead.slice(kjsReadAtKill);
    const firstAfter = new Map<number, number>();
    for (const r of kjsAfter) firstAfter.set(r.partition, Math.min(firstAfter.get(r.partition) ?? Infinity, r.offset));
    expect([...firstAfter.values()], 'kafkajs resumed each partition at its committed offset (50)').toEqual(Array(PARTITIONS).fill(50));
  });
});

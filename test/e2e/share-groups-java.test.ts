/**
 * Share groups (KIP-932) with Kafka 4.4's own clients against the gateway:
 * KafkaShareConsumer members and kafka-share-groups.sh.
 *
 * - A member acquires records and is killed (SIGKILL) holding their locks; a
 *   second member gets every record, the dead member's ones once their locks
 *   ran out (share.record.lock.duration.ms, set with the Java admin client's
 *   IncrementalAlterConfigs on the GROUP resource) with delivery count 2;
 *   nothing is lost. kafka-share-groups.sh describes the group: start offset
 *   past every record.
 * - The full form (`npm run test:share-groups`, SHARE_GROUPS_FULL=1) runs on
 *   every engine and goes on with kafka-share-groups.sh: reset the offsets to
 *   the earliest (the next member gets every record again), delete the
 *   offsets, delete the group. The in-suite form runs on one engine
 *   (PostgreSQL when there is one: the locks are stored there) and stops after
 *   the describe, to stay within the suite's budget: every step is a JVM.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { waitFor } from '../support/eventually.js';
import { startGateway } from '../support/gateway.js';
import { javaProduce } from '../support/java-client.js';
import { kafkaTool } from '../support/kafka-tools.js';
import { uniqueTopic } from '../support/records.js';
import { setShareGroupConfigs, startShareConsumer, waitForRecords } from '../support/java-share-consumer.js';

const FULL = process.env.SHARE_GROUPS_FULL === '1';
const matrix = await engineMatrix();
const durable = matrix.find((e) => e.name === 'postgres' && e.skipReason === null);
const engines = FULL ? matrix : [durable ?? matrix[0]!];
afterAll(releaseEngines);

const RECORDS = 20;
const TOOL = 'consumer.group.ShareGroupCommand';

/** The tool's table, split on any run of spaces (a long group name leaves one space before the next column). */
function columns(lines: string[]): Record<string, string>[] {
  const [head, ...rows] = lines.filter((l) => l.startsWith('GROUP') || !/^[A-Z-]+\s/.test(l)).map((l) => l.split(/\s+/));
  return rows.map((row) => Object.fromEntries((head ?? []).map((name, i) => [name, row[i] ?? ''])));
}

describe.each(engines)('share groups with Kafka 4.4 clients: the gateway, $name engine', (engine) => {
  it.skipIf(engine.skipReason !== null)('a member killed holding locks: its records go to another member with the delivery count raised; kafka-share-groups.sh describes (and, in the full form, resets and deletes)', { timeout: 300_000 }, async (context) => {
    const gateway = await startGateway({ engine: engine.fresh(), autoCreateTopics: true });
    context.onTestFinished(() => gateway.stop());
    const { bootstrap } = gateway;
    const topic = uniqueTopic('share');
    const group = `${topic}-group`;
    const produced = await javaProduce(bootstrap, topic, Array.from({ length: RECORDS }, (_, i) => ({ partition: 0, key: null, value: `record-${i}` })));
    expect(produced.failed).toEqual([]);
    await setShareGroupConfigs(bootstrap, group, { 'share.auto.offset.reset': 'earliest', 'share.record.lock.duration.ms': 3000, 'share.session.timeout.ms': 6000, 'share.heartbeat.interval.ms': 1000 });

    const doomed = await startShareConsumer(bootstrap, group, topic, 'hold');
    context.onTestFinished(() => doomed.kill());
    await waitForRecords(doomed, 1, 'the first member acquiring records');
    const held = doomed.records.map((r) => r.offset);
    expect(held.length).toBeGreaterThan(0);
    expect(doomed.records.every((r) => r.deliveryCount === 1)).toBe(true);
    await doomed.kill();

    const survivor = await startShareConsumer(bootstrap, group, topic, 'accept');
    context.onTestFinished(() => survivor.kill());
    await waitForRecords(survivor, RECORDS, `the second member getting all ${RECORDS} records`);
    const byOffset = new Map(survivor.records.map((r) => [r.offset, r]));
    expect([...byOffset.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: RECORDS }, (_, i) => i));
    // What the dead member printed comes back a second time; records it had
    // acquired but not yet handed to its application were delivered too (the
    // count rises at acquisition), so they may come back at 2 as well.
    for (const [offset, r] of byOffset) {
      expect({ offset, value: r.value }).toEqual({ offset, value: `record-${offset}` });
      expect([offset, r.deliveryCount]).toEqual([offset, held.includes(offset) ? 2 : expect.toSatisfy((n: number) => n === 1 || n === 2)]);
    }
    await survivor.stop();

    const described = await kafkaTool(TOOL, bootstrap, ['--describe', '--group', group]);
    expect(described.exit, described.stderr).toBe(0);
    const row = columns(described.lines).find((r) => r.TOPIC === topic);
    expect(row, described.lines.join('\n')).toMatchObject({ GROUP: group, PARTITION: '0', 'START-OFFSET': String(RECORDS) });
    if (!FULL) return;

    // The killed member stays a member until its session runs out (6 s here); then the group is empty and may be reset.
    let reset = await kafkaTool(TOOL, bootstrap, ['--reset-offsets', '--group', group, '--topic', topic, '--to-earliest', '--execute']);
    await waitFor(async () => reset.exit === 0 || ((reset = await kafkaTool(TOOL, bootstrap, ['--reset-offsets', '--group', group, '--topic', topic, '--to-earliest', '--execute'])).exit === 0), {
      what: 'kafka-share-groups.sh --reset-offsets succeeding once the killed member\'s session ran out', timeoutMs: 60_000, intervalMs: 1000,
      describe: () => `${reset.lines.join('\n')}\n${reset.stderr}`,
    });
    const again = await startShareConsumer(bootstrap, group, topic, 'accept');
    context.onTestFinished(() => again.kill());
    await waitForRecords(again, RECORDS, 'a member after the reset getting every record again');
    await again.stop();

    const deletedOffsets = await kafkaTool(TOOL, bootstrap, ['--delete-offsets', '--group', group, '--topic', topic]);
    expect(deletedOffsets.exit, `${deletedOffsets.lines.join('\n')}\n${deletedOffsets.stderr}`).toBe(0);
    const deleted = await kafkaTool(TOOL, bootstrap, ['--delete', '--group', group]);
    expect(deleted.exit, `${deleted.lines.join('\n')}\n${deleted.stderr}`).toBe(0);
    const listed = await kafkaTool(TOOL, bootstrap, ['--list']);
    expect(listed.lines).not.toContain(group);
  });
});

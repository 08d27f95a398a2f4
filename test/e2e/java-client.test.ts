/**
 * Apache Kafka's Java client (kafka-clients 4.x, the driver in
 * test/java-client) against the gateway on every engine and against Apache
 * Kafka itself, with the same scenarios and the same assertions, so what the
 * Java client sees of the gateway is compared with what it sees of Kafka:
 *
 * - an idempotent producer (enable.idempotence, acks=all, five requests in
 *   flight over many small batches): every record stored once, in order,
 *   offsets contiguous from 0, and read back so;
 * - a consumer group of two Java consumers sharing a topic's partitions, each
 *   committing what it reads; the group as the admin client describes it;
 *   then members that stop part-way and a member that resumes at the
 *   committed offsets, nothing lost or doubled;
 * - the same with the new group protocol (group.protocol=consumer, KIP-848):
 *   two members given two partitions each by the coordinator's uniform
 *   assignor, the group described as a CONSUMER group, a member leaving and
 *   its partitions moving, a restart resuming at the committed offsets;
 * - a transactional producer: an aborted and a committed transaction with
 *   offsets sent for a group, then a second instance with the same
 *   transactional id that fences the first; a read_committed consumer reads
 *   the committed records only, and the group's offsets are the committed
 *   transaction's;
 * - the admin client: createTopics, listTopics, describeTopics,
 *   describeCluster, listOffsets, describeConfigs, deleteTopics, and the
 *   group operations above.
 *
 * Where the gateway answers otherwise than Kafka, the test says so by name
 * (KNOWN_DIFFERENCES) and asserts each side's answer.
 *
 * Not compared here: the full list of topic configs describeConfigs returns
 * (Kafka 4.4 lists 37 for a new topic, the gateway the 5 below and its own
 * queen.dedup.window.seconds), which the admin-configs suites cover; only
 * the configs both list are asserted, equal on both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apacheKafkaInstall, startApacheKafka } from '../support/apache-kafka.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { waitFor } from '../support/eventually.js';
import { startGateway } from '../support/gateway.js';
import { JavaConsumer, javaAdmin, javaProduce, javaTransactions, type JavaError, type AdminResult, type JavaConsumed, type JavaRecord, type TopicPartitionRef } from '../support/java-client.js';
import { uniqueTopic } from '../support/records.js';

const engines = await engineMatrix();
afterAll(releaseEngines);
const kafkaVersion = (await apacheKafkaInstall()).version;

/** Where the gateway answers otherwise than Apache Kafka, as the Java client sees it; each is asserted both ways below. */
const KNOWN_DIFFERENCES = {
  unknownGroup:
    'describeConsumerGroups of a group that does not exist: Kafka 4.x answers GroupIdNotFoundException (DescribeGroups v6, KIP-1043); ' +
    'the gateway serves DescribeGroups up to v5, where such a group is described as DEAD with no members.',
} as const;

interface Target {
  name: string;
  /** Apache Kafka itself, or the gateway. */
  isKafka: boolean;
  skipReason: string | null;
  start(): Promise<{ bootstrap: string; port: number; stop(): Promise<void> }>;
}

const targets: Target[] = [
  ...engines.map(
    (engine): Target => ({
      name: `the gateway, ${engine.name} engine`,
      isKafka: false,
      skipReason: engine.skipReason,
      start: () => startGateway({ engine: engine.fresh(), autoCreateTopics: false, groups: { initialRebalanceDelayMs: 0 } }),
    }),
  ),
  {
    name: `Apache Kafka ${kafkaVersion}`,
    isKafka: true,
    skipReason: null,
    start: () => startApacheKafka({ autoCreateTopics: false }),
  },
];

/** The operation's result, failing with the client's error when it has one. */
function resultOf<T>(results: AdminResult[], index: number, op: string): T {
  const entry = results[index];
  expect(entry?.op, `result ${index} answers ${op}`).toBe(op);
  expect(entry?.error, `${op} succeeds`).toBeUndefined();
  return entry!.result as T;
}

async function createTopic(bootstrap: string, name: string, partitions: number): Promise<void> {
  const [created] = await javaAdmin(bootstrap, [{ op: 'createTopics', topics: [{ name, partitions, replicationFactor: 1 }] }]);
  expect(created?.result).toEqual({ [name]: { partitions, replicationFactor: 1 } });
}

/** Records per partition in offset order, as "partition:offset=value". */
function byPartitionInOrder(records: readonly JavaConsumed[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const r of [...records].sort((a, b) => a.partition - b.partition || a.offset - b.offset)) {
    out.set(r.partition, [...(out.get(r.partition) ?? []), `${r.offset}=${r.value}`]);
  }
  return out;
}

/** What each partition should hold: "offset=value" from `from`, in send order. */
function expectedLog(records: readonly JavaRecord[], partitions: number, from = 0): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (let p = 0; p < partitions; p++) {
    out.set(
      p,
      records.filter((r) => r.partition === p).map((r, i) => `${from + i}=${r.value}`),
    );
  }
  return out;
}

const sortRefs = (refs: TopicPartitionRef[]) => [...refs].sort((a, b) => a.topic.localeCompare(b.topic) || a.partition - b.partition);

for (const target of targets) {
  const title = `Java client ${kafkaVersion} against ${target.name}` + (target.skipReason ? ` (skipped: ${target.skipReason})` : '');
  describe.skipIf(target.skipReason !== null)(title, () => {
    let server: Awaited<ReturnType<Target['start']>>;

    beforeAll(async () => {
      server = await target.start();
    }, 180_000);
    afterAll(async () => {
      await server?.stop();
    });

    it('transactions: read_committed reads only committed records, offsets land with the commit, a second instance fences the first', async () => {
      const topic = uniqueTopic('java-txn');
      const input = uniqueTopic('java-txn-in');
      const group = `${topic}-group`;
      await createTopic(server.bootstrap, topic, 2);
      await createTopic(server.bootstrap, input, 1);
      const committed = Array.from({ length: 6 }, (_, i) => ({ partition: i % 2, key: null, value: `committed-${i}` }));
      const lines = await javaTransactions(server.bootstrap, {
        topic,
        transactionalId: `${topic}-tid`,
        groupId: group,
        fence: true,
        steps: [
          { action: 'abort', records: [{ partition: 0, key: null, value: 'aborted-0' }, { partition: 1, key: null, value: 'aborted-1' }], offsets: [{ topic: input, partition: 0, offset: 5 }] },
          { action: 'commit', records: committed, offsets: [{ topic: input, partition: 0, offset: 7 }] },
        ],
      });
      expect(lines.filter((l) => l.event === 'step').map((l) => l.action)).toEqual(['abort', 'commit']);
      const zombie = lines.find((l) => l.event === 'zombie');
      expect(zombie?.fenced, JSON.stringify(lines)).toBe(true);
      expect((zombie!.error as JavaError).type).toMatch(/ProducerFenced|InvalidProducerEpoch/);
      expect(lines.some((l) => l.event === 'successor-committed'), JSON.stringify(lines)).toBe(true);

      // Six committed records and the successor's: no aborted one and nothing of the fenced instance.
      const reader = await JavaConsumer.start({
        bootstrap: server.bootstrap,
        topics: [topic],
        groupId: `${topic}-reader`,
        clientId: 'java-txn-reader',
        maxRecords: committed.length + 1,
        config: { 'isolation.level': 'read_committed' },
      });
      await reader.finished(90_000);
      expect(reader.records.map((r) => r.value).sort()).toEqual([...committed.map((r) => r.value), 'successor'].sort());
      for (const p of [0, 1]) {
        const values = reader.records.filter((r) => r.partition === p && r.value!.startsWith('committed')).map((r) => r.value);
        expect(values, `partition ${p} in order`).toEqual(committed.filter((r) => r.partition === p).map((r) => r.value));
      }
      const offsets = await javaAdmin(server.bootstrap, [{ op: 'listConsumerGroupOffsets', group }]);
      expect(resultOf(offsets, 0, 'listConsumerGroupOffsets')).toEqual({ [`${input}:0`]: { offset: 7, metadata: '' } });
    }, 180_000);

    it('an idempotent producer with five requests in flight stores every record once, in order, at contiguous offsets', async () => {
      const topic = uniqueTopic('java-idempotent');
      await createTopic(server.bootstrap, topic, 3);
      const records: JavaRecord[] = Array.from({ length: 600 }, (_, i) => ({ partition: i % 3, key: `key-${i % 7}`, value: `record-${i}` }));
      // Small batches and no linger: many batches per partition, up to five in flight at once.
      const produced = await javaProduce(server.bootstrap, topic, records, { 'batch.size': 1024, 'linger.ms': 0, 'max.in.flight.requests.per.connection': 5 });
      expect(produced.failed).toEqual([]);
      expect(produced.sent).toHaveLength(records.length);
      for (let p = 0; p < 3; p++) {
        const offsets = produced.sent.filter((s) => s.partition === p).map((s) => s.offset);
        expect(offsets, `partition ${p}'s offsets in send order`).toEqual(Array.from({ length: 200 }, (_, i) => i));
      }

      const reader = await JavaConsumer.start({ bootstrap: server.bootstrap, topics: [topic], groupId: `${topic}-reader`, clientId: 'java-idempotent-reader', maxRecords: records.length });
      await reader.finished(90_000);
      expect(byPartitionInOrder(reader.records)).toEqual(expectedLog(records, 3));
      expect(reader.records.map((r) => `${r.partition}:${r.offset}`).length, 'no record read twice').toBe(new Set(reader.records.map((r) => `${r.partition}:${r.offset}`)).size);
    }, 180_000);

    it('two Java consumers share a topic in one group, commit what they read, and a restart resumes at the committed offsets', async () => {
      const topic = uniqueTopic('java-group');
      const group = `${topic}-group`;
      await createTopic(server.bootstrap, topic, 4);

      // Both members in before any record exists, so no record is read before the group settles.
      const members = await Promise.all(
        ['java-member-a', 'java-member-b'].map((clientId) => JavaConsumer.start({ bootstrap: server.bootstrap, topics: [topic], groupId: group, clientId })),
      );
      const [a, b] = members as [JavaConsumer, JavaConsumer];
      const describeMembers = () => members.map((m) => m.describe()).join('\n');
      await waitFor(
        () => {
          const held = [...a.assignment, ...b.assignment].map((tp) => tp.partition).sort();
          return a.assignment.length > 0 && b.assignment.length > 0 && held.join() === '0,1,2,3';
        },
        { what: 'both members to hold partitions, all four between them, none twice', timeoutMs: 60_000, intervalMs: 50, describe: describeMembers },
      );

      const first: JavaRecord[] = Array.from({ length: 40 }, (_, i) => ({ partition: i % 4, key: null, value: `first-${i}` }));
      expect((await javaProduce(server.bootstrap, topic, first)).failed).toEqual([]);
      await waitFor(() => a.commits.length + b.commits.length >= first.length, { what: 'all 40 records read and committed', timeoutMs: 60_000, intervalMs: 50, describe: describeMembers });
      expect(a.commitFailures, a.describe()).toEqual([]);
      expect(b.commitFailures, b.describe()).toEqual([]);
      for (const member of members) {
        const held = new Set(member.assignment.map((tp) => tp.partition));
        expect(member.records.every((r) => held.has(r.partition)), `${member.clientId} reads only its own partitions`).toBe(true);
      }
      expect(byPartitionInOrder([...a.records, ...b.records])).toEqual(expectedLog(first, 4));

      const live = await javaAdmin(server.bootstrap, [
        { op: 'listConsumerGroups' },
        { op: 'describeConsumerGroups', groups: [group] },
        { op: 'listConsumerGroupOffsets', group },
      ]);
      const listed = resultOf<{ groupId: string; state: string | null; simple: boolean }[]>(live, 0, 'listConsumerGroups');
      expect(listed.find((g) => g.groupId === group)).toEqual({ groupId: group, state: 'STABLE', simple: false });
      const described = resultOf<Record<string, { state: string; type: string; assignor: string; simple: boolean; members: { clientId: string; host: string; memberIdSet: boolean; assignment: TopicPartitionRef[] }[] }>>(
        live,
        1,
        'describeConsumerGroups',
      )[group]!;
      expect(described).toMatchObject({ state: 'STABLE', assignor: 'range', simple: false });
      expect(described.type).toBe('CLASSIC');
      expect(described.members.map((m) => ({ clientId: m.clientId, memberIdSet: m.memberIdSet, assignment: sortRefs(m.assignment) })).sort((x, y) => x.clientId.localeCompare(y.clientId))).toEqual([
        { clientId: 'java-member-a', memberIdSet: true, assignment: sortRefs(a.assignment) },
        { clientId: 'java-member-b', memberIdSet: true, assignment: sortRefs(b.assignment) },
      ]);
      for (const m of described.members) expect(m.host).toMatch(/127\.0\.0\.1/);
      expect(resultOf(live, 2, 'listConsumerGroupOffsets')).toEqual(Object.fromEntries([0, 1, 2, 3].map((p) => [`${topic}:${p}`, { offset: 10, metadata: '' }])));

      await Promise.all(members.map((m) => m.stop()));

      // While nobody reads, more arrives; a member reads part of it and stops, another reads the rest.
      const second: JavaRecord[] = Array.from({ length: 20 }, (_, i) => ({ partition: i % 4, key: null, value: `second-${i}` }));
      expect((await javaProduce(server.bootstrap, topic, second)).failed).toEqual([]);
      const c = await JavaConsumer.start({ bootstrap: server.bootstrap, topics: [topic], groupId: group, clientId: 'java-member-c', maxRecords: 8 });
      await c.finished();
      const d = await JavaConsumer.start({ bootstrap: server.bootstrap, topics: [topic], groupId: group, clientId: 'java-member-d', maxRecords: 12 });
      await d.finished();
      for (const member of [c, d]) expect(member.commitFailures, member.describe()).toEqual([]);
      expect(byPartitionInOrder([...c.records, ...d.records]), 'the second lot, from the committed offsets on, each record once').toEqual(expectedLog(second, 4, 10));
      for (let p = 0; p < 4; p++) {
        const resumedAt = d.records.find((r) => r.partition === p)?.offset;
        const committedByC = c.commits.filter((x) => x.partition === p).at(-1)?.offset ?? 10;
        if (resumedAt !== undefined) expect(resumedAt, `partition ${p}: d starts where c's last commit points`).toBe(committedByC);
      }

      const after = await javaAdmin(server.bootstrap, [{ op: 'listConsumerGroupOffsets', group }, { op: 'describeConsumerGroups', groups: [group] }]);
      expect(resultOf(after, 0, 'listConsumerGroupOffsets')).toEqual(Object.fromEntries([0, 1, 2, 3].map((p) => [`${topic}:${p}`, { offset: 15, metadata: '' }])));
      expect(resultOf<Record<string, { state: string; members: unknown[] }>>(after, 1, 'describeConsumerGroups')[group]).toMatchObject({ state: 'EMPTY', members: [] });
    }, 240_000);

    it('KIP-848 (group.protocol=consumer): two members share a topic, the admin client describes a CONSUMER group, a leaver\'s partitions move, a restart resumes at the commits', async () => {
      const topic = uniqueTopic('java-kip848');
      const group = `${topic}-group`;
      await createTopic(server.bootstrap, topic, 4);
            const members = await Promise.all(
        ['java-848-a', 'java-848-b'].map((clientId) => JavaConsumer.start({ bootstrap: server.bootstrap, topics: [topic], groupId: group, clientId, groupProtocol: 'consumer' })),
      );
      const [a, b] = members as [JavaConsumer, JavaConsumer];
      const describeMembers = () => members.map((m) => m.describe()).join('\n');
      const held = (ms: JavaConsumer[]) => ms.flatMap((m) => m.assignment.map((tp) => tp.partition)).sort().join();
      await waitFor(() => a.assignment.length === 2 && b.assignment.length === 2 && held([a, b]) === '0,1,2,3', {
        what: 'two partitions each, all four between them', timeoutMs: 60_000, intervalMs: 50, describe: describeMembers,
      });

      const first: JavaRecord[] = Array.from({ length: 40 }, (_, i) => ({ partition: i % 4, key: null, value: `first-${i}` }));
      expect((await javaProduce(server.bootstrap, topic, first)).failed).toEqual([]);
      await waitFor(() => a.commits.length + b.commits.length >= first.length, { what: 'all 40 records read and committed', timeoutMs: 60_000, intervalMs: 50, describe: describeMembers });
      for (const m of members) expect(m.commitFailures, m.describe()).toEqual([]);
      expect(byPartitionInOrder([...a.records, ...b.records])).toEqual(expectedLog(first, 4));

      const live = await javaAdmin(server.bootstrap, [{ op: 'listConsumerGroups' }, { op: 'describeConsumerGroups', groups: [group] }]);
      expect(resultOf<{ groupId: string; state: string | null }[]>(live, 0, 'listConsumerGroups').find((g) => g.groupId === group)).toMatchObject({ groupId: group, state: 'STABLE' });
      const described = resultOf<Record<string, { state: string; type: string; assignor: string; members: { clientId: string; assignment: TopicPartitionRef[] }[] }>>(live, 1, 'describeConsumerGroups')[group]!;
      expect(described).toMatchObject({ state: 'STABLE', type: 'CONSUMER', assignor: 'uniform' });
      expect(described.members.map((m) => [m.clientId, sortRefs(m.assignment)]).sort()).toEqual([
        ['java-848-a', sortRefs(a.assignment)],
        ['java-848-b', sortRefs(b.assignment)],
      ]);

      // b leaves: a is given b's partitions once b has let them go.
      await b.stop();
      await waitFor(() => held([a]) === '0,1,2,3', { what: "a to hold all four partitions after b left", timeoutMs: 60_000, intervalMs: 50, describe: describeMembers });
      const second: JavaRecord[] = Array.from({ length: 20 }, (_, i) => ({ partition: i % 4, key: null, value: `second-${i}` }));
      expect((await javaProduce(server.bootstrap, topic, second)).failed).toEqual([]);
      await waitFor(() => a.commits.length + b.commits.length >= first.length + second.length, { what: 'the second lot read and committed by a', timeoutMs: 60_000, intervalMs: 50, describe: describeMembers });
      await a.stop();

      // A restart of the group resumes where the commits point: nothing read twice, nothing skipped.
      const third: JavaRecord[] = Array.from({ length: 8 }, (_, i) => ({ partition: i % 4, key: null, value: `third-${i}` }));
      expect((await javaProduce(server.bootstrap, topic, third)).failed).toEqual([]);
      const c = await JavaConsumer.start({ bootstrap: server.bootstrap, topics: [topic], groupId: group, clientId: 'java-848-c', maxRecords: third.length, groupProtocol: 'consumer' });
      await c.finished();
      expect(byPartitionInOrder(c.records)).toEqual(expectedLog(third, 4, 15));
      expect(byPartitionInOrder([...a.records, ...b.records]), 'the first two lots, each record once').toEqual(expectedLog([...first, ...second], 4));
    }, 240_000);

    it('the admin client creates, lists, describes, finds offsets in and deletes topics, and describes the cluster', async () => {
      const topic = uniqueTopic('java-admin');
      const created = await javaAdmin(server.bootstrap, [
        { op: 'createTopics', topics: [{ name: topic, partitions: 3, replicationFactor: 1 }] },
        { op: 'createTopics', topics: [{ name: topic, partitions: 3, replicationFactor: 1 }] },
        { op: 'listTopics' },
        { op: 'describeTopics', topics: [topic] },
        { op: 'describeCluster' },
        { op: 'describeConfigs', topic },
      ]);
      expect(resultOf(created, 0, 'createTopics')).toEqual({ [topic]: { partitions: 3, replicationFactor: 1 } });
      expect(resultOf<Record<string, { error: { type: string } }>>(created, 1, 'createTopics')[topic]!.error.type).toBe('TopicExistsException');
      expect(resultOf<string[]>(created, 2, 'listTopics')).toContain(topic);

      const cluster = resultOf<{ clusterId: string; controller: number; nodes: { id: number; host: string; port: number }[] }>(created, 4, 'describeCluster');
      expect(cluster.nodes).toHaveLength(1);
      const node = cluster.nodes[0]!;
      expect(node).toMatchObject({ host: '127.0.0.1', port: server.port });
      expect(cluster.clusterId).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(cluster.controller).toBe(node.id);

      expect(resultOf(created, 3, 'describeTopics')).toEqual({
        [topic]: {
          internal: false,
          topicIdSet: true,
          partitions: [0, 1, 2].map((partition) => ({ partition, leader: node.id, replicas: [node.id], isr: [node.id] })),
        },
      });
      const configs = resultOf<Record<string, { value: string | null; source: string; readOnly: boolean }>>(created, 5, 'describeConfigs');
      const defaults = { 'cleanup.policy': 'delete', 'max.message.bytes': '1048588', 'message.timestamp.type': 'CreateTime', 'retention.bytes': '-1', 'retention.ms': '604800000' };
      for (const [name, value] of Object.entries(defaults)) {
        expect(configs[name], name).toEqual({ value, source: 'DEFAULT_CONFIG', readOnly: false, sensitive: false });
      }

      const unknownGroup = (await javaAdmin(server.bootstrap, [{ op: 'describeConsumerGroups', groups: [`${topic}-no-such-group`] }]))[0]!;
      if (target.isKafka) {
        expect(unknownGroup.error?.type).toBe('GroupIdNotFoundException');
      } else {
        expect(unknownGroup.result, KNOWN_DIFFERENCES.unknownGroup).toEqual({
          [`${topic}-no-such-group`]: { state: 'DEAD', type: 'CLASSIC', assignor: '', coordinator: node.id, simple: true, members: [] },
        });
      }

      // Partition 0 gets six records an hour apart in the past; partition 1 stays empty.
      const base = Date.now() - 10 * 3_600_000;
      const stamps = Array.from({ length: 6 }, (_, i) => base + i * 3_600_000);
      const produced = await javaProduce(server.bootstrap, topic, stamps.map((timestamp, i) => ({ partition: 0, timestamp, key: null, value: `at-${i}` })));
      expect(produced.failed).toEqual([]);
      const offsets = await javaAdmin(server.bootstrap, [
        { op: 'listOffsets', topic, partitions: [0, 1], spec: 'earliest' },
        { op: 'listOffsets', topic, partitions: [0, 1], spec: 'latest' },
        { op: 'listOffsets', topic, partitions: [0], spec: 'maxTimestamp' },
        { op: 'listOffsets', topic, partitions: [0], spec: `${stamps[2]! - 1}` },
        { op: 'listOffsets', topic, partitions: [0], spec: `${stamps[5]! + 1}` },
      ]);
      expect(resultOf(offsets, 0, 'listOffsets')).toEqual({ 0: { offset: 0, timestamp: -1 }, 1: { offset: 0, timestamp: -1 } });
      expect(resultOf(offsets, 1, 'listOffsets')).toEqual({ 0: { offset: 6, timestamp: -1 }, 1: { offset: 0, timestamp: -1 } });
      expect(resultOf(offsets, 2, 'listOffsets')).toEqual({ 0: { offset: 5, timestamp: stamps[5] } });
      expect(resultOf(offsets, 3, 'listOffsets'), 'the first record at or after a time').toEqual({ 0: { offset: 2, timestamp: stamps[2] } });
      expect(resultOf(offsets, 4, 'listOffsets'), 'a time after every record').toEqual({ 0: { offset: -1, timestamp: -1 } });

      const deleted = await javaAdmin(server.bootstrap, [{ op: 'deleteTopics', topics: [topic] }]);
      expect(resultOf(deleted, 0, 'deleteTopics')).toEqual({ [topic]: { deleted: true } });
      let listing: string[] = [];
      await waitFor(
        async () => {
          listing = resultOf<string[]>(await javaAdmin(server.bootstrap, [{ op: 'listTopics' }]), 0, 'listTopics');
          return !listing.includes(topic);
        },
        { what: `${topic} gone from listTopics`, timeoutMs: 30_000, intervalMs: 200, describe: () => JSON.stringify(listing) },
      );
      const again = await javaAdmin(server.bootstrap, [{ op: 'deleteTopics', topics: [topic] }, { op: 'describeTopics', topics: [topic] }]);
      expect(resultOf<Record<string, { error: { type: string } }>>(again, 0, 'deleteTopics')[topic]!.error.type).toBe('UnknownTopicOrPartitionException');
      expect(again[1]!.error?.type).toBe('UnknownTopicOrPartitionException');
    }, 180_000);
  });
}

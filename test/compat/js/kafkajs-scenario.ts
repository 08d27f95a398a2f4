/**
 * The compatibility matrix's kafkajs scenario (see test/compat/clients.ts for
 * the steps). kafkajs has gzip built in and no other codec without plugins,
 * no KIP-848 and no share groups.
 */
import { CompressionTypes, Kafka, logLevel, type Consumer } from 'kafkajs';
import { args, check, PARTITIONS, PER_CODEC, step, unsupported, waitUntil } from './report.js';

const { bootstrap, prefix } = args();
const kafka = new Kafka({ clientId: prefix, brokers: [bootstrap], logLevel: logLevel.NOTHING });
const admin = kafka.admin();
const topic = `${prefix}-records`;
const group = `${prefix}-group`;
let produced = 0;

await admin.connect();
await step('create-topic', async () => {
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
  const meta = await admin.fetchTopicMetadata({ topics: [topic] });
  check(meta.topics[0]?.partitions.length === PARTITIONS, `metadata shows ${meta.topics[0]?.partitions.length} partitions`);
  return `${PARTITIONS} partitions`;
});

const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
await producer.connect();
for (const [codec, type] of [['none', CompressionTypes.None], ['gzip', CompressionTypes.GZIP]] as const) {
  await step(`produce-${codec}`, async () => {
    const messages = Array.from({ length: PER_CODEC }, (_, i) => ({ key: `k${i}`, value: `${codec}-${i}` }));
    await producer.send({ topic, compression: type, messages, acks: -1 });
    produced += PER_CODEC;
    return `${PER_CODEC} keyed records, idempotent`;
  });
}
for (const codec of ['snappy', 'lz4', 'zstd']) unsupported(`produce-${codec}`, 'kafkajs has no built-in codec for it (needs a plugin)');
await producer.disconnect();

function member(seen: Set<string>, assigned: Map<string, number>, id: string): Consumer {
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 500, rebalanceTimeout: 10_000 });
  consumer.on(consumer.events.GROUP_JOIN, (e) => assigned.set(id, (e.payload.memberAssignment[topic] ?? []).length));
  return consumer;
}
const seen = new Set<string>();
const assigned = new Map<string, number>();
const a = member(seen, assigned, 'a');
const b = member(seen, assigned, 'b');
await step('group-of-two', async () => {
  for (const consumer of [a, b]) {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => {
        seen.add(`${partition}:${message.offset}`);
        await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
      },
    });
  }
  await waitUntil(() => assigned.get('a') === 1 && assigned.get('b') === 1 && seen.size === produced, 60_000, `both members holding one partition and all ${produced} records (saw ${seen.size})`);
  return `${seen.size} records between two members, committed`;
});
await step('member-leaves', async () => {
  await b.disconnect();
  await waitUntil(() => assigned.get('a') === PARTITIONS, 60_000, `the remaining member to hold both partitions (holds ${assigned.get('a')})`);
  return 'the remaining member took both partitions';
});
await step('describe-group', async () => {
  const { groups } = await admin.describeGroups([group]);
  check(groups[0]?.state === 'Stable' && groups[0].members.length === 1, `state ${groups[0]?.state}, ${groups[0]?.members.length} members`);
  const [offsets] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  const committed = (offsets?.partitions ?? []).reduce((sum, p) => sum + Number(p.offset), 0);
  check(committed === produced, `committed offsets add up to ${committed}, not ${produced}`);
  return `Stable, 1 member, committed ${committed}`;
});
await a.disconnect();
await step('list-offsets', async () => {
  const offsets = await admin.fetchTopicOffsets(topic);
  const high = offsets.reduce((sum, p) => sum + Number(p.high), 0);
  const low = offsets.reduce((sum, p) => sum + Number(p.low), 0);
  check(high === produced && low === 0, `earliest ${low}, latest ${high}; expected 0 and ${produced}`);
  return `earliest 0, latest ${high}`;
});

await step('transactions', async () => {
  const txTopic = `${prefix}-tx`;
  await admin.createTopics({ topics: [{ topic: txTopic, numPartitions: 1 }], waitForLeaders: true });
  const tx = kafka.producer({ transactionalId: `${prefix}-tx`, idempotent: true, maxInFlightRequests: 1 });
  await tx.connect();
  for (const [values, commit] of [[['c0', 'c1', 'c2'], true], [['a0', 'a1'], false], [['end'], true]] as const) {
    const t = await tx.transaction();
    await t.send({ topic: txTopic, messages: values.map((value) => ({ key: 'k', value })) });
    await (commit ? t.commit() : t.abort());
  }
  await tx.disconnect();
  const read: string[] = [];
  const reader = kafka.consumer({ groupId: `${prefix}-tx-reader`, readUncommitted: false });
  await reader.connect();
  await reader.subscribe({ topic: txTopic, fromBeginning: true });
  await reader.run({ eachMessage: async ({ message }) => void read.push(String(message.value)) });
  try {
    await waitUntil(() => read.includes('end'), 60_000, `the last committed record (read ${read.join(',')})`);
  } finally {
    await reader.disconnect();
  }
  check(read.join(',') === 'c0,c1,c2,end', `read_committed read ${read.join(',')}`);
  return 'committed read back, aborted skipped (read_committed)';
});
unsupported('kip848', 'kafkajs speaks only the classic group protocol');
unsupported('share-group', 'kafkajs has no share consumer');
await admin.disconnect();

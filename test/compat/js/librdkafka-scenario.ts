/**
 * The compatibility matrix's librdkafka scenario, through
 * @confluentinc/kafka-javascript's KafkaJS-style API (see
 * test/compat/clients.ts for the steps). librdkafka has every codec,
 * transactions and KIP-848; the JavaScript binding has no share consumer.
 */
import KafkaJavascript from '@confluentinc/kafka-javascript';
import { args, check, CODECS, PARTITIONS, PER_CODEC, step, unsupported, waitUntil } from './report.js';

const { Kafka, logLevel } = KafkaJavascript.KafkaJS;
/**
 * The codec by its librdkafka name: the binding's enum is SNAPPY at run time
 * but Snappy in its type declarations (1.10.1), so neither spelling serves both.
 */
type CompressionType = NonNullable<Parameters<InstanceType<typeof Kafka>['producer']>[0]>['kafkaJS'] extends infer K ? (K extends { compression?: infer C } ? C : never) : never;
type Consumer = ReturnType<InstanceType<typeof Kafka>['consumer']>;

const { bootstrap, prefix } = args();
const kafka = new Kafka({ kafkaJS: { brokers: [bootstrap], clientId: prefix, logLevel: logLevel.NOTHING } });
const admin = kafka.admin();
const topic = `${prefix}-records`;
const group = `${prefix}-group`;
let produced = 0;

await admin.connect();
await step('create-topic', async () => {
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }] });
  const meta = await admin.fetchTopicMetadata({ topics: [topic] });
  check(meta[0]?.partitions.length === PARTITIONS, `metadata shows ${meta[0]?.partitions.length} partitions`);
  return `${PARTITIONS} partitions`;
});

for (const codec of CODECS) {
  await step(`produce-${codec}`, async () => {
    const producer = kafka.producer({ kafkaJS: { idempotent: true, maxInFlightRequests: 1, compression: codec as CompressionType, acks: -1 } });
    await producer.connect();
    try {
      await producer.send({ topic, messages: Array.from({ length: PER_CODEC }, (_, i) => ({ key: `k${i}`, value: `${codec}-${i}` })) });
    } finally {
      await producer.disconnect();
    }
    produced += PER_CODEC;
    return `${PER_CODEC} keyed records, idempotent`;
  });
}

/** A member reading the topic and committing each record; `seen` gathers partition:offset. */
async function member(groupId: string, seen: Set<string>, extra: Record<string, unknown> = {}): Promise<Consumer> {
  const consumer = kafka.consumer({ kafkaJS: { groupId, fromBeginning: true, autoCommit: false }, ...extra });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic] });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      seen.add(`${partition}:${message.offset}`);
      await consumer.commitOffsets([{ topic, partition, offset: String(Number(message.offset) + 1) }]);
    },
  });
  return consumer;
}
const held = (consumer: Consumer) => consumer.assignment().filter((p) => p.topic === topic).length;

const seen = new Set<string>();
let a: Consumer | undefined;
let b: Consumer | undefined;
await step('group-of-two', async () => {
  a = await member(group, seen);
  b = await member(group, seen);
  await waitUntil(() => held(a!) === 1 && held(b!) === 1 && seen.size === produced, 60_000, `both members holding one partition and all ${produced} records (saw ${seen.size})`);
  return `${seen.size} records between two members, committed`;
});
await step('member-leaves', async () => {
  check(a !== undefined && b !== undefined, 'the group of two never formed');
  await b!.disconnect();
  await waitUntil(() => held(a!) === PARTITIONS, 60_000, `the remaining member to hold both partitions (holds ${held(a!)})`);
  return 'the remaining member took both partitions';
});
await step('describe-group', async () => {
  const { groups } = await admin.describeGroups([group]);
  const described = groups[0];
  check(described?.state === KafkaJavascript.ConsumerGroupStates.STABLE && described.members.length === 1, `state ${described?.state}, ${described?.members.length} members`);
  const offsets = await admin.fetchOffsets({ groupId: group, topics: [topic] });
  const committed = (offsets[0]?.partitions ?? []).reduce((sum, p) => sum + Number(p.offset), 0);
  check(committed === produced, `committed offsets add up to ${committed}, not ${produced}`);
  return `Stable, 1 member, committed ${committed}`;
});
await a?.disconnect();
await step('list-offsets', async () => {
  const offsets = await admin.fetchTopicOffsets(topic);
  const high = offsets.reduce((sum, p) => sum + Number(p.high), 0);
  const low = offsets.reduce((sum, p) => sum + Number(p.low), 0);
  check(high === produced && low === 0, `earliest ${low}, latest ${high}; expected 0 and ${produced}`);
  return `earliest 0, latest ${high}`;
});

await step('transactions', async () => {
  const txTopic = `${prefix}-tx`;
  await admin.createTopics({ topics: [{ topic: txTopic, numPartitions: 1 }] });
  const tx = kafka.producer({ kafkaJS: { transactionalId: `${prefix}-tx`, idempotent: true, maxInFlightRequests: 1 } });
  await tx.connect();
  for (const [values, commit] of [[['c0', 'c1', 'c2'], true], [['a0', 'a1'], false], [['end'], true]] as const) {
    const t = await tx.transaction();
    await t.send({ topic: txTopic, messages: values.map((value) => ({ key: 'k', value })) });
    await (commit ? t.commit() : t.abort());
  }
  await tx.disconnect();
  const read: string[] = [];
  const reader = kafka.consumer({ kafkaJS: { groupId: `${prefix}-tx-reader`, fromBeginning: true } });
  await reader.connect();
  await reader.subscribe({ topics: [txTopic] });
  await reader.run({ eachMessage: async ({ message }) => void read.push(String(message.value)) });
  try {
    await waitUntil(() => read.includes('end'), 60_000, `the last committed record (read ${read.join(',')})`);
  } finally {
    await reader.disconnect();
  }
  check(read.join(',') === 'c0,c1,c2,end', `read_committed read ${read.join(',')}`);
  return 'committed read back, aborted skipped (read_committed)';
});

await step('kip848', async () => {
  const got = new Set<string>();
  const consumer = await member(`${prefix}-kip848`, got, { 'group.protocol': 'consumer' });
  try {
    await waitUntil(() => got.size === produced, 60_000, `all ${produced} records through a group.protocol=consumer member (saw ${got.size})`);
  } finally {
    await consumer.disconnect();
  }
  return `${got.size} records, group.protocol=consumer`;
});
unsupported('share-group', 'the JavaScript binding has no share consumer');
await admin.disconnect();

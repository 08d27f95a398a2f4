/**
 * One benchmark client in its own process: a librdkafka
 * (@confluentinc/kafka-javascript) or kafkajs producer or consumer, told what
 * to do by a JSON argument (ClientJob) and answering with JSON lines on
 * stdout: `{"progress":n}` while it runs, `{"ready":true}` once a latency
 * consumer has its partitions, and `{"result":…}` at the end.
 *
 * Client settings, as applications commonly run them (and stated in
 * docs/bench/README.md):
 * - librdkafka producer: acks=all, linger.ms=5, batch.size=1,000,000,
 *   batch.num.messages=10,000 (librdkafka's defaults), no compression, no
 *   idempotence; records spread round-robin over the partitions. Delivery
 *   reports for failures only: a report per record is a JavaScript event in
 *   the binding, and at 100,000 records/s those events, not the broker, set
 *   the pace (acknowledgements arrived seconds before their reports did).
 *   Acknowledged records are counted from librdkafka's own statistics every
 *   100 ms instead: records written to requests minus those still in
 *   requests not yet answered, over librdkafka's clock.
 * - kafkajs producer: acks=-1, send() of 500 records at a time with up to 4
 *   sends in flight (kafkajs has no linger; applications batch by hand).
 * - consumers: a consumer group (subscribe), librdkafka's and kafkajs's
 *   default fetch settings.
 * For digging into one figure: BENCH_PRODUCER_CONFIG / BENCH_CONSUMER_CONFIG
 * (JSON) add librdkafka settings, e.g. '{"linger.ms":0}', and BENCH_DEBUG=1
 * writes the consumer's librdkafka log (with '{"debug":"fetch"}') to stderr.
 * Latency: the value's first 8 bytes are the send time (performance.timeOrigin
 * + performance.now(), a wall-clock reading with sub-millisecond precision
 * that agrees across processes on one host); the consumer subtracts it from
 * its own reading when the record reaches the application.
 */
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type { ConsumerGlobalConfig, LibrdKafkaError, Message, ProducerGlobalConfig } from '@confluentinc/kafka-javascript';
import kafkajs from 'kafkajs';
import { setTimeout as sleep } from 'node:timers/promises';
import { perfConsume, perfProduce } from './perf-tools.js';
import { FLAT_OUT_PRODUCER } from '../flat-out-producer.js';

const { Producer, KafkaConsumer, CODES } = KafkaJavascript;
const { Kafka, logLevel } = kafkajs;

/** perftest: Apache Kafka's own kafka-producer-perf-test and kafka-consumer-perf-test (./perf-tools.ts), produce and consume only. */
export type ClientName = 'rdkafka' | 'kafkajs' | 'perftest';

export type ClientJob =
  /** As fast as the client goes for `seconds`; the first `warmupSeconds` are not counted. */
  | { role: 'produce'; client: ClientName; bootstrap: string; topic: string; partitions: number; recordBytes: number; seconds: number; warmupSeconds: number; kafkaLibs?: string }
  /** Reads from the start (or the end) of the topic in a new group until `count` records or `seconds` after the first. */
  | { role: 'consume'; client: ClientName; bootstrap: string; topic: string; count: number; seconds: number; timeoutSeconds: number; from?: 'earliest' | 'latest'; kafkaLibs?: string; members?: number }
  /** Sends `rate` records/s for `seconds`, each stamped with its send time; those of the first `warmupSeconds` are marked unmeasured. */
  | { role: 'pace'; client: ClientName; bootstrap: string; topic: string; partitions: number; recordBytes: number; seconds: number; warmupSeconds: number; rate: number }
  /** Reads stamped records and reports latency percentiles of the measured ones; ends once idle for `idleSeconds`. */
  | { role: 'latency'; client: ClientName; bootstrap: string; topic: string; timeoutSeconds: number; idleSeconds: number };

export interface ProduceResult { acked: number; counted: number; seconds: number; recordsPerSecond: number; failed: number }
export interface ConsumeResult {
  records: number;
  seconds: number;
  recordsPerSecond: number;
  firstRecordAfterMs: number;
  /** With several members in the group: how many, and when the last of them first had its (possibly empty) assignment. */
  members?: number;
  allAssignedAfterMs?: number;
}
export interface PaceResult { sent: number; acked: number; failed: number; seconds: number; achievedRate: number }
export interface LatencyResult { measured: number; p50: number; p99: number; p999: number; max: number }

const now = () => performance.timeOrigin + performance.now();
const STATS_INTERVAL_MS = 100;
const RDKAFKA_BASE = { 'client.id': 'queen-bench', 'log_level': 3 };
const RDKAFKA_PRODUCER = { ...FLAT_OUT_PRODUCER, 'enable.idempotence': false, 'statistics.interval.ms': STATS_INTERVAL_MS };
/** Byte 8 of a paced record's value: 1 once the warm-up is over. */
const MEASURED_FLAG = 8;
const KAFKAJS_SEND_SIZE = 500;
const KAFKAJS_SENDS_IN_FLIGHT = 4;

/**
 * The binding's connect() asks Metadata for every topic unless told a topic;
 * applications name theirs, and so do we (the gateway's all-topics Metadata
 * v12 decode is being fixed elsewhere).
 */
function connectScope(topic: string) {
  return { topic, allTopics: false, timeout: 20_000 };
}

function emit(message: object): void {
  process.stdout.write(JSON.stringify(message) + '\n');
}

function fillValue(bytes: number): Buffer {
  const value = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) value[i] = 97 + (i % 26);
  return value;
}

/** A sender both clients implement: queue one record; a promise when the client wants the caller to wait. */
interface Sender {
  send(partition: number, value: Buffer): Promise<void> | null;
  acked(): number;
  /** Acknowledged records and the client's clock (ms) when they were counted. */
  snapshot(): { acked: number; atMs: number };
  failed(): number;
  flush(): Promise<void>;
  close(): Promise<void>;
}

async function rdkafkaSender(bootstrap: string, topic: string): Promise<Sender> {
  const producer = new Producer({ ...RDKAFKA_BASE, ...RDKAFKA_PRODUCER, 'bootstrap.servers': bootstrap, ...JSON.parse(process.env['BENCH_PRODUCER_CONFIG'] ?? '{}') } as unknown as ProducerGlobalConfig);
  let failed = 0;
  let latest = { acked: 0, atMs: 0 };
  let nextStats: (() => void)[] = [];
  producer.on('delivery-report', (err: LibrdKafkaError | null) => void (err && failed++));
  producer.on('event.stats', ({ message }: { message: string }) => {
    const stats = JSON.parse(message) as { ts: number; txmsgs: number; brokers: Record<string, { outbuf_msg_cnt: number; waitresp_msg_cnt: number }> };
    const unanswered = Object.values(stats.brokers).reduce((n, b) => n + b.outbuf_msg_cnt + b.waitresp_msg_cnt, 0);
    latest = { acked: stats.txmsgs - unanswered - failed, atMs: stats.ts / 1000 };
    const waiting = nextStats;
    nextStats = [];
    for (const resolve of waiting) resolve();
  });
  const statsTick = () => new Promise<void>((resolve) => nextStats.push(resolve));
  await new Promise<void>((resolve, reject) => producer.connect(connectScope(topic), (err) => (err ? reject(err) : resolve())));
  producer.setPollInterval(5);
  return {
    send(partition, value) {
      try {
        producer.produce(topic, partition, value, null, Date.now());
        return null;
      } catch (e) {
        if ((e as { code?: number }).code !== CODES.ERRORS.ERR__QUEUE_FULL) throw e;
        producer.poll();
        return sleep(1);
      }
    },
    acked: () => latest.acked,
    snapshot: () => latest,
    failed: () => failed,
    async flush() {
      await new Promise<void>((resolve) => producer.flush(30_000, () => resolve()));
      // Statistics taken after the flush count every acknowledgement.
      await statsTick();
      await statsTick();
    },
    close: () => new Promise<void>((resolve) => producer.disconnect(10_000, () => resolve())),
  };
}

async function kafkajsSender(bootstrap: string, topic: string): Promise<Sender> {
  const kafka = new Kafka({ clientId: 'queen-bench', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  // The mock creates topics only when asked for them in Metadata (auto-create).
  const producer = kafka.producer({ allowAutoTopicCreation: true });
  await producer.connect();
  let acked = 0;
  let failed = 0;
  let pending: { partition: number; value: Buffer }[] = [];
  const inFlight = new Set<Promise<void>>();
  const sendPending = () => {
    const messages = pending;
    pending = [];
    const sent = producer.send({ topic, acks: -1, messages }).then(
      () => void (acked += messages.length),
      () => void (failed += messages.length),
    );
    inFlight.add(sent);
    void sent.finally(() => inFlight.delete(sent));
  };
  return {
    send(partition, value) {
      pending.push({ partition, value });
      if (pending.length < KAFKAJS_SEND_SIZE) return null;
      sendPending();
      return inFlight.size >= KAFKAJS_SENDS_IN_FLIGHT ? Promise.race(inFlight) : null;
    },
    acked: () => acked,
    snapshot: () => ({ acked, atMs: now() }),
    failed: () => failed,
    async flush() {
      if (pending.length > 0) sendPending();
      await Promise.all(inFlight);
    },
    close: () => producer.disconnect(),
  };
}

const senders = { rdkafka: rdkafkaSender, kafkajs: kafkajsSender };

const PERF_TOOLS_ROLES = 'the perftest client (Kafka\'s perf tools) only produces and consumes flat out: it has no paced producer and no latency reader';

/** The folder of Apache Kafka's jars, which the perf tools need (the runner passes it). */
function kafkaLibsOf(job: { kafkaLibs?: string }): string {
  if (!job.kafkaLibs) throw new Error('the perftest client needs kafkaLibs, the folder of Apache Kafka\'s jars (scripts/apache-kafka-fetch.sh prints it)');
  return job.kafkaLibs;
}

function senderOf(client: ClientName): (bootstrap: string, topic: string) => Promise<Sender> {
  if (client === 'perftest') throw new Error(PERF_TOOLS_ROLES);
  return senders[client];
}

async function runProduce(job: Extract<ClientJob, { role: 'produce' }>): Promise<ProduceResult> {
  if (job.client === 'perftest') return perfProduce({ ...job, libs: kafkaLibsOf(job) }, emit);
  const sender = await senderOf(job.client)(job.bootstrap, job.topic);
  const value = fillValue(job.recordBytes);
  const started = now();
  const countFrom = started + job.warmupSeconds * 1000;
  const deadline = started + job.seconds * 1000;
  let first: { acked: number; atMs: number } | null = null;
  let sent = 0;
  let lastProgress = started;
  while (now() < deadline) {
    for (let i = 0; i < 256; i++) {
      const wait = sender.send(sent % job.partitions, value);
      if (wait) {
        await wait;
        break;
      }
      sent++;
    }
    const t = now();
    if (first === null && t >= countFrom) {
      first = sender.snapshot();
      emit({ window: 'start' });
    }
    if (t - lastProgress > 250) {
      lastProgress = t;
      emit({ progress: sender.acked() });
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  const last = sender.snapshot();
  emit({ window: 'end' });
  // Both ends are counts the client took itself, on its own clock (librdkafka: its statistics).
  const start = first ?? { acked: 0, atMs: last.atMs - job.seconds * 1000 };
  const counted = last.acked - start.acked;
  const seconds = (last.atMs - start.atMs) / 1000;
  await sender.flush();
  const result = { acked: sender.acked(), counted, seconds, recordsPerSecond: counted / seconds, failed: sender.failed() };
  await sender.close();
  return result;
}

async function runPace(job: Extract<ClientJob, { role: 'pace' }>): Promise<PaceResult> {
  const sender = await senderOf(job.client)(job.bootstrap, job.topic);
  const started = now();
  const deadline = started + job.seconds * 1000;
  const measureFrom = started + job.warmupSeconds * 1000;
  let measuring = false;
  let sent = 0;
  let lastProgress = started;
  for (let t = now(); t < deadline; t = now()) {
    const due = Math.floor(((t - started) / 1000) * job.rate);
    while (sent < due) {
      const value = Buffer.allocUnsafe(job.recordBytes);
      const sentAt = now();
      value.fill(97, 9);
      value.writeDoubleBE(sentAt, 0);
      if (!measuring && sentAt >= measureFrom) {
        measuring = true;
        emit({ window: 'start' });
      }
      value[MEASURED_FLAG] = measuring ? 1 : 0;
      const wait = sender.send(sent % job.partitions, value);
      if (wait) await wait;
      else sent++;
    }
    if (t - lastProgress > 250) {
      lastProgress = t;
      emit({ progress: sent });
    }
    await sleep(1);
  }
  const seconds = (now() - started) / 1000;
  emit({ window: 'end' });
  await sender.flush();
  const result = { sent, acked: sender.acked(), failed: sender.failed(), seconds, achievedRate: sent / seconds };
  await sender.close();
  return result;
}

/** A consumer both clients implement: calls `onRecords` with each delivered value batch until stopped. */
interface Reader {
  start(onRecords: (values: Buffer[], at: number) => void): void;
  close(): Promise<void>;
}

const newGroupId = () => `queen-bench-${process.pid}-${Date.now().toString(36)}`;

async function rdkafkaReader(bootstrap: string, topic: string, onAssigned: () => void, from: 'earliest' | 'latest', groupId = newGroupId()): Promise<Reader> {
  const consumer = new KafkaConsumer({
    ...RDKAFKA_BASE,
    'bootstrap.servers': bootstrap,
    'group.id': groupId,
    'rebalance_cb': true,
    ...JSON.parse(process.env['BENCH_CONSUMER_CONFIG'] ?? '{}'),
  } as unknown as ConsumerGlobalConfig, { 'auto.offset.reset': from });
  consumer.on('rebalance', (err: LibrdKafkaError) => {
    if (process.env['BENCH_DEBUG']) process.stderr.write(`rebalance ${err.code}\n`);
    if (err.code === CODES.ERRORS.ERR__ASSIGN_PARTITIONS) onAssigned();
  });
  consumer.on('event.log', (log: { message: string }) => {
    if (process.env['BENCH_DEBUG']) process.stderr.write(`${(now() % 100000).toFixed(1)} ${log.message}\n`);
  });
  consumer.on('event.error', (err: LibrdKafkaError) => {
    if (process.env['BENCH_DEBUG']) process.stderr.write(`consumer error ${err.message}\n`);
  });
  await new Promise<void>((resolve, reject) => consumer.connect(connectScope(topic), (err) => (err ? reject(err) : resolve())));
  consumer.setDefaultConsumeTimeout(200);
  // Wait for the first record only, then hand over what is there: records reach the application as they arrive.
  (consumer as unknown as { setDefaultIsTimeoutOnlyForFirstMessage(only: boolean): void }).setDefaultIsTimeoutOnlyForFirstMessage(true);
  let stopped = false;
  return {
    start(onRecords) {
      consumer.subscribe([topic]);
      const loop = () => {
        if (stopped) return;
        consumer.consume(10_000, (err, messages: Message[]) => {
          if (stopped) return;
          if (err && process.env['BENCH_DEBUG']) process.stderr.write(`consume ${err.message}\n`);
          const at = now();
          if (!err && messages.length > 0) onRecords(messages.map((m) => m.value as Buffer), at);
          setImmediate(loop);
        });
      };
      loop();
    },
    close: () => {
      stopped = true;
      return new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
    },
  };
}

async function kafkajsReader(bootstrap: string, topic: string, onAssigned: () => void, from: 'earliest' | 'latest', groupId = newGroupId()): Promise<Reader> {
  const kafka = new Kafka({ clientId: 'queen-bench', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId });
  consumer.on(consumer.events.GROUP_JOIN, () => onAssigned());
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: from === 'earliest' });
  return {
    start(onRecords) {
      void consumer.run({
        eachBatch: async ({ batch }) => {
          onRecords(batch.messages.map((m) => m.value as Buffer), now());
        },
      });
    },
    close: () => consumer.disconnect(),
  };
}

const readers = { rdkafka: rdkafkaReader, kafkajs: kafkajsReader };

function readerOf(client: ClientName): typeof rdkafkaReader {
  if (client === 'perftest') throw new Error(PERF_TOOLS_ROLES);
  return readers[client];
}

async function runConsume(job: Extract<ClientJob, { role: 'consume' }>): Promise<ConsumeResult> {
  if (job.client === 'perftest') return perfConsume({ ...job, libs: kafkaLibsOf(job), from: job.from ?? 'earliest' }, emit);
  const started = now();
  const group = await groupOf(job, started);
  const reader = group.reader;
  let records = 0;
  let firstBatch = 0;
  let first = 0;
  let last = 0;
  let lastProgress = started;
  let ended = 0;
  await new Promise<void>((resolve, reject) => {
    let window: NodeJS.Timeout | undefined;
    const finish = () => {
      ended = now();
      clearTimeout(timer);
      clearTimeout(window);
      emit({ window: 'end' });
      resolve();
    };
    // Nothing at all by the deadline is a failure; a slow reader is a figure.
    const timer = setTimeout(() => (records > 0 ? finish() : reject(new Error(`read nothing from ${job.topic} in ${job.timeoutSeconds} s`))), job.timeoutSeconds * 1000);
    reader.start((values, at) => {
      if (records === 0) {
        first = at;
        firstBatch = values.length;
        emit({ window: 'start' });
        // The phase ends `seconds` after the first delivery, whether records keep coming or not.
        window = setTimeout(finish, job.seconds * 1000);
      }
      records += values.length;
      last = at;
      if (at - lastProgress > 250) {
        lastProgress = at;
        emit({ progress: records });
      }
      if (records >= job.count) finish();
    });
  });
  await reader.close();
  // The first delivery starts the clock (group join and the first fetch are not throughput), so its records are not counted.
  const seconds = Math.max((records >= job.count ? last : ended) - first, 1) / 1000;
  return { records, seconds, recordsPerSecond: (records - firstBatch) / seconds, firstRecordAfterMs: first - started, ...group.figures() };
}

/**
 * The consume phase's reader: one consumer, or `members` consumers of one
 * group in this process (each with a worker of libuv's pool, which a
 * waiting consume call holds), started together and read as one.
 */
async function groupOf(job: Extract<ClientJob, { role: 'consume' }>, started: number): Promise<{ reader: Reader; figures(): Partial<ConsumeResult> }> {
  const members = job.members ?? 1;
  const from = job.from ?? 'earliest';
  if (members === 1) return { reader: await readerOf(job.client)(job.bootstrap, job.topic, () => emit({ ready: true }), from), figures: () => ({}) };
  const groupId = newGroupId();
  const assigned = new Set<number>();
  let allAssignedAt = 0;
  const readers = await Promise.all(
    Array.from({ length: members }, (_, i) =>
      readerOf(job.client)(job.bootstrap, job.topic, () => {
        assigned.add(i);
        if (assigned.size === members && allAssignedAt === 0) {
          allAssignedAt = now();
          emit({ ready: true });
        }
      }, from, groupId),
    ),
  );
  return {
    reader: {
      start: (onRecords) => readers.forEach((r) => r.start(onRecords)),
      close: async () => void (await Promise.all(readers.map((r) => r.close()))),
    },
    figures: () => ({ members, allAssignedAfterMs: allAssignedAt > 0 ? allAssignedAt - started : undefined }),
  };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function runLatency(job: Extract<ClientJob, { role: 'latency' }>): Promise<LatencyResult> {
  let latencies = new Float64Array(1 << 16);
  let measured = 0;
  let lastRecordAt = 0;
  // From the end: the throughput phase's records are already in the topic and are not measured.
  const reader = await readerOf(job.client)(job.bootstrap, job.topic, () => emit({ ready: true }), 'latest');
  await new Promise<void>((resolve) => {
    const hardStop = setTimeout(resolve, job.timeoutSeconds * 1000);
    const idle = setInterval(() => {
      if (lastRecordAt > 0 && now() - lastRecordAt > job.idleSeconds * 1000) {
        clearTimeout(hardStop);
        clearInterval(idle);
        resolve();
      }
    }, 100);
    reader.start((values, at) => {
      lastRecordAt = at;
      for (const value of values) {
        if (value[MEASURED_FLAG] !== 1) continue;
        const sentAt = value.readDoubleBE(0);
        if (measured === latencies.length) {
          const grown = new Float64Array(latencies.length * 2);
          grown.set(latencies);
          latencies = grown;
        }
        latencies[measured++] = at - sentAt;
      }
    });
  });
  await reader.close();
  const sorted = latencies.subarray(0, measured).sort();
  return { measured, p50: percentile(sorted, 50), p99: percentile(sorted, 99), p999: percentile(sorted, 99.9), max: percentile(sorted, 100) };
}

const job = JSON.parse(process.argv[2] ?? '{}') as ClientJob;
const roles = { produce: runProduce, consume: runConsume, pace: runPace, latency: runLatency } as const;
try {
  const result = await (roles[job.role] as (job: ClientJob) => Promise<object>)(job);
  emit({ result });
  process.exit(0);
} catch (e) {
  process.stderr.write(`${job.client} ${job.role}: ${(e as Error).message}\n`);
  process.exit(1);
}

/**
 * Data-plane scenarios: produce and fetch (offsets, watermarks, log start,
 * timestamps, headers, every codec, LogAppendTime), records above
 * max.message.bytes, unknown topics with and without auto-create, fetching
 * out of range, ListOffsets by every spec. Each drives real clients (kafkajs,
 * librdkafka) where they can express the step, and raw requests built by the
 * project's protocol layer to see the exact fields.
 */
import type { Admin, Kafka } from 'kafkajs';
import kafkajs from 'kafkajs';
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { buildBatch } from '../../../protocol/records/record-batch.js';
import { kafkajsClient, registerKafkajsCodecs, toKafkajsHeaders } from '../../support/kafkajs.js';
import { adminCall, connectProducer, createAdmin, disconnect, produceAll, readRecords } from '../../support/rdkafka.js';
import type { SentRecord } from '../../support/records.js';
import { code, type Normaliser, type Scenario, type ScenarioContext } from '../harness.js';
import { awaitLed, EARLIEST, LATEST, MAX_TIMESTAMP, outcome, produceAnswer, rawFetch, rawListOffsets, rawProduce, V, withRaw } from '../observe.js';

const { CompressionTypes } = kafkajs;
registerKafkajsCodecs();

const T0 = Date.UTC(2024, 4, 6, 7, 8, 9);

async function withAdmin<T>(kafka: Kafka, body: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return await body(admin);
  } finally {
    await admin.disconnect();
  }
}

function client(ctx: ScenarioContext, retries = 5): Kafka {
  return kafkajsClient(ctx.target.bootstrap, { retries, clientId: 'queen-diff' });
}

/**
 * A kafkajs producer for the scenarios that produce successfully: idempotent,
 * so that a retry after a slow first answer (a JVM warming up) cannot store a
 * record twice on one broker and not the other.
 */
async function kafkajsProducer(ctx: ScenarioContext) {
  const producer = client(ctx).producer({ allowAutoTopicCreation: false, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return producer;
}

async function createTopic(ctx: ScenarioContext, topic: string, partitions: number, configs: Record<string, string> = {}): Promise<void> {
  await withAdmin(client(ctx), async (admin) => {
    await admin.createTopics({
      waitForLeaders: true,
      topics: [{ topic, numPartitions: partitions, replicationFactor: 1, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) }],
    });
  });
  await withRaw(ctx, (raw) => awaitLed(raw, topic, partitions));
}

/** Records with keys (one null), repeated and empty-valued headers, and distinct producer timestamps. */
function records(label: string, partitions: number, perPartition: number): SentRecord[] {
  const out: SentRecord[] = [];
  for (let i = 0; i < perPartition; i++) {
    for (let p = 0; p < partitions; p++) {
      out.push({
        partition: p,
        key: i === 1 ? null : `${label}-k${p}-${i}`,
        value: `${label}:${p}:${i}:${'v'.repeat(10 + i)}`,
        headers: [['seq', String(i)], ['dup', 'a'], ['dup', 'b'], ['empty', '']],
        timestamp: T0 + 1000 * i + p,
      });
    }
  }
  return out;
}

async function fetchAll(ctx: ScenarioContext, topic: string, partitions: number, n: Normaliser): Promise<unknown[]> {
  return withRaw(ctx, async (raw) => {
    const out: unknown[] = [];
    for (let p = 0; p < partitions; p++) out.push(await rawFetch(raw, topic, { partition: p, offset: 0 }, n));
    return out;
  });
}

async function watermarks(ctx: ScenarioContext, topic: string, partitions: number): Promise<unknown[]> {
  return withAdmin(client(ctx), async (admin) => {
    const offsets = await admin.fetchTopicOffsets(topic);
    return offsets.sort((a, b) => a.partition - b.partition).filter((o) => o.partition < partitions);
  });
}

async function readBack(ctx: ScenarioContext, topic: string, partitions: number, count: number, n: Normaliser, logAppendTime = false) {
  const read = await readRecords(ctx.target.bootstrap, topic, { partitions: [...Array(partitions).keys()], count, timeoutMs: 30_000 });
  return read
    .sort((a, b) => a.partition - b.partition || a.offset - b.offset)
    .map((r) => ({ ...r, timestamp: logAppendTime ? n.serverTime(r.timestamp) : r.timestamp }));
}

// ─── Produce and fetch ───────────────────────────────────────────────────────

const produceKafkajs: Scenario = {
  name: 'produce and fetch, kafkajs producer',
  async run(ctx) {
    const topic = 'diff-produce-kafkajs';
    await createTopic(ctx, topic, 2);
    const sent = records('kjs', 2, 3);
    const producer = await kafkajsProducer(ctx);
    const sends: unknown[] = [];
    try {
      // Two sends: the second's base offsets show where the first ended.
      for (const part of [sent.slice(0, 2), sent.slice(2)]) {
        const result = await producer.send({
          topic,
          acks: -1,
          messages: part.map((r) => ({ partition: r.partition, key: r.key, value: r.value, headers: toKafkajsHeaders(r.headers), timestamp: String(r.timestamp) })),
        });
        sends.push(result.map((m) => ({ ...m, logAppendTime: ctx.normalise.serverTime(Number(m.logAppendTime)) })).sort((a, b) => a.partition - b.partition));
      }
    } finally {
      await producer.disconnect();
    }
    return {
      sends,
      fetched: await fetchAll(ctx, topic, 2, ctx.normalise),
      read: await readBack(ctx, topic, 2, sent.length, ctx.normalise),
      watermarks: await watermarks(ctx, topic, 2),
    };
  },
};

const produceLibrdkafka: Scenario = {
  name: 'produce and fetch, librdkafka producer',
  async run(ctx) {
    const topic = 'diff-produce-rdkafka';
    await createTopic(ctx, topic, 2);
    const sent = records('rdk', 2, 4);
    const producer = await connectProducer(ctx.target.bootstrap, { 'linger.ms': 50, 'enable.idempotence': true }, topic);
    let deliveries;
    try {
      deliveries = await produceAll(producer, topic, sent);
    } finally {
      await disconnect(producer);
    }
    return {
      deliveries: deliveries.map((d) => ({ partition: d.partition, offset: d.offset, error: d.error?.code ?? null })),
      fetched: await fetchAll(ctx, topic, 2, ctx.normalise),
      // A fetch from the middle of a batch answers from the batch's start: the client skips what it did not ask for.
      fetchedFromMiddle: await withRaw(ctx, (raw) => rawFetch(raw, topic, { partition: 0, offset: 2 }, ctx.normalise)),
      read: await readBack(ctx, topic, 2, sent.length, ctx.normalise),
      watermarks: await watermarks(ctx, topic, 2),
    };
  },
};

const KAFKAJS_CODECS = {
  none: CompressionTypes.None,
  gzip: CompressionTypes.GZIP,
  snappy: CompressionTypes.Snappy,
  lz4: CompressionTypes.LZ4,
  zstd: CompressionTypes.ZSTD,
} as const;

function codecScenario(codec: keyof typeof KAFKAJS_CODECS): Scenario {
  return {
    name: `codec ${codec}`,
    async run(ctx) {
      const topic = `diff-codec-${codec}`;
      await createTopic(ctx, topic, 1);
      const sent = records(codec, 1, 5);
      // librdkafka first, then kafkajs, into the one partition.
      const producer = await connectProducer(ctx.target.bootstrap, { 'compression.codec': codec, 'linger.ms': 100, 'enable.idempotence': true }, topic);
      let deliveries;
      try {
        deliveries = await produceAll(producer, topic, sent);
      } finally {
        await disconnect(producer);
      }
      const kp = await kafkajsProducer(ctx);
      let sendResult;
      try {
        sendResult = await kp.send({
          topic,
          acks: -1,
          compression: KAFKAJS_CODECS[codec],
          messages: sent.map((r) => ({ partition: 0, key: r.key, value: `kafkajs-${r.value}`, headers: toKafkajsHeaders(r.headers), timestamp: String(r.timestamp) })),
        });
      } finally {
        await kp.disconnect();
      }
      return {
        deliveries: deliveries.map((d) => ({ partition: d.partition, offset: d.offset, error: d.error?.code ?? null })),
        kafkajsSend: sendResult.map((m) => ({ ...m, logAppendTime: ctx.normalise.serverTime(Number(m.logAppendTime)) })),
        fetched: await fetchAll(ctx, topic, 1, ctx.normalise),
        read: await readBack(ctx, topic, 1, sent.length * 2, ctx.normalise),
      };
    },
  };
}

const logAppendTime: Scenario = {
  name: 'LogAppendTime topic',
  async run(ctx) {
    const topic = 'diff-log-append-time';
    await createTopic(ctx, topic, 1, { 'message.timestamp.type': 'LogAppendTime' });
    const sent = records('lat', 1, 3);
    const producer = await kafkajsProducer(ctx);
    let result;
    try {
      result = await producer.send({
        topic,
        acks: -1,
        messages: sent.map((r) => ({ partition: 0, key: r.key, value: r.value, headers: toKafkajsHeaders(r.headers), timestamp: String(r.timestamp) })),
      });
    } finally {
      await producer.disconnect();
    }
    const raw = await withRaw(ctx, async (raw) => {
      const batch = buildBatch({ records: [{ key: 'raw', value: 'raw-value', timestamp: T0 }] });
      return produceAnswer(await rawProduce(raw, topic, 0, batch), ctx.normalise);
    });
    return {
      kafkajsSend: result.map((m) => ({ ...m, logAppendTime: ctx.normalise.serverTime(Number(m.logAppendTime)) })),
      rawProduce: raw,
      fetched: await fetchAll(ctx, topic, 1, ctx.normalise),
      read: await readBack(ctx, topic, 1, sent.length + 1, ctx.normalise, true),
      listOffsetsMaxTimestamp: await withRaw(ctx, async (raw) => {
        const found = await rawListOffsets(raw, topic, 0, MAX_TIMESTAMP);
        return { ...found, timestamp: ctx.normalise.serverTime(found.timestamp) };
      }),
    };
  },
};

// ─── Records too large ───────────────────────────────────────────────────────

const recordTooLarge: Scenario = {
  name: 'record above max.message.bytes',
  async run(ctx) {
    const topic = 'diff-too-large';
    await createTopic(ctx, topic, 1, { 'max.message.bytes': '1024' });
    const big = 'x'.repeat(2000);
    const raw = await withRaw(ctx, async (raw) => ({
      oneBigRecord: produceAnswer(await rawProduce(raw, topic, 0, buildBatch({ records: [{ value: big, timestamp: T0 }] })), ctx.normalise),
      // Two small batches in one partition's records, the second too large: all or nothing.
      smallThenBig: produceAnswer(
        await rawProduce(raw, topic, 0, Buffer.concat([buildBatch({ records: [{ value: 'small', timestamp: T0 }] }), buildBatch({ records: [{ value: big, timestamp: T0 }] })])),
        ctx.normalise,
      ),
      fitting: produceAnswer(await rawProduce(raw, topic, 0, buildBatch({ records: [{ value: 'fits', timestamp: T0 }] })), ctx.normalise),
    }));
    const kafka = client(ctx, 1);
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const kafkajsSend = await outcome(() => producer.send({ topic, acks: -1, messages: [{ partition: 0, value: big }] }));
    await producer.disconnect();
    const rdProducer = await connectProducer(ctx.target.bootstrap, { 'enable.idempotence': false, 'message.send.max.retries': 0 }, topic);
    let deliveries;
    try {
      deliveries = await produceAll(rdProducer, topic, [{ partition: 0, key: null, value: big, headers: [], timestamp: T0 }]);
    } finally {
      await disconnect(rdProducer);
    }
    return {
      raw,
      kafkajsSend: 'ok' in kafkajsSend ? { ok: true } : kafkajsSend,
      librdkafka: deliveries.map((d) => ({ error: d.error?.code ?? null })),
      watermarks: await watermarks(ctx, topic, 1),
    };
  },
};

// ─── Compacted topics ────────────────────────────────────────────────────────

const keylessOnCompacted: Scenario = {
  name: 'record without a key on a compacted topic',
  async run(ctx) {
    const topic = 'diff-compacted-keyless';
    await createTopic(ctx, topic, 1, { 'cleanup.policy': 'compact' });
    const raw = await withRaw(ctx, async (raw) => ({
      keylessSecond: produceAnswer(await rawProduce(raw, topic, 0, buildBatch({ records: [{ key: 'k', value: 'a', timestamp: T0 }, { key: null, value: 'b', timestamp: T0 }] })), ctx.normalise),
      keyed: produceAnswer(await rawProduce(raw, topic, 0, buildBatch({ records: [{ key: 'k', value: 'c', timestamp: T0 }, { key: 'k', value: null, timestamp: T0 }] })), ctx.normalise),
    }));
    return { raw, fetched: await fetchAll(ctx, topic, 1, ctx.normalise), watermarks: await watermarks(ctx, topic, 1) };
  },
};

// ─── Unknown topics ──────────────────────────────────────────────────────────

async function rawMetadataFor(ctx: ScenarioContext, topic: string, allowAutoTopicCreation: boolean) {
  return withRaw(ctx, async (raw) => {
    const answer = await raw.request(ApiKey.Metadata, V.metadata, {
      topics: [{ topicId: '00000000-0000-0000-0000-000000000000', name: topic }],
      allowAutoTopicCreation,
      includeTopicAuthorizedOperations: false,
    });
    const t = (answer.topics as Message[])[0]!;
    return { error: code(t.errorCode), name: t.name, topicId: ctx.normalise.uuid(t.topicId), partitions: (t.partitions as unknown[]).length };
  });
}

const unknownTopicNoCreate: Scenario = {
  name: 'unknown topic, auto-create not allowed',
  async run(ctx) {
    const topic = 'diff-unknown-no-create';
    const metadata = await rawMetadataFor(ctx, topic, false);
    const produce = await withRaw(ctx, async (raw) => produceAnswer(await rawProduce(raw, topic, 0, buildBatch({ records: [{ value: 'v', timestamp: T0 }] })), ctx.normalise));
    const kafka = client(ctx, 1);
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    const kafkajsSend = await outcome(() => producer.send({ topic, acks: -1, messages: [{ value: 'v' }] }));
    await producer.disconnect();
    const rd = await connectProducer(ctx.target.bootstrap, { 'allow.auto.create.topics': false, 'message.timeout.ms': 3000, 'enable.idempotence': false });
    let deliveries;
    try {
      deliveries = await produceAll(rd, topic, [{ partition: 0, key: null, value: 'v', headers: [], timestamp: T0 }], { timeoutMs: 20_000 });
    } finally {
      await disconnect(rd);
    }
    return {
      metadata,
      produce,
      kafkajsSend,
      librdkafka: deliveries.map((d) => ({ error: d.error?.code ?? null })),
      afterwards: await rawMetadataFor(ctx, topic, false),
    };
  },
};

const unknownTopicAutoCreate: Scenario = {
  name: 'unknown topic, auto-created',
  async run(ctx) {
    const topic = 'diff-unknown-auto-create';
    const first = await rawMetadataFor(ctx, topic, true);
    // Kafka creates the topic in the background; ask until it answers with partitions.
    let settled = first;
    for (let i = 0; i < 100 && (settled.error !== 'NONE' || settled.partitions === 0); i++) {
      await new Promise((r) => setTimeout(r, 100));
      settled = await rawMetadataFor(ctx, topic, true);
    }
    const kafka = client(ctx);
    const producer = kafka.producer({ allowAutoTopicCreation: true });
    await producer.connect();
    const viaKafkajs = 'diff-unknown-auto-create-kafkajs';
    const send = await outcome(() => producer.send({ topic: viaKafkajs, acks: -1, messages: [{ value: 'v', timestamp: String(T0) }] }));
    await producer.disconnect();
    return {
      first,
      settled,
      kafkajsSend: 'ok' in send ? { ok: send.ok.map((m) => ({ ...m, logAppendTime: Number(m.logAppendTime) })) } : send,
      kafkajsTopic: await rawMetadataFor(ctx, viaKafkajs, false),
    };
  },
};

// ─── Fetch out of range ──────────────────────────────────────────────────────

const fetchOutOfRange: Scenario = {
  name: 'fetch out of range',
  async run(ctx) {
    const topic = 'diff-out-of-range';
    await createTopic(ctx, topic, 1);
    const sent = records('oor', 1, 3);
    const producer = await connectProducer(ctx.target.bootstrap, { 'enable.idempotence': true }, topic);
    try {
      await produceAll(producer, topic, sent);
    } finally {
      await disconnect(producer);
    }
    const raw = await withRaw(ctx, async (raw) => ({
      past: await rawFetch(raw, topic, { partition: 0, offset: 10 }, ctx.normalise),
      atEnd: await rawFetch(raw, topic, { partition: 0, offset: 3 }, ctx.normalise),
      negative: await rawFetch(raw, topic, { partition: 0, offset: -5 }, ctx.normalise),
      unknownPartition: await rawFetch(raw, topic, { partition: 7, offset: 0 }, ctx.normalise),
    }));
    // A consumer placed past the end resets by its auto.offset.reset policy.
    const earliest = await readRecords(ctx.target.bootstrap, topic, { partitions: [0], from: new Map([[0, 10]]), count: 3, config: { 'auto.offset.reset': 'earliest' }, timeoutMs: 20_000 });
    const errors: { code?: number; message?: string }[] = [];
    const failing = await outcome(
      () => readRecords(ctx.target.bootstrap, topic, { partitions: [0], from: new Map([[0, 10]]), count: 1, config: { 'auto.offset.reset': 'error' }, errors: errors as never, timeoutMs: 5_000 }),
      () => 'no record',
    );
    return {
      raw,
      resetToEarliest: earliest.map((r) => r.offset),
      resetError: { read: 'ok' in failing ? failing.ok.length : failing.error, errorCodes: [...new Set(errors.map((e) => e.code ?? null))] },
    };
  },
};

// ─── ListOffsets ─────────────────────────────────────────────────────────────

const listOffsets: Scenario = {
  name: 'ListOffsets by spec and time',
  async run(ctx) {
    const topic = 'diff-list-offsets';
    await createTopic(ctx, topic, 1);
    // Timestamps out of order, so the largest is not the last; two batches.
    const stamps = [T0 + 500, T0 + 100, T0 + 900, T0 + 300, T0 + 700];
    await withRaw(ctx, async (raw) => {
      await rawProduce(raw, topic, 0, buildBatch({ records: stamps.slice(0, 3).map((t, i) => ({ value: `r${i}`, timestamp: t })) }));
      await rawProduce(raw, topic, 0, buildBatch({ records: stamps.slice(3).map((t, i) => ({ value: `r${i + 3}`, timestamp: t })) }));
    });
    const specs: [string, number][] = [
      ['earliest', EARLIEST],
      ['latest', LATEST],
      ['maxTimestamp', MAX_TIMESTAMP],
      ['earliestLocal', -4],
      ['beforeAll', T0],
      ['exact300', T0 + 300],
      ['between', T0 + 600],
      ['exactMax', T0 + 900],
      ['afterAll', T0 + 901],
    ];
    const raw = await withRaw(ctx, async (raw) => {
      const out: Record<string, unknown> = {};
      for (const [name, ts] of specs) out[name] = await rawListOffsets(raw, topic, 0, ts);
      out.unknownPartition = await rawListOffsets(raw, topic, 5, LATEST);
      out.unknownTopic = await rawListOffsets(raw, 'diff-list-offsets-missing', 0, LATEST);
      return out;
    });
    const kafkajsView = await withAdmin(client(ctx), async (admin) => ({
      topicOffsets: await admin.fetchTopicOffsets(topic),
      byTime: Object.fromEntries(await Promise.all(specs.filter(([, t]) => t > 0).map(async ([name, t]) => [name, await admin.fetchTopicOffsetsByTimestamp(topic, t)]))),
    }));
    const rdAdmin = createAdmin(ctx.target.bootstrap);
    let librdkafka;
    try {
      librdkafka = {} as Record<string, unknown>;
      for (const [name, spec] of [
        ['earliest', { timestamp: EARLIEST }],
        ['latest', { timestamp: LATEST }],
        ['maxTimestamp', { timestamp: MAX_TIMESTAMP }],
        ['between', { timestamp: T0 + 600 }],
      ] as const) {
        const found = await adminCall<{ offset: number; timestamp?: number; error?: unknown }[]>((cb) =>
          (rdAdmin as unknown as { listOffsets: (p: unknown, o: unknown, cb: unknown) => void }).listOffsets([{ topic, partition: 0, offset: spec }], { timeout: 10_000 }, cb),
        );
        librdkafka[name] = found.map((f) => ({ offset: f.offset, timestamp: f.timestamp ?? null, error: f.error ? String(f.error) : null }));
      }
    } finally {
      rdAdmin.disconnect();
    }
    return { raw, kafkajs: kafkajsView, librdkafka };
  },
};

export const DATA_PLANE_SCENARIOS: Scenario[] = [
  produceKafkajs,
  produceLibrdkafka,
  ...(Object.keys(KAFKAJS_CODECS) as (keyof typeof KAFKAJS_CODECS)[]).map(codecScenario),
  logAppendTime,
  recordTooLarge,
  keylessOnCompacted,
  unknownTopicNoCreate,
  unknownTopicAutoCreate,
  fetchOutOfRange,
  listOffsets,
];

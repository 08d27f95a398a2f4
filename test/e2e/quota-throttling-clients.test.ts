/**
 * Client quotas as real clients see them: librdkafka reports a broker's
 * throttle_time_ms through its throttle event, kafkajs by throttling itself
 * and saying so in its log ("Client side throttling in effect"; kafkajs 2.2.4
 * has no instrumentation event carrying the throttle time, checked in its
 * source). For each quota (producer_byte_rate, consumer_byte_rate and
 * request_percentage), a client whose client id carries it reports a throttle
 * above zero, and a client doing the same work under another client id
 * reports none. A consumer long-polling an empty topic under a modest
 * request_percentage is never throttled: the time a Fetch waits for records
 * is not time the gateway spends on it. Nothing here measures speed: only
 * what the clients report, and that their records went through.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kafkajs, { type Kafka as KafkaClient } from 'kafkajs';
import type { KafkaConsumer, Producer } from '@confluentinc/kafka-javascript';
import { ApiKey } from '../../protocol/api-keys.js';
import { startBroker, type Broker } from '../../src/index.js';
import { WireClient } from '../gateway/wire-client.js';
import { connectConsumer, connectProducer, disconnect, expectDelivered, produceAll } from '../support/rdkafka.js';
import type { SentRecord } from '../support/records.js';
import { waitFor } from '../support/eventually.js';
import { scrape } from '../support/prometheus.js';

const { Kafka, logLevel } = kafkajs;

/** Small windows keep the test short; the quotas are far below what any of these clients does. */
const QUOTA_SETTINGS = { windowMs: 100, samples: 11, refreshMs: 100 };
const BYTE_RATE = 2_000; // bytes/s
const REQUEST_PERCENTAGE = 0.01; // a hundredth of a percent of one thread
const RECORDS = 12;

function records(label: string): SentRecord[] {
  return Array.from({ length: RECORDS }, (_, i) => ({ partition: 0, key: `${label}-${i}`, value: `${label}:${i}:${'q'.repeat(1_000)}`, headers: [], timestamp: Date.UTC(2024, 0, 1) + i }));
}

/** Throttle times a librdkafka client reported through its throttle event. */
function librdkafkaThrottles(client: Producer | KafkaConsumer): number[] {
  const seen: number[] = [];
  (client as Producer).on('event.throttle', (event: { throttleTime: number }) => void seen.push(event.throttleTime));
  return seen;
}

/** A kafkajs client and the throttle times it reported (its debug log line for KIP-219 client-side throttling). */
function kafkajsWithThrottles(bootstrap: string, clientId: string, sasl?: { username: string; password: string }): { kafka: KafkaClient; throttles: number[] } {
  const throttles: number[] = [];
  const kafka = new Kafka({
    clientId,
    brokers: [bootstrap],
    ...(sasl ? { sasl: { mechanism: 'plain' as const, ...sasl } } : {}),
    retry: { initialRetryTime: 50, maxRetryTime: 1_000, retries: 10 },
    logLevel: logLevel.DEBUG,
    logCreator: () => (entry) => {
      const match = /^Client side throttling in effect for (\d+)ms$/.exec(entry.log.message);
      if (match) throttles.push(Number(match[1]));
    },
  });
  return { kafka, throttles };
}

describe('client quotas seen by librdkafka and kafkajs', () => {
  let broker: Broker;
  let wire: WireClient;
  const topic = 'quota-clients';
  const EMPTY_TOPIC = 'quota-idle';

  beforeAll(async () => {
    broker = await startBroker({ autoCreateTopics: false, quotas: QUOTA_SETTINGS, http: { port: 0 } });
    await broker.core.createQueue({ name: topic, partitions: 1, config: { dedupWindowSeconds: 0 } });
    await broker.core.createQueue({ name: EMPTY_TOPIC, partitions: 1, config: { dedupWindowSeconds: 0 } });
    wire = await WireClient.open(broker.port);
    const quota = (clientId: string, key: string, value: number) => ({ entity: [{ entityType: 'client-id', entityName: clientId }], ops: [{ key, value, remove: false }] });
    // Set as an operator would, through AlterClientQuotas (the gateway reads them again at once).
    const altered = await wire.request(ApiKey.AlterClientQuotas, 1, {
      entries: [
        quota('rd-producer-metered', 'producer_byte_rate', BYTE_RATE),
        quota('js-producer-metered', 'producer_byte_rate', BYTE_RATE),
        quota('rd-consumer-metered', 'consumer_byte_rate', BYTE_RATE),
        quota('js-consumer-metered', 'consumer_byte_rate', BYTE_RATE),
        quota('rd-requests-metered', 'request_percentage', REQUEST_PERCENTAGE),
        quota('js-requests-metered', 'request_percentage', REQUEST_PERCENTAGE),
        quota('rd-idle-metered', 'request_percentage', 5),
      ],
      validateOnly: false,
    });
    expect(altered.entries.map((e: { errorCode: number }) => e.errorCode)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    // Records for the consumers to read (written by the core, outside any quota).
    const producer = await connectProducer(broker.bootstrap, { 'client.id': 'seeder' });
    try {
      expectDelivered(await produceAll(producer, topic, records('seed')));
    } finally {
      await disconnect(producer);
    }
  }, 60_000);
  afterAll(async () => {
    wire?.destroy();
    await broker?.stop();
  });

  async function librdkafkaProduces(clientId: string): Promise<number[]> {
    const producer = await connectProducer(broker.bootstrap, { 'client.id': clientId, 'linger.ms': 0, 'batch.num.messages': 1 });
    const throttles = librdkafkaThrottles(producer);
    try {
      expectDelivered(await produceAll(producer, topic, records(clientId)));
    } finally {
      await disconnect(producer);
    }
    return throttles;
  }

  async function librdkafkaConsumes(clientId: string): Promise<number[]> {
    const consumer = await connectConsumer(broker.bootstrap, { 'client.id': clientId, 'fetch.max.bytes': 1_000_000 }, topic);
    const throttles = librdkafkaThrottles(consumer);
    try {
      consumer.assign([{ topic, partition: 0, offset: 0 }]);
      let read = 0;
      await waitFor(
        () =>
          new Promise<boolean>((resolve) =>
            consumer.consume(100, (_err, messages) => {
              read += messages?.length ?? 0;
              resolve(read >= RECORDS);
            }),
          ),
        { timeoutMs: 60_000, intervalMs: 1, what: `${clientId} to read the seeded records`, describe: () => `${read} read` },
      );
    } finally {
      await disconnect(consumer);
    }
    return throttles;
  }

  async function kafkajsProduces(clientId: string): Promise<number[]> {
    const { kafka, throttles } = kafkajsWithThrottles(broker.bootstrap, clientId);
    const producer = kafka.producer();
    await producer.connect();
    try {
      for (const record of records(clientId)) {
        const [result] = await producer.send({ topic, acks: -1, messages: [{ key: record.key, value: record.value }] });
        expect(result!.errorCode).toBe(0);
      }
    } finally {
      await producer.disconnect();
    }
    return throttles;
  }

  async function kafkajsConsumes(clientId: string): Promise<number[]> {
    const { kafka, throttles } = kafkajsWithThrottles(broker.bootstrap, clientId);
    const consumer = kafka.consumer({ groupId: `${clientId}-group`, sessionTimeout: 10_000, heartbeatInterval: 500, maxBytes: 1_000_000 });
    let read = 0;
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ eachMessage: async () => void read++ });
      await waitFor(() => read >= RECORDS, { timeoutMs: 60_000, what: `${clientId} to read the seeded records`, describe: () => `${read} read` });
    } finally {
      await consumer.disconnect();
    }
    return throttles;
  }

  describe('librdkafka (throttle event)', () => {
    it('a producer over producer_byte_rate reports a throttle; one under another client id none; /metrics counts the throttling', async () => {
      const before = await scrape(`${broker.httpUrl}/metrics`);
      expect(Math.max(0, ...(await librdkafkaProduces('rd-producer-metered')))).toBeGreaterThan(0);
      const after = await scrape(`${broker.httpUrl}/metrics`);
      for (const series of ['queen_quota_throttle_time_ms_total', 'queen_quota_throttled_requests_total']) {
        expect(after.sum(series, { request: 'Produce' })).toBeGreaterThan(before.sum(series, { request: 'Produce' }));
      }
      expect((await librdkafkaProduces('rd-producer-free')).filter((t) => t > 0)).toEqual([]);
    }, 90_000);

    it('a consumer over consumer_byte_rate reports a throttle; one under another client id none', async () => {
      expect(Math.max(0, ...(await librdkafkaConsumes('rd-consumer-metered')))).toBeGreaterThan(0);
      expect((await librdkafkaConsumes('rd-consumer-free')).filter((t) => t > 0)).toEqual([]);
    }, 90_000);

    it('a producer over request_percentage reports a throttle; one under another client id none', async () => {
      expect(Math.max(0, ...(await librdkafkaProduces('rd-requests-metered')))).toBeGreaterThan(0);
      expect((await librdkafkaProduces('rd-requests-free')).filter((t) => t > 0)).toEqual([]);
    }, 90_000);
  });

  it("does not count a long-poll's wait: a librdkafka consumer idling on an empty topic at 5% of a thread is never throttled", async () => {
    const consumer = await connectConsumer(broker.bootstrap, { 'client.id': 'rd-idle-metered', 'fetch.wait.max.ms': 500, 'statistics.interval.ms': 200 }, EMPTY_TOPIC);
    const throttles = librdkafkaThrottles(consumer);
    let fetches = 0;
    let maxThrottle = 0;
    consumer.on('event.stats', (event: { message: string }) => {
      const stats = JSON.parse(event.message) as { brokers: Record<string, { nodeid: number; req: Record<string, number>; throttle: { max: number } }> };
      for (const b of Object.values(stats.brokers)) {
        if (b.nodeid < 0) continue; // the bootstrap entry
        fetches = Math.max(fetches, b.req.Fetch ?? 0);
        maxThrottle = Math.max(maxThrottle, b.throttle.max);
      }
    });
    try {
      consumer.assign([{ topic: EMPTY_TOPIC, partition: 0, offset: 0 }]);
      // Eight long-polls of up to 500 ms each: were their waits counted, 5% of a thread would be spent many times over.
      await waitFor(() => new Promise<boolean>((resolve) => consumer.consume(100, () => resolve(fetches >= 8))), { timeoutMs: 60_000, intervalMs: 1, what: 'eight fetches', describe: () => `${fetches} fetches` });
    } finally {
      await disconnect(consumer);
    }
    expect(throttles.filter((t) => t > 0)).toEqual([]);
    expect(maxThrottle).toBe(0);
  }, 90_000);

  describe('kafkajs (client-side throttling)', () => {
    it('a producer over producer_byte_rate throttles itself; one under another client id does not', async () => {
      expect(Math.max(0, ...(await kafkajsProduces('js-producer-metered')))).toBeGreaterThan(0);
      expect(await kafkajsProduces('js-producer-free')).toEqual([]);
    }, 90_000);

    it('a consumer over consumer_byte_rate throttles itself; one under another client id does not', async () => {
      expect(Math.max(0, ...(await kafkajsConsumes('js-consumer-metered')))).toBeGreaterThan(0);
      expect(await kafkajsConsumes('js-consumer-free')).toEqual([]);
    }, 90_000);

    it('a producer over request_percentage throttles itself; one under another client id does not', async () => {
      expect(Math.max(0, ...(await kafkajsProduces('js-requests-metered')))).toBeGreaterThan(0);
      expect(await kafkajsProduces('js-requests-free')).toEqual([]);
    }, 90_000);
  });
});

describe('quotas on a principal: two SASL users under one client id', () => {
  const USERS = { alice: 'alice-secret', bob: 'bob-secret' };
  const CLIENT_ID = 'one-client-id';
  let dir: string;
  let broker: Broker;
  let bootstrap: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'queen-quota-users-'));
    const usersFile = join(dir, 'users.txt');
    writeFileSync(usersFile, Object.entries(USERS).map(([u, p]) => `${u}=${p}`).join('\n') + '\n');
    broker = await startBroker({
      listeners: [
        { name: 'SASL_PLAINTEXT', host: '127.0.0.1', port: 0 },
        { name: 'PLAINTEXT', host: '127.0.0.1', port: 0 },
      ],
      sasl: { mechanisms: ['PLAIN'], plainUsersFile: usersFile },
      autoCreateTopics: false,
      quotas: QUOTA_SETTINGS,
    });
    await broker.core.createQueue({ name: 'quota-users', partitions: 1, config: { dedupWindowSeconds: 0 } });
    const sasl = broker.listeners.find((l) => l.name === 'SASL_PLAINTEXT')!;
    bootstrap = `${sasl.advertised.host}:${sasl.advertised.port}`;
    const wire = await WireClient.open(broker.listeners.find((l) => l.name === 'PLAINTEXT')!.port);
    try {
      const altered = await wire.request(ApiKey.AlterClientQuotas, 1, {
        entries: [
          { entity: [{ entityType: 'user', entityName: 'alice' }], ops: [{ key: 'request_percentage', value: REQUEST_PERCENTAGE, remove: false }] },
          { entity: [{ entityType: 'user', entityName: 'alice' }, { entityType: 'client-id', entityName: CLIENT_ID }], ops: [{ key: 'producer_byte_rate', value: BYTE_RATE, remove: false }] },
        ],
        validateOnly: false,
      });
      expect(altered.entries.map((e: { errorCode: number }) => e.errorCode)).toEqual([0, 0]);
    } finally {
      wire.destroy();
    }
  }, 60_000);
  afterAll(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function kafkajsProducesAs(user: keyof typeof USERS): Promise<number[]> {
    const { kafka, throttles } = kafkajsWithThrottles(bootstrap, CLIENT_ID, { username: user, password: USERS[user] });
    const producer = kafka.producer();
    await producer.connect();
    try {
      for (const record of records(user)) {
        const [result] = await producer.send({ topic: 'quota-users', acks: -1, messages: [{ key: record.key, value: record.value }] });
        expect(result!.errorCode).toBe(0);
      }
    } finally {
      await producer.disconnect();
    }
    return throttles;
  }

  async function librdkafkaProducesAs(user: keyof typeof USERS): Promise<number[]> {
    const producer = await connectProducer(bootstrap, { 'client.id': CLIENT_ID, 'security.protocol': 'sasl_plaintext', 'sasl.mechanisms': 'PLAIN', 'sasl.username': user, 'sasl.password': USERS[user], 'linger.ms': 0 });
    const throttles = librdkafkaThrottles(producer);
    try {
      expectDelivered(await produceAll(producer, 'quota-users', records(`rd-${user}`)));
    } finally {
      await disconnect(producer);
    }
    return throttles;
  }

  it("kafkajs: alice's request_percentage throttles her; bob, under the same client id, is not", async () => {
    expect(Math.max(0, ...(await kafkajsProducesAs('alice')))).toBeGreaterThan(0);
    expect(await kafkajsProducesAs('bob')).toEqual([]);
  }, 90_000);

  it("librdkafka: alice's quotas (request time, and bytes under this client id) throttle her; bob is not", async () => {
    expect(Math.max(0, ...(await librdkafkaProducesAs('alice')))).toBeGreaterThan(0);
    expect((await librdkafkaProducesAs('bob')).filter((t) => t > 0)).toEqual([]);
  }, 90_000);
});

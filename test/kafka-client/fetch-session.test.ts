/**
 * The project's Kafka client keeps a fetch session (KIP-227) with a broker,
 * as the bridge's source reader uses it: the first Fetch names every
 * partition and opens the session, later ones name only what moved and the
 * partitions to drop, and the broker answers only partitions with news. Run
 * against an in-process gateway over a real socket; the bridge's end-to-end
 * tests run the same session against Apache Kafka.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../src/index.js';
import { KafkaClient } from '../../src/kafka-client/client.js';
import { FetchSession } from '../../src/kafka-client/fetch-session.js';
import { storedBatches } from '../../src/kafka-client/fetch.js';

const TOPIC = 'sessions';
const LIMITS = { maxWaitMs: 200, minBytes: 1, maxBytes: 1 << 20, readCommitted: false };

describe('fetch sessions (the bridge source reader)', () => {
  let broker: Broker;
  let kafka: Kafka;
  let client: KafkaClient;

  beforeAll(async () => {
    broker = await startBroker({ groups: { initialRebalanceDelayMs: 0 } });
    kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 3 }] });
    await admin.disconnect();
    await produce([0, 1, 2], 5);
    client = await KafkaClient.connect({ bootstrap: broker.bootstrap, settings: {} });
    await client.refreshMetadata([TOPIC]);
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await broker?.stop();
  });

  async function produce(partitions: number[], each: number): Promise<void> {
    const producer = kafka.producer();
    await producer.connect();
    for (const partition of partitions) await producer.send({ topic: TOPIC, messages: Array.from({ length: each }, (_, i) => ({ partition, value: `p${partition}-${i}` })) });
    await producer.disconnect();
  }

  const asks = (offsets: Record<number, number>) => Object.entries(offsets).map(([partition, offset]) => ({ topic: TOPIC, partition: Number(partition), offset, maxBytes: 1 << 20 }));
  const records = (answer: Awaited<ReturnType<FetchSession['fetch']>>) =>
    Object.fromEntries(answer.partitions.map((p) => [p.partition, storedBatches(p.records, 0).batches.reduce((n, b) => n + b.recordCount, 0)]));

  it('opens a session with a full fetch, then names only what moved, and hears only of partitions with news', async () => {
    const session = new FetchSession();
    const connection = await client.connection(client.leaderOf(TOPIC, 0)!.leader);
    const first = await session.fetch(connection, asks({ 0: 0, 1: 0, 2: 0 }), LIMITS);
    expect(first.errorCode).toBe(0);
    expect(records(first)).toEqual({ 0: 5, 1: 5, 2: 5 });
    expect(session.state.id, 'the broker opened a fetch session').not.toBe(0);
    expect(session.state).toMatchObject({ epoch: 1, partitions: 3 });

    // Every position moves to the end; one more record lands on partition 1 only.
    await produce([1], 1);
    const second = await session.fetch(connection, asks({ 0: 5, 1: 5, 2: 5 }), LIMITS);
    expect(second.errorCode).toBe(0);
    expect(records(second), 'an incremental answer carries only the partition with a new record').toEqual({ 1: 1 });
    expect(session.state).toMatchObject({ epoch: 2, partitions: 3 });

    // Partition 2 is dropped from the session: a record there is no longer answered.
    await produce([2], 1);
    const third = await session.fetch(connection, asks({ 0: 5, 1: 6 }), LIMITS);
    expect(third.errorCode).toBe(0);
    expect(Object.keys(records(third))).not.toContain('2');
    expect(session.state).toMatchObject({ epoch: 3, partitions: 2 });

    // Asked again, it rejoins the session at its position and its record comes.
    const fourth = await session.fetch(connection, asks({ 0: 5, 1: 6, 2: 5 }), LIMITS);
    expect(records(fourth)).toEqual({ 2: 1 });
  }, 60_000);

  it('starts a new session when the broker no longer knows the one it holds', async () => {
    const connection = await client.connection(client.leaderOf(TOPIC, 0)!.leader);
    const lost = new FetchSession();
    await lost.fetch(connection, asks({ 0: 0 }), LIMITS);
    // The client's epoch no longer the one the broker expects (as after a lost answer): the broker refuses it.
    const other = lost as unknown as { epoch: number };
    other.epoch += 5;
    const refused = await lost.fetch(connection, asks({ 0: 5 }), LIMITS);
    expect(refused.errorCode, 'INVALID_FETCH_SESSION_EPOCH').toBe(71);
    expect(refused.partitions).toEqual([]);
    expect(lost.state.id).toBe(0);
    const fresh = await lost.fetch(connection, asks({ 0: 0 }), LIMITS);
    expect(records(fresh)).toEqual({ 0: 5 });
    expect(lost.state.id).not.toBe(0);
  }, 60_000);
});

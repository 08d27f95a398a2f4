import { Kafka, logLevel, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { decodeResponse } from '../../protocol/frames.js';
import type { Message } from '../../protocol/codec/compile.js';
import { buildBatch, decodeBatches } from '../../protocol/records/record-batch.js';
import { startBroker, type Broker } from '../../src/index.js';
import { sizePrefix, WireClient } from './wire-client.js';

const FETCH_V = 12; // the last version that names topics; v13+ is covered by topic id below

function kafkaClient(broker: Broker) {
  return new Kafka({ clientId: 'gateway-test', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING, retry: { retries: 2 } });
}

async function createTopic(broker: Broker, name: string, partitions = 1) {
  return broker.core.createQueue({ name, partitions, config: { dedupWindowSeconds: 0 } });
}

function fetchRequest(topics: { topic: string; partitions: { partition: number; fetchOffset: number }[] }[], options: Partial<Message> = {}): Message {
  return {
    replicaId: -1,
    maxWaitMs: 100,
    minBytes: 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: topics.map((t) => ({
      topic: t.topic,
      partitions: t.partitions.map((p) => ({ partition: p.partition, fetchOffset: BigInt(p.fetchOffset), partitionMaxBytes: 1 << 20 })),
    })),
    forgottenTopicsData: [],
    rackId: '',
    ...options,
  };
}

/** Values of the records a fetch response carries for one partition, in order. */
function valuesIn(response: Message, topic: string, partition: number): string[] {
  const p = response.responses.find((t: Message) => t.topic === topic)?.partitions.find((x: Message) => x.partitionIndex === partition);
  if (!p || p.records === null || p.records.length === 0) return [];
  return decodeBatches(p.records, { fromClient: false }).flatMap((b) => b.records.map((r) => r.value!.toString()));
}

function producePartition(topic: string, partition: number, values: string[], acks = -1): Message {
  return {
    transactionalId: null,
    acks,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records: buildBatch({ records: values.map((value) => ({ value })) }) }] }],
  };
}

describe('gateway on the memory engine', () => {
  let broker: Broker;
  let producer: Producer;

  beforeAll(async () => {
    broker = await startBroker();
    producer = kafkaClient(broker).producer({ allowAutoTopicCreation: false });
    await producer.connect();
  });
  afterAll(async () => {
    await producer?.disconnect();
    await broker?.stop();
  });

  it('round-trips records from a kafkajs producer through a raw Fetch, in order, with keys and headers', async () => {
    await createTopic(broker, 'round-trip', 2);
    await producer.send({ topic: 'round-trip', messages: [{ partition: 1, key: 'k1', value: 'one', headers: { h: 'x' } }, { partition: 1, key: 'k2', value: 'two' }] });
    await producer.send({ topic: 'round-trip', messages: [{ partition: 1, value: 'three' }] });

    const client = await WireClient.open(broker.port);
    const response = await client.request(ApiKey.Fetch, FETCH_V, fetchRequest([{ topic: 'round-trip', partitions: [{ partition: 1, fetchOffset: 0 }] }]));
    expect(valuesIn(response, 'round-trip', 1)).toEqual(['one', 'two', 'three']);
    const p = response.responses[0].partitions[0];
    expect(p.errorCode).toBe(0);
    expect(p.highWatermark).toBe(3n);
    const [first] = decodeBatches(p.records, { fromClient: false });
    expect(first!.header.baseOffset).toBe(0n);
    expect(first!.records[0]!.key!.toString()).toBe('k1');
    expect(first!.records[0]!.headers.map((h) => [h.key, h.value?.toString()])).toEqual([['h', 'x']]);
    client.destroy();
  });

  it('answers pipelined requests in request order even when the first one waits', async () => {
    await createTopic(broker, 'pipelined');
    const client = await WireClient.open(broker.port);
    const slowFetch = client.send(ApiKey.Fetch, FETCH_V, fetchRequest([{ topic: 'pipelined', partitions: [{ partition: 0, fetchOffset: 0 }] }], { maxWaitMs: 300 }));
    const metadata = client.send(ApiKey.Metadata, 12, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    const apiVersions = client.send(ApiKey.ApiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    const order = [(await client.next()).correlationId, (await client.next()).correlationId, (await client.next()).correlationId];
    expect(order).toEqual([slowFetch, metadata, apiVersions]);
    client.destroy();
  });

  it('sends no response to acks=0 but stores the records', async () => {
    await createTopic(broker, 'fire-and-forget');
    const client = await WireClient.open(broker.port);
    client.send(ApiKey.Produce, 9, producePartition('fire-and-forget', 0, ['a', 'b'], 0));
    const probe = client.send(ApiKey.ApiVersions, 0, {});
    expect((await client.next()).correlationId).toBe(probe);
    const fetched = await client.request(ApiKey.Fetch, FETCH_V, fetchRequest([{ topic: 'fire-and-forget', partitions: [{ partition: 0, fetchOffset: 0 }] }]));
    expect(valuesIn(fetched, 'fire-and-forget', 0)).toEqual(['a', 'b']);
    client.destroy();
  });

  it('answers acks=1 and acks=-1 with the base offset', async () => {
    await createTopic(broker, 'acked');
    const client = await WireClient.open(broker.port);
    for (const [acks, expected] of [[1, 0n], [-1, 1n]] as const) {
      const r = await client.request(ApiKey.Produce, 11, producePartition('acked', 0, ['x'], acks));
      expect(r.responses[0].partitionResponses[0]).toMatchObject({ index: 0, errorCode: 0, baseOffset: expected });
    }
    client.destroy();
  });

  it('refuses a batch with a bad CRC with CORRUPT_MESSAGE and stores nothing', async () => {
    await createTopic(broker, 'corrupt');
    const client = await WireClient.open(broker.port);
    const request = producePartition('corrupt', 0, ['x']);
    const records: Buffer = request.topicData[0].partitionData[0].records;
    records[records.length - 1]! ^= 0xff;
    const r = await client.request(ApiKey.Produce, 11, request);
    expect(r.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.CORRUPT_MESSAGE);
    expect(r.responses[0].partitionResponses[0].errorMessage).toMatch(/CRC/);
    const offsets = await broker.core.offsets({ partitions: [{ queue: 'corrupt', partition: 0 }] });
    expect(offsets.partitions[0]!.highWatermark).toBe(0);
    client.destroy();
  });

  it('answers an unsupported ApiVersions version with error 35 and a v0 list of what is served', async () => {
    const client = await WireClient.open(broker.port);
    const correlationId = client.send(ApiKey.ApiVersions, 0, {});
    await client.next();
    // Hand-built: a version this project has no codec for.
    const header = Buffer.alloc(8);
    header.writeInt16BE(ApiKey.ApiVersions, 0);
    header.writeInt16BE(99, 2);
    header.writeInt32BE(correlationId + 1, 4);
    const clientId = Buffer.from([0, 1, 0x78]);
    client.write(sizePrefix(header.length + clientId.length + 1, Buffer.concat([header, clientId, Buffer.from([0])])));
    const arrived = await client.next();
    const body = decodeResponse(arrived.frame, ApiKey.ApiVersions, 0).body;
    expect(arrived.correlationId).toBe(correlationId + 1);
    expect(body.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(body.apiKeys).toContainEqual({ apiKey: ApiKey.Fetch, minVersion: 4, maxVersion: 17 });
    expect(body.apiKeys).toContainEqual({ apiKey: ApiKey.ApiVersions, minVersion: 0, maxVersion: 4 });
    expect(client.isClosed).toBe(false);
    client.destroy();
  });

  it('closes only the connection that sends an unknown API key', async () => {
    const bystander = await WireClient.open(broker.port);
    const offender = await WireClient.open(broker.port);
    offender.write(sizePrefix(10, Buffer.from([0x27, 0x0f, 0, 0, 0, 0, 0, 7, 0xff, 0xff]))); // key 9999
    await offender.closed;
    const r = await bystander.request(ApiKey.ApiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1' });
    expect(r.errorCode).toBe(0);
    bystander.destroy();
  });

  it.each([
    ['an enormous length', sizePrefix(0x7fffffff)],
    ['a negative length', sizePrefix(-5)],
    ['garbage in a frame', sizePrefix(12, Buffer.from('garbage!!!!!'))],
    ['a truncated header', sizePrefix(3, Buffer.from([0, 18, 0]))],
  ])('closes a connection that sends %s while a kafkajs producer keeps producing', async (_, bytes) => {
    await createTopic(broker, 'steady').catch(() => {});
    const offender = await WireClient.open(broker.port);
    const sending = (async () => {
      for (let i = 0; i < 5; i++) await producer.send({ topic: 'steady', messages: [{ value: `v${i}` }] });
    })();
    offender.write(bytes);
    await offender.closed;
    await sending;
  });

  it('long-polls a Fetch until a record arrives', async () => {
    await createTopic(broker, 'wake-up');
    const client = await WireClient.open(broker.port);
    // maxWait far beyond the response timeout: only the produce can answer this fetch in time.
    const waiting = client.request(ApiKey.Fetch, FETCH_V, fetchRequest([{ topic: 'wake-up', partitions: [{ partition: 0, fetchOffset: 0 }] }], { maxWaitMs: 60_000 }), 15_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await producer.send({ topic: 'wake-up', messages: [{ value: 'hello' }] });
    expect(valuesIn(await waiting, 'wake-up', 0)).toEqual(['hello']);
    client.destroy();
  });

  it('answers an empty Fetch when maxWait passes without data', async () => {
    await createTopic(broker, 'quiet');
    const client = await WireClient.open(broker.port);
    const r = await client.request(ApiKey.Fetch, FETCH_V, fetchRequest([{ topic: 'quiet', partitions: [{ partition: 0, fetchOffset: 0 }] }], { maxWaitMs: 200 }));
    expect(r.responses[0].partitions[0]).toMatchObject({ errorCode: 0, highWatermark: 0n });
    expect(valuesIn(r, 'quiet', 0)).toEqual([]);
    client.destroy();
  });

  it('answers OFFSET_OUT_OF_RANGE past the end and UNKNOWN_TOPIC_OR_PARTITION for a missing topic', async () => {
    await createTopic(broker, 'short');
    const client = await WireClient.open(broker.port);
    const r = await client.request(
      ApiKey.Fetch,
      FETCH_V,
      fetchRequest([{ topic: 'short', partitions: [{ partition: 0, fetchOffset: 5 }] }, { topic: 'nowhere', partitions: [{ partition: 0, fetchOffset: 0 }] }], { maxWaitMs: 0 }),
    );
    const codes = r.responses.map((t: Message) => [t.topic, t.partitions[0].errorCode]);
    expect(codes).toEqual([['short', ErrorCode.OFFSET_OUT_OF_RANGE], ['nowhere', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]]);
    client.destroy();
  });

  it('fetches by topic id from v13', async () => {
    const topic = await createTopic(broker, 'by-id');
    await producer.send({ topic: 'by-id', messages: [{ value: 'id-read' }] });
    const client = await WireClient.open(broker.port);
    const r = await client.request(ApiKey.Fetch, 13, {
      ...fetchRequest([]),
      topics: [{ topicId: topic.id, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20 }] }],
    });
    expect(r.responses[0].topicId).toBe(topic.id);
    const batches = decodeBatches(r.responses[0].partitions[0].records, { fromClient: false });
    expect(batches[0]!.records[0]!.value!.toString()).toBe('id-read');
    client.destroy();
  });

  it('keeps fetch sessions: a full fetch, then incremental fetches with only what changed', async () => {
    await createTopic(broker, 'session', 2);
    await producer.send({ topic: 'session', messages: [{ partition: 0, value: 'p0-a' }] });
    const client = await WireClient.open(broker.port);
    const both = [{ topic: 'session', partitions: [{ partition: 0, fetchOffset: 0 }, { partition: 1, fetchOffset: 0 }] }];

    const full = await client.request(ApiKey.Fetch, FETCH_V, fetchRequest(both, { sessionId: 0, sessionEpoch: 0, maxWaitMs: 0 }));
    expect(full.sessionId).not.toBe(0);
    expect(full.responses[0].partitions.map((p: Message) => p.partitionIndex)).toEqual([0, 1]);
    expect(valuesIn(full, 'session', 0)).toEqual(['p0-a']);

    // Partition 0 moves on to offset 1; nothing new anywhere: nothing to report.
    const quiet = await client.request(ApiKey.Fetch, FETCH_V, fetchRequest([{ topic: 'session', partitions: [{ partition: 0, fetchOffset: 1 }] }], { sessionId: full.sessionId, sessionEpoch: 1, maxWaitMs: 50 }));
    expect(quiet.errorCode).toBe(0);
    expect(quiet.responses).toEqual([]);

    await producer.send({ topic: 'session', messages: [{ partition: 1, value: 'p1-a' }] });
    const news = await client.request(ApiKey.Fetch, FETCH_V, fetchRequest([], { sessionId: full.sessionId, sessionEpoch: 2, maxWaitMs: 1000 }));
    expect(news.responses[0].partitions.map((p: Message) => p.partitionIndex)).toEqual([1]);
    expect(valuesIn(news, 'session', 1)).toEqual(['p1-a']);

    // Forget partition 1: a later record there is no longer reported.
    await client.request(ApiKey.Fetch, FETCH_V, fetchRequest([], { sessionId: full.sessionId, sessionEpoch: 3, maxWaitMs: 0, forgottenTopicsData: [{ topic: 'session', partitions: [1] }] }));
    await producer.send({ topic: 'session', messages: [{ partition: 1, value: 'p1-b' }] });
    const forgotten = await client.request(ApiKey.Fetch, FETCH_V, fetchRequest([], { sessionId: full.sessionId, sessionEpoch: 4, maxWaitMs: 50 }));
    expect(forgotten.responses).toEqual([]);

    const staleEpoch = await client.request(ApiKey.Fetch, FETCH_V, fetchRequest([], { sessionId: full.sessionId, sessionEpoch: 2, maxWaitMs: 0 }));
    expect(staleEpoch.errorCode).toBe(ErrorCode.INVALID_FETCH_SESSION_EPOCH);
    const unknown = await client.request(ApiKey.Fetch, FETCH_V, fetchRequest([], { sessionId: full.sessionId ^ 1, sessionEpoch: 1, maxWaitMs: 0 }));
    expect(unknown.errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    client.destroy();
  });

  it('returns a whole batch even when it is larger than the partition limit', async () => {
    await createTopic(broker, 'big-batch');
    await producer.send({ topic: 'big-batch', messages: [{ value: 'x'.repeat(5000) }] });
    const client = await WireClient.open(broker.port);
    const request = fetchRequest([{ topic: 'big-batch', partitions: [{ partition: 0, fetchOffset: 0 }] }], { maxBytes: 100 });
    request.topics[0].partitions[0].partitionMaxBytes = 100;
    const r = await client.request(ApiKey.Fetch, FETCH_V, request);
    expect(valuesIn(r, 'big-batch', 0)).toEqual(['x'.repeat(5000)]);
    client.destroy();
  });

  it('lists offsets: earliest, latest and by timestamp, and v0 in its old shape', async () => {
    await createTopic(broker, 'timed');
    for (const timestamp of ['1000', '2000', '3000']) await producer.send({ topic: 'timed', messages: [{ value: timestamp, timestamp }] });
    const client = await WireClient.open(broker.port);
    const ask = async (timestamp: number) => {
      const r = await client.request(ApiKey.ListOffsets, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: 'timed', partitions: [{ partitionIndex: 0, timestamp: BigInt(timestamp) }] }] });
      return r.topics[0].partitions[0];
    };
    expect((await ask(-2)).offset).toBe(0n);
    expect((await ask(-1)).offset).toBe(3n);
    expect(await ask(1500)).toMatchObject({ offset: 1n, timestamp: 2000n });
    expect((await ask(9999)).offset).toBe(-1n);
    const v0 = await client.request(ApiKey.ListOffsets, 0, { replicaId: -1, topics: [{ name: 'timed', partitions: [{ partitionIndex: 0, timestamp: -1n, maxNumOffsets: 1 }] }] });
    expect(v0.topics[0].partitions[0].oldStyleOffsets).toEqual([3n]);
    client.destroy();
  });

  it('gives an idempotent producer an id, and a transactional id its producer with the epoch bumped at each InitProducerId', async () => {
    const client = await WireClient.open(broker.port);
    const idempotent = await client.request(ApiKey.InitProducerId, 4, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 });
    expect(idempotent.errorCode).toBe(0);
    expect(idempotent.producerId >= 0n).toBe(true);
    const first = await client.request(ApiKey.InitProducerId, 4, { transactionalId: 'tx-1', transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 });
    expect(first.errorCode).toBe(0);
    const second = await client.request(ApiKey.InitProducerId, 4, { transactionalId: 'tx-1', transactionTimeoutMs: 60000, producerId: -1n, producerEpoch: -1 });
    expect(second).toMatchObject({ errorCode: 0, producerId: first.producerId, producerEpoch: first.producerEpoch + 1 });
    const tooLong = await client.request(ApiKey.InitProducerId, 4, { transactionalId: 'tx-2', transactionTimeoutMs: 900_001, producerId: -1n, producerEpoch: -1 });
    expect(tooLong.errorCode).toBe(ErrorCode.INVALID_TRANSACTION_TIMEOUT);
    client.destroy();
  });

  it('produces exactly once with a kafkajs idempotent producer', async () => {
    await createTopic(broker, 'idempotent');
    const idempotent = kafkaClient(broker).producer({ idempotent: true, allowAutoTopicCreation: false });
    await idempotent.connect();
    for (let i = 0; i < 3; i++) await idempotent.send({ topic: 'idempotent', messages: [{ value: `m${i}` }] });
    await idempotent.disconnect();
    const client = await WireClient.open(broker.port);
    const r = await client.request(ApiKey.Fetch, FETCH_V, fetchRequest([{ topic: 'idempotent', partitions: [{ partition: 0, fetchOffset: 0 }] }]));
    expect(valuesIn(r, 'idempotent', 0)).toEqual(['m0', 'm1', 'm2']);
    client.destroy();
  });

  it('answers Metadata with this gateway as the only broker and refuses bad topic names', async () => {
    await createTopic(broker, 'described', 3);
    const client = await WireClient.open(broker.port);
    const r = await client.request(ApiKey.Metadata, 12, { topics: [{ name: 'described' }, { name: 'bad/name' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false });
    expect(r.brokers).toEqual([{ nodeId: 0, host: broker.host, port: broker.port, rack: null }]);
    const [described, bad] = r.topics;
    expect(described.partitions.map((p: Message) => [p.partitionIndex, p.leaderId])).toEqual([[0, 0], [1, 0], [2, 0]]);
    expect(bad.errorCode).toBe(ErrorCode.INVALID_TOPIC_EXCEPTION);
    client.destroy();
  });
});

describe('topic auto-creation', () => {
  it('creates a topic on Metadata with the default partition count when on', async () => {
    const broker = await startBroker({ autoCreateTopics: true, defaultPartitions: 3 });
    const client = await WireClient.open(broker.port);
    const r = await client.request(ApiKey.Metadata, 9, { topics: [{ name: 'auto' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false });
    expect(r.topics[0].errorCode).toBe(0);
    expect(r.topics[0].partitions).toHaveLength(3);
    client.destroy();
    await broker.stop();
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION and creates nothing when off', async () => {
    const broker = await startBroker({ autoCreateTopics: false });
    const client = await WireClient.open(broker.port);
    const r = await client.request(ApiKey.Metadata, 9, { topics: [{ name: 'not-made' }], allowAutoTopicCreation: true, includeTopicAuthorizedOperations: false });
    expect(r.topics[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    expect(await broker.core.describeQueue({ name: 'not-made' })).toBeNull();
    client.destroy();
    await broker.stop();
  });
});

describe('server limits and shutdown', () => {
  it('refuses connections beyond the maximum', async () => {
    const broker = await startBroker({ limits: { maxConnections: 2 } });
    const first = await WireClient.open(broker.port);
    const second = await WireClient.open(broker.port);
    await first.request(ApiKey.ApiVersions, 0, {});
    await second.request(ApiKey.ApiVersions, 0, {});
    const third = await WireClient.open(broker.port);
    await third.closed;
    expect(third.isClosed).toBe(true);
    expect((await first.request(ApiKey.ApiVersions, 0, {})).errorCode).toBe(0);
    first.destroy();
    second.destroy();
    await broker.stop();
  });

  it('keeps answering in order when a connection is paused at its in-flight limit', async () => {
    const broker = await startBroker({ limits: { maxInFlightPerConnection: 1 } });
    await createTopic(broker, 'one-at-a-time');
    const client = await WireClient.open(broker.port);
    const sent = [
      client.send(ApiKey.Fetch, FETCH_V, fetchRequest([{ topic: 'one-at-a-time', partitions: [{ partition: 0, fetchOffset: 0 }] }], { maxWaitMs: 200 })),
      client.send(ApiKey.Produce, 9, producePartition('one-at-a-time', 0, ['queued'])),
      client.send(ApiKey.ApiVersions, 0, {}),
    ];
    const order = [];
    for (let i = 0; i < sent.length; i++) order.push((await client.next()).correlationId);
    expect(order).toEqual(sent);
    client.destroy();
    await broker.stop();
  });

  it('closes an idle connection', async () => {
    const broker = await startBroker({ limits: { idleTimeoutMs: 200 } });
    const client = await WireClient.open(broker.port);
    await client.request(ApiKey.ApiVersions, 0, {});
    await client.closed;
    expect(client.isClosed).toBe(true);
    await broker.stop();
  });

  it('shuts down gracefully: a waiting Fetch still gets its answer, then the connection closes', async () => {
    const broker = await startBroker();
    await createTopic(broker, 'draining');
    const client = await WireClient.open(broker.port);
    const waiting = client.request(ApiKey.Fetch, FETCH_V, fetchRequest([{ topic: 'draining', partitions: [{ partition: 0, fetchOffset: 0 }] }], { maxWaitMs: 60_000 }), 15_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const stopped = broker.stop();
    const r = await waiting;
    expect(r.responses[0].partitions[0].errorCode).toBe(0);
    await stopped;
    await client.closed;
    expect(client.isClosed).toBe(true);
    await expect(WireClient.open(broker.port)).rejects.toThrow();
  });
});

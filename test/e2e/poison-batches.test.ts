/**
 * What the gateway stores, every reader can read (issue 15, items 1 and 2),
 * on both engines, with real clients where a user would notice:
 *
 * - Produce refuses a batch whose CRC is right but whose records are garbage
 *   (INVALID_RECORD, with the record named), one whose CRC is wrong
 *   (CORRUPT_MESSAGE) and a small gzip batch that inflates past the limit
 *   (MESSAGE_TOO_LARGE); none of them is stored, so kafkajs and kcat
 *   consumers and HTTP pop read the good records before and after them.
 * - A bad batch already in storage (as an older version could have written,
 *   or a disk fault): written straight into the engine's storage, it costs
 *   HTTP pop nothing but a report of the unreadable offsets, and ListOffsets
 *   by time a CORRUPT_MESSAGE for that partition, on a connection that stays.
 */
import { Writable } from 'node:stream';
import pg from 'pg';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kafkajs, { type Consumer, type Producer } from 'kafkajs';
import { ErrorCode } from '../../protocol/error-codes.js';
import { buildBatch } from '../../protocol/records/record-batch.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { crc32c } from '../../protocol/records/crc32c.js';
import { openCore, type Core } from '../../src/core/index.js';
import type { MemoryEngine } from '../../src/core/engines/memory/index.js';
import { memoryFront } from '../support/fronts.js';
import { startBroker, type Broker } from '../../src/index.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { waitFor } from '../support/eventually.js';
import { LogCapture } from '../support/gateway.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { kcatConsume } from '../support/kcat.js';
import { RawConnection } from '../support/raw-connection.js';
import { createTopic } from '../support/rdkafka.js';
import { uniqueTopic } from '../support/records.js';

const { CompressionTypes } = kafkajs;
const engines = await engineMatrix();
afterAll(releaseEngines);

const PRODUCE = 0;
const LIST_OFFSETS = 2;
const MIB = 1024 * 1024;

function resign(batch: Buffer): Buffer {
  batch.writeUInt32BE(crc32c(batch.subarray(21)), 17);
  return batch;
}

/** The poison: a batch of about 100 bytes whose CRC holds over records that are garbage. */
function poisonBatch(): Buffer {
  const batch = buildBatch({ records: [{ key: 'k', value: 'a value that will be garbled' }] });
  batch.fill(0xc7, 61);
  return resign(batch);
}

function badCrcBatch(): Buffer {
  const batch = buildBatch({ records: [{ value: 'flipped on the way' }] });
  batch.writeUInt8(batch.readUInt8(batch.length - 3) ^ 0x10, batch.length - 3);
  return batch;
}

/** About 20 KiB of gzip that inflates to 20 MiB: past the default 16 MiB limit for one batch. */
function gzipBomb(): Buffer {
  return buildBatch({ compression: CompressionCodec.Gzip, records: [{ value: Buffer.alloc(20 * MIB) }] });
}

interface ProducePartitionAnswer {
  errorCode: number;
  errorMessage: string | null;
  baseOffset: bigint;
  recordErrors: { batchIndex: number; batchIndexErrorMessage: string | null }[];
}

async function rawProduce(raw: RawConnection, topic: string, records: Buffer): Promise<ProducePartitionAnswer> {
  const response = await raw.request(PRODUCE, 8, { transactionalId: null, acks: -1, timeoutMs: 5_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
  return (response.responses as { partitionResponses: ProducePartitionAnswer[] }[])[0]!.partitionResponses[0]!;
}

async function listOffsetByTime(raw: RawConnection, topic: string, timestamp: number): Promise<{ errorCode: number; offset: bigint }> {
  const response = await raw.request(LIST_OFFSETS, 7, { replicaId: -1, isolationLevel: 0, topics: [{ name: topic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: BigInt(timestamp) }] }] });
  return (response.topics as { partitions: { errorCode: number; offset: bigint }[] }[])[0]!.partitions[0]!;
}

interface PopAnswer {
  messages: { offset: number; data: unknown; leaseId: string | null; partition: string }[];
  unreadable?: { partition: string; from_offset: number; to_offset: number; reason: string }[];
}

async function httpPop(broker: Broker, topic: string, group: string, batch = 100): Promise<{ status: number; body: PopAnswer }> {
  const response = await fetch(`${broker.httpUrl}/api/v1/pop/queue/${topic}?consumerGroup=${group}&batch=${batch}`);
  return { status: response.status, body: (await response.json()) as PopAnswer };
}

async function httpAck(broker: Broker, topic: string, group: string, message: PopAnswer['messages'][number]): Promise<void> {
  const response = await fetch(`${broker.httpUrl}/api/v1/ack`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ queue: topic, partition: message.partition, offset: message.offset, status: 'completed', consumerGroup: group, leaseId: message.leaseId }),
  });
  expect(response.status).toBe(200);
}

for (const engine of engines) {
  const title = `what is stored can be read, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let broker: Broker;
    let core: Core;
    let memory: MemoryEngine | null = null;
    let database: { url: string; schema: string } | null = null;
    const logs = new LogCapture();
    let producer: Producer;
    const consumers: Consumer[] = [];
    const kafka = () => kafkajsClient(broker.bootstrap);

    beforeAll(async () => {
      const choice = engine.fresh();
      if (choice.engine === 'memory') {
        const front = memoryFront({}, { initialRebalanceDelayMs: 0 });
        memory = front.engine;
        core = front;
      } else {
        database = { url: choice.url, schema: choice.schema };
        core = await openCore({ engine: 'postgres', url: choice.url, schema: choice.schema, groups: { initialRebalanceDelayMs: 0 } });
      }
      const logger = pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _e, done) => (logs.write(chunk.toString()), done()) }));
      broker = await startBroker({ host: '127.0.0.1', port: 0, core, autoCreateTopics: false, logger, http: { port: 0 }, shutdownGraceMs: 2_000 });
      producer = kafka().producer({ allowAutoTopicCreation: false });
      await producer.connect();
    });
    afterAll(async () => {
      await Promise.all(consumers.splice(0).map((c) => c.disconnect().catch(() => {})));
      await producer?.disconnect();
      await broker?.stop();
      await core?.close();
    });

    async function send(topic: string, value: string, timestamp?: number): Promise<void> {
      await producer.send({ topic, acks: -1, messages: [{ value, ...(timestamp === undefined ? {} : { timestamp: String(timestamp) }) }] });
    }

    it('refuses a poison batch, a corrupt one and a gzip bomb, and every reader gets the good records before and after them', async () => {
      const topic = uniqueTopic('poison');
      await createTopic(broker.bootstrap, topic, 1);
      await send(topic, 'good-before-1');
      await send(topic, 'good-before-2');

      const raw = await RawConnection.open(broker.port);
      try {
        const poison = await rawProduce(raw, topic, poisonBatch());
        expect(poison.errorCode, 'valid CRC, garbage records').toBe(ErrorCode.INVALID_RECORD);
        expect(poison.errorMessage).toMatch(/^Record batch 0 was refused: record 0: .+ Nothing of this partition's records was stored/);
        expect(poison.recordErrors).toEqual([{ batchIndex: 0, batchIndexErrorMessage: expect.stringMatching(/^record 0: /) }]);

        const corrupt = await rawProduce(raw, topic, badCrcBatch());
        expect(corrupt.errorCode, 'CRC mismatch').toBe(ErrorCode.CORRUPT_MESSAGE);
        expect(corrupt.errorMessage).toMatch(/CRC-32C .* the batch is corrupt/);

        const bomb = gzipBomb();
        expect(bomb.length).toBeLessThan(64 * 1024);
        const tooLarge = await rawProduce(raw, topic, bomb);
        expect(tooLarge.errorCode, 'gzip bomb').toBe(ErrorCode.MESSAGE_TOO_LARGE);
        expect(tooLarge.errorMessage).toMatch(/inflation limit for one batch.*--max-inflated-batch-bytes/);
      } finally {
        raw.destroy();
      }
      await send(topic, 'good-after');
      const expected = ['good-before-1', 'good-before-2', 'good-after'];

      // kafkajs in a group: it crashed on the stored poison ("Invalid Long") and delivered nothing.
      const read: { offset: number; value: string }[] = [];
      const consumer = kafka().consumer({ groupId: `${topic}-kafkajs`, sessionTimeout: 6_000, heartbeatInterval: 300, maxWaitTimeInMs: 100 });
      consumers.push(consumer);
      await consumer.connect();
      await consumer.subscribe({ topic, fromBeginning: true });
      await consumer.run({ eachMessage: async ({ message }) => void read.push({ offset: Number(message.offset), value: message.value!.toString() }) });
      await waitFor(() => read.length >= expected.length, { what: 'kafkajs reading the three good records', timeoutMs: 30_000, describe: () => JSON.stringify(read) });
      expect(read).toEqual(expected.map((value, offset) => ({ offset, value })));

      // kcat: it re-fetched the poison's offset forever; now it reaches the end.
      const kcat = await kcatConsume(broker.bootstrap, topic, { partition: 0, timeoutMs: 20_000 });
      expect(kcat.map((r) => [r.offset, r.value])).toEqual(expected.map((value, offset) => [offset, value]));

      // HTTP pop: it answered 500 on every call.
      const popped = await httpPop(broker, topic, `${topic}-native`);
      expect(popped.status).toBe(200);
      expect(popped.body.messages.map((m) => [m.offset, m.data])).toEqual(expected.map((value, offset) => [offset, value]));
      expect(popped.body.unreadable).toBeUndefined();
    });

    it('a bad batch already in storage: HTTP pop delivers around it and reports it, ListOffsets by time answers CORRUPT_MESSAGE for it and the connection stays', async () => {
      const topic = uniqueTopic('disk-fault');
      await createTopic(broker.bootstrap, topic, 1);
      const t0 = Date.now() - 60_000;
      await send(topic, 'before', t0);
      await send(topic, 'victim', t0 + 1_000);
      await send(topic, 'after', t0 + 2_000);
      await damageStoredBatch(topic, 1);

      // A fresh group pops as much as it may: the record before the bad batch, and no further.
      const group = `${topic}-native`;
      const first = await httpPop(broker, topic, group);
      expect(first.status).toBe(200);
      expect(first.body.messages.map((m) => [m.offset, m.data])).toEqual([[0, 'before']]);
      expect(first.body.unreadable).toBeUndefined();
      await httpAck(broker, topic, group, first.body.messages[0]!);

      // Next pop: the bad batch is at the front; it is passed over and reported, the record after it delivered.
      const second = await httpPop(broker, topic, group);
      expect(second.status).toBe(200);
      expect(second.body.messages.map((m) => [m.offset, m.data])).toEqual([[2, 'after']]);
      expect(second.body.unreadable).toEqual([{ partition: '0', from_offset: 1, to_offset: 2, reason: expect.stringMatching(/record/) }]);
      expect(logs.matching('pop passed over a stored batch that cannot be read', topic)).toHaveLength(1);
      await httpAck(broker, topic, group, second.body.messages[0]!);
      const third = await httpPop(broker, topic, group);
      expect(third.status).toBe(200);
      expect(third.body.messages).toEqual([]);
      expect(third.body.unreadable).toBeUndefined();

      const raw = await RawConnection.open(broker.port);
      try {
        expect(await listOffsetByTime(raw, topic, t0 + 500), 'a time that falls in the bad batch').toMatchObject({ errorCode: ErrorCode.CORRUPT_MESSAGE, offset: -1n });
        expect(await listOffsetByTime(raw, topic, t0 + 1_500), 'a time after it, same connection').toMatchObject({ errorCode: 0, offset: 2n });
        expect(await listOffsetByTime(raw, topic, t0 - 1_000), 'a time before it').toMatchObject({ errorCode: 0, offset: 0n });
      } finally {
        raw.destroy();
      }
    });

    /**
     * Replaces the records of the stored batch at `offset` with garbage under
     * a CRC that holds, as a version that checked only the CRC could have
     * stored it: in the memory engine's log, or by an UPDATE in PostgreSQL.
     */
    async function damageStoredBatch(topic: string, offset: number): Promise<void> {
      const garble = (bytes: Buffer): Buffer => {
        const copy = Buffer.from(bytes);
        copy.fill(0xc7, 61);
        return resign(copy);
      };
      if (memory) {
        const internals = (memory as unknown as { store: { queues: Map<string, { partitions: { log: { batches: { baseOffset: number; bytes: Buffer }[] } }[] }> } }).store;
        const stored = internals.queues.get(topic)!.partitions[0]!.log.batches.find((b) => b.baseOffset === offset)!;
        stored.bytes = garble(stored.bytes);
        return;
      }
      const client = new pg.Client({ connectionString: database!.url });
      await client.connect();
      try {
        const where = `partition_id = (SELECT p.id FROM "${database!.schema}".partitions p JOIN "${database!.schema}".queues q ON q.id = p.queue_id WHERE q.name = $1 AND p.idx = 0) AND base_offset = $2`;
        const { rows } = await client.query<{ bytes: Buffer }>(`SELECT bytes FROM "${database!.schema}".batches WHERE ${where}`, [topic, offset]);
        expect(rows).toHaveLength(1);
        const updated = await client.query(`UPDATE "${database!.schema}".batches SET bytes = $3 WHERE ${where}`, [topic, offset, garble(rows[0]!.bytes)]);
        expect(updated.rowCount).toBe(1);
      } finally {
        await client.end();
      }
    }
  });
}

for (const engine of engines) {
  const title = `the inflation limit is a setting, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let broker: Broker;
    beforeAll(async () => {
      const choice = engine.fresh();
      broker = await startBroker({
        host: '127.0.0.1',
        port: 0,
        ...(choice.engine === 'memory' ? { engine: 'memory' } : { engine: 'postgres', url: choice.url, schema: choice.schema }),
        maxInflatedBatchBytes: 64 * 1024,
        shutdownGraceMs: 2_000,
      });
    });
    afterAll(() => broker?.stop());

    it('a kafkajs producer compressing with gzip gets a batch under the limit stored and one over it refused as too large', async () => {
      const topic = uniqueTopic('inflate-limit');
      await createTopic(broker.bootstrap, topic, 1);
      const producer = kafkajsClient(broker.bootstrap, { retries: 0 }).producer({ allowAutoTopicCreation: false });
      await producer.connect();
      try {
        const small = await producer.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages: [{ value: 'y'.repeat(16 * 1024) }] });
        expect(small[0]!.errorCode).toBe(0);
        // About 100 bytes on the wire, 128 KiB inflated: over the 64 KiB this broker allows.
        await expect(producer.send({ topic, acks: -1, compression: CompressionTypes.GZIP, messages: [{ value: 'z'.repeat(128 * 1024) }] })).rejects.toMatchObject({
          type: 'MESSAGE_TOO_LARGE',
        });
      } finally {
        await producer.disconnect();
      }
      const read = await kcatConsume(broker.bootstrap, topic, { partition: 0, timeoutMs: 20_000 });
      expect(read.map((r) => r.value.length)).toEqual([16 * 1024]);
    });
  });
}

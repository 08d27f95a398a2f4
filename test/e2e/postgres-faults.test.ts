/**
 * PostgreSQL faults under real producers, on a throwaway cluster of the
 * test's own (never the shared server): the database is stopped and started
 * again, and frozen with SIGSTOP for 20 s, while a librdkafka idempotent
 * producer and a kafkajs idempotent producer write through it and a
 * librdkafka consumer reads. Afterwards every acknowledged record must be
 * stored exactly once, in order, the consumer must have read each once and
 * been handed no error, and the
 * gateway must have said so in one log line per episode (down, then back),
 * with no connection closed for it and nothing logged per request. While
 * the database is down, Produce and Fetch answer retriable codes, the group
 * APIs COORDINATOR_NOT_AVAILABLE (as Kafka's coordinator does when its log
 * cannot be reached) on a connection that stays open, /ready and native
 * pushes answer 503 with Retry-After, /ready within its deadline even while
 * the database hangs.
 *
 * A database that cannot be reached at start stops `serve` with one
 * sentence saying what to fix. The stop case runs in the split layout too
 * (core behind the internal RPC), where the fault answers cross the hop.
 */
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { Producer } from '@confluentinc/kafka-javascript';
import type { Logger } from 'pino';
import { startBroker } from '../../src/index.js';
import { openCore } from '../../src/core/index.js';
import { connectCore, RpcServer } from '../../src/rpc/index.js';
import { startThrowawayCluster, type ThrowawayCluster } from '../support/postgres.js';
import { freePort, LogCapture } from '../support/gateway.js';
import { adminCall, connectConsumer, connectProducer, createAdmin, disconnect, OFFSET_BEGINNING, readRecords, toReadRecord } from '../support/rdkafka.js';
import KafkaJavascript, { type Message } from '@confluentinc/kafka-javascript';
import { connectKafkajsProducer, kafkajsClient, kafkajsSend } from '../support/kafkajs.js';
import { expectExactlyOnceInOrder, sequencedValue, uniqueTopic, type ReadRecord, type SentRecord } from '../support/records.js';
import { sleep, waitFor, within } from '../support/eventually.js';
import { RawConnection } from '../support/raw-connection.js';
import { buildBatch } from '../../protocol/records/record-batch.js';

const cluster: ThrowawayCluster | Error = await startThrowawayCluster().catch((e: Error) => e);
const skipReason = cluster instanceof Error ? `no throwaway PostgreSQL cluster could start: ${cluster.message}` : null;
afterAll(async () => {
  if (!(cluster instanceof Error)) await cluster.stop();
});

const { CODES } = KafkaJavascript;
const PARTITIONS = [0, 1];
const PRODUCE = 0;
const FETCH = 1;
const API_VERSIONS = 18;
const OFFSET_COMMIT = 8;
const OFFSET_FETCH = 9;
const DESCRIBE_GROUPS = 15;
const LIST_GROUPS = 16;
const COORDINATOR_NOT_AVAILABLE = 15;
const REQUEST_TIMED_OUT = 7;
const KAFKA_STORAGE_ERROR = 56;
const WARN = 40;
const ERROR = 50;
const DOWN = 'PostgreSQL is not answering';
const BACK = 'PostgreSQL is answering again';

/** Records written in paced rounds, so a fault lands mid-stream. */
function sequenced(topic: string, from: number, count: number): SentRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const seq = from + i;
    return { partition: seq % PARTITIONS.length, key: `k${seq}`, value: sequencedValue(topic, seq), headers: [], timestamp: Date.now() };
  });
}

interface Writer {
  topic: string;
  /** Records the producer was told are stored. */
  acked: () => number;
  failures: string[];
  /** Stops starting new rounds and resolves once every record sent has an answer. */
  finish: () => Promise<number>;
}

/** A librdkafka idempotent producer sending `perRound` records every `intervalMs`, each acknowledgement counted. */
async function rdkafkaWriter(bootstrap: string, topic: string, perRound: number, intervalMs: number): Promise<Writer> {
  const producer: Producer = await connectProducer(
    bootstrap,
    { 'enable.idempotence': true, 'linger.ms': 5, 'message.timeout.ms': 180_000, 'retry.backoff.ms': 100, 'retry.backoff.max.ms': 1_000 },
    topic,
  );
  let sent = 0;
  let acked = 0;
  const failures: string[] = [];
  producer.on('delivery-report', (err) => {
    if (err) failures.push(err.message);
    else acked++;
  });
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const r of sequenced(topic, sent, perRound)) producer.produce(topic, r.partition, Buffer.from(r.value), Buffer.from(r.key!), r.timestamp);
      sent += perRound;
      await sleep(intervalMs);
    }
  })();
  return {
    topic,
    acked: () => acked,
    failures,
    finish: async () => {
      running = false;
      await loop;
      await waitFor(() => acked + failures.length === sent, { what: `answers for all ${sent} records`, timeoutMs: 120_000, describe: () => `${acked} acked, ${failures.length} failed` });
      await disconnect(producer);
      return sent;
    },
  };
}

/** A kafkajs idempotent producer sending rounds one after the other, as an application awaiting each send does. */
async function kafkajsWriter(bootstrap: string, topic: string, perRound: number, intervalMs: number): Promise<Writer> {
  // Enough retries to outlast a 20 s outage: each try during a freeze waits out the statement timeout.
  const producer = await connectKafkajsProducer(kafkajsClient(bootstrap, { retries: 100 }), { idempotent: true, maxInFlightRequests: 1 });
  let sent = 0;
  let acked = 0;
  const failures: string[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const round = sequenced(topic, sent, perRound);
      sent += perRound;
      try {
        await kafkajsSend(producer, topic, round, { acks: -1 });
        acked += perRound;
      } catch (e) {
        failures.push((e as Error).message);
        running = false;
      }
      await sleep(intervalMs);
    }
  })();
  return {
    topic,
    acked: () => acked,
    failures,
    finish: async () => {
      running = false;
      await loop;
      await producer.disconnect();
      return sent;
    },
  };
}

/** A librdkafka consumer reading `topic` from the start all through the fault, until told to stop at `total` records. */
async function liveReader(bootstrap: string, topic: string): Promise<{ read: ReadRecord[]; errors: string[]; until: (total: number) => Promise<void> }> {
  const consumer = await connectConsumer(bootstrap, {}, topic);
  consumer.assign(PARTITIONS.map((partition) => ({ topic, partition, offset: OFFSET_BEGINNING })));
  const read: ReadRecord[] = [];
  const errors: string[] = [];
  consumer.on('event.error', (err) => errors.push(err.message));
  let stopAt = Infinity;
  const loop = (async () => {
    while (read.length < stopAt) {
      const batch = await new Promise<Message[]>((resolve) =>
        consumer.consume(500, (err, messages) => {
          if (err && err.code !== CODES.ERRORS.ERR__PARTITION_EOF && err.code !== CODES.ERRORS.ERR__TIMED_OUT) errors.push(err.message);
          resolve(messages ?? []);
        }),
      );
      for (const m of batch) read.push(toReadRecord(m));
      if (batch.length === 0) await sleep(20);
    }
  })();
  return {
    read,
    errors,
    until: async (total) => {
      stopAt = total;
      await within(loop, 60_000, `the live consumer to read all ${total} records of ${topic}`);
      await disconnect(consumer);
    },
  };
}

/** What the fault cases need of a running layout: the Kafka and HTTP addresses, and a stop. */
interface Layout {
  bootstrap: string;
  port: number;
  httpUrl: string;
  stop(): Promise<void>;
}

const RPC_SECRET = 'postgres-faults-test-secret';

/**
 * `serve`: gateway and core in one process. `split`: the core behind an RPC
 * server and the gateway on an RPC client (in this process, on loopback), so
 * the core's fault answers cross the hop as they do between `core` and
 * `gateway --core`.
 */
async function startLayout(kind: 'serve' | 'split', db: ThrowawayCluster, schema: string, logger: Logger): Promise<Layout> {
  if (kind === 'serve') {
    const broker = await startBroker({ engine: 'postgres', url: db.url, schema, logger, http: { port: 0 }, shutdownGraceMs: 2_000 });
    return { bootstrap: broker.bootstrap, port: broker.port, httpUrl: broker.httpUrl!, stop: () => broker.stop() };
  }
  const core = await openCore({ engine: 'postgres', url: db.url, schema, log: logger.child({ service: 'queen-core' }) });
  const server = new RpcServer({ core, secret: RPC_SECRET, log: logger });
  const address = await server.listen({ host: '127.0.0.1', port: 0 });
  const client = await connectCore({ address, secret: RPC_SECRET, log: logger });
  const broker = await startBroker({ core: client, logger, http: { port: 0 }, shutdownGraceMs: 2_000 });
  return {
    bootstrap: broker.bootstrap,
    port: broker.port,
    httpUrl: broker.httpUrl!,
    stop: async () => {
      await broker.stop();
      await client.close();
      await server.close();
      await core.close();
    },
  };
}

const LAYOUTS = [
  { kind: 'serve', freeze: true },
  // The split layout gets the stop case only, to keep the file's run time down; the freeze takes 20 s.
  { kind: 'split', freeze: false },
] as const;

let schemaCount = 0;

describe.skipIf(skipReason !== null).each(LAYOUTS)(`PostgreSQL faults under idempotent producers, $kind layout${skipReason ? ` (skipped: ${skipReason})` : ''}`, ({ kind, freeze }) => {
  const db = cluster as ThrowawayCluster;
  let broker: Layout;
  const logs = new LogCapture();

  beforeAll(async () => {
    const logger = pino({ level: 'debug' }, new Writable({ write: (chunk: Buffer, _e, done) => (logs.write(chunk.toString()), done()) }));
    broker = await startLayout(kind, db, `faults_${process.pid}_${schemaCount++}`, logger);
  });
  afterAll(async () => {
    await db.thaw();
    await broker?.stop();
  });

  async function createTopic(topic: string): Promise<void> {
    const admin = createAdmin(broker.bootstrap);
    try {
      await adminCall<void>((cb) => admin.createTopic({ topic, num_partitions: PARTITIONS.length, replication_factor: 1 }, 15_000, cb));
    } finally {
      admin.disconnect();
    }
  }

  /** GET /ready (readiness: the core answers), answered or not within 10 s. */
  async function health(): Promise<{ status: number; retryAfter: string | null; body: unknown }> {
    const response = await fetch(`${broker.httpUrl}/ready`, { signal: AbortSignal.timeout(10_000) });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: await response.json() };
  }

  async function nativePush(queue: string): Promise<{ status: number; retryAfter: string | null; body: { code?: string; message?: string } }> {
    const response = await fetch(`${broker.httpUrl}/api/v1/push`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [{ queue, payload: { during: 'outage' } }] }),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as { code?: string; message?: string } };
  }

  /** Runs both producers through `fault`, then checks every acknowledged record and the log. */
  async function throughFault(label: string, fault: (during: () => Promise<void>) => Promise<void>): Promise<void> {
    const rdTopic = uniqueTopic(`pgfault-${label}-rd`);
    const jsTopic = uniqueTopic(`pgfault-${label}-js`);
    await createTopic(rdTopic);
    await createTopic(jsTopic);
    const linesBefore = logs.entries.length;
    const writers = [await rdkafkaWriter(broker.bootstrap, rdTopic, 50, 100), await kafkajsWriter(broker.bootstrap, jsTopic, 20, 50)];
    // A consumer reads one topic all through the fault: its Fetch requests meet the fault too.
    const reader = await liveReader(broker.bootstrap, rdTopic);
    // Both are writing before the fault.
    await waitFor(() => writers.every((w) => w.acked() >= 100), { what: 'both producers to have records acknowledged before the fault', timeoutMs: 30_000 });
    const ackedBefore = writers.map((w) => w.acked());

    await fault(async () => {
      // On the wire: retriable per-partition codes, on a connection that stays open.
      const raw = await RawConnection.open(broker.port);
      try {
        const produced = await raw.request(PRODUCE, 7, {
          transactionalId: null,
          acks: -1,
          timeoutMs: 30_000,
          topicData: [{ name: rdTopic, partitionData: [{ index: 0, records: buildBatch({ records: [{ value: 'raw during the fault' }] }) }] }],
        }, 40_000);
        expect(produced.responses[0].partitionResponses[0].errorCode, 'Produce while PostgreSQL is down').toBe(REQUEST_TIMED_OUT);
        const fetched = await raw.request(FETCH, 11, {
          replicaId: -1, maxWaitMs: 100, minBytes: 1, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
          topics: [{ topic: rdTopic, partitions: [{ partition: 0, currentLeaderEpoch: -1, fetchOffset: 0n, logStartOffset: -1n, partitionMaxBytes: 1 << 20 }] }],
          forgottenTopicsData: [], rackId: '',
        }, 40_000);
        expect(fetched.responses[0].partitions[0].errorCode, 'Fetch while PostgreSQL is down').toBe(KAFKA_STORAGE_ERROR);
        // The group APIs answer as Kafka's coordinator does when it cannot reach its log: retry, after finding me again.
        const group = `pgfault-${label}-group`;
        const described = await raw.request(DESCRIBE_GROUPS, 5, { groups: [group], includeAuthorizedOperations: false }, 40_000);
        expect(described.groups[0].errorCode, 'DescribeGroups while PostgreSQL is down').toBe(COORDINATOR_NOT_AVAILABLE);
        const listed = await raw.request(LIST_GROUPS, 4, { statesFilter: [] }, 40_000);
        expect(listed.errorCode, 'ListGroups while PostgreSQL is down').toBe(COORDINATOR_NOT_AVAILABLE);
        const offsetsFetched = await raw.request(OFFSET_FETCH, 7, { groupId: group, topics: [{ name: rdTopic, partitionIndexes: [0] }], requireStable: false }, 40_000);
        expect(offsetsFetched.errorCode, 'OffsetFetch while PostgreSQL is down').toBe(COORDINATOR_NOT_AVAILABLE);
        const committed = await raw.request(OFFSET_COMMIT, 8, {
          groupId: group, generationIdOrMemberEpoch: -1, memberId: '', groupInstanceId: null,
          topics: [{ name: rdTopic, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }],
        }, 40_000);
        expect(committed.topics[0].partitions[0].errorCode, 'OffsetCommit while PostgreSQL is down').toBe(COORDINATOR_NOT_AVAILABLE);
        // Still open and answering: no request above closed it.
        expect((await raw.request(API_VERSIONS, 3, { clientSoftwareName: 'faults', clientSoftwareVersion: '1' })).errorCode).toBe(0);
      } finally {
        raw.destroy();
      }
      const h = await health();
      expect(h.status, `/ready while PostgreSQL is down: ${JSON.stringify(h.body)}`).toBe(503);
      expect(h.retryAfter, '/ready carries Retry-After').toMatch(/^\d+$/);
      const pushed = await nativePush(rdTopic);
      expect(pushed.status, `a native push while PostgreSQL is down: ${JSON.stringify(pushed.body)}`).toBe(503);
      expect(pushed.body.code).toBe('unavailable');
      expect(pushed.retryAfter, 'a 503 push carries Retry-After').toMatch(/^\d+$/);
    });

    // Writing goes on after the fault, then both stop.
    await waitFor(() => writers.every((w, i) => w.acked() >= ackedBefore[i]! + 200), {
      what: 'both producers to have more records acknowledged after the fault',
      timeoutMs: 90_000,
      describe: () => writers.map((w) => `${w.topic}: ${w.acked()} acked, failures ${JSON.stringify(w.failures.slice(0, 3))}`).join('; '),
    });
    const totals: number[] = [];
    for (const writer of writers) {
      const sent = await writer.finish();
      totals.push(sent);
      expect(writer.failures, `${writer.topic}: no record may fail through the fault`).toEqual([]);
      expect(writer.acked()).toBe(sent);
      // Every acknowledged record stored exactly once, in order per partition.
      const read = await readRecords(broker.bootstrap, writer.topic, { partitions: PARTITIONS, count: sent, timeoutMs: 60_000 });
      expectExactlyOnceInOrder(writer.topic, sent, read);
    }
    await reader.until(totals[0]!);
    expectExactlyOnceInOrder(rdTopic, totals[0]!, reader.read);
    expect(reader.errors, 'the consumer reading through the fault was handed no error').toEqual([]);
    expect((await health()).status, '/ready once PostgreSQL is back').toBe(200);

    const episode = logs.entries.slice(linesBefore);
    const downLines = episode.filter((e) => String(e.msg).startsWith(DOWN));
    const backLines = episode.filter((e) => String(e.msg).startsWith(BACK));
    expect(downLines.length, `one line when PostgreSQL stopped answering: ${JSON.stringify(downLines)}`).toBe(1);
    expect(downLines[0]!.level).toBe(WARN);
    expect(backLines.length, `one line when it answered again: ${JSON.stringify(backLines)}`).toBe(1);
    expect(Number(backLines[0]!['failedCalls'])).toBeGreaterThan(0);
    const noisy = episode.filter((e) => (e.level ?? 0) >= WARN && !String(e.msg).startsWith(DOWN));
    expect(noisy, 'nothing else logged at warn or above: no stack, no connection closed for a fault').toEqual([]);
    expect(episode.filter((e) => (e.level ?? 0) >= ERROR)).toEqual([]);
    console.log(`${label}: librdkafka ${totals[0]} and kafkajs ${totals[1]} records acknowledged and read back once; PostgreSQL down ${backLines[0]!['downForMs']} ms, ${backLines[0]!['failedCalls']} calls failed`);
  }

  it('stopped for 5 s and started again: every acknowledged record stored once, one log line down and one back', { timeout: 240_000 }, async () => {
    await throughFault(`stop-${kind}`, async (during) => {
      await db.halt();
      try {
        await waitFor(() => logs.entries.some((e) => String(e.msg).startsWith(DOWN)), { what: 'the gateway to notice PostgreSQL is down', timeoutMs: 30_000 });
        await during();
        await sleep(3_000);
      } finally {
        await db.restart();
      }
    });
  });

  if (freeze) {
    it('frozen with SIGSTOP for 20 s: requests fail over to retriable errors, /ready answers 503 in time, nothing lost or doubled', { timeout: 240_000 }, async () => {
      await throughFault('freeze', async (during) => {
        await db.freeze();
        const frozenAt = Date.now();
        try {
          await during();
          await sleep(Math.max(0, 20_000 - (Date.now() - frozenAt)));
        } finally {
          await db.thaw();
        }
      });
    });
  }
});

describe('PostgreSQL unreachable at start', () => {
  it('stops `serve` with one sentence saying what to fix, and exit code 1', { timeout: 60_000 }, async () => {
    const closedPort = await freePort();
    const cli = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', cli, 'serve', '--port', '0', '--no-http', '--engine', 'postgres', '--database-url', `postgres://queen:secret-pw@127.0.0.1:${closedPort}/queen`, '--database-wait-ms', '0'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    const lines = stderr.trim().split('\n');
    expect(lines, `stderr: ${stderr}`).toHaveLength(1);
    expect(lines[0]).toContain(`127.0.0.1:${closedPort}`);
    expect(lines[0]).toMatch(/refused the connection; start PostgreSQL there or point the database URL at a running server\.$/);
    expect(lines[0], 'the password is never printed').not.toContain('secret-pw');
  });
});

/**
 * The gateway in the split layout: the Kafka listener in front of an RPC
 * client, the core behind an RPC server on loopback TCP, on every engine.
 * Real clients see the same broker as with `serve`: kafkajs produces, a
 * kafkajs consumer group (JoinGroup and SyncGroup held across the hop)
 * consumes, librdkafka reads back. Then exactly-once across the hop: the
 * core commits a plain (non-idempotent) producer's append and the connection
 * is cut before the answer arrives; the RPC retries it and the topic holds the
 * record once. Last, the CLI's two processes: `core` and `gateway --core`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CompressionTypes, type Admin } from 'kafkajs';
import { openCore, type Core } from '../../src/core/index.js';
import { startBroker, type Broker } from '../../src/index.js';
import { connectCore, RpcServer, type RpcCore, type RpcFaults } from '../../src/rpc/index.js';
import { engineMatrix, releaseEngines, type EngineChoice } from '../support/engines.js';
import { freePort, LogCapture } from '../support/gateway.js';
import { connectKafkajsProducer, kafkajsClient, kafkajsSend } from '../support/kafkajs.js';
import { readRecords } from '../support/rdkafka.js';
import { expectSameRecords, planRecords, uniqueTopic } from '../support/records.js';
import { waitFor } from '../support/eventually.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

const SECRET = 'split-layout-test-secret';
const GROUPS = { initialRebalanceDelayMs: 0 };

interface SplitLayout {
  bootstrap: string;
  core: Core;
  stop(): Promise<void>;
}

/** Core behind an RPC server, gateway on an RPC client: two halves of the split layout in one test process. */
async function startSplit(engine: EngineChoice, faults?: RpcFaults): Promise<SplitLayout> {
  const core = await openCore(engine.engine === 'postgres' ? { engine: 'postgres', url: engine.url, schema: engine.schema, groups: GROUPS } : { engine: 'memory', groups: GROUPS });
  const server = new RpcServer({ core, secret: SECRET, ...(faults ? { faults } : {}) });
  const address = await server.listen({ host: '127.0.0.1', port: 0 });
  const client: RpcCore = await connectCore({ address, secret: SECRET });
  const broker: Broker = await startBroker({ core: client, autoCreateTopics: false, shutdownGraceMs: 2_000 });
  return {
    bootstrap: broker.bootstrap,
    core,
    stop: async () => {
      await broker.stop();
      await client.close();
      await server.close();
      await core.close();
    },
  };
}

for (const engine of engines) {
  const title = `split layout (gateway → RPC → core), ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let split: SplitLayout;
    let admin: Admin;

    beforeAll(async () => {
      split = await startSplit(engine.fresh());
      admin = kafkajsClient(split.bootstrap).admin();
      await admin.connect();
    });
    afterAll(async () => {
      await admin?.disconnect();
      await split?.stop();
    });

    it('kafkajs produces keyed, compressed records with headers; librdkafka reads them back intact', async () => {
      const topic = uniqueTopic('split-produce');
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true })).toBe(true);
      const sent = planRecords({ label: topic, partitions: 3, perPartition: 50, headers: [['layout', 'split']] });
      const producer = await connectKafkajsProducer(kafkajsClient(split.bootstrap));
      try {
        const results = await kafkajsSend(producer, topic, sent, { acks: -1, compression: CompressionTypes.GZIP, chunk: 40 });
        for (const r of results) expect(r.errorCode).toBe(0);
      } finally {
        await producer.disconnect();
      }
      expectSameRecords(sent, await readRecords(split.bootstrap, topic, { partitions: [0, 1, 2], count: sent.length }));
    });

    it('a kafkajs consumer group joins, syncs and consumes every record through the hop', async () => {
      const topic = uniqueTopic('split-group');
      await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true });
      const sent = planRecords({ label: topic, partitions: 2, perPartition: 20 });
      const producer = await connectKafkajsProducer(kafkajsClient(split.bootstrap));
      await kafkajsSend(producer, topic, sent, { acks: -1 });
      await producer.disconnect();

      const consumer = kafkajsClient(split.bootstrap).consumer({ groupId: `${topic}-group`, sessionTimeout: 10_000, heartbeatInterval: 500 });
      const values: string[] = [];
      await consumer.connect();
      try {
        await consumer.subscribe({ topic, fromBeginning: true });
        await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value!.toString()) });
        await waitFor(() => values.length >= sent.length, { timeoutMs: 30_000, what: `${sent.length} records through the group` });
      } finally {
        await consumer.disconnect();
      }
      expect(values.sort()).toEqual(sent.map((r) => r.value).sort());
      const committed = await admin.fetchOffsets({ groupId: `${topic}-group`, topics: [topic] });
      expect(committed[0]!.partitions.map((p) => Number(p.offset)).reduce((a, b) => a + b, 0)).toBe(sent.length);
    });
  });

  describe.skipIf(engine.skipReason !== null)(`exactly once across the hop, ${engine.name} engine`, () => {
    it('a plain producer’s append, committed by the core and cut off before its answer, is stored once', async () => {
      let dropped = 0;
      const split = await startSplit(engine.fresh(), {
        beforeReply: ({ method }) => {
          if (method !== 'append' || dropped > 0) return;
          dropped++;
          return 'drop-connection';
        },
      });
      try {
        const topic = uniqueTopic('split-once');
        await split.core.createQueue({ name: topic, partitions: 1, config: { dedupWindowSeconds: 0 } });
        const producer = await connectKafkajsProducer(kafkajsClient(split.bootstrap, { retries: 0 }), { idempotent: false });
        try {
          const [result] = await producer.send({ topic, acks: -1, messages: [{ value: 'exactly one' }] });
          expect(result).toMatchObject({ errorCode: 0, baseOffset: '0' });
        } finally {
          await producer.disconnect();
        }
        expect(dropped).toBe(1);
        const read = await readRecords(split.bootstrap, topic, { partitions: [0], count: 1 });
        expect(read.map((r) => r.value)).toEqual(['exactly one']);
        const offsets = await split.core.offsets({ partitions: [{ queue: topic, partition: 0 }] });
        expect(offsets.partitions[0]!.highWatermark).toBe(1);
      } finally {
        await split.stop();
      }
    });
  });
}

// ─── The CLI's two processes ──────────────────────────────────────────────────

const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

function launch(args: string[], logs: LogCapture): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NODE_ENV: 'test', QUEEN_RPC_SECRET: SECRET },
  });
  child.stdout!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
  return child;
}

async function stopChild(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

describe('the CLI in the split layout: queen-gateway core + queen-gateway gateway --core', () => {
  const coreLogs = new LogCapture();
  const gatewayLogs = new LogCapture();
  let core: ChildProcess | undefined;
  let gateway: ChildProcess | undefined;
  let bootstrap = '';

  beforeAll(async () => {
    const rpcPort = await freePort();
    const kafkaPort = await freePort();
    core = launch(['core', '--rpc-host', '127.0.0.1', '--rpc-port', String(rpcPort), '--engine', 'memory', '--group-initial-rebalance-delay-ms', '0'], coreLogs);
    await waitFor(() => coreLogs.matching('ready').length > 0 || core!.exitCode !== null, { timeoutMs: 30_000, what: 'the core to listen' });
    gateway = launch(['gateway', '--core', `127.0.0.1:${rpcPort}`, '--host', '127.0.0.1', '--port', String(kafkaPort), '--no-auto-create-topics', '--no-http'], gatewayLogs);
    await waitFor(() => gatewayLogs.matching('ready').length > 0 || gateway!.exitCode !== null, { timeoutMs: 30_000, what: 'the gateway to listen' });
    expect(gateway.exitCode, gatewayLogs.tail()).toBeNull();
    bootstrap = `127.0.0.1:${kafkaPort}`;
  }, 70_000);
  afterAll(async () => {
    await stopChild(gateway);
    await stopChild(core);
  });

  it('serves a Kafka client end to end, the records kept by the core process', async () => {
    const admin = kafkajsClient(bootstrap).admin();
    await admin.connect();
    const topic = uniqueTopic('split-cli');
    try {
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: 2 }], waitForLeaders: true })).toBe(true);
    } finally {
      await admin.disconnect();
    }
    const sent = planRecords({ label: topic, partitions: 2, perPartition: 30 });
    const producer = await connectKafkajsProducer(kafkajsClient(bootstrap));
    await kafkajsSend(producer, topic, sent, { acks: -1 });
    await producer.disconnect();
    expectSameRecords(sent, await readRecords(bootstrap, topic, { partitions: [0, 1], count: sent.length }));
    expect(coreLogs.matching('"engine":"memory"', 'ready').length).toBe(1);
  });
});

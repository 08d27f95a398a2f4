/**
 * The migration bridge as its end-to-end suites drive it: the `bridge`
 * command as a child process (so it can be SIGKILLed), a target core behind
 * the RPC with a gateway on the same core (the layout the bridge is made for),
 * and a partition's log read to its end and summed up, so a source and its
 * copy can be compared offset for offset.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Message } from '@confluentinc/kafka-javascript';
import { openCore, type Core } from '../../src/core/index.js';
import { startBroker, type Broker } from '../../src/index.js';
import { formatRpcAddress, RpcServer } from '../../src/rpc/index.js';
import { KafkaClient } from '../../src/kafka-client/client.js';
import { committedBatches, fetchFrom, storedBatches } from '../../src/kafka-client/fetch.js';
import type { EngineChoice } from './engines.js';
import { connectConsumer, disconnect, fromHeaders, OFFSET_BEGINNING, type ConsumerConfig } from './rdkafka.js';
import { sleep, waitFor } from './eventually.js';
import { LogCapture } from './gateway.js';

const CLI = fileURLToPath(new URL('../../bin/queen-gateway.js', import.meta.url));
export const BRIDGE_SECRET = 'bridge-test-rpc-secret';

export interface Target {
  core: Core;
  /** The core's RPC address, for the bridge's --core. */
  rpc: string;
  /** A gateway on the same core (same group coordinator), for the consumers that move. */
  bootstrap: string;
  broker: Broker;
  stop(): Promise<void>;
}

export async function startTarget(engine: EngineChoice): Promise<Target> {
  const groups = { initialRebalanceDelayMs: 0 };
  const core = await openCore(engine.engine === 'postgres' ? { engine: 'postgres', url: engine.url, schema: engine.schema, groups } : { engine: 'memory', groups });
  const server = new RpcServer({ core, secret: BRIDGE_SECRET });
  const address = await server.listen({ host: '127.0.0.1', port: 0 });
  const broker = await startBroker({ core, autoCreateTopics: false, shutdownGraceMs: 1_000 });
  return {
    core,
    rpc: formatRpcAddress(address),
    bootstrap: broker.bootstrap,
    broker,
    async stop() {
      await broker.stop();
      await server.close();
      await core.close();
    },
  };
}

export interface BridgeProcess {
  logs: LogCapture;
  readonly pid: number | undefined;
  /** SIGKILL, as a crash would; resolves once it has exited. */
  kill(): Promise<void>;
  /** SIGTERM; resolves with the exit code once the final report is out. */
  stop(): Promise<number | null>;
  /** Starts it again with the same arguments. */
  restart(): Promise<void>;
}

/** node --import it: the process runs as if librdkafka's binding were not installed. */
const WITHOUT_LIBRDKAFKA = fileURLToPath(new URL('./without-librdkafka/register.mjs', import.meta.url));

/** `withoutLibrdkafka`: run it as on a machine where only `npm install` ran (the binding unresolvable). */
export async function startBridgeProcess(args: string[], options: { withoutLibrdkafka?: boolean } = {}): Promise<BridgeProcess> {
  const logs = new LogCapture();
  let child: ChildProcess | null = null;
  let exited: Promise<number | null> = Promise.resolve(null);
  const launch = async () => {
    // Each start logs "bridge running" once it is copying and serving metrics; a restart waits for its own.
    const startsBefore = logs.matching('bridge running').length;
    const spawned = spawn(process.execPath, [...(options.withoutLibrdkafka ? ['--import', WITHOUT_LIBRDKAFKA] : []), CLI, 'bridge', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, QUEEN_RPC_SECRET: BRIDGE_SECRET } });
    child = spawned;
    spawned.stdout!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
    spawned.stderr!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
    exited = new Promise((resolve) => spawned.once('exit', (code) => resolve(code)));
    await waitFor(() => logs.matching('bridge running').length > startsBefore || spawned.exitCode !== null, {
      what: 'the bridge to start',
      timeoutMs: 60_000,
      intervalMs: 50,
      describe: () => logs.tail(),
    });
    if (spawned.exitCode !== null) throw new Error(`the bridge exited with ${spawned.exitCode} at start:\n${logs.tail()}`);
  };
  await launch();
  return {
    logs,
    get pid() {
      return (child as ChildProcess | null)?.pid;
    },
    async kill() {
      (child as ChildProcess | null)?.kill('SIGKILL');
      await exited;
    },
    async stop() {
      const running = child as ChildProcess | null;
      if (!running || running.exitCode !== null || running.signalCode !== null) return running?.exitCode ?? null;
      running.kill('SIGTERM');
      const forced = setTimeout(() => running.kill('SIGKILL'), 30_000);
      const code = await exited;
      clearTimeout(forced);
      return code;
    },
    restart: launch,
  };
}

export interface PartitionLog {
  /** The partition's log start offset: above 0 once retention or DeleteRecords removed its first records. */
  start: number;
  /** Where the partition ends (librdkafka's end-of-partition offset). */
  end: number;
  records: { offset: number; key: string | null; value: string; headers: [string, string][]; timestamp: number }[];
}

/**
 * Every partition of `topic` read from its log start to its end as it is now,
 * read_committed; `config` adds librdkafka settings (a secured listener's).
 * The start is read too and is part of each partition's checksum, so a log
 * whose first records are gone (retention) reads as such, not as an empty one.
 */
export async function readLogs(bootstrap: string, topic: string, partitions: number, timeoutMs = 120_000, config: ConsumerConfig = {}): Promise<PartitionLog[]> {
  const consumer = await connectConsumer(bootstrap, { 'isolation.level': 'read_committed', 'fetch.wait.max.ms': 50, 'auto.offset.reset': 'earliest', ...config }, topic);
  const logs: PartitionLog[] = Array.from({ length: partitions }, () => ({ start: -1, end: -1, records: [] }));
  const open = new Set(Array.from({ length: partitions }, (_, i) => i));
  consumer.on('partition.eof', (e) => {
    logs[e.partition]!.end = e.offset;
    open.delete(e.partition);
  });
  consumer.on('data', (m: Message) => {
    open.add(m.partition);
    logs[m.partition]!.records.push({ offset: m.offset, key: m.key === null || m.key === undefined ? null : m.key.toString(), value: m.value?.toString() ?? '', headers: fromHeaders(m.headers), timestamp: m.timestamp ?? -1 });
  });
  try {
    consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: OFFSET_BEGINNING })));
    const deadline = Date.now() + timeoutMs;
    while (open.size > 0) {
      if (Date.now() > deadline) throw new Error(`reading ${topic} from ${bootstrap} to its end took over ${timeoutMs} ms; partitions still open: ${[...open].join(', ')}`);
      await new Promise<void>((resolve) => consumer.consume(2000, () => resolve()));
      await sleep(1);
    }
    for (const [partition, log] of logs.entries()) {
      log.start = await new Promise<number>((resolve, reject) =>
        consumer.queryWatermarkOffsets(topic, partition, 10_000, (err, offsets) => (err ? reject(new Error(`the log start of ${topic}/${partition} at ${bootstrap}: ${err.message}`)) : resolve(offsets.lowOffset))),
      );
    }
    return logs;
  } finally {
    await disconnect(consumer);
  }
}

/** One line per partition: its start and end, its record count and a SHA-256 over every record's offset, key, value, headers and timestamp. */
export function checksums(logs: PartitionLog[]): string[] {
  return logs.map((log, partition) => {
    const hash = createHash('sha256');
    for (const r of log.records) hash.update(JSON.stringify([r.offset, r.key, r.value, r.headers, r.timestamp])).update('\n');
    return `p${partition} start=${log.start} end=${log.end} records=${log.records.length} sha256=${hash.digest('hex').slice(0, 16)}`;
  });
}

/** Offsets within [start, end) that hold no record: the gaps a copy must keep. */
export function gapCount(log: PartitionLog): number {
  return log.end - log.start - log.records.length;
}

/**
 * One line per partition: a SHA-256 over the stored bytes of every record
 * batch a read_committed reader reads (read with the project's Kafka client,
 * Fetch as the broker stores them), from the log start to the last stable
 * offset. The partition leader epoch (each log's own, outside the CRC) is
 * zeroed, and batches without records left out (a copy's trailing gaps are
 * such batches; the source's markers are not read). Equal lines: the copy
 * holds the source's batches byte for byte, codec, CRC and producer fields
 * included. `readUncommitted`: every stored batch to the high watermark,
 * aborted data and the markers too (a read_uncommitted reader's view).
 */
export async function batchChecksums(bootstrap: string, topic: string, partitions: number, settings: Record<string, string> = {}, readUncommitted = false): Promise<string[]> {
  const readCommitted = !readUncommitted;
  const client = await KafkaClient.connect({ bootstrap, settings });
  try {
    await client.refreshMetadata([topic]);
    const lines: string[] = [];
    for (let partition = 0; partition < partitions; partition++) {
      const [end] = await client.listOffsets([{ topic, partition }], -1, readCommitted);
      let at = (await client.listOffsets([{ topic, partition }], -2, true))[0]!;
      const hash = createHash('sha256');
      let batches = 0;
      while (at < end!) {
        const connection = await client.connection(client.leaderOf(topic, partition)!.leader);
        const answer = await fetchFrom(connection, [{ topic, partition, offset: at, maxBytes: 4 << 20 }], { maxWaitMs: 100, minBytes: 1, maxBytes: 4 << 20, readCommitted });
        const fetched = answer.partitions[0]!;
        if (fetched.errorCode !== 0) throw new Error(`fetching ${topic}/${partition} at ${at} from ${bootstrap} answered error ${fetched.errorCode}`);
        const view = readCommitted ? committedBatches(fetched.records, fetched.aborted, at) : storedBatches(fetched.records, at);
        for (const b of view.batches) {
          if (b.recordCount === 0) continue;
          const bytes = Buffer.from(b.bytes);
          bytes.writeInt32BE(0, 12);
          hash.update(bytes);
          batches++;
        }
        if (view.next <= at) throw new Error(`${topic}/${partition} at ${bootstrap}: a fetch at ${at} (end ${end}) moved nothing`);
        at = view.next;
      }
      lines.push(`p${partition} batches=${batches} sha256=${hash.digest('hex').slice(0, 16)}`);
    }
    return lines;
  } finally {
    client.close();
  }
}

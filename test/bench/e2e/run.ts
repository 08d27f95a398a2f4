/**
 * `npm run bench` (`-- --quick` for a few-minute subset): the product driven
 * by real Kafka clients, each in its own process, side by side with its
 * ceilings, in one run.
 *
 * For each configuration (client × record size × partitions), one fresh
 * broker process at a time:
 *   null      the null broker (./null-broker.ts): acks Produce, stores nothing; the client's ceiling
 *   raw pg    the same captured batches written to PostgreSQL by a bare loop (./raw-postgres.ts); the storage ceiling
 *   mock      librdkafka's mock cluster (./mock-broker.ts): a second peer
 *   kafka     Apache Kafka itself (test/support/apache-kafka.ts): the peer
 *   memory    `queen-gateway serve --engine memory`
 *   postgres  `queen-gateway serve --engine postgres`
 * Clients: librdkafka, kafkajs, and Apache Kafka's own perf tools
 * (./perf-tools.ts, produce and consume only).
 * Phases: produce as fast as the client goes; consume it back through a
 * consumer group; the end-to-end maximum (a producer flat out while a
 * consumer group reads, the smaller of the two rates); end-to-end latency at
 * one offered load shared by Kafka and both engines: half the lowest of their
 * end-to-end maxima (librdkafka only; the mock at half its own). Produce alone
 * and consume alone each overstate the load the broker carries with both
 * running on the same cores, and pacing above what the consumer keeps up
 * with measures a growing queue, not latency. So that the latency phases can
 * share a load, brokers with a latency phase stay up (idle) until every
 * broker of the configuration has had its throughput phases. The broker
 * process's CPU comes from /proc/<pid>/stat over each phase's measured
 * window (for Kafka, the JVM's whole process), its peak memory from VmHWM.
 * Every figure is printed beside its ceiling and the peers as a ratio,
 * because only ratios from one run compare on a shared machine.
 *
 * Flags: --quick; --only SUBSTRING (configurations whose label contains it,
 * e.g. "rdkafka 100 B" or "perftest"; ending in '$', the label exactly); --brokers null,mock,kafka,memory,postgres; --profile (the
 * gateway runs under node --cpu-prof, profiles in bench-results/profiles/);
 * --seconds N (produce/latency phase length); --latency-rate N (a fixed
 * offered load for the latency phase instead of the shared one); --out FILE (default
 * bench-results/latest.json).
 * Results: bench-results/latest.json and latest.svg; a whole run also copies the chart to docs/bench/results.svg.
 */
import { mkdirSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import KafkaJavascript from '@confluentinc/kafka-javascript';
import pg from 'pg';
import type { ClientJob, ClientName, ConsumeResult, LatencyResult, PaceResult, ProduceResult } from './client.js';
import type { RawPostgresJob, RawPostgresResult } from './raw-postgres.js';
import { Progress } from './progress.js';
import { PERF_PRODUCER_PROPERTIES, PERF_TOOL_JVM_OPTIONS } from './perf-tools.js';
import { cpuSeconds, killAll, peakMemoryMB, residentMB, REPO_ROOT, spawnProcess, spawnScript, type Child } from './processes.js';
import { renderChart } from './chart.js';
import { ENGINES, evaluateTargets, halfMaximum, printCell, printTargets, SHARED_LATENCY_LOAD, sharedLatencyRate, versusKafka } from './report.js';
import { LOCAL_TEST_URL } from '../../support/postgres.js';
import { pgHaMissing } from '../../support/pg-ha.js';
import { standbyDatabase, stopStandbyRig } from './standby.js';
import { StorageCpu } from './storage-cpu.js';
import { apacheKafkaInstall, startApacheKafka } from '../../support/apache-kafka.js';

export type BrokerName = 'null' | 'mock' | 'kafka' | 'memory' | 'postgres' | 'standby';
/** `standby`: the PostgreSQL engine on a primary with a synchronous standby (./standby.ts), where pg_auto_failover is installed. */
const ALL_BROKERS: BrokerName[] = ['null', 'mock', 'kafka', 'memory', 'postgres', ...(pgHaMissing() === null ? (['standby'] as const) : [])];
const KNOWN_BROKERS: BrokerName[] = ['null', 'mock', 'kafka', 'memory', 'postgres', 'standby'];
/**
 * Apache Kafka as kafka-server-start.sh runs it: its heap (1 GiB) and
 * kafka-run-class.sh's G1 settings, and the broker's default network and
 * request-handler thread counts (the launcher's other settings, sized for a
 * shared 2-core machine, stay).
 */
const KAFKA_JVM_OPTIONS = [
  '-Xmx1G', '-Xms1G', '-server', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-XX:InitiatingHeapOccupancyPercent=35',
  '-XX:+ExplicitGCInvokesConcurrent', '-XX:MaxInlineLevel=15', '-Djava.awt.headless=true',
];
const KAFKA_CONFIG = { 'num.network.threads': 3, 'num.io.threads': 8 };
const MOCK_PARTITIONS = 4;
const PRODUCE_RUNS = 2;
const DATABASE_URL = process.env['DATABASE_URL'] ?? LOCAL_TEST_URL;

export interface Configuration {
  client: ClientName;
  recordBytes: number;
  partitions: number;
  latency: boolean;
  /** Consumer-group members reading in the consume phase (one when absent). */
  members?: number;
}

export interface PhaseFigures {
  recordsPerSecond: number;
  megabytesPerSecond: number;
  /** Cores the broker process used over the measured window. */
  brokerCores: number;
  /** Broker CPU per record, in microseconds. */
  brokerMicrosPerRecord: number;
  /** The PostgreSQL engine's: the gateway's and its PostgreSQL backends' CPU per record (./storage-cpu.ts). */
  withStorageMicrosPerRecord?: number;
}

export interface LatencyFigures {
  offeredRate: number;
  achievedRate: number;
  measured: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  brokerCores: number;
}

export interface BrokerFigures {
  /** The better of the produce runs; `runs` has each run's records/s. */
  produce?: PhaseFigures & { acked: number; failed: number; runs?: number[] };
  consume?: PhaseFigures & { records: number; members?: number; firstRecordAfterMs?: number; allAssignedAfterMs?: number };
  /** Producer and consumer at once, the producer flat out: what the broker carries end to end on this machine. */
  endToEnd?: { produced: number; delivered: number; recordsPerSecond: number };
  latency?: LatencyFigures;
  peakMemoryMB?: number;
  /** Memory held (VmRSS) as the broker stopped, after its last phase. */
  residentMB?: number;
  /** Why the consume phase has no figure, when it failed and the other phases went on. */
  consumeError?: string;
  /** Partitions actually written when fewer than the configuration's (the mock's topics have 4). */
  partitionsUsed?: number;
  /** Wall-clock seconds of this broker's start, phases and stop (not the time it waited, idle, for the others). */
  wallSeconds?: number;
  error?: string;
}

/** One engine's figures over Apache Kafka's in the same configuration and run (each gateway ÷ Kafka). */
export interface VersusKafka {
  produce?: number;
  consume?: number;
  endToEnd?: number;
  /** Latency at the same offered load: below 1 is faster than Kafka. */
  p50?: number;
  p99?: number;
  /**
   * Broker CPU per record in the produce phase: below 1 is cheaper than Kafka.
   * (Not the consume phase's: a consumer prefetches before its first delivery
   * opens the window, so a quick broker did much of its work outside it.)
   */
  produceMicrosPerRecord?: number;
  /** The same with the PostgreSQL backends' CPU added to the gateway's (Kafka's storage work is in its process). */
  produceWithStorageMicrosPerRecord?: number;
  peakMemory?: number;
  /** Memory held (RSS) at the end: below 1 holds less than Kafka's JVM. */
  residentMemory?: number;
}

export interface ConfigurationResult extends Configuration {
  label: string;
  brokers: Partial<Record<BrokerName | 'rawPostgres', BrokerFigures>>;
  /** The offered load of the latency phases Kafka and the engines share. */
  sharedLatencyRate?: number;
  versusKafka?: Partial<Record<(typeof ENGINES)[number], VersusKafka>>;
}

export interface BenchResults {
  startedAt: string;
  finishedAt: string;
  quick: boolean;
  machine: {
    cpus: number;
    model: string;
    loadAverageAtStart: number[];
    loadAverageAtEnd: number[];
    /** The 1/5/15-minute load averages as each configuration finished. */
    loadAverageAfter?: { configuration: string; loadAverage: number[] }[];
    node: string;
  };
  /** Wall-clock minutes of the whole run. */
  minutes?: number;
  settings: Record<string, unknown>;
  configurations: ConfigurationResult[];
  targets: ReturnType<typeof evaluateTargets>;
}

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const quick = process.argv.includes('--quick');
const profile = process.argv.includes('--profile');
const only = flag('only');
const brokers = (flag('brokers')?.split(',') ?? ALL_BROKERS) as BrokerName[];
const unknownBrokers = brokers.filter((b) => !KNOWN_BROKERS.includes(b));
if (unknownBrokers.length > 0) {
  process.stderr.write(`--brokers: ${unknownBrokers.join(', ')} is not a broker the benchmark runs; name some of ${KNOWN_BROKERS.join(', ')}, separated by commas.\n`);
  process.exit(2);
}
const phaseSeconds = Number(flag('seconds') ?? (quick ? 4 : 5));
const warmupSeconds = quick ? 1 : 1.5;
const latencyRate = flag('latency-rate') === undefined ? undefined : Number(flag('latency-rate'));
const outFile = flag('out') ?? join(REPO_ROOT, 'bench-results/latest.json');
const profileDir = join(REPO_ROOT, 'bench-results/profiles');

/**
 * Issue 31's configurations at scale, in the quick run too: 64 partitions
 * with the latency phase (the durable engine's p99 at the shared load), and
 * a consumer group of 100 members reading 64 partitions.
 */
const AT_SCALE: Configuration[] = [
  { client: 'rdkafka', recordBytes: 100, partitions: 64, latency: true },
  { client: 'rdkafka', recordBytes: 100, partitions: 64, latency: false, members: 100 },
];

function matrix(): Configuration[] {
  const configurations: Configuration[] = [];
  if (quick) {
    for (const partitions of [1, 8]) configurations.push({ client: 'rdkafka', recordBytes: 100, partitions, latency: true });
    configurations.push({ client: 'rdkafka', recordBytes: 1024, partitions: 8, latency: true });
    configurations.push({ client: 'kafkajs', recordBytes: 100, partitions: 8, latency: false });
    configurations.push({ client: 'perftest', recordBytes: 100, partitions: 8, latency: false });
    configurations.push(...AT_SCALE);
    return configurations;
  }
  for (const client of ['rdkafka', 'kafkajs', 'perftest'] as const) {
    for (const recordBytes of [100, 1024]) {
      for (const partitions of [1, 8, 64]) configurations.push({ client, recordBytes, partitions, latency: client === 'rdkafka' });
    }
  }
  configurations.push(AT_SCALE[1]!);
  return configurations;
}

export function labelOf(c: Configuration): string {
  return `${c.client} ${c.recordBytes === 1024 ? '1 KiB' : `${c.recordBytes} B`} ${c.partitions}p${c.members ? ` ${c.members} members` : ''}`;
}

// A trailing '$' asks for that label exactly ("rdkafka 100 B 64p$" without the 100-member one).
const configurations = matrix().filter((c) => !only || (only.endsWith('$') ? labelOf(c) === only.slice(0, -1) : labelOf(c).includes(only)));
const kafkaInstall = brokers.includes('kafka') || configurations.some((c) => c.client === 'perftest') ? await apacheKafkaInstall() : undefined;
const kafkaLibs = kafkaInstall?.libs;
const kafkaVersion = kafkaInstall?.version;
/**
 * Why a broker is left out of a configuration, if it is: the Java client
 * cannot talk to librdkafka's mock (it reads a throttle of about 20 minutes
 * from the mock's ApiVersions answer and waits it out).
 */
function notRun(name: BrokerName, c: Configuration): string | undefined {
  if (c.members && (name === 'null' || name === 'mock')) return 'not run: this configuration measures a group\'s consume, and the ceilings are those of produce';
  return name === 'mock' && c.client === 'perftest' ? 'not run: the Java client reads a throttle of 1,179,648 ms from the mock\'s ApiVersions answer and never sends' : undefined;
}
const phasesPer = (c: Configuration) =>
  brokers.reduce((n, b) => n + (notRun(b, c) ? 0 : b === 'null' ? (brokers.includes('postgres') ? 3 : 2) : c.latency ? 5 : 3), 0);
const progress = new Progress(configurations.reduce((n, c) => n + phasesPer(c), 0));
const runTag = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
let schemaCount = 0;
/** The PostgreSQL backends of each durable gateway, by the gateway's pid. */
const storageOf = new Map<number, StorageCpu>();

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));

interface Server {
  /** The broker's process: for Kafka the JVM. */
  pid: number;
  bootstrap: string;
  stop(): Promise<void>;
  /** The runner's own child (not Kafka's JVM, which the launcher holds). */
  child?: Child;
  schema?: string;
  /** Where `schema` is, for dropping it (one host). */
  databaseUrl?: string;
}

function childServer(child: Child, bootstrap: string, schema?: string, databaseUrl?: string): Server {
  return { pid: child.pid, bootstrap, child, schema, databaseUrl, stop: () => child.stop(profile ? 30_000 : 5_000) };
}

async function startServer(name: BrokerName, c: Configuration, capture?: string): Promise<Server> {
  const label = `${name} broker`;
  if (name === 'null') {
    const child = spawnScript('./null-broker.ts', capture ? ['--capture', capture] : [], { label, timeoutMs: 600_000 });
    return childServer(child, await child.waitFor((m) => m['listening'] as string | undefined, 'address', 30_000));
  }
  if (name === 'mock') {
    const child = spawnScript('./mock-broker.ts', [], { label, timeoutMs: 600_000 });
    return childServer(child, await child.waitFor((m) => m['listening'] as string | undefined, 'address', 30_000));
  }
  if (name === 'kafka') {
    const kafka = await startApacheKafka({ jvmOptions: KAFKA_JVM_OPTIONS, config: KAFKA_CONFIG, stopTimeoutMs: 30_000 });
    return { pid: kafka.pid, bootstrap: kafka.bootstrap, stop: () => kafka.stop() };
  }
  const args = ['serve', '--port', '0', '--engine', name === 'standby' ? 'postgres' : name, '--group-initial-rebalance-delay-ms', '0', '--default-partitions', String(c.partitions), '--log-level', 'info', '--no-http'];
  let schema: string | undefined;
  let databaseUrl: string | undefined;
  if (name === 'postgres' || name === 'standby') {
    schema = `queen_bench_${runTag}_${schemaCount++}`;
    const standby = name === 'standby' ? await standbyDatabase() : undefined;
    databaseUrl = standby?.primaryUrl ?? DATABASE_URL;
    args.push('--database-url', standby?.url ?? DATABASE_URL, '--database-schema', schema);
  }
  // The built product, not the tsx-run source (bin/ would pick the source in a checkout). Node's default profile names; the run prints which is whose.
  const nodeFlags = profile ? ['--cpu-prof', '--cpu-prof-dir', join(profileDir, `${name}-${labelOf(c).replace(/ /g, '-')}`)] : [];
  const child = spawnProcess(process.execPath, [...nodeFlags, join(REPO_ROOT, 'dist/src/cli/main.js'), ...args], { label: `gateway (${name})`, timeoutMs: 600_000 });
  const bootstrap = await child.waitFor((m) => m['bootstrap'] as string | undefined, 'ready line', 60_000);
  if (databaseUrl) storageOf.set(child.pid, new StorageCpu(databaseUrl, child.pid));
  return childServer(child, bootstrap, schema, databaseUrl);
}

/** CreateTopics through librdkafka's AdminClient (kafkajs's admin cannot find the mock's controller). */
async function createTopic(bootstrap: string, topic: string, partitions: number): Promise<void> {
  const admin = KafkaJavascript.AdminClient.create({ 'bootstrap.servers': bootstrap, 'client.id': 'queen-bench-admin', 'log_level': 3 } as never);
  try {
    await new Promise<void>((resolve, reject) =>
      admin.createTopic({ topic, num_partitions: partitions, replication_factor: 1 }, 20_000, (err) => (err ? reject(new Error(`creating ${topic}: ${err.message}`)) : resolve())),
    );
  } finally {
    admin.disconnect();
  }
}

/**
 * Runs one client process; the broker's CPU is read when the client opens
 * and closes its measured window.
 */
async function runClient<T>(job: ClientJob, brokerPid: number, timeoutMs: number, onReady?: () => void): Promise<{ result: T; brokerCpuSeconds: number; windowSeconds: number; storageCpuSeconds?: number; child: Child }> {
  let window: { cpu: number; at: number } | null = null;
  let measured = { cpu: 0, seconds: 0 };
  const storage = storageOf.get(brokerPid);
  await storage?.refresh().catch(() => {});
  let storageAtStart: Map<number, number> | undefined;
  let storageAtEnd: Map<number, number> | undefined;
  const members = job.role === 'consume' ? (job.members ?? 1) : 1;
  const child = spawnScript('./client.ts', [JSON.stringify(job)], {
    label: `${job.client} ${job.role}`,
    timeoutMs,
    // A waiting librdkafka consume call holds one of libuv's workers (4 by default): one each for a group's members.
    env: members > 1 ? { UV_THREADPOOL_SIZE: String(Math.min(members + 4, 1024)) } : undefined,
    onMessage(m) {
      if (typeof m['progress'] === 'number') progress.update(`${job.role}: ${fmt(m['progress'])} records`);
      if (m['ready']) onReady?.();
      if (m['window'] === 'start') {
        window = { cpu: safeCpu(brokerPid), at: performance.now() };
        storageAtStart = storage?.read();
      }
      if (m['window'] === 'end' && window) {
        measured = { cpu: safeCpu(brokerPid) - window.cpu, seconds: (performance.now() - window.at) / 1000 };
        storageAtEnd = storage?.read();
      }
    },
  });
  const result = await child.waitFor((m) => m['result'] as T | undefined, 'result', timeoutMs);
  await child.exited;
  // Backends the pool opened during the phase are found now and counted from their birth to now.
  let storageCpuSeconds: number | undefined;
  if (storage && storageAtStart && storageAtEnd) storageCpuSeconds = await storage.refresh().then(() => StorageCpu.between(storageAtStart!, storageAtEnd!, storage.read()), () => undefined);
  return { result, brokerCpuSeconds: measured.cpu, windowSeconds: measured.seconds, storageCpuSeconds, child };
}

/**
 * Starts a consumer-group reader at the end of the topic and returns once it
 * has its partitions and has had time to find its start offsets, so records
 * produced after this are all its to read. The promise it hands back settles
 * when the reader finishes.
 */
async function readerAtTheEnd<T>(job: ClientJob, brokerPid: number, timeoutMs: number): Promise<{ reading: ReturnType<typeof runClient<T>> }> {
  let ready!: () => void;
  const assigned = new Promise<void>((resolve) => (ready = resolve));
  const reading = runClient<T>(job, brokerPid, timeoutMs, ready);
  await Promise.race([assigned, reading]);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  // Wrapped: an async function returning the promise itself would wait for it.
  return { reading };
}

function safeCpu(pid: number): number {
  try {
    return cpuSeconds(pid);
  } catch {
    return NaN;
  }
}

function phaseFigures(records: number, seconds: number, recordBytes: number, cpu: { brokerCpuSeconds: number; windowSeconds: number; storageCpuSeconds?: number }): PhaseFigures {
  const recordsPerSecond = records / seconds;
  const perRecord = (cpuSeconds: number) => (cpuSeconds / cpu.windowSeconds / recordsPerSecond) * 1e6;
  return {
    recordsPerSecond,
    megabytesPerSecond: (recordsPerSecond * recordBytes) / 1e6,
    brokerCores: cpu.brokerCpuSeconds / cpu.windowSeconds,
    brokerMicrosPerRecord: perRecord(cpu.brokerCpuSeconds),
    ...(cpu.storageCpuSeconds === undefined ? {} : { withStorageMicrosPerRecord: perRecord(cpu.brokerCpuSeconds + cpu.storageCpuSeconds) }),
  };
}

async function dropSchema(schema: string, url = DATABASE_URL): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** A broker whose throughput phases are done and whose latency phase waits for the shared load. */
interface LiveBroker {
  name: BrokerName;
  c: Configuration;
  server: Server;
  figures: BrokerFigures;
  topic: string;
  partitions: number;
  label: string;
  capture?: string;
}

const seconds = (since: number) => (performance.now() - since) / 1000;

/**
 * Starts a broker and runs its produce, consume and end-to-end phases.
 * Hands the broker back still running when its latency phase is to come,
 * otherwise stops it.
 */
async function runBroker(name: BrokerName, c: Configuration, result: ConfigurationResult): Promise<LiveBroker | null> {
  const began = performance.now();
  const figures: BrokerFigures = {};
  result.brokers[name] = figures;
  const label = `${labelOf(c)} ${name}`;
  const capture = name === 'null' && brokers.includes('postgres') ? join(tmpdir(), `queen-bench-${runTag}-${labelOf(c).replace(/ /g, '-')}.capture`) : undefined;
  figures.error = notRun(name, c);
  if (figures.error) return null;
  let server: Server;
  try {
    progress.note(`${label}: starting`);
    server = await startServer(name, c, capture);
  } catch (e) {
    figures.error = (e as Error).message;
    progress.note(`${label}: FAILED to start: ${figures.error.slice(0, 300)}`);
    figures.wallSeconds = seconds(began);
    return null;
  }
  // The mock has no CreateTopics and the binding no mock API: it auto-creates every topic with 4 partitions.
  const partitions = name === 'mock' ? Math.min(c.partitions, MOCK_PARTITIONS) : c.partitions;
  if (partitions !== c.partitions) figures.partitionsUsed = partitions;
  const topic = `bench-${c.client}-${c.recordBytes}-p${partitions}`;
  const live: LiveBroker = { name, c, server, figures, topic, partitions, label, capture };
  try {
    if (name !== 'null' && name !== 'mock') await createTopic(server.bootstrap, topic, partitions);

    // Two produce runs back to back, the better one kept: on shared cores
    // interference only ever slows a run down, and one run of a few seconds
    // moved by up to 2x between neighbouring brokers.
    let acked = 0;
    const runs: PhaseFigures[] = [];
    for (let run = 1; run <= PRODUCE_RUNS; run++) {
      progress.start(`${label} produce (run ${run} of ${PRODUCE_RUNS})`);
      const produced = await runClient<ProduceResult>(
        { role: 'produce', client: c.client, bootstrap: server.bootstrap, topic, partitions, recordBytes: c.recordBytes, seconds: phaseSeconds, warmupSeconds, kafkaLibs },
        server.pid,
        (phaseSeconds + 90) * 1000,
      );
      const figuresOfRun = phaseFigures(produced.result.counted, produced.result.seconds, c.recordBytes, produced);
      runs.push(figuresOfRun);
      acked += produced.result.acked;
      const best = runs.reduce((a, b) => (b.recordsPerSecond > a.recordsPerSecond ? b : a));
      figures.produce = { ...best, acked, failed: (figures.produce?.failed ?? 0) + produced.result.failed, runs: runs.map((r) => r.recordsPerSecond) };
      progress.end(`${fmt(figuresOfRun.recordsPerSecond)} rec/s, ${fmt(figuresOfRun.megabytesPerSecond)} MB/s, broker ${figuresOfRun.brokerCores.toFixed(2)} cores`);
    }

    if (name !== 'null') {
      progress.start(`${label} consume`);
      // A reader that fails (the mock gives up on a topic of millions of records) costs
      // only its own figure: the phases after it read from the end.
      try {
        const consumed = await runClient<ConsumeResult>(
          { role: 'consume', client: c.client, bootstrap: server.bootstrap, topic, count: acked, seconds: phaseSeconds, timeoutSeconds: phaseSeconds + (c.members ? 120 : 30), kafkaLibs, members: c.members },
          server.pid,
          // Room for a librdkafka consumer's slow close after a large prefetch (and a hundred members' leaving).
          (phaseSeconds + (c.members ? 240 : 90)) * 1000,
        );
        const { records, members, firstRecordAfterMs, allAssignedAfterMs } = consumed.result;
        figures.consume = { ...phaseFigures(records, consumed.result.seconds, c.recordBytes, consumed), records, ...(members ? { members, firstRecordAfterMs, allAssignedAfterMs } : {}) };
        progress.end(`${fmt(figures.consume.recordsPerSecond)} rec/s, ${fmt(figures.consume.megabytesPerSecond)} MB/s`);
      } catch (e) {
        figures.consumeError = (e as Error).message;
        progress.end(`FAILED: ${figures.consumeError}`);
      }
    }

    if (name !== 'null' && c.latency && latencyRate === undefined) {
      // The maximum load: a producer flat out while a consumer group reads
      // from the end, both on this machine with the broker. Produce alone and
      // consume alone each overstate it (they do not share the cores).
      progress.start(`${label} end-to-end maximum`);
      const timeoutMs = (phaseSeconds + 90) * 1000;
      const { reading } = await readerAtTheEnd<ConsumeResult>(
        { role: 'consume', client: c.client, bootstrap: server.bootstrap, topic, count: Number.MAX_SAFE_INTEGER, seconds: phaseSeconds - warmupSeconds, timeoutSeconds: phaseSeconds + 60, from: 'latest' },
        server.pid,
        timeoutMs,
      );
      const producing = await runClient<ProduceResult>(
        { role: 'produce', client: c.client, bootstrap: server.bootstrap, topic, partitions, recordBytes: c.recordBytes, seconds: phaseSeconds, warmupSeconds },
        server.pid,
        timeoutMs,
      );
      const delivered = (await reading).result;
      figures.endToEnd = {
        produced: producing.result.recordsPerSecond,
        delivered: delivered.recordsPerSecond,
        recordsPerSecond: Math.min(producing.result.recordsPerSecond, delivered.recordsPerSecond),
      };
      progress.end(`${fmt(figures.endToEnd.recordsPerSecond)} rec/s (produced ${fmt(figures.endToEnd.produced)}, delivered ${fmt(figures.endToEnd.delivered)})`);
    }
  } catch (e) {
    figures.error = (e as Error).message;
    progress.end(`FAILED: ${figures.error}`);
  }
  figures.wallSeconds = seconds(began);
  if (name !== 'null' && c.latency && !figures.error) return live;
  await stopBroker(live, result);
  return null;
}

/** The latency phase at `rate`, then the broker stops. */
async function runLatency(live: LiveBroker, rate: number, result: ConfigurationResult): Promise<void> {
  const began = performance.now();
  const { server, figures, c, topic, partitions, label } = live;
  try {
    progress.start(`${label} latency at ${fmt(rate)} rec/s`);
    const timeoutMs = (phaseSeconds + 90) * 1000;
    const { reading } = await readerAtTheEnd<LatencyResult>(
      { role: 'latency', client: c.client, bootstrap: server.bootstrap, topic, timeoutSeconds: phaseSeconds + 60, idleSeconds: 2 },
      server.pid,
      timeoutMs,
    );
    const paced = await runClient<PaceResult>(
      { role: 'pace', client: c.client, bootstrap: server.bootstrap, topic, partitions, recordBytes: c.recordBytes, seconds: phaseSeconds, warmupSeconds, rate },
      server.pid,
      timeoutMs,
    );
    const read = await reading;
    figures.latency = {
      offeredRate: rate,
      achievedRate: paced.result.achievedRate,
      measured: read.result.measured,
      p50: read.result.p50,
      p99: read.result.p99,
      p999: read.result.p999,
      max: read.result.max,
      brokerCores: paced.brokerCpuSeconds / paced.windowSeconds,
    };
    // No measured record (a consumer too slow to reach them before going idle) leaves the percentiles empty.
    if (read.result.measured === 0) throw new Error(`the latency consumer received none of the ${fmt(paced.result.sent)} records sent after the warm-up in time`);
    progress.end(`p50 ${figures.latency.p50.toFixed(2)} ms, p99 ${figures.latency.p99.toFixed(2)} ms, p99.9 ${figures.latency.p999.toFixed(2)} ms over ${fmt(read.result.measured)} records`);
  } catch (e) {
    figures.error = (e as Error).message;
    progress.end(`FAILED: ${figures.error}`);
  }
  figures.wallSeconds = (figures.wallSeconds ?? 0) + seconds(began);
  await stopBroker(live, result);
}

/** Reads the broker's peak memory and stops it; for the null broker, then the raw PostgreSQL ceiling on its captured batches. */
async function stopBroker(live: LiveBroker, result: ConfigurationResult): Promise<void> {
  const began = performance.now();
  const { server, figures, capture, c } = live;
  figures.peakMemoryMB = peakMemoryMB(server.pid);
  figures.residentMB = residentMB(server.pid);
  try {
    if (capture && server.child) {
      const written = server.child.waitFor((m) => ('captured' in m ? true : undefined), 'capture', 60_000);
      server.child.signal('SIGUSR2');
      await written.catch((e: Error) => (figures.error ??= e.message));
    }
  } finally {
    await server.stop();
    if (server.schema) await dropSchema(server.schema, server.databaseUrl).catch(() => {});
    figures.wallSeconds = (figures.wallSeconds ?? 0) + seconds(began);
  }

  if (capture && !figures.error) {
    const schema = `queen_bench_raw_${runTag}_${schemaCount++}`;
    progress.start(`${labelOf(c)} raw pg (same batches)`);
    const raw: BrokerFigures = {};
    result.brokers.rawPostgres = raw;
    try {
      const job: RawPostgresJob = { url: DATABASE_URL, schema, capture, partitions: c.partitions, seconds: phaseSeconds, warmupSeconds };
      const child = spawnScript('./raw-postgres.ts', [JSON.stringify(job)], {
        label: 'raw postgres',
        timeoutMs: (phaseSeconds + 90) * 1000,
        onMessage: (m) => typeof m['progress'] === 'number' && progress.update(`${fmt(m['progress'])} records`),
      });
      const written = await child.waitFor((m) => m['result'] as RawPostgresResult | undefined, 'result', (phaseSeconds + 90) * 1000);
      raw.produce = {
        recordsPerSecond: written.recordsPerSecond,
        megabytesPerSecond: (written.recordsPerSecond * c.recordBytes) / 1e6,
        brokerCores: NaN,
        brokerMicrosPerRecord: NaN,
        acked: written.counted,
        failed: 0,
      };
      progress.end(`${fmt(written.recordsPerSecond)} rec/s in ${fmt(written.transactions)} transactions`);
    } catch (e) {
      raw.error = (e as Error).message;
      progress.end(`FAILED: ${raw.error}`);
    } finally {
      rmSync(capture, { force: true });
    }
  } else if (capture) {
    rmSync(capture, { force: true });
  }
}

const startedAt = new Date();
const loadAverageAtStart = loadavg();
const results: ConfigurationResult[] = [];
const loadAverageAfter: { configuration: string; loadAverage: number[] }[] = [];
if (profile) mkdirSync(profileDir, { recursive: true });
progress.note(
  `queen-gateway benchmark${quick ? ' (quick)' : ''}: ${configurations.length} configurations × ${brokers.join(', ')}; ` +
    `${phaseSeconds} s phases (${warmupSeconds} s warm-up); load average ${loadAverageAtStart.map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores`,
);
try {
  for (const c of configurations) {
    const result: ConfigurationResult = { ...c, label: labelOf(c), brokers: {} };
    results.push(result);
    const waiting: LiveBroker[] = [];
    for (const name of brokers) {
      const live = await runBroker(name, c, result);
      if (live) waiting.push(live);
    }
    if (c.latency) result.sharedLatencyRate = latencyRate ?? sharedLatencyRate(result);
    for (const live of waiting) {
      const rate = SHARED_LATENCY_LOAD.includes(live.name) ? result.sharedLatencyRate : (latencyRate ?? halfMaximum(live.figures));
      if (rate === undefined) await stopBroker(live, result);
      else await runLatency(live, rate, result);
    }
    result.versusKafka = versusKafka(result);
    const load = loadavg();
    loadAverageAfter.push({ configuration: result.label, loadAverage: load });
    progress.note(printCell(result) + `\nload average ${load.map((l) => l.toFixed(1)).join(' ')}`);
  }
} finally {
  killAll();
  await stopStandbyRig();
}

const targets = evaluateTargets(results);
const output: BenchResults = {
  startedAt: startedAt.toISOString(),
  finishedAt: new Date().toISOString(),
  quick,
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '?', loadAverageAtStart, loadAverageAtEnd: loadavg(), loadAverageAfter, node: process.version },
  minutes: (Date.now() - startedAt.getTime()) / 60_000,
  settings: {
    phaseSeconds,
    warmupSeconds,
    produceRuns: `${PRODUCE_RUNS} back to back per broker, the better kept`,
    brokers,
    rdkafkaProducer: 'acks=all, linger.ms=5, batch.size=1000000, batch.num.messages=10000, no compression, no idempotence, round-robin partitions; delivery reports for failures only, acknowledgements counted from librdkafka statistics every 100 ms',
    kafkajsProducer: 'acks=-1, send() of 500 records, up to 4 sends in flight, round-robin partitions',
    perftestProducer: `Apache Kafka's ProducerPerformance (kafka-producer-perf-test), --throughput -1, ${Object.entries(PERF_PRODUCER_PROPERTIES).map(([k, v]) => `${k}=${String(v)}`).join(', ')}; JVM ${PERF_TOOL_JVM_OPTIONS.join(' ')}; figures from its 500 ms interval lines after the warm-up`,
    perftestConsumer: 'Apache Kafka\'s ConsumerPerformance (kafka-consumer-perf-test), a new group, default fetch settings, --show-detailed-stats every 500 ms; records after the first line over the time since it',
    consumers: 'consumer group (subscribe), client default fetch settings; librdkafka consume(10000) batches, kafkajs eachBatch',
    kafkaBroker: `Apache Kafka ${kafkaVersion ?? '(not run)'}, one KRaft node (broker and controller) on loopback, a fresh data folder per configuration; JVM ${KAFKA_JVM_OPTIONS.join(' ')}; num.network.threads=3, num.io.threads=8 (Kafka's defaults); writes to the page cache, flushing left to the OS (Kafka's default); CPU and peak memory of the JVM's whole process`,
    endToEnd: 'producer flat out while a consumer group reads from the end; the smaller of the produced and delivered rates',
    latency: 'librdkafka producer paced at one load shared by Kafka and both engines (half the lowest of their end-to-end maxima; the mock at half its own), librdkafka consumer in a group; send time in the value',
  },
  configurations: results,
  targets,
};
mkdirSync(join(outFile, '..'), { recursive: true });
writeFileSync(outFile, JSON.stringify(output, null, 2) + '\n');
const chart = outFile.replace(/\.json$/, '') + '.svg';
writeFileSync(chart, renderChart(output));
// Only a whole run (full or --quick, default output) replaces the chart docs/benchmarks.md shows.
if (!only && !flag('brokers') && !flag('out')) {
  mkdirSync(join(REPO_ROOT, 'docs/bench'), { recursive: true });
  copyFileSync(chart, join(REPO_ROOT, 'docs/bench/results.svg'));
}
progress.note('');
progress.note(printTargets(targets));
progress.note(`\nresults: ${outFile}\nchart:   ${chart}`);
process.exit(0);

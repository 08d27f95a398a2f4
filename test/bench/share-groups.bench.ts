/**
 * Share groups (KIP-932) against consumer groups and against Apache Kafka
 * 4.4's share groups, in one run: `npm run bench:share-groups`.
 *
 * For each broker (Apache Kafka 4.4, one KRaft node as kafka-server-start.sh
 * runs it, and the built gateway on the memory and PostgreSQL engines, each
 * started fresh, one at a time), Kafka's own Java clients
 * (./share/ShareBench.java) in processes of their own:
 *   1. produce RECORDS records of 100 B over 8 partitions (acks=all);
 *   2. read them all in a new consumer group (KafkaConsumer, commitSync
 *      after each poll) and in a new share group (KafkaShareConsumer, every
 *      record accepted and committed with commitSync after each poll): the
 *      records acquired and acknowledged per second, from the first record to
 *      the commit after the last. ROUNDS rounds, the order of the two turned
 *      each round, the better of each kept;
 *   3. redelivery latency: a share consumer RELEASEs each record on its first
 *      delivery and ACCEPTs it when it comes back; the time from the commit
 *      that sent the RELEASE to the poll that hands the record back.
 * The broker's CPU over each read (from /proc; for Kafka the JVM's whole
 * process) gives CPU per record; its peak resident memory is read as it stops.
 *
 * Flags: --brokers kafka,memory,postgres,standby (standby: PostgreSQL with a
 * synchronous standby, ./e2e/standby.ts; not in the default list);
 * --records N (default 100,000); --rounds N (2); --redeliver N (2,000);
 * --out FILE (default bench-results/share-groups.json, the chart beside it);
 * --cpu-prof DIR (the gateway runs with node's --cpu-prof, its profile written
 * in DIR as it stops).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startApacheKafka } from '../support/apache-kafka.js';
import { LOCAL_TEST_URL } from '../support/postgres.js';
import { killAll, peakMemoryMB, REPO_ROOT, spawnProcess } from './e2e/processes.js';
import { standbyDatabase, stopStandbyRig } from './e2e/standby.js';
import { runJava } from './share-groups-driver.js';
import { judge, renderShareChart, type ShareBenchResults, type ShareBrokerFigures, type ShareBrokerName, type ReadFigures } from './share-groups-report.js';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const BROKERS = (flag('brokers')?.split(',') ?? ['kafka', 'memory', 'postgres']) as ShareBrokerName[];
const RECORDS = Number(flag('records') ?? 100_000);
const ROUNDS = Number(flag('rounds') ?? 2);
const REDELIVER = Number(flag('redeliver') ?? 2_000);
const PARTITIONS = 8;
const RECORD_BYTES = 100;
const OUT = flag('out') ?? join(REPO_ROOT, 'bench-results/share-groups.json');
const CPU_PROF = flag('cpu-prof');
const DATABASE_URL = process.env['DATABASE_URL'] ?? LOCAL_TEST_URL;
/** As the main benchmark runs Kafka (test/bench/e2e/run.ts): kafka-server-start.sh's heap and G1 settings, the default thread counts. */
const KAFKA_JVM_OPTIONS = ['-Xmx1G', '-Xms1G', '-server', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-XX:InitiatingHeapOccupancyPercent=35', '-XX:+ExplicitGCInvokesConcurrent', '-Djava.awt.headless=true'];
const KAFKA_CONFIG = { 'num.network.threads': 3, 'num.io.threads': 8 };
const runTag = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;

const log = (line: string) => process.stdout.write(`${line}\n`);
const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));

interface Started {
  pid: number;
  bootstrap: string;
  stop(): Promise<void>;
}

async function startBroker(name: ShareBrokerName): Promise<Started> {
  if (name === 'kafka') {
    const kafka = await startApacheKafka({ jvmOptions: KAFKA_JVM_OPTIONS, config: KAFKA_CONFIG, stopTimeoutMs: 30_000 });
    return { pid: kafka.pid, bootstrap: kafka.bootstrap, stop: () => kafka.stop() };
  }
  const args = ['serve', '--port', '0', '--engine', name === 'memory' ? 'memory' : 'postgres', '--group-initial-rebalance-delay-ms', '0', '--log-level', 'info', '--no-http'];
  let drop = async () => {};
  if (name !== 'memory') {
    const schema = `queen_share_bench_${runTag}_${name}`;
    const standby = name === 'standby' ? await standbyDatabase() : undefined;
    args.push('--database-url', standby?.url ?? DATABASE_URL, '--database-schema', schema);
    drop = async () => {
      const client = new pg.Client({ connectionString: standby?.primaryUrl ?? DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => client.end());
    };
  }
  const child = spawnProcess(process.execPath, [...(CPU_PROF === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`]), join(REPO_ROOT, 'dist/src/cli/main.js'), ...args], { label: `gateway (${name})`, timeoutMs: 1_800_000 });
  const bootstrap = await child.waitFor((m) => m['bootstrap'] as string | undefined, 'ready line', 60_000);
  return { pid: child.pid, bootstrap, stop: async () => {
    await child.stop(5_000);
    await drop().catch(() => {});
  } };
}

interface Done { records: number; seconds: number; recordsPerSecond: number; firstRecordAfterMs: number }

async function read(kind: 'share' | 'group', broker: Started, topic: string, round: number): Promise<ReadFigures> {
  const group = `${topic}-${kind}-${round}`;
  const { result, brokerCpuSeconds } = await runJava<Done>(['consume', kind, broker.bootstrap, group, topic, String(RECORDS), '300'], broker.pid, 400_000);
  if (result.records < RECORDS) throw new Error(`the ${kind === 'share' ? 'share' : 'consumer'} group read ${result.records} of ${RECORDS} records in 300 s`);
  return { ...result, brokerMicrosPerRecord: (brokerCpuSeconds / result.records) * 1e6 };
}

/** Long because it is the broker's phases in the order they run, each logged as it ends. */
async function runBroker(name: ShareBrokerName): Promise<ShareBrokerFigures> {
  const figures: ShareBrokerFigures = { groupRuns: [], shareRuns: [] };
  const began = performance.now();
  let broker: Started | undefined;
  try {
    broker = await startBroker(name);
    const topic = `share-bench-${runTag}`;
    const produced = await runJava<{ seconds: number }>(['produce', broker.bootstrap, topic, String(PARTITIONS), String(RECORDS), String(RECORD_BYTES)], broker.pid, 400_000);
    figures.produceRecordsPerSecond = RECORDS / produced.result.seconds;
    log(`${name}: produced ${fmt(RECORDS)} records at ${fmt(figures.produceRecordsPerSecond)}/s`);
    for (let round = 1; round <= ROUNDS; round++) {
      for (const kind of round % 2 === 1 ? (['group', 'share'] as const) : (['share', 'group'] as const)) {
        const r = await read(kind, broker, topic, round);
        (kind === 'share' ? figures.shareRuns : figures.groupRuns).push(r);
        log(`${name}: round ${round}, ${kind === 'share' ? 'share group' : 'consumer group'}: ${fmt(r.recordsPerSecond)} records/s, broker ${fmt(r.brokerMicrosPerRecord)} µs/record, first record after ${fmt(r.firstRecordAfterMs)} ms`);
      }
    }
    const best = (runs: ReadFigures[]) => runs.reduce<ReadFigures | undefined>((a, b) => (a && a.recordsPerSecond >= b.recordsPerSecond ? a : b), undefined);
    figures.group = best(figures.groupRuns);
    figures.share = best(figures.shareRuns);
    const redelivery = await runJava<{ redelivered: number; p50: number; p99: number; max: number; wrongDeliveryCount: number }>(
      ['redeliver', broker.bootstrap, `${topic}-redeliver`, topic, String(REDELIVER), '300'], broker.pid, 400_000,
    );
    figures.redelivery = redelivery.result;
    log(`${name}: redelivery after RELEASE over ${fmt(redelivery.result.redelivered)} records: p50 ${fmt(redelivery.result.p50)} ms, p99 ${fmt(redelivery.result.p99)} ms` +
      (redelivery.result.wrongDeliveryCount > 0 ? ` (${redelivery.result.wrongDeliveryCount} came back with a delivery count other than 2)` : ''));
  } catch (e) {
    figures.error = (e as Error).message;
    log(`${name}: FAILED: ${figures.error.slice(0, 500)}`);
  } finally {
    if (broker) {
      figures.peakMemoryMB = peakMemoryMB(broker.pid);
      await broker.stop();
    }
    figures.wallSeconds = (performance.now() - began) / 1000;
  }
  return figures;
}

const startedAt = new Date();
log(`share-group benchmark: ${BROKERS.join(', ')}; ${fmt(RECORDS)} records of ${RECORD_BYTES} B over ${PARTITIONS} partitions, ${ROUNDS} rounds; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${cpus().length} cores`);
const brokers: ShareBenchResults['brokers'] = {};
const loadAverageAfter: Record<string, number[]> = {};
try {
  for (const name of BROKERS) {
    brokers[name] = await runBroker(name);
    loadAverageAfter[name] = loadavg();
  }
} finally {
  killAll();
  await stopStandbyRig();
}
const results: ShareBenchResults = {
  startedAt: startedAt.toISOString(),
  finishedAt: new Date().toISOString(),
  machine: { cpus: cpus().length, model: cpus()[0]?.model ?? '?', loadAverageAfter, node: process.version },
  settings: {
    records: RECORDS, recordBytes: RECORD_BYTES, partitions: PARTITIONS, rounds: ROUNDS, redeliver: REDELIVER,
    clients: 'Apache Kafka 4.4\'s Java clients (test/bench/share/ShareBench.java): one KafkaConsumer or KafkaShareConsumer, default fetch settings, commitSync after each poll; implicit acknowledgement (every record accepted) for throughput, explicit RELEASE then ACCEPT for redelivery',
    kafkaBroker: `one KRaft node; JVM ${KAFKA_JVM_OPTIONS.join(' ')}; num.network.threads=3, num.io.threads=8; CPU and memory of the JVM's whole process`,
  },
  brokers,
  judged: [],
};
results.judged = judge(results);
mkdirSync(join(OUT, '..'), { recursive: true });
writeFileSync(OUT, JSON.stringify(results, null, 2) + '\n');
writeFileSync(OUT.replace(/\.json$/, '') + '.svg', renderShareChart(results));
for (const t of results.judged) log(`${t.pass === undefined ? '     ' : t.pass ? 'PASS ' : 'SHORT'} ${t.figure.padStart(8)}  ${t.what}`);
log(`results: ${OUT}`);
process.exit(0);

/**
 * The scale figure: produce and consume throughput with 1, 2 and 3 gateways
 * on one PostgreSQL (each gateway with a core of its own, all on one schema,
 * Redis for the registry and wake-ups: the rig of test/support/cluster.ts),
 * librdkafka clients with every gateway in bootstrap.servers. Printed as
 * ratios to one gateway, measured in one run, with where the CPU went
 * (gateway processes, core processes, the PostgreSQL backends serving the
 * cores, the librdkafka clients in this process) and what the producer's
 * own statistics say of its requests (how many were in flight per gateway
 * against the idempotent producer's limit of 5, and their round trip),
 * beside the ceiling of one PostgreSQL commit measured in the same run, so
 * the bottleneck is named from measurement: a tier at a full CPU, or the
 * requests' window and round trip when none is.
 *
 * Run: `npm run bench:cluster` (needs PostgreSQL and redis-server). The
 * figures are in docs/benchmarks.md.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { startClusterRig, type ClusterRig } from '../support/cluster.js';
import { findTestDatabase } from '../support/postgres.js';
import { connectConsumer, connectProducer, createTopic, disconnect } from '../support/rdkafka.js';
import { redisServerMissing } from '../support/redis.js';
import { uniqueTopic } from '../support/records.js';

const PARTITIONS = 12;
const RECORD = Buffer.alloc(1024, 0x61);
const PRODUCE_SECONDS = Number(process.env['BENCH_SECONDS'] ?? 8);

const found = await findTestDatabase();
const missing = redisServerMissing();
if (!found.database || missing) {
  console.log(`skipped: ${found.skipReason ?? missing}`);
  process.exit(0);
}
const database = found.database;
const TICKS = 100; // USER_HZ on Linux

/** CPU seconds (user + system) a process has used so far; 0 when it is gone. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS;
  } catch {
    return 0;
  }
}

/** The PostgreSQL backends serving this schema's cores (they name themselves queen-core). */
async function backendPids(client: InstanceType<typeof pg.Client>): Promise<number[]> {
  const { rows } = await client.query("select pid from pg_stat_activity where application_name = 'queen-core' and datname = current_database()");
  return (rows as { pid: number }[]).map((r) => r.pid);
}

interface Cpu {
  gateways: number;
  cores: number;
  postgres: number;
  /** This process: the librdkafka clients. */
  clients: number;
}

async function cpuOf(rig: ClusterRig, client: InstanceType<typeof pg.Client>): Promise<Cpu> {
  const sum = (pids: (number | undefined)[]) => pids.reduce<number>((a, pid) => a + cpuSeconds(pid), 0);
  const own = process.cpuUsage();
  return { gateways: sum(rig.gateways.map((g) => g.pid)), cores: sum(rig.cores.map((c) => c.pid)), postgres: sum(await backendPids(client)), clients: (own.user + own.system) / 1e6 };
}

function describeWindow(w: RequestWindow): string {
  return `${w.inFlight.toFixed(1)} in flight, ${w.rttP50.toFixed(1)}/${w.rttP99.toFixed(1)} ms, ${w.recordsPerRequest.toFixed(0)} records per request`;
}

function used(before: Cpu, after: Cpu, seconds: number): string {
  const share = (k: keyof Cpu) => `${(((after[k] - before[k]) / seconds) * 100).toFixed(0)}%`;
  return `gateways ${share('gateways')}, cores ${share('cores')}, PostgreSQL ${share('postgres')}, clients ${share('clients')} of one CPU`;
}

/** librdkafka's statistics on its brokers (the gateways), sampled each second. */
interface RequestWindow {
  /** Produce requests in flight per gateway, averaged over samples and gateways. */
  inFlight: number;
  /** The round trip of requests, p50 and p99 averaged over gateways, in ms. */
  rttP50: number;
  rttP99: number;
  /** Records per request sent (all request kinds, so a lower bound for Produce). */
  recordsPerRequest: number;
}

interface BrokerStats {
  nodeid: number;
  waitresp_cnt: number;
  tx: number;
  rtt: { p50: number; p99: number; cnt: number };
}

function watchRequests(producer: Awaited<ReturnType<typeof connectProducer>>): () => Omit<RequestWindow, 'recordsPerRequest'> & { requests: number } {
  const inFlight: number[] = [];
  const p50: number[] = [];
  const p99: number[] = [];
  let requests = 0;
  producer.on('event.stats', ({ message }: { message: string }) => {
    const brokers = Object.values((JSON.parse(message) as { brokers: Record<string, BrokerStats> }).brokers).filter((b) => b.nodeid >= 0);
    if (brokers.length === 0) return;
    inFlight.push(brokers.reduce((n, b) => n + b.waitresp_cnt, 0) / brokers.length);
    const timed = brokers.filter((b) => b.rtt.cnt > 0);
    if (timed.length > 0) {
      p50.push(timed.reduce((n, b) => n + b.rtt.p50, 0) / timed.length / 1000);
      p99.push(timed.reduce((n, b) => n + b.rtt.p99, 0) / timed.length / 1000);
    }
    requests = brokers.reduce((n, b) => n + b.tx, 0);
  });
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  return () => ({ inFlight: mean(inFlight), rttP50: mean(p50), rttP99: mean(p99), requests });
}

/** The ceiling: one small PostgreSQL transaction's commit, p50 over 200, on the database the cores use. */
async function commitLatency(client: InstanceType<typeof pg.Client>): Promise<number> {
  await client.query('create temporary table if not exists bench_commit (n int)');
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const started = performance.now();
    await client.query('begin');
    await client.query('insert into bench_commit values ($1)', [i]);
    await client.query('commit');
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[100]!;
}

async function produce(bootstrap: string, topic: string): Promise<{ records: number; seconds: number; window: RequestWindow }> {
  const producer = await connectProducer(bootstrap, { 'enable.idempotence': true, 'linger.ms': 5, 'batch.num.messages': 1000, 'queue.buffering.max.messages': 200_000, 'statistics.interval.ms': 1000 }, topic);
  const requests = watchRequests(producer);
  let delivered = 0;
  let failed = 0;
  producer.on('delivery-report', (err) => (err ? failed++ : delivered++));
  const started = performance.now();
  const deadline = started + PRODUCE_SECONDS * 1000;
  let sent = 0;
  while (performance.now() < deadline) {
    try {
      producer.produce(topic, sent % PARTITIONS, RECORD, null);
      sent++;
    } catch {
      producer.poll();
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    if (sent % 500 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise<void>((resolve, reject) => producer.flush(120_000, (err) => (err ? reject(err) : resolve())));
  while (delivered + failed < sent) await new Promise((resolve) => setTimeout(resolve, 10));
  const seconds = (performance.now() - started) / 1000;
  const seen = requests();
  await disconnect(producer);
  if (failed > 0) throw new Error(`${failed} of ${sent} records failed to deliver`);
  return { records: delivered, seconds, window: { inFlight: seen.inFlight, rttP50: seen.rttP50, rttP99: seen.rttP99, recordsPerRequest: seen.requests === 0 ? 0 : delivered / seen.requests } };
}

async function consume(bootstrap: string, topic: string, total: number): Promise<{ records: number; seconds: number }> {
  const consumer = await connectConsumer(bootstrap, { 'group.id': `${topic}-reader`, 'enable.auto.commit': false, 'fetch.wait.max.ms': 100, 'fetch.max.bytes': 16 << 20 }, topic);
  consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, offset: -2 })));
  let read = 0;
  const started = performance.now();
  while (read < total) {
    const batch = await new Promise<number>((resolve) => consumer.consume(5000, (_err, messages) => resolve(messages?.length ?? 0)));
    read += batch;
    if (performance.now() - started > 300_000) throw new Error(`read ${read} of ${total} records in 300 s`);
  }
  const seconds = (performance.now() - started) / 1000;
  await disconnect(consumer);
  return { records: read, seconds };
}

const client = new pg.Client({ connectionString: database.url });
await client.connect();
const rows: { gateways: number; produce: number; consume: number; produceCpu: string; consumeCpu: string; window: RequestWindow }[] = [];
const commitBefore = await commitLatency(client);
for (const count of [1, 2, 3]) {
  const rig = await startClusterRig({ database: { url: database.url, schema: database.freshSchema('queen_bench_scale') }, gatewayCores: Array.from({ length: count }, (_, i) => i), nodeTtlMs: 6_000 });
  try {
    const topic = uniqueTopic('scale');
    await createTopic(rig.bootstrap, topic, PARTITIONS);
    // Every gateway lists the others before the clients start.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    let before = await cpuOf(rig, client);
    const produced = await produce(rig.bootstrap, topic);
    const produceCpu = used(before, await cpuOf(rig, client), produced.seconds);
    before = await cpuOf(rig, client);
    const consumed = await consume(rig.bootstrap, topic, produced.records);
    const consumeCpu = used(before, await cpuOf(rig, client), consumed.seconds);
    rows.push({ gateways: count, produce: produced.records / produced.seconds, consume: consumed.records / consumed.seconds, produceCpu, consumeCpu, window: produced.window });
    console.log(`${count} gateway(s): produce ${(produced.records / produced.seconds).toFixed(0)} records/s (${produceCpu}; ${describeWindow(produced.window)}); consume ${(consumed.records / consumed.seconds).toFixed(0)} records/s (${consumeCpu})`);
  } finally {
    await rig.stop();
  }
}
const commitAfter = await commitLatency(client);
await client.end();
const one = rows[0]!;
console.log(`\n1 KiB records, ${PARTITIONS} partitions, idempotent librdkafka producer and one consumer, every gateway in bootstrap.servers; each gateway with its own core; ${process.env['BENCH_NOTE'] ?? ''}`);
console.log(`The ceiling, one PostgreSQL commit (p50 of 200, before and after): ${commitBefore.toFixed(2)} ms, ${commitAfter.toFixed(2)} ms`);
console.log('| gateways | produce records/s | vs 1 | consume records/s | vs 1 | CPU while producing | CPU while consuming | producer requests in flight per gateway (of 5), round trip p50/p99, records per request |');
console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows) {
  console.log(`| ${r.gateways} | ${r.produce.toFixed(0)} | ${(r.produce / one.produce).toFixed(2)}x | ${r.consume.toFixed(0)} | ${(r.consume / one.consume).toFixed(2)}x | ${r.produceCpu} | ${r.consumeCpu} | ${describeWindow(r.window)} |`);
}
await database.release();

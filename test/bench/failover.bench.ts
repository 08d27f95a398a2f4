/**
 * What the replicated store costs and how long a failover stops writes, on
 * this machine (docs/failover.md has the figures and what they mean):
 *
 *   1. Throughput, one gateway and core in this process, librdkafka
 *      idempotent producers flat out (acks=all, 1 KiB records, 12 partitions),
 *      1 and 4 producers: against the replicated store (primary + synchronous
 *      standby, pg_auto_failover, test/support/pg-ha.ts) and against one
 *      PostgreSQL without a standby (the test server), in one run. The best of
 *      the replicated rows is where one primary ends here; the CPU of the
 *      PostgreSQL processes and of this process beside it names the bound.
 *   2. The unavailability window: a producer at a steady rate, the primary
 *      SIGKILLed (its pg_autoctl with it), and the time from the kill to the
 *      monitor naming a new primary, and the longest time without an
 *      acknowledgement from the kill on. A fresh rig per round, since a
 *      killed node stays dead.
 *
 * Run: `npm run bench:failover` (BENCH_RECORDS, BENCH_ROUNDS). Writes
 * bench-results/failover.json.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { pino } from 'pino';
import KafkaJavascript from '@confluentinc/kafka-javascript';
import { startBroker, type Broker } from '../../src/index.js';
import { pgHaMissing, startPgHa, type PgHaCluster } from '../support/pg-ha.js';
import { findTestDatabase } from '../support/postgres.js';
import { connectProducer, createTopic, disconnect } from '../support/rdkafka.js';
import { uniqueTopic } from '../support/records.js';
import { FLAT_OUT_PRODUCER } from './flat-out-producer.js';

const PARTITIONS = 12;
const RECORD = Buffer.alloc(1024, 0x61);
const RECORDS = Number(process.env['BENCH_RECORDS'] ?? 100_000);
const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 2);
const TICKS = 100;

const missing = pgHaMissing();
if (missing) {
  console.log(`skipped: ${missing}`);
  process.exit(0);
}

/** CPU seconds used so far by every process whose command line contains `needle` (all users). */
function cpuOf(match: (cmdline: string) => boolean): number {
  let total = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!match(readFileSync(`/proc/${entry}/cmdline`, 'utf8'))) continue;
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
      total += (Number(fields[11]) + Number(fields[12])) / TICKS;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
const postgresCpu = (): number => cpuOf((c) => c.startsWith('postgres:') || c.startsWith('/usr/lib/postgresql/'));
const ownCpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

interface ThroughputRow {
  store: string;
  producers: number;
  records: number;
  seconds: number;
  recordsPerSecond: number;
  mebibytesPerSecond: number;
  postgresCpuSeconds: number;
  gatewayAndClientsCpuSeconds: number;
}

async function throughput(store: string, url: string, schema: string, producers: number): Promise<ThroughputRow> {
  const broker: Broker = await startBroker({ engine: 'postgres', url, schema, logger: pino({ level: 'silent' }), http: false });
  try {
    const topic = uniqueTopic('failover-bench');
    await createTopic(broker.bootstrap, topic, PARTITIONS);
    const clients = await Promise.all(Array.from({ length: producers }, () => connectProducer(broker.bootstrap, { ...FLAT_OUT_PRODUCER, 'enable.idempotence': true }, topic)));
    let failures = 0;
    for (const p of clients) p.on('delivery-report', (err) => void (err && failures++));
    const perProducer = Math.ceil(RECORDS / producers);
    const pg0 = postgresCpu();
    const own0 = ownCpu();
    const started = performance.now();
    await Promise.all(
      clients.map(async (p, n) => {
        for (let i = 0; i < perProducer; i++) {
          for (;;) {
            try {
              p.produce(topic, (i + n) % PARTITIONS, RECORD, null);
              break;
            } catch (e) {
              if ((e as { code?: number }).code !== KafkaJavascript.CODES.ERRORS.ERR__QUEUE_FULL) throw e;
              await new Promise((r) => setTimeout(r, 5));
            }
          }
        }
        await new Promise<void>((resolve, reject) => p.flush(300_000, (err) => (err ? reject(err) : resolve())));
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const row: ThroughputRow = {
      store,
      producers,
      records: perProducer * producers,
      seconds: round(seconds),
      recordsPerSecond: Math.round((perProducer * producers) / seconds),
      mebibytesPerSecond: round((perProducer * producers * RECORD.length) / seconds / 2 ** 20),
      postgresCpuSeconds: round(postgresCpu() - pg0),
      gatewayAndClientsCpuSeconds: round(ownCpu() - own0),
    };
    await Promise.all(clients.map((p) => disconnect(p)));
    if (failures > 0) throw new Error(`${failures} records failed in the ${store} run`);
    return row;
  } finally {
    await broker.stop();
  }
}

interface FailoverRow {
  round: number;
  killed: string;
  promoted: string;
  /** Kill to the monitor naming a new primary with a synchronous standby. */
  newPrimaryMs: number;
  /** The longest time without an acknowledgement, from a second before the kill until writes run again. */
  writeGapMs: number;
  failedRecords: number;
}

async function failover(ha: PgHaCluster, round: number): Promise<FailoverRow> {
  const broker = await startBroker({ engine: 'postgres', url: ha.url, schema: 'failover_bench', logger: pino({ level: 'silent' }), http: false });
  try {
    const topic = uniqueTopic('failover-window');
    await createTopic(broker.bootstrap, topic, 2);
    const producer = await connectProducer(broker.bootstrap, { 'enable.idempotence': true, 'linger.ms': 1, 'message.timeout.ms': 300_000, 'retry.backoff.ms': 50, 'retry.backoff.max.ms': 250, dr_cb: true }, topic);
    const acks: number[] = [];
    let failed = 0;
    producer.on('delivery-report', (err) => (err ? failed++ : acks.push(Date.now())));
    let running = true;
    const loop = (async () => {
      for (let i = 0; running; i++) {
        producer.produce(topic, i % 2, RECORD, null);
        producer.poll();
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    while (acks.length < 200) await new Promise((r) => setTimeout(r, 50));
    const old = await ha.primary();
    const killedAt = Date.now();
    await ha.kill(old);
    const promoted = await ha.waitForPrimary({ not: old, timeoutMs: 120_000 });
    const newPrimaryMs = Date.now() - killedAt;
    const ackedAtTakeover = acks.length;
    while (acks.length < ackedAtTakeover + 200) await new Promise((r) => setTimeout(r, 50));
    running = false;
    await loop;
    await new Promise<void>((resolve, reject) => producer.flush(120_000, (err) => (err ? reject(err) : resolve())));
    await disconnect(producer);
    // Records in flight at the kill are acknowledged just after it; the window is the longest silence from the kill on.
    const sorted = acks.filter((t) => t >= killedAt - 1_000).sort((a, b) => a - b);
    let writeGapMs = 0;
    for (let i = 1; i < sorted.length; i++) writeGapMs = Math.max(writeGapMs, sorted[i]! - sorted[i - 1]!);
    return { round, killed: old.name, promoted: promoted.name, newPrimaryMs, writeGapMs, failedRecords: failed };
  } finally {
    await broker.stop();
  }
}

function round(n: number): number {
  return Math.round(n * 100) / 100;
}

const rows: ThroughputRow[] = [];
const windows: FailoverRow[] = [];
const single = await findTestDatabase();
for (let r = 0; r < ROUNDS; r++) {
  const ha = await startPgHa();
  try {
    if (r === 0) {
      for (const producers of [1, 4]) {
        rows.push(await throughput('primary + synchronous standby', ha.url, `bench_ha_${producers}`, producers));
        console.log(JSON.stringify(rows.at(-1)));
        if (single.database) {
          rows.push(await throughput('one PostgreSQL, no standby', single.database.url, single.database.freshSchema('failover_bench'), producers));
          console.log(JSON.stringify(rows.at(-1)));
        }
      }
    }
    windows.push(await failover(ha, r + 1));
    console.log(JSON.stringify(windows.at(-1)));
  } finally {
    await ha.stop();
  }
}
await single.database?.release();

const replicated = rows.filter((row) => row.store.startsWith('primary'));
const best = replicated.reduce((a, b) => (b.recordsPerSecond > a.recordsPerSecond ? b : a));
const result = {
  measuredAt: new Date().toISOString(),
  machine: { cpus: (await import('node:os')).cpus().length, loadAverage: (await import('node:os')).loadavg().map(round) },
  recordBytes: RECORD.length,
  throughput: rows,
  onePrimaryEnds: { recordsPerSecond: best.recordsPerSecond, mebibytesPerSecond: best.mebibytesPerSecond, producers: best.producers },
  failover: windows,
};
writeFileSync(new URL('../../bench-results/failover.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
console.log(`one primary + synchronous standby: ${best.recordsPerSecond} records/s (${best.mebibytesPerSecond} MiB/s); failovers: ${windows.map((w) => `new primary ${w.newPrimaryMs} ms, writes stopped ${w.writeGapMs} ms`).join('; ')}`);

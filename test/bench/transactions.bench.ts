/**
 * `npm run bench:transactions`: what transactions cost a producer, on the
 * gateway and on Apache Kafka in the same run. Per broker (Apache Kafka, the
 * gateway on the memory engine, the gateway on PostgreSQL), one fresh broker
 * process at a time, a librdkafka producer sends 100-byte records
 * round-robin over 4 partitions flat out for --seconds, three ways:
 *   plain          no transactions (acks=all, linger.ms=5, not idempotent: the
 *                  e2e benchmark's producer)
 *   txn 100 ms     a transactional producer committing every 100 ms
 *   txn 1,000 rec  a transactional producer committing every 1,000 records
 * Throughput is records acknowledged (plain: flushed; transactional: in a
 * committed transaction) per second of wall time, the last flush or commit
 * included. Printed: each mode's rate and its ratio to the same broker's
 * plain rate, and the gateway's ratios beside Kafka's; only ratios from one
 * run compare on a shared machine. The load average is printed with them.
 *
 * Flags: --seconds N (default 10); --brokers kafka,memory,postgres.
 * The gateway runs from dist/ (the npm script builds it first).
 */
import { loadavg, cpus } from 'node:os';
import { join } from 'node:path';
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type { LibrdKafkaError, ProducerGlobalConfig } from '@confluentinc/kafka-javascript';
import pg from 'pg';
import { startApacheKafka } from '../support/apache-kafka.js';
import { LOCAL_TEST_URL } from '../support/postgres.js';
import { createTopic } from '../support/rdkafka.js';
import { killAll, REPO_ROOT, spawnProcess } from './e2e/processes.js';
import { FLAT_OUT_PRODUCER } from './flat-out-producer.js';

const { CODES } = KafkaJavascript;
type BrokerName = 'kafka' | 'memory' | 'postgres';
type Mode = 'plain' | 'txn100ms' | 'txn1000';
const MODES: { mode: Mode; label: string }[] = [
  { mode: 'plain', label: 'plain' },
  { mode: 'txn100ms', label: 'txn every 100 ms' },
  { mode: 'txn1000', label: 'txn every 1,000 records' },
];
const PARTITIONS = 4;
const RECORD_BYTES = 100;
const DATABASE_URL = process.env['DATABASE_URL'] ?? LOCAL_TEST_URL;

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const seconds = Number(flag('seconds') ?? 10);
const brokers = (flag('brokers') ?? 'kafka,memory,postgres').split(',') as BrokerName[];
for (const b of brokers) if (!['kafka', 'memory', 'postgres'].includes(b)) throw new Error(`--brokers: unknown broker "${b}"; use kafka, memory or postgres`);
if (!(seconds > 0)) throw new Error('--seconds must be a positive number of seconds');

interface Server {
  bootstrap: string;
  stop(): Promise<void>;
}

const runTag = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
let topicCount = 0;

async function startServer(name: BrokerName): Promise<Server> {
  if (name === 'kafka') {
    const kafka = await startApacheKafka({ stopTimeoutMs: 30_000 });
    return { bootstrap: kafka.bootstrap, stop: () => kafka.stop() };
  }
  const args = ['serve', '--port', '0', '--engine', name, '--default-partitions', String(PARTITIONS), '--log-level', 'info', '--no-http'];
  const schema = `queen_bench_txn_${runTag}`;
  if (name === 'postgres') args.push('--database-url', DATABASE_URL, '--database-schema', schema);
  const child = spawnProcess(process.execPath, [join(REPO_ROOT, 'dist/src/cli/main.js'), ...args], { label: `gateway (${name})`, timeoutMs: 1_800_000 });
  const bootstrap = await child.waitFor((m) => m['bootstrap'] as string | undefined, 'ready line', 60_000);
  return {
    bootstrap,
    async stop() {
      await child.stop(5_000);
      if (name === 'postgres') {
        const client = new pg.Client({ connectionString: DATABASE_URL });
        await client.connect();
        try {
          await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        } finally {
          await client.end();
        }
      }
    },
  };
}

function call(what: string, body: (cb: (err: LibrdKafkaError | null | undefined) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => body((err) => (err ? reject(new Error(`${what}: ${err.message}`)) : resolve())));
}

/** One mode against one broker: records acknowledged per second of wall time. */
async function measure(bootstrap: string, mode: Mode, forSeconds = seconds): Promise<number> {
  const topic = `bench-txn-${mode}-${runTag}-${topicCount++}`;
  await createTopic(bootstrap, topic, PARTITIONS);
  const transactional = mode !== 'plain';
  let failed = 0;
  const producer = new KafkaJavascript.Producer({
    ...FLAT_OUT_PRODUCER,
    'bootstrap.servers': bootstrap,
    ...(transactional ? { 'transactional.id': `bench-${topic}`, 'transaction.timeout.ms': 60_000 } : { 'enable.idempotence': false }),
  } as unknown as ProducerGlobalConfig);
  producer.on('delivery-report', (err: LibrdKafkaError | null) => void (err && failed++));
  await new Promise<void>((resolve, reject) => producer.connect({ topic, allTopics: false, timeout: 20_000 }, (err) => (err ? reject(err) : resolve())));
  producer.setPollInterval(5);
  const value = Buffer.alloc(RECORD_BYTES, 97);
  let partition = 0;
  /** Queues one record; false when librdkafka's queue is full (the caller polls and waits a moment). */
  const queue = (): boolean => {
    try {
      producer.produce(topic, partition, value, null, Date.now());
      partition = (partition + 1) % PARTITIONS;
      return true;
    } catch (e) {
      if ((e as { code?: number }).code !== CODES.ERRORS.ERR__QUEUE_FULL) throw e;
      producer.poll();
      return false;
    }
  };
  /** Queues `count` records, waiting whenever the queue is full; stops early when `stop` says so. */
  const sendMany = async (count: number, stop: () => boolean): Promise<number> => {
    let sent = 0;
    while (sent < count && !stop()) {
      if (queue()) sent += 1;
      else await new Promise((r) => setTimeout(r, 1));
      // Let the event loop breathe (reports, polling) every so often.
      if (sent % 1000 === 999) await new Promise((r) => setImmediate(r));
    }
    return sent;
  };
  try {
    if (transactional) await call('initTransactions', (cb) => producer.initTransactions(30_000, cb));
    const started = performance.now();
    const end = started + forSeconds * 1000;
    let acknowledged = 0;
    if (!transactional) {
      const sent = await sendMany(Infinity, () => performance.now() >= end);
      await call('flush', (cb) => producer.flush(60_000, cb));
      acknowledged = sent - failed;
    } else {
      while (performance.now() < end) {
        await call('beginTransaction', (cb) => producer.beginTransaction(cb));
        const until = performance.now() + 100;
        const sent = mode === 'txn1000' ? await sendMany(1_000, () => false) : await sendMany(Infinity, () => performance.now() >= until);
        await call('commitTransaction', (cb) => producer.commitTransaction(60_000, cb));
        acknowledged += sent;
      }
    }
    const elapsed = (performance.now() - started) / 1000;
    if (failed > 0) throw new Error(`${failed} records failed to deliver`);
    return acknowledged / elapsed;
  } finally {
    await new Promise<void>((resolve) => producer.disconnect(10_000, () => resolve()));
  }
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const results = new Map<BrokerName, Map<Mode, number | string>>();
const loadBefore = loadavg();
try {
  for (const name of brokers) {
    const server = await startServer(name);
    const figures = new Map<Mode, number | string>();
    results.set(name, figures);
    try {
      // A warm-up (not counted): the JIT, the connections and the broker's first topic.
      await measure(server.bootstrap, 'plain', 2);
      for (const { mode, label } of MODES) {
        process.stdout.write(`${name}: ${label} ... `);
        try {
          const rate = await measure(server.bootstrap, mode);
          figures.set(mode, rate);
          process.stdout.write(`${fmt(rate)} records/s\n`);
        } catch (e) {
          figures.set(mode, (e as Error).message);
          process.stdout.write(`failed: ${(e as Error).message}\n`);
        }
      }
    } finally {
      await server.stop();
    }
  }
} finally {
  killAll();
}
const loadAfter = loadavg();

const ratioOf = (name: BrokerName, mode: Mode): number | undefined => {
  const f = results.get(name);
  const plain = f?.get('plain');
  const rate = f?.get(mode);
  return typeof plain === 'number' && typeof rate === 'number' ? rate / plain : undefined;
};
console.log(`\nTransactional produce against plain produce: librdkafka, ${RECORD_BYTES} B records, ${PARTITIONS} partitions, ${seconds} s per mode; ${cpus().length} cores, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} after`);
const header = ['broker', ...MODES.map((m) => m.label), ...MODES.slice(1).map((m) => `${m.label} / plain`)];
const rows = [...results].map(([name, f]) => [
  name,
  ...MODES.map((m) => {
    const v = f.get(m.mode);
    return typeof v === 'number' ? `${fmt(v)}/s` : 'failed';
  }),
  ...MODES.slice(1).map((m) => {
    const r = ratioOf(name, m.mode);
    return r === undefined ? '' : r.toFixed(2);
  }),
]);
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
for (const row of [header, ...rows]) console.log(row.map((c, i) => c.padEnd(widths[i]!)).join('  '));
for (const name of brokers.filter((b) => b !== 'kafka')) {
  for (const { mode, label } of MODES.slice(1)) {
    const gateway = ratioOf(name, mode);
    const kafka = ratioOf('kafka', mode);
    if (gateway !== undefined && kafka !== undefined) console.log(`${name}, ${label}: the gateway keeps ${(gateway * 100).toFixed(0)}% of its plain rate, Kafka ${(kafka * 100).toFixed(0)}% of its own (ratio of ratios ${(gateway / kafka).toFixed(2)})`);
  }
}
for (const [name, f] of results) for (const [mode, v] of f) if (typeof v === 'string') console.log(`${name} ${mode} failed: ${v}`);
process.exit(0);

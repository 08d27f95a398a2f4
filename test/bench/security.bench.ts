/**
 * `npm run bench:security`: what TLS and SASL cost, on the gateway and on
 * Apache Kafka in the same run (issue 19). Each broker has four listeners,
 * PLAINTEXT, SSL, SASL_PLAINTEXT and SASL_SSL (SCRAM-SHA-256 on the SASL
 * ones; no authorizer, so only the transport and the login are measured);
 * both brokers run at once and are measured in turn. Over each listener a librdkafka producer
 * sends 100-byte records round-robin over 4 partitions flat out for
 * --seconds (acks=all, linger.ms=5, not idempotent), then a librdkafka
 * consumer reads them all back from the start (assigned partitions, no
 * group). Throughput is records per second of wall time: produce until the
 * last flush, consume until the last record.
 *
 * A busy machine swings more than TLS costs, so there are --rounds rounds
 * of the four listeners, the order rotated each round (no listener always
 * goes first), each listener measured on one broker and then the other (the
 * order alternating by round), and each figure is the median of its rounds.
 *
 * Printed: each listener's rates and their ratio to the same broker's
 * PLAINTEXT rates, and the gateway's ratios beside Kafka's; only ratios from
 * one run compare on a shared machine. The load average is printed with them.
 *
 * Flags: --seconds N (default 5); --rounds N (default 3); --brokers kafka,gateway.
 * The gateway runs from dist/ (the npm script builds it first).
 */
import { pbkdf2Sync, randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type { ConsumerGlobalConfig, LibrdKafkaError, ProducerGlobalConfig } from '@confluentinc/kafka-javascript';
import { ApiKey } from '../../protocol/api-keys.js';
import { freePort } from '../support/gateway.js';
import { createTopic } from '../support/rdkafka.js';
import { RawConnection } from '../support/raw-connection.js';
import { makeSecurityFixture, SECURED_USERS, startSecuredKafka, type SecurityFixture } from '../support/secured-brokers.js';
import { killAll, REPO_ROOT, spawnProcess } from './e2e/processes.js';
import { FLAT_OUT_PRODUCER } from './flat-out-producer.js';

const { CODES } = KafkaJavascript;
type BrokerName = 'kafka' | 'gateway';
type Listener = 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
const LISTENERS: readonly Listener[] = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];
const PARTITIONS = 4;
const RECORD_BYTES = 100;

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}
const seconds = Number(flag('seconds') ?? 5);
const rounds = Number(flag('rounds') ?? 3);
if (!(Number.isInteger(rounds) && rounds > 0)) throw new Error('--rounds must be a positive whole number');
const brokers = (flag('brokers') ?? 'kafka,gateway').split(',') as BrokerName[];
for (const b of brokers) if (!['kafka', 'gateway'].includes(b)) throw new Error(`--brokers: unknown broker "${b}"; use kafka or gateway`);
if (!(seconds > 0)) throw new Error('--seconds must be a positive number of seconds');

interface Server {
  bootstrap: Record<Listener, string>;
  stop(): Promise<void>;
}

/** SCRAM-SHA-256 credentials for each user, written through AlterUserScramCredentials over PLAINTEXT (the gateway's store is its core). */
async function addScramUsers(port: number): Promise<void> {
  const raw = await RawConnection.open(port);
  try {
    for (const [user, password] of Object.entries(SECURED_USERS)) {
      const salt = randomBytes(16);
      const saltedPassword = pbkdf2Sync(password, salt, 4096, 32, 'sha256');
      const answer = await raw.request(ApiKey.AlterUserScramCredentials, 0, { deletions: [], upsertions: [{ name: user, mechanism: 1, iterations: 4096, salt, saltedPassword }] });
      const failed = (answer.results as { errorCode: number; errorMessage: string | null }[]).find((r) => r.errorCode !== 0);
      if (failed) throw new Error(`adding ${user}'s SCRAM credentials failed: ${failed.errorCode} ${failed.errorMessage}`);
    }
  } finally {
    raw.destroy();
  }
}

async function startServer(name: BrokerName, fixture: SecurityFixture): Promise<Server> {
  if (name === 'kafka') {
    const kafka = await startSecuredKafka(fixture, { authorization: false });
    return { bootstrap: kafka.bootstrap, stop: () => kafka.stop() };
  }
  const ports = Object.fromEntries(await Promise.all(LISTENERS.map(async (l) => [l, await freePort()] as const))) as Record<Listener, number>;
  const args = ['serve', '--engine', 'memory', '--default-partitions', String(PARTITIONS), '--log-level', 'info', '--no-http'];
  for (const l of LISTENERS) args.push('--listener', `${l}://127.0.0.1:${ports[l]}`);
  args.push('--tls-cert-file', fixture.pki.serverCert, '--tls-key-file', fixture.pki.serverKey, '--sasl-mechanisms', 'SCRAM-SHA-256');
  const child = spawnProcess(process.execPath, [join(REPO_ROOT, 'dist/src/cli/main.js'), ...args], { label: 'gateway (memory)', timeoutMs: 1_800_000 });
  await child.waitFor((m) => m['bootstrap'] as string | undefined, 'ready line', 60_000);
  await addScramUsers(ports.PLAINTEXT);
  return {
    bootstrap: Object.fromEntries(LISTENERS.map((l) => [l, `127.0.0.1:${ports[l]}`])) as Record<Listener, string>,
    stop: () => child.stop(5_000),
  };
}

/** librdkafka's settings for a listener: TLS trusting the test CA, SCRAM-SHA-256 as alice. */
function clientSecurity(listener: Listener, fixture: SecurityFixture): Record<string, string> {
  return {
    'security.protocol': listener.toLowerCase(),
    ...(listener.endsWith('SSL') ? { 'ssl.ca.location': fixture.pki.caCert } : {}),
    ...(listener.startsWith('SASL') ? { 'sasl.mechanisms': 'SCRAM-SHA-256', 'sasl.username': 'alice', 'sasl.password': SECURED_USERS.alice } : {}),
  };
}

/** Produces flat out for `forSeconds`; answers records acknowledged per second and how many there are. */
async function produce(bootstrap: string, security: Record<string, string>, topic: string, forSeconds: number): Promise<{ rate: number; count: number }> {
  let failed = 0;
  const producer = new KafkaJavascript.Producer({
    ...FLAT_OUT_PRODUCER,
    'bootstrap.servers': bootstrap,
    'enable.idempotence': false,
    ...security,
  } as unknown as ProducerGlobalConfig);
  producer.on('delivery-report', (err: LibrdKafkaError | null) => void (err && failed++));
  await new Promise<void>((resolve, reject) => producer.connect({ topic, allTopics: false, timeout: 20_000 }, (err) => (err ? reject(err) : resolve())));
  producer.setPollInterval(5);
  const value = Buffer.alloc(RECORD_BYTES, 97);
  try {
    const started = performance.now();
    const end = started + forSeconds * 1000;
    let sent = 0;
    while (performance.now() < end) {
      try {
        producer.produce(topic, sent % PARTITIONS, value, null, Date.now());
        sent++;
      } catch (e) {
        if ((e as { code?: number }).code !== CODES.ERRORS.ERR__QUEUE_FULL) throw e;
        producer.poll();
        await new Promise((r) => setTimeout(r, 1));
      }
      if (sent % 1000 === 999) await new Promise((r) => setImmediate(r));
    }
    await new Promise<void>((resolve, reject) => producer.flush(60_000, (err) => (err ? reject(new Error(`flush: ${err.message}`)) : resolve())));
    const elapsed = (performance.now() - started) / 1000;
    if (failed > 0) throw new Error(`${failed} records failed to deliver`);
    return { rate: sent / elapsed, count: sent };
  } finally {
    await new Promise<void>((resolve) => producer.disconnect(10_000, () => resolve()));
  }
}

/** Reads the topic's `count` records from the start; answers records per second. */
async function consume(bootstrap: string, security: Record<string, string>, topic: string, count: number): Promise<number> {
  const consumer = new KafkaJavascript.KafkaConsumer(
    {
      'bootstrap.servers': bootstrap,
      'client.id': 'queen-bench-consumer',
      'group.id': `bench-${topic}`,
      'log_level': 3,
      'enable.auto.commit': false,
      'fetch.max.bytes': 52_428_800,
      ...security,
    } as unknown as ConsumerGlobalConfig,
    { 'auto.offset.reset': 'earliest' },
  );
  await new Promise<void>((resolve, reject) => consumer.connect({ timeout: 20_000 }, (err) => (err ? reject(err) : resolve())));
  try {
    consumer.assign(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition, offset: 0 })));
    const started = performance.now();
    let read = 0;
    const deadline = started + 120_000;
    while (read < count) {
      if (performance.now() > deadline) throw new Error(`read ${read} of ${count} records in 120 s`);
      const batch = await new Promise<unknown[]>((resolve, reject) => consumer.consume(10_000, (err, messages) => (err ? reject(err) : resolve(messages))));
      read += batch.length;
    }
    return read / ((performance.now() - started) / 1000);
  } finally {
    await new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const runTag = `${process.pid.toString(36)}${Date.now().toString(36).slice(-4)}`;
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
type Figures = Map<Listener, { produce: number; consume: number } | string>;
const results = new Map<BrokerName, Figures>();
const fixture = makeSecurityFixture();
const loadBefore = loadavg();
try {
  // Both brokers up at once and measured in turn, listener by listener: the machine's load then weighs on both alike.
  const servers = new Map<BrokerName, Server>();
  for (const name of brokers) servers.set(name, await startServer(name, fixture));
  try {
    const samples = new Map<string, { produce: number[]; consume: number[] }>();
    for (const [name, server] of servers) {
      results.set(name, new Map());
      for (const l of LISTENERS) samples.set(`${name} ${l}`, { produce: [], consume: [] });
      // A warm-up (not counted): the JIT, the connections and the broker's first topic.
      const warm = `bench-sec-warm-${runTag}`;
      await createTopic(server.bootstrap.PLAINTEXT, warm, PARTITIONS);
      await produce(server.bootstrap.PLAINTEXT, {}, warm, 2);
    }
    for (let round = 0; round < rounds; round++) {
      for (let i = 0; i < LISTENERS.length; i++) {
        const listener = LISTENERS[(i + round) % LISTENERS.length]!;
        const order = round % 2 === 0 ? [...servers] : [...servers].reverse();
        for (const [name, server] of order) {
          const figures = results.get(name)!;
          if (typeof figures.get(listener) === 'string') continue;
          process.stdout.write(`${name}: round ${round + 1}, ${listener} ... `);
          try {
            const topic = `bench-sec-${listener.toLowerCase()}-${round}-${runTag}`;
            await createTopic(server.bootstrap.PLAINTEXT, topic, PARTITIONS);
            const security = clientSecurity(listener, fixture);
            const produced = await produce(server.bootstrap[listener], security, topic, seconds);
            const consumed = await consume(server.bootstrap[listener], security, topic, produced.count);
            samples.get(`${name} ${listener}`)!.produce.push(produced.rate);
            samples.get(`${name} ${listener}`)!.consume.push(consumed);
            process.stdout.write(`produce ${fmt(produced.rate)} records/s, consume ${fmt(consumed)} records/s\n`);
          } catch (e) {
            figures.set(listener, (e as Error).message);
            process.stdout.write(`failed: ${(e as Error).message}\n`);
          }
        }
      }
    }
    for (const [name, figures] of results) {
      for (const l of LISTENERS) {
        const s = samples.get(`${name} ${l}`)!;
        if (typeof figures.get(l) !== 'string') figures.set(l, { produce: median(s.produce), consume: median(s.consume) });
      }
    }
  } finally {
    await Promise.allSettled([...servers.values()].map((server) => server.stop()));
  }
} finally {
  killAll();
  fixture.remove();
}
const loadAfter = loadavg();

const ratioOf = (name: BrokerName, listener: Listener, what: 'produce' | 'consume'): number | undefined => {
  const plain = results.get(name)?.get('PLAINTEXT');
  const rate = results.get(name)?.get(listener);
  return typeof plain === 'object' && typeof rate === 'object' ? rate[what] / plain[what] : undefined;
};
console.log(
  `\nTLS and SASL against plaintext: librdkafka, ${RECORD_BYTES} B records, ${PARTITIONS} partitions, ${seconds} s of produce then a read of it all per listener, medians of ${rounds} rounds; SASL is SCRAM-SHA-256; ` +
    `${cpus().length} cores, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} after`,
);
const header = ['broker', 'listener', 'produce', 'consume', 'produce / plaintext', 'consume / plaintext'];
const rows: string[][] = [];
for (const [name, figures] of results) {
  for (const listener of LISTENERS) {
    const f = figures.get(listener);
    const ratio = (what: 'produce' | 'consume') => (listener === 'PLAINTEXT' ? '1.00' : ratioOf(name, listener, what)?.toFixed(2) ?? '');
    rows.push(typeof f === 'object' ? [name, listener, `${fmt(f.produce)}/s`, `${fmt(f.consume)}/s`, ratio('produce'), ratio('consume')] : [name, listener, 'failed', '', '', '']);
  }
}
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
for (const row of [header, ...rows]) console.log(row.map((c, i) => c.padEnd(widths[i]!)).join('  '));
if (results.has('kafka') && results.has('gateway')) {
  console.log('');
  for (const listener of LISTENERS.slice(1)) {
    for (const what of ['produce', 'consume'] as const) {
      const gateway = ratioOf('gateway', listener, what);
      const kafka = ratioOf('kafka', listener, what);
      if (gateway !== undefined && kafka !== undefined) console.log(`${listener} ${what}: the gateway keeps ${(gateway * 100).toFixed(0)}% of its plaintext rate, Kafka ${(kafka * 100).toFixed(0)}% of its own`);
    }
  }
}

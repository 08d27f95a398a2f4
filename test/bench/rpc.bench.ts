// Produce through the split layout (gateway process → internal RPC → core
// process) against `serve` (gateway and core in one process, direct calls),
// both started from the CLI and measured in the same run with kafkajs:
//
//   throughput  acks=all sends of BATCH records of RECORD_BYTES, SENDS_IN_FLIGHT at a time
//   latency     one-record acks=all sends, one after another; p50 and p99
//
// The layouts take turns (serve, split, serve, split) so drift on a shared
// machine hits both; figures are the better of the two rounds, and the ratios
// are split / serve. Memory engine, so the hop is what differs.
// Run: npm run bench:rpc
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel, type Producer } from 'kafkajs';

const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const SECRET = 'bench-rpc-secret-0123456789';
const RECORD_BYTES = 1024;
const BATCH = 100;
const THROUGHPUT_SENDS = 300;
const SENDS_IN_FLIGHT = 8;
const LATENCY_SENDS = 1000;
const ROUNDS = 2;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** Starts a CLI process and waits for its "ready" log line. */
function launch(args: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args, '--log-level', 'info'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, QUEEN_RPC_SECRET: SECRET },
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('"msg":"ready')) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`queen-gateway ${args[0]} exited with ${code}: ${out}`)));
  });
}

async function stop(children: ChildProcess[]): Promise<void> {
  for (const child of children.reverse()) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

interface Layout {
  name: 'serve' | 'split';
  bootstrap: string;
  children: ChildProcess[];
}

async function startServe(): Promise<Layout> {
  const port = await freePort();
  const child = await launch(['serve', '--port', String(port), '--engine', 'memory', '--no-http']);
  return { name: 'serve', bootstrap: `127.0.0.1:${port}`, children: [child] };
}

async function startSplit(): Promise<Layout> {
  const rpcPort = await freePort();
  const port = await freePort();
  const core = await launch(['core', '--rpc-port', String(rpcPort), '--engine', 'memory']);
  const gateway = await launch(['gateway', '--core', `127.0.0.1:${rpcPort}`, '--port', String(port), '--no-http']);
  return { name: 'split', bootstrap: `127.0.0.1:${port}`, children: [core, gateway] };
}

interface Figures {
  recordsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
}

async function measure(layout: Layout): Promise<Figures> {
  const kafka = new Kafka({ clientId: 'bench-rpc', brokers: [layout.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const topic = `bench-${layout.name}-${Date.now()}`;
  await admin.createTopics({ topics: [{ topic, numPartitions: 4 }], waitForLeaders: true });
  await admin.disconnect();
  const producer: Producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  const value = Buffer.alloc(RECORD_BYTES, 'q');
  const batch = (partition: number) => ({ topic, acks: -1, messages: Array.from({ length: BATCH }, () => ({ value, partition })) });

  // Warm-up: connections, metadata, JIT.
  for (let i = 0; i < 50; i++) await producer.send(batch(i % 4));

  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: SENDS_IN_FLIGHT }, async () => {
      while (next < THROUGHPUT_SENDS) await producer.send(batch(next++ % 4));
    }),
  );
  const seconds = (performance.now() - t0) / 1000;

  const latencies: number[] = [];
  const one = { topic, acks: -1, messages: [{ value, partition: 0 }] };
  for (let i = 0; i < LATENCY_SENDS; i++) {
    const t = performance.now();
    await producer.send(one);
    latencies.push(performance.now() - t);
  }
  await producer.disconnect();
  latencies.sort((a, b) => a - b);
  return {
    recordsPerSecond: (THROUGHPUT_SENDS * BATCH) / seconds,
    p50Ms: latencies[Math.floor(LATENCY_SENDS * 0.5)]!,
    p99Ms: latencies[Math.floor(LATENCY_SENDS * 0.99)]!,
  };
}

const best: Record<Layout['name'], Figures | null> = { serve: null, split: null };
for (let round = 0; round < ROUNDS; round++) {
  for (const start of [startServe, startSplit]) {
    const layout = await start();
    try {
      const figures = await measure(layout);
      const kept = best[layout.name];
      best[layout.name] = kept
        ? { recordsPerSecond: Math.max(kept.recordsPerSecond, figures.recordsPerSecond), p50Ms: Math.min(kept.p50Ms, figures.p50Ms), p99Ms: Math.min(kept.p99Ms, figures.p99Ms) }
        : figures;
    } finally {
      await stop(layout.children);
    }
  }
}

const serve = best.serve!;
const split = best.split!;
const mb = (records: number) => ((records * RECORD_BYTES) / (1024 * 1024)).toFixed(1);
const row = (name: string, f: Figures) =>
  `${name.padEnd(7)} ${f.recordsPerSecond.toFixed(0).padStart(8)} records/s (${mb(f.recordsPerSecond).padStart(5)} MiB/s)   p50 ${f.p50Ms.toFixed(2).padStart(6)} ms   p99 ${f.p99Ms.toFixed(2).padStart(6)} ms`;
console.log(`kafkajs produce, acks=all, ${RECORD_BYTES}-byte records; throughput: ${THROUGHPUT_SENDS} sends of ${BATCH}, ${SENDS_IN_FLIGHT} in flight; latency: ${LATENCY_SENDS} one-record sends`);
console.log(row('serve', serve));
console.log(row('split', split));
console.log(`split / serve: throughput ${(split.recordsPerSecond / serve.recordsPerSecond).toFixed(2)}x, p50 latency ${(split.p50Ms / serve.p50Ms).toFixed(2)}x, p99 latency ${(split.p99Ms / serve.p99Ms).toFixed(2)}x`);

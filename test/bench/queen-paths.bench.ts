/**
 * Queen's busy paths over the HTTP API, on both engines (`npm run bench:queen`):
 *   1. ack batch: ROUNDS pops of 100 messages from one partition, each acked
 *      by one POST /api/v1/ack/batch of 100 acks; the ack call's median and
 *      90th percentile, and acks per second;
 *   2. many-partition pop: PARTITIONS partitions of one message each, drained
 *      in queue mode by ten consumers (pop batch=1, then ack); messages
 *      drained per second, each pop's median and 90th percentile, and how
 *      many were drained within the budget (DRAIN_BUDGET_S).
 * The gateway's HTTP API runs in this process on a real socket; each engine
 * gets a fresh core (PostgreSQL: a fresh schema on the test database).
 *
 * Flags: --label NAME (default "after"; the results file keeps one entry per
 * label, so main's code measured with --label before sits beside this one);
 * --engines memory,postgres; --rounds N (20); --partitions N (5,000);
 * --budget SECONDS (120); --out FILE (bench-results/queen-paths.json).
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname } from 'node:path';
import type { AddressInfo } from 'node:net';
import { openCore, type Core } from '../../src/core/index.js';
import { buildHttpApi } from '../../src/http/index.js';
import { findTestDatabase } from '../support/postgres.js';

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1]! : fallback;
}

const LABEL = flag('label', 'after');
const ENGINES = flag('engines', 'memory,postgres').split(',');
const ROUNDS = Number(flag('rounds', '20'));
const PARTITIONS = Number(flag('partitions', '5000'));
const BUDGET_MS = Number(flag('budget', '120')) * 1000;
const CONSUMERS = 10;
const OUT = flag('out', new URL('../../bench-results/queen-paths.json', import.meta.url).pathname);

type Json = Record<string, any>;

function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 10) / 10;
}

async function openEngine(engine: string): Promise<Core> {
  if (engine === 'memory') return openCore({ engine: 'memory' });
  const found = await findTestDatabase();
  if (!found.database) throw new Error(`no PostgreSQL: ${found.skipReason}`);
  return openCore({ engine: 'postgres', url: found.database.url, schema: found.database.freshSchema('queen_bench_paths'), maintenanceIntervalMs: 0 });
}

/** The HTTP API over `core` on a real socket, and a JSON caller. */
async function serve(core: Core) {
  const app = await buildHttpApi({ core, readiness: { engine: 'bench' } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const call = async (method: string, path: string, body?: unknown): Promise<Json> => {
    const response = await fetch(base + path, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
    if (response.status >= 300) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as Json;
  };
  return { call, close: () => app.close() };
}

type Call = Awaited<ReturnType<typeof serve>>['call'];

const acksOf = (messages: Json[]) => ({ acknowledgments: messages.map((m) => ({ transactionId: m['transactionId'], partitionId: m['partitionId'], status: 'completed', leaseId: m['leaseId'] })) });

async function ackBatch(call: Call): Promise<Json> {
  for (let i = 0; i < ROUNDS; i++) {
    await call('POST', '/api/v1/push', { items: Array.from({ length: 100 }, (_, j) => ({ queue: 'acks', partition: 'Default', payload: { i, j } })) });
  }
  const samples: number[] = [];
  let acked = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const { messages } = await call('GET', '/api/v1/pop/queue/acks?batch=100&wait=false');
    const started = performance.now();
    const answers = (await call('POST', '/api/v1/ack/batch', acksOf(messages))) as unknown as { success: boolean }[];
    samples.push(performance.now() - started);
    acked += answers.filter((a) => a.success).length;
  }
  const totalS = samples.reduce((a, b) => a + b, 0) / 1000;
  return { batches: ROUNDS, acksPerBatch: 100, acked, medianMs: percentile(samples, 50), p90Ms: percentile(samples, 90), acksPerSecond: Math.round(acked / totalS) };
}

async function manyPartitions(call: Call): Promise<Json> {
  const pushStarted = performance.now();
  for (let from = 0; from < PARTITIONS; from += 500) {
    const items = Array.from({ length: Math.min(500, PARTITIONS - from) }, (_, k) => ({ queue: 'wide', partition: `p${from + k}`, payload: from + k }));
    await call('POST', '/api/v1/push', { items });
  }
  const pushS = (performance.now() - pushStarted) / 1000;
  const samples: number[] = [];
  const seen = new Set<number>();
  let duplicates = 0;
  const started = performance.now();
  const deadline = started + BUDGET_MS;
  const consumer = async () => {
    for (let empty = 0; empty < 2 && performance.now() < deadline; ) {
      const popStarted = performance.now();
      const { messages } = await call('GET', '/api/v1/pop/queue/wide?batch=1&wait=false');
      samples.push(performance.now() - popStarted);
      if (messages.length === 0) {
        empty++;
        continue;
      }
      for (const m of messages) (seen.has(m['data']) ? duplicates++ : seen.add(m['data']));
      await call('POST', '/api/v1/ack/batch', acksOf(messages));
    }
  };
  await Promise.all(Array.from({ length: CONSUMERS }, consumer));
  const elapsedS = (performance.now() - started) / 1000;
  return {
    partitions: PARTITIONS,
    consumers: CONSUMERS,
    pushSeconds: Math.round(pushS * 10) / 10,
    drained: seen.size,
    duplicates,
    finished: seen.size === PARTITIONS,
    seconds: Math.round(elapsedS * 10) / 10,
    messagesPerSecond: Math.round((seen.size / elapsedS) * 10) / 10,
    pops: samples.length,
    popMedianMs: percentile(samples, 50),
    popP90Ms: percentile(samples, 90),
  };
}

const figures: Json = {};
for (const engine of ENGINES) {
  const core = await openEngine(engine);
  const api = await serve(core);
  try {
    const ack = await ackBatch(api.call);
    console.log(`${LABEL} ${engine} ack batch: ${JSON.stringify(ack)}`);
    const pop = await manyPartitions(api.call);
    console.log(`${LABEL} ${engine} many-partition pop: ${JSON.stringify(pop)}`);
    figures[engine] = { ackBatch: ack, manyPartitionPop: pop };
  } finally {
    await api.close();
    await core.close();
  }
}

const results: Json = existsSync(OUT) ? JSON.parse(readFileSync(OUT, 'utf8')) : { runs: {} };
results.runs[LABEL] = { at: new Date().toISOString(), cpus: cpus().length, loadAverage: loadavg().map((l) => Math.round(l * 10) / 10), budgetSeconds: BUDGET_MS / 1000, figures };
mkdirSync(dirname(OUT), { recursive: true });
writeFileSync(OUT, `${JSON.stringify(results, null, 2)}\n`);
console.log(`written to ${OUT}`);
process.exit(0);

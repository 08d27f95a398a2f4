/**
 * Cross-node wake-ups under load: PostgreSQL LISTEN/NOTIFY against Redis
 * pub/sub (src/core/engines/postgres/redis-wakeups.ts). Two cores on one
 * schema stand in for two nodes (each has its own pool, its own LISTEN
 * connection and its own Redis connections). While eight appenders on the
 * writer keep a load queue busy, a reader on the other core long-polls a
 * probe partition and the writer appends one record to it at a random
 * moment: the wake-up latency is from that append resolving to the other
 * core's read answering. The writer's cost is the load appenders' rate with
 * each transport, against no cross-node wake-ups at all.
 *
 * Run: `npm run bench:wakeups` (needs PostgreSQL, see test/support/postgres.ts,
 * and redis-server). The figures are in docs/benchmarks.md.
 */
import { buildBatch } from '../../protocol/records/record-batch.js';
import type { Core } from '../../src/core/core.js';
import type { PostgresOpenOptions } from '../../src/core/engines/postgres/index.js';
import { postgresFront } from '../support/fronts.js';
import { findTestDatabase } from '../support/postgres.js';
import { redisServerMissing, startRedis } from '../support/redis.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 200);
const APPENDERS = Number(process.env['BENCH_APPENDERS'] ?? 8);
// Passes interleave the transports, so a noisy neighbour on the machine does not fall on one of them alone.
const PASSES = Number(process.env['BENCH_PASSES'] ?? 3);
const found = await findTestDatabase();
if (!found.database) {
  console.log(`skipped: ${found.skipReason}`);
  process.exit(0);
}
const missing = redisServerMissing();
if (missing) {
  console.log(`skipped: ${missing}`);
  process.exit(0);
}
const database = found.database;
const redis = await startRedis();
const batch = buildBatch({ records: [{ value: Buffer.alloc(200, 0x61) }] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Transport = 'notify' | 'redis' | 'none';

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function coreOptions(transport: Transport, schema: string): PostgresOpenOptions {
  const base = { url: database.url, schema, maintenanceIntervalMs: 0, compactionIntervalMs: 0 };
  if (transport === 'none') return { ...base, notifyAppends: false, crossProcessWakeups: false };
  if (transport === 'notify') return base;
  return { ...base, redisUrl: redis.url, redisKeyPrefix: `bench-${schema}` };
}

async function run(transport: Transport): Promise<{ samples: number[]; appendsPerSecond: number }> {
  const schema = database.freshSchema('queen_bench_xwake');
  const writer = await postgresFront(coreOptions(transport, schema));
  const reader = await postgresFront(coreOptions(transport, schema));
  await writer.createQueue({ name: 'load', partitions: 8, config: { dedupWindowSeconds: 0 } });
  await writer.createQueue({ name: 'probe', partitions: 1, config: { dedupWindowSeconds: 0 } });
  let loading = true;
  let appends = 0;
  const loadStarted = performance.now();
  const load = Promise.all(
    Array.from({ length: APPENDERS }, async (_, i) => {
      while (loading) {
        await writer.append({ partitions: [{ queue: 'load', partition: i % 8, records: batch }] });
        appends++;
      }
    }),
  );
  const samples: number[] = [];
  if (transport !== 'none') {
    for (let offset = 0; offset < ROUNDS; offset++) samples.push(await probe(writer, reader, offset));
  } else {
    await sleep(ROUNDS * 20);
  }
  loading = false;
  await load;
  const appendsPerSecond = appends / ((performance.now() - loadStarted) / 1000);
  await writer.close();
  await reader.close();
  return { samples, appendsPerSecond };
}

async function probe(writer: Core, reader: Core, offset: number): Promise<number> {
  const request = { partitions: [{ queue: 'probe', partition: 0, fetchOffset: offset, maxBytes: 1 << 20 }], minBytes: 1, maxBytes: 1 << 20, isolation: 'read_uncommitted' as const, maxWaitMs: 10_000 };
  const seen = reader.read(request).then(() => performance.now());
  await sleep(5 + Math.random() * 15);
  await writer.append({ partitions: [{ queue: 'probe', partition: 0, records: batch }] });
  const appended = performance.now();
  return (await seen) - appended;
}

const results = new Map<Transport, { samples: number[]; appendsPerSecond: number }>();
for (let pass = 0; pass < PASSES; pass++) {
  for (const transport of ['none', 'notify', 'redis'] as const) {
    const { samples, appendsPerSecond } = await run(transport);
    const sum = results.get(transport) ?? { samples: [], appendsPerSecond: 0 };
    results.set(transport, { samples: [...sum.samples, ...samples], appendsPerSecond: sum.appendsPerSecond + appendsPerSecond / PASSES });
  }
}
const none = results.get('none')!.appendsPerSecond;
console.log(`${APPENDERS} appenders loading the writer, ${ROUNDS} probes per pass, ${PASSES} passes, two cores on one PostgreSQL schema`);
console.log('| transport | wake-up p50 | p90 | p99 | writer appends/s under load | vs no wake-ups |');
console.log('| --- | --- | --- | --- | --- | --- |');
for (const transport of ['notify', 'redis'] as const) {
  const { samples, appendsPerSecond } = results.get(transport)!;
  const name = transport === 'notify' ? 'PostgreSQL LISTEN/NOTIFY' : 'Redis pub/sub';
  console.log(
    `| ${name} | ${percentile(samples, 50).toFixed(1)} ms | ${percentile(samples, 90).toFixed(1)} ms | ${percentile(samples, 99).toFixed(1)} ms | ${appendsPerSecond.toFixed(0)} | ${((appendsPerSecond / none) * 100).toFixed(0)}% |`,
  );
}
console.log(`| none (no cross-node wake-ups) | | | | ${none.toFixed(0)} | 100% |`);
await redis.stop();
await database.release();

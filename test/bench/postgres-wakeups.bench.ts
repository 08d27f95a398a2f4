/**
 * How a second process on the same database learns of an append, measured:
 * LISTEN/NOTIFY (what the postgres engine does) against polling, and what
 * the NOTIFY costs the append path. Two cores on one schema stand in for two
 * processes: each has its own pool and its own LISTEN connection.
 * Run: `npx tsx test/bench/postgres-wakeups.bench.ts`. The outcome is in
 * src/core/engines/postgres/DRIVER.md.
 */
import { buildBatch } from '../../protocol/records/record-batch.js';
import { postgresFront } from '../support/fronts.js';
import type { Core } from '../../src/core/core.js';
import { findTestDatabase } from '../support/postgres.js';

const ROUNDS = Number(process.env['BENCH_ROUNDS'] ?? 100);
const POLL_INTERVAL_MS = 50;
const found = await findTestDatabase();
if (!found.database) {
  console.log(`skipped: ${found.skipReason}`);
  process.exit(0);
}
const database = found.database;
const batch = buildBatch({ records: [{ value: Buffer.alloc(200, 0x61) }] });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

async function twoCores(listen: boolean): Promise<{ writer: Core; reader: Core; queue: string }> {
  const schema = database.freshSchema('queen_bench_wake');
  const writer = await postgresFront({ url: database.url, schema, maintenanceIntervalMs: 0 });
  const reader = await postgresFront({ url: database.url, schema, maintenanceIntervalMs: 0, crossProcessWakeups: listen });
  const queue = 'wake';
  await writer.createQueue({ name: queue, partitions: 1, config: { dedupWindowSeconds: 0 } });
  return { writer, reader, queue };
}

/** From the writer's append resolving to the other core's read answering with it. */
async function latency(mode: 'notify' | 'poll'): Promise<{ samples: number[]; readerQueries: number }> {
  const { writer, reader, queue } = await twoCores(mode === 'notify');
  const samples: number[] = [];
  let readerQueries = 0; // read() calls, not round trips: a woken read re-queries once
  for (let offset = 0; offset < ROUNDS; offset++) {
    const request = { partitions: [{ queue, partition: 0, fetchOffset: offset, maxBytes: 1 << 20 }], minBytes: 1, maxBytes: 1 << 20, isolation: 'read_uncommitted' as const };
    let seen: Promise<number>;
    if (mode === 'notify') {
      readerQueries++;
      seen = reader.read({ ...request, maxWaitMs: 10_000 }).then(() => performance.now());
    } else {
      seen = (async () => {
        for (;;) {
          readerQueries++;
          const res = await reader.read({ ...request, maxWaitMs: 0 });
          if (res.partitions[0]!.batches.length > 0) return performance.now();
          await sleep(POLL_INTERVAL_MS);
        }
      })();
    }
    // A random moment, so polling is not always lucky or unlucky.
    await sleep(5 + Math.random() * 20);
    await writer.append({ partitions: [{ queue, partition: 0, records: batch }] });
    const appended = performance.now();
    samples.push((await seen) - appended);
  }
  await writer.close();
  await reader.close();
  return { samples, readerQueries };
}

/** Appends per second with and without the NOTIFY in each append transaction. */
async function appendRate(notifyAppends: boolean, appenders: number): Promise<number> {
  const schema = database.freshSchema('queen_bench_notify');
  const core = await postgresFront({ url: database.url, schema, maintenanceIntervalMs: 0, notifyAppends });
  // A listener elsewhere, as in production: NOTIFY costs more when someone listens.
  const listener = await postgresFront({ url: database.url, schema, maintenanceIntervalMs: 0 });
  await core.createQueue({ name: 'rate', partitions: 8, config: { dedupWindowSeconds: 0 } });
  let appends = 0;
  const deadline = performance.now() + 2000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: appenders }, async (_, i) => {
      while (performance.now() < deadline) {
        await core.append({ partitions: [{ queue: 'rate', partition: i % 8, records: batch }] });
        appends++;
      }
    }),
  );
  const rate = appends / ((performance.now() - started) / 1000);
  await core.close();
  await listener.close();
  return rate;
}

for (const mode of ['notify', 'poll'] as const) {
  const { samples, readerQueries } = await latency(mode);
  console.log(
    `${mode === 'notify' ? 'LISTEN/NOTIFY' : `polling every ${POLL_INTERVAL_MS} ms`}: ` +
      `p50 ${percentile(samples, 50).toFixed(1)} ms, p90 ${percentile(samples, 90).toFixed(1)} ms, p99 ${percentile(samples, 99).toFixed(1)} ms; ` +
      `${(readerQueries / ROUNDS).toFixed(1)} read calls per append seen`,
  );
}
for (const appenders of [1, 8]) {
  const on = await appendRate(true, appenders);
  const off = await appendRate(false, appenders);
  console.log(`${appenders} appender(s): ${on.toFixed(0)} appends/s with NOTIFY, ${off.toFixed(0)} without (${((on / off) * 100).toFixed(0)}%)`);
}
await database.release();

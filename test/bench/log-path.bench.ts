/**
 * The log's append and read paths through the `Core` interface, without a
 * client or the wire in the way: what the PostgreSQL engine costs per record
 * against the memory engine in the same run (docs/benchmarks.md, "PostgreSQL
 * engine: where the time goes"). Run: `npm run bench:log-path`. Not part of
 * `npm test`.
 *
 * Produce: BENCH_PRODUCERS concurrent producers, each sending one append per
 * request that carries one batch of BENCH_BATCH_RECORDS records for every
 * partition (as librdkafka sends a Produce request to a broker). Consume: one
 * consumer reading every partition from the start, as a Kafka consumer
 * fetches (50 MiB per answer, 1 MiB per partition), until it has every
 * record (BENCH_ISOLATION=read_committed reads as librdkafka does). Each
 * engine's phases run back to back; BENCH_ROUNDS rounds.
 */
import { buildBatch } from '../../protocol/records/record-batch.js';
import { memoryFront, postgresFront } from '../support/fronts.js';
import type { Core } from '../../src/core/core.js';
import { findTestDatabase } from '../support/postgres.js';

const env = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const RECORD_BYTES = env('BENCH_RECORD_BYTES', 1024);
const PARTITIONS = env('BENCH_PARTITIONS', 8);
const BATCH_RECORDS = env('BENCH_BATCH_RECORDS', 100);
const RECORDS = env('BENCH_RECORDS', 160_000);
const PRODUCERS = env('BENCH_PRODUCERS', 4);
const ROUNDS = env('BENCH_ROUNDS', 2);
const ONLY = process.env['BENCH_ENGINE'];
/** Bytes a Fetch asks of each partition (Kafka's default 1 MiB); small values make many small Fetches, as a consumer at the log's end makes. */
const PARTITION_FETCH_BYTES = env('BENCH_PARTITION_FETCH_BYTES', 1 << 20);
/** librdkafka's consumers read committed by default, Kafka's Java consumer uncommitted. */
const ISOLATION = process.env['BENCH_ISOLATION'] === 'read_committed' ? 'read_committed' : 'read_uncommitted';

/** The clients' record value: the alphabet repeated, as the end-to-end bench sends (test/bench/e2e/client.ts). */
function value(bytes: number): Buffer {
  const v = Buffer.alloc(bytes);
  for (let i = 0; i < bytes; i++) v[i] = 97 + (i % 26);
  return v;
}

interface Figures {
  produceRecords: number;
  consumeRecords: number;
  fetches: number;
  /** This process's CPU (user + system) per record, µs. */
  produceCpu: number;
  consumeCpu: number;
}

/** Runs a phase, and what this process's CPU spent on it per record. */
async function timed<T extends { records: number }>(phase: () => Promise<T>): Promise<T & { cpu: number }> {
  const before = process.cpuUsage();
  const result = await phase();
  const used = process.cpuUsage(before);
  return { ...result, cpu: (used.user + used.system) / result.records };
}

async function produce(core: Core, queue: string): Promise<{ rate: number; records: number }> {
  const batch = buildBatch({ records: Array.from({ length: BATCH_RECORDS }, () => ({ value: value(RECORD_BYTES) })) });
  const requests = Math.ceil(RECORDS / (BATCH_RECORDS * PARTITIONS));
  let sent = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: PRODUCERS }, async () => {
      while (sent < requests) {
        sent++;
        const partitions = Array.from({ length: PARTITIONS }, (_, partition) => ({ queue, partition, records: batch }));
        const res = await core.append({ partitions });
        const failed = res.partitions.find((p) => p.error);
        if (failed) throw new Error(`append failed: ${failed.errorMessage}`);
      }
    }),
  );
  const records = requests * BATCH_RECORDS * PARTITIONS;
  return { rate: records / ((performance.now() - started) / 1000), records };
}

async function consume(core: Core, queue: string): Promise<{ rate: number; fetches: number; records: number }> {
  const offsets = Array.from({ length: PARTITIONS }, () => 0);
  const ends = (await core.offsets({ partitions: offsets.map((_, partition) => ({ queue, partition })) })).partitions.map((p) => p.highWatermark);
  const total = ends.reduce((a, b) => a + b, 0);
  let fetches = 0;
  const started = performance.now();
  while (offsets.some((o, i) => o < ends[i]!)) {
    fetches++;
    const partitions = offsets.map((fetchOffset, partition) => ({ queue, partition, fetchOffset, maxBytes: PARTITION_FETCH_BYTES }));
    const res = await core.read({ partitions, minBytes: 1, maxWaitMs: 0, maxBytes: 50 << 20, isolation: ISOLATION });
    for (const [i, p] of res.partitions.entries()) {
      if (p.error) throw new Error(`read failed: ${p.error}`);
      const last = p.batches.at(-1);
      if (last) offsets[i] = Number(last.readBigInt64BE(0)) + last.readInt32BE(23) + 1;
    }
  }
  return { rate: total / ((performance.now() - started) / 1000), fetches, records: total };
}

async function run(open: () => Promise<Core>): Promise<Figures> {
  const core = await open();
  const queue = `log-path-${process.pid}-${Date.now().toString(36)}`;
  await core.createQueue({ name: queue, partitions: PARTITIONS, config: { dedupWindowSeconds: 0, retentionMs: -1, maxMessageBytes: 16 << 20 } });
  try {
    const produced = await timed(() => produce(core, queue));
    const consumed = await timed(() => consume(core, queue));
    return { produceRecords: produced.rate, consumeRecords: consumed.rate, fetches: consumed.fetches, produceCpu: produced.cpu, consumeCpu: consumed.cpu };
  } finally {
    await core.deleteQueue({ name: queue });
    await core.close();
  }
}

const found = await findTestDatabase().catch((e: Error) => ({ database: null, skipReason: e.message }));
const engines: { name: string; open: () => Promise<Core> }[] = [{ name: 'memory', open: async () => memoryFront({ maintenanceIntervalMs: 0 }) }];
if (found.database) {
  const database = found.database;
  engines.push({ name: 'postgres', open: () => postgresFront({ url: database.url, schema: database.freshSchema('queen_bench'), maintenanceIntervalMs: 0 }) });
} else {
  console.log(`postgres skipped: ${found.skipReason}`);
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
console.log(`log path: ${RECORD_BYTES} B records, ${PARTITIONS} partitions, ${BATCH_RECORDS} records a batch, ${RECORDS} records, ${PRODUCERS} producers, ${ISOLATION}, ${PARTITION_FETCH_BYTES} B a partition per Fetch`);
console.log(['round', 'engine', 'produce rec/s', 'consume rec/s', 'fetches', 'produce MB/s', 'consume MB/s', 'produce µs/rec', 'consume µs/rec'].map((h) => h.padStart(15)).join(''));
for (let round = 1; round <= ROUNDS; round++) {
  for (const engine of engines) {
    if (ONLY && engine.name !== ONLY) continue;
    const f = await run(engine.open);
    const mb = (r: number) => ((r * RECORD_BYTES) / 1e6).toFixed(1);
    console.log([String(round), engine.name, fmt(f.produceRecords), fmt(f.consumeRecords), String(f.fetches), mb(f.produceRecords), mb(f.consumeRecords), f.produceCpu.toFixed(2), f.consumeCpu.toFixed(2)].map((c) => c.padStart(15)).join(''));
  }
}
if (found.database) await found.database.release();

/**
 * Core append throughput: appends/s, records/s and MB/s for batches of 1, 100
 * and 1,000 records of 200 B, from one and from eight concurrent appenders
 * on one partition (the partition lock is what they contend for).
 * Run: `npm run bench:core`. Not part of `npm test`.
 *
 * Engines are rows of ENGINES; each case runs for BENCH_SECONDS. A ceiling
 * (for PostgreSQL: the same rows written by a bare loop with the same driver)
 * is a `ceiling` entry beside its engine, and the table prints the engine's
 * ratio to it from the same run.
 */
import { buildBatch } from '../../protocol/records/record-batch.js';
import type { Core } from '../../src/core/core.js';
import { MemoryCore } from '../../src/core/engines/memory/index.js';

const SECONDS = Number(process.env['BENCH_SECONDS'] ?? 1.5);
const RECORD_BYTES = 200;
const BATCH_SIZES = [1, 100, 1000];
const APPENDERS = [1, 8];

/** An append target: the engine itself, or a bare loop writing the same rows (its ceiling). */
interface AppendTarget {
  /** Sets up an empty partition and returns the function that appends one batch to it. */
  prepare(): Promise<{ append: (batch: Buffer) => Promise<void>; close: () => Promise<void> }>;
}

interface BenchEngine {
  name: string;
  engine: AppendTarget;
  ceiling?: { name: string; target: AppendTarget };
}

/** Appends through the Core interface to partition 0 of a fresh queue. */
export function coreTarget(open: () => Promise<Core>): AppendTarget {
  return {
    async prepare() {
      const core = await open();
      const queue = `bench-${process.pid}-${Date.now().toString(36)}`;
      await core.createQueue({ name: queue, partitions: 1, config: { dedupWindowSeconds: 0, retentionMs: -1, maxMessageBytes: 16 << 20 } });
      return {
        append: async (records: Buffer) => {
          const res = await core.append({ partitions: [{ queue, partition: 0, records }] });
          if (res.partitions[0]!.error) throw new Error(res.partitions[0]!.errorMessage);
        },
        close: async () => {
          await core.deleteQueue({ name: queue });
          await core.close();
        },
      };
    },
  };
}

const ENGINES: BenchEngine[] = [
  { name: 'memory', engine: coreTarget(async () => new MemoryCore({ maintenanceIntervalMs: 0 })) },
  // The PostgreSQL engine and its raw-PostgreSQL ceiling go here.
];

interface Figures {
  appendsPerSecond: number;
  recordsPerSecond: number;
  megabytesPerSecond: number;
}

async function measure(target: AppendTarget, records: number, appenders: number): Promise<Figures> {
  const batch = buildBatch({ records: Array.from({ length: records }, () => ({ value: Buffer.alloc(RECORD_BYTES, 0x61) })) });
  const { append, close } = await target.prepare();
  let appends = 0;
  const deadline = performance.now() + SECONDS * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: appenders }, async () => {
      while (performance.now() < deadline) {
        await append(batch);
        appends++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await close();
  return {
    appendsPerSecond: appends / seconds,
    recordsPerSecond: (appends * records) / seconds,
    megabytesPerSecond: (appends * batch.length) / seconds / 1e6,
  };
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

console.log(`core append throughput, ${SECONDS}s per case, ${RECORD_BYTES}-byte records, one partition`);
console.log(['engine', 'records/batch', 'appenders', 'appends/s', 'records/s', 'MB/s', 'vs ceiling'].map((h) => h.padStart(14)).join(''));
for (const { name, engine, ceiling } of ENGINES) {
  for (const records of BATCH_SIZES) {
    for (const appenders of APPENDERS) {
      const figures = await measure(engine, records, appenders);
      let ratio = '';
      if (ceiling) {
        const top = await measure(ceiling.target, records, appenders);
        ratio = `${fmt((figures.megabytesPerSecond / top.megabytesPerSecond) * 100)}% of ${ceiling.name}`;
      }
      console.log(
        [name, String(records), String(appenders), fmt(figures.appendsPerSecond), fmt(figures.recordsPerSecond), fmt(figures.megabytesPerSecond, 1), ratio]
          .map((c) => c.padStart(14))
          .join(''),
      );
    }
  }
}

/**
 * Core append throughput: appends/s, records/s and MB/s for batches of 1, 100
 * and 1,000 records of 200 B, from one and from eight concurrent appenders
 * on one partition (the partition lock is what they contend for).
 * Run: `npm run bench:core`. Not part of `npm test`.
 *
 * Engines are rows of ENGINES; each case runs for BENCH_SECONDS. A ceiling
 * (for PostgreSQL: the same rows written by a bare loop with the same driver)
 * is a `ceiling` entry beside its engine, and the table prints the engine's
 * ratio to it from the same run. Then Queen's native calls (./native-cases.ts).
 */
import { buildBatch } from '../../protocol/records/record-batch.js';
import { memoryFront, postgresFront } from '../support/fronts.js';
import type { Core } from '../../src/core/core.js';
import pg from 'pg';
import { findTestDatabase, type TestDatabase } from '../support/postgres.js';
import { benchNative, type NativeEngine } from './native-cases.js';

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

/**
 * The raw PostgreSQL ceiling: the rows the engine writes for an append (the
 * batch as bytea, the partition's new high watermark), written by a bare loop
 * with the engine's driver (pg): per append one transaction that locks the
 * partition row, inserts the batch and advances the offset. Same schema,
 * same tables, none of the engine's checks, ledger or windows.
 */
function rawPostgresTarget(database: TestDatabase, appenders: () => number): AppendTarget {
  return {
    async prepare() {
      const schema = database.freshSchema('queen_bench_raw');
      // Migrating through a core makes the tables; then the core steps aside.
      await (await postgresFront({ url: database.url, schema, maintenanceIntervalMs: 0, crossProcessWakeups: false })).close();
      const pool = new pg.Pool({ connectionString: database.url, max: appenders(), options: `-c search_path=${schema}` });
      await pool.query(`INSERT INTO queues (id, name, config, created_at) VALUES (gen_random_uuid(), 'raw', '{}', 0)`);
      const { rows } = await pool.query<{ id: string }>(`INSERT INTO partitions (queue_id, idx, name) SELECT id, 0, '0' FROM queues RETURNING id`);
      const partitionId = rows[0]!.id;
      return {
        append: async (batch: Buffer) => {
          const client = await pool.connect();
          try {
            await client.query('BEGIN');
            const locked = await client.query<{ next_offset: string }>({ name: 'lock', text: 'SELECT next_offset FROM partitions WHERE id = $1 FOR UPDATE', values: [partitionId] });
            const base = Number(locked.rows[0]!.next_offset);
            const next = base + batch.readInt32BE(23) + 1;
            await client.query({
              name: 'insert',
              text: 'INSERT INTO batches (partition_id, base_offset, next_offset, max_timestamp, appended_at, size, bytes) VALUES ($1, $2, $3, 0, 0, $4, $5)',
              values: [partitionId, base, next, batch.length, batch],
            });
            await client.query({ name: 'advance', text: 'UPDATE partitions SET next_offset = $2 WHERE id = $1', values: [partitionId, next] });
            await client.query('COMMIT');
          } finally {
            client.release();
          }
        },
        close: () => pool.end(),
      };
    },
  };
}

let currentAppenders = 1;
const found = await findTestDatabase().catch((e: Error) => ({ database: null, skipReason: e.message }));
const postgresEngines: BenchEngine[] = [];
const nativeEngines: NativeEngine[] = [{ name: 'memory', open: async () => memoryFront({ maintenanceIntervalMs: 0 }) }];
if (found.database) {
  const database = found.database;
  const postgresCore = (groupCommit: boolean) => () =>
    postgresFront({ url: database.url, schema: database.freshSchema('queen_bench'), maintenanceIntervalMs: 0, groupCommit });
  const ceiling = { name: 'raw pg', target: rawPostgresTarget(database, () => currentAppenders) };
  postgresEngines.push(
    { name: 'postgres', engine: coreTarget(postgresCore(true)), ceiling },
    { name: 'pg no-group', engine: coreTarget(postgresCore(false)), ceiling },
  );
  nativeEngines.push({ name: 'postgres', open: postgresCore(true) });
} else {
  console.log(`postgres rows skipped: ${found.skipReason}`);
}

const ENGINES: BenchEngine[] = [
  { name: 'memory', engine: coreTarget(async () => memoryFront({ maintenanceIntervalMs: 0 })) },
  // "pg no-group" is the engine with group commit off: the difference is what coalescing gains.
  ...postgresEngines,
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
      currentAppenders = appenders;
      const figures = await measure(engine, records, appenders);
      const row = (label: string, f: Figures, ratio: string) =>
        console.log([label, String(records), String(appenders), fmt(f.appendsPerSecond), fmt(f.recordsPerSecond), fmt(f.megabytesPerSecond, 1), ratio].map((c) => c.padStart(14)).join(''));
      if (ceiling) {
        // Measured right after the engine, so both see the same machine.
        const top = await measure(ceiling.target, records, appenders);
        row(name, figures, `  ${fmt((figures.megabytesPerSecond / top.megabytesPerSecond) * 100)}% of ${ceiling.name}`);
        row(ceiling.name, top, '');
      } else {
        row(name, figures, '');
      }
    }
  }
}

await benchNative(nativeEngines, SECONDS);

// Drops the bench's schemas (and stops a throwaway cluster).
if (found.database) await found.database.release();

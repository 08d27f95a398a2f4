/**
 * Chooses the PostgreSQL driver for the postgres engine by measurement
 * (src/core/engines/postgres/DRIVER.md records the outcome). Each driver runs
 * the engine's representative append transaction: lock the partition row,
 * insert the batch as bytea, advance the partition, upsert the producer
 * window, commit. Run: `npx tsx test/bench/postgres-driver.bench.ts`.
 */
import postgres from 'postgres';
import { findTestDatabase } from '../support/postgres.js';

const TRANSACTIONS = Number(process.env['BENCH_TRANSACTIONS'] ?? 2000);
// BENCH_SYNC=off takes the WAL flush out of the picture, leaving what the drivers themselves cost.
const SYNCHRONOUS_COMMIT = process.env['BENCH_SYNC'] === 'off' ? 'off' : 'on';
const found = await findTestDatabase();
if (!found.database) {
  console.log(`skipped: ${found.skipReason}`);
  process.exit(0);
}
const db = found.database;
const schema = db.freshSchema('queen_driver_bench');
const batch = Buffer.alloc(100 * 200, 7);

const setup = postgres(db.url, { max: 1, onnotice: () => {} });
await setup.unsafe(`
  CREATE SCHEMA ${schema};
  CREATE TABLE ${schema}.partitions (id bigint PRIMARY KEY, next_offset bigint NOT NULL);
  CREATE TABLE ${schema}.batches (partition_id bigint, base_offset bigint, bytes bytea NOT NULL, PRIMARY KEY (partition_id, base_offset));
  CREATE TABLE ${schema}.producers (partition_id bigint, producer_id bigint, last_seq int, PRIMARY KEY (partition_id, producer_id));
  INSERT INTO ${schema}.partitions SELECT g, 0 FROM generate_series(0, 7) g;
`);
await setup.end();

const LOCK = `SELECT next_offset FROM ${schema}.partitions WHERE id = $1 FOR UPDATE`;
const INSERT = `INSERT INTO ${schema}.batches (partition_id, base_offset, bytes) VALUES ($1, $2, $3)`;
const ADVANCE = `UPDATE ${schema}.partitions SET next_offset = next_offset + 100 WHERE id = $1`;
const PRODUCER = `INSERT INTO ${schema}.producers VALUES ($1, $2, $3) ON CONFLICT (partition_id, producer_id) DO UPDATE SET last_seq = excluded.last_seq`;

type AppendTx = (partition: number, producer: number, seq: number) => Promise<void>;

async function measure(name: string, appendTx: AppendTx, concurrency: number, samePartition: boolean): Promise<void> {
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (next < TRANSACTIONS) {
        const i = next++;
        await appendTx(samePartition ? 0 : worker, worker, i);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${name.padEnd(28)} ${String(concurrency).padStart(2)} appenders ${samePartition ? 'one partition ' : 'own partitions'}: ` +
      `${Math.round(TRANSACTIONS / seconds)} tx/s`,
  );
}

// postgres.js, awaiting each statement (the engine's natural style) and pipelined.
const pjs = postgres(db.url, { max: 8, onnotice: () => {}, connection: { synchronous_commit: SYNCHRONOUS_COMMIT } });
const pjsAwaiting: AppendTx = (partition, producer, seq) =>
  pjs.begin(async (tx) => {
    const [row] = await tx.unsafe(LOCK, [partition], { prepare: true });
    await tx.unsafe(INSERT, [partition, row!['next_offset'], batch], { prepare: true });
    await tx.unsafe(ADVANCE, [partition], { prepare: true });
    await tx.unsafe(PRODUCER, [partition, producer, seq], { prepare: true });
  }) as Promise<never>;
const pjsPipelined: AppendTx = (partition, producer, seq) =>
  pjs.begin(async (tx) => {
    const [row] = await tx.unsafe(LOCK, [partition], { prepare: true });
    await Promise.all([
      tx.unsafe(INSERT, [partition, row!['next_offset'], batch], { prepare: true }),
      tx.unsafe(ADVANCE, [partition], { prepare: true }),
      tx.unsafe(PRODUCER, [partition, producer, seq], { prepare: true }),
    ]);
  }) as Promise<never>;

// node-postgres has no bundled types and none are installed; the bench only needs Pool.
const pg = ((await import('pg' as string)) as { default: { Pool: new (o: object) => PgPool } }).default;
interface PgClient { query(text: string | { text: string; name?: string; values?: unknown[] }, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>; release(): void }
interface PgPool { connect(): Promise<PgClient>; end(): Promise<void> }
const pool = new pg.Pool({ connectionString: db.url, max: 8, options: `-c synchronous_commit=${SYNCHRONOUS_COMMIT}` });
const pgAwaiting: AppendTx = async (partition, producer, seq) => {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query({ name: 'lock', text: LOCK, values: [partition] });
    await client.query({ name: 'insert', text: INSERT, values: [partition, rows[0]!['next_offset'], batch] });
    await client.query({ name: 'advance', text: ADVANCE, values: [partition] });
    await client.query({ name: 'producer', text: PRODUCER, values: [partition, producer, seq] });
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK');
    throw e;
  } finally {
    client.release();
  }
};

for (const round of [1, 2, 3, 4].slice(0, Number(process.env["BENCH_ROUNDS"] ?? 4))) {
  console.log(`round ${round} (${TRANSACTIONS} transactions each, 20 kB batch, synchronous_commit=${SYNCHRONOUS_COMMIT})`);
  for (const [concurrency, same] of [[1, true], [8, false], [8, true]] as const) {
    // Alternate the order so neither driver always runs on a warmer server.
    const contenders: [string, AppendTx][] = [
      ['pg', pgAwaiting],
      ['postgres.js', pjsAwaiting],
      ['postgres.js pipelined', pjsPipelined],
    ];
    if (round % 2 === 0) contenders.reverse();
    for (const [name, appendTx] of contenders) await measure(name, appendTx, concurrency, same);
  }
}
await pjs.end();
await pool.end();
await db.release();

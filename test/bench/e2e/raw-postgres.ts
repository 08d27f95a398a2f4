/**
 * The storage ceiling: the batches a client really sent (captured by the
 * null broker, ./capture.ts) written to PostgreSQL by a bare loop with the
 * engine's driver (pg), into the engine's own tables (migrated by the engine's
 * migrations). Per captured Produce request one statement, so one transaction:
 * every batch of the request becomes a `batches` row and each partition's
 * high watermark advances. The loop is the only writer, so offsets are
 * counted here, not locked for; none of the engine's checks, producer
 * windows, ledger or notifications run. The captured requests are written
 * over and over for the whole phase.
 *
 * Child-process entry: a JSON RawPostgresJob argument; prints `{"progress":n}`
 * lines and one `{"result":…}` line on stdout.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { BatchPos, BATCH_LENGTH_PREFIX } from '../../../protocol/records/batch-header.js';
import { migrate } from '../../../src/core/engines/postgres/migrations.js';
import { readCapture } from './capture.js';

export interface RawPostgresJob {
  url: string;
  schema: string;
  capture: string;
  partitions: number;
  seconds: number;
  warmupSeconds: number;
}

export interface RawPostgresResult {
  counted: number;
  seconds: number;
  recordsPerSecond: number;
  bytesPerSecond: number;
  transactions: number;
}

const WRITE = `
WITH stored AS (
  INSERT INTO batches (partition_id, base_offset, next_offset, max_timestamp, appended_at, size, bytes)
  SELECT partition_id, base_offset, next_offset, 0, 0, size,
         substring($5::bytea FROM (sum(size) OVER (ORDER BY ord) - size + 1)::int FOR size)
  FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::int[]) WITH ORDINALITY AS b (partition_id, base_offset, next_offset, size, ord)
)
UPDATE partitions p SET next_offset = a.next_offset
FROM unnest($6::bigint[], $7::bigint[]) AS a (id, next_offset)
WHERE p.id = a.id`;

interface PreparedWrite {
  records: number;
  bytes: Buffer;
  /** Per batch: the partition's index and the batch's size and record count. */
  batches: { partition: number; size: number; count: number }[];
}

function prepare(requests: ReturnType<typeof readCapture>): PreparedWrite[] {
  return requests.map((request) => {
    const batches: PreparedWrite['batches'] = [];
    let records = 0;
    for (const { partition, records: bytes } of request) {
      for (let at = 0; at + BatchPos.RecordCount <= bytes.length; ) {
        const size = BATCH_LENGTH_PREFIX + bytes.readInt32BE(at + BatchPos.BatchLength);
        const count = bytes.readInt32BE(at + BatchPos.LastOffsetDelta) + 1;
        batches.push({ partition, size, count });
        records += count;
        at += size;
      }
    }
    return { records, bytes: Buffer.concat(request.map((p) => p.records)), batches };
  });
}

async function run(job: RawPostgresJob): Promise<RawPostgresResult> {
  const writes = prepare(readCapture(job.capture));
  if (writes.length === 0) throw new Error(`no Produce requests were captured in ${job.capture}`);
  await migrate(job.url, job.schema);
  const client = new pg.Client({ connectionString: job.url, options: `-c search_path=${job.schema}`, application_name: 'queen-bench-raw' });
  await client.connect();
  try {
    await client.query(`INSERT INTO queues (id, name, config, created_at) VALUES ($1, 'raw', '{}', 0)`, [randomUUID()]);
    const { rows } = await client.query<{ id: string; idx: number }>(
      `INSERT INTO partitions (queue_id, idx, name) SELECT id, i, i::text FROM queues, generate_series(0, $1::int - 1) AS i RETURNING id, idx`,
      [job.partitions],
    );
    const partitionIds: string[] = [];
    for (const row of rows) partitionIds[row.idx] = String(row.id);
    const nextOffsets = new Array<number>(job.partitions).fill(0);

    const started = performance.now();
    const countFrom = started + job.warmupSeconds * 1000;
    const deadline = started + job.seconds * 1000;
    let counted = 0;
    let countedBytes = 0;
    let transactions = 0;
    let countStartedAt = 0;
    let lastProgress = started;
    for (let i = 0; performance.now() < deadline; i = (i + 1) % writes.length) {
      const write = writes[i]!;
      const ids: string[] = [];
      const bases: number[] = [];
      const nexts: number[] = [];
      const sizes: number[] = [];
      const touched = new Map<number, number>();
      for (const b of write.batches) {
        const base = nextOffsets[b.partition]!;
        nextOffsets[b.partition] = base + b.count;
        ids.push(partitionIds[b.partition]!);
        bases.push(base);
        nexts.push(base + b.count);
        sizes.push(b.size);
        touched.set(b.partition, base + b.count);
      }
      await client.query({
        name: 'raw-append',
        text: WRITE,
        values: [ids, bases, nexts, sizes, write.bytes, [...touched.keys()].map((p) => partitionIds[p]!), [...touched.values()]],
      });
      transactions++;
      const t = performance.now();
      if (t >= countFrom) {
        if (countStartedAt === 0) countStartedAt = t;
        else {
          counted += write.records;
          countedBytes += write.bytes.length;
        }
      }
      if (t - lastProgress > 250) {
        lastProgress = t;
        process.stdout.write(JSON.stringify({ progress: counted }) + '\n');
      }
    }
    const seconds = (performance.now() - (countStartedAt || started)) / 1000;
    return { counted, seconds, recordsPerSecond: counted / seconds, bytesPerSecond: countedBytes / seconds, transactions };
  } finally {
    await client.query(`DROP SCHEMA IF EXISTS "${job.schema}" CASCADE`).catch(() => {});
    await client.end();
  }
}

const job = JSON.parse(process.argv[2] ?? '{}') as RawPostgresJob;
try {
  process.stdout.write(JSON.stringify({ result: await run(job) }) + '\n');
  process.exit(0);
} catch (e) {
  process.stderr.write(`raw postgres: ${(e as Error).message}\n`);
  process.exit(1);
}

/**
 * Compactor throughput and what it costs writers, on both engines, through
 * the Core interface: the scenario (1,000,000 updates over 10,000
 * keys, every 50th a tombstone) in batches of 1,000 records as a producer
 * sends them (lz4, so every rewritten batch is inflated and compressed again).
 *
 * Per engine, in one run:
 * 1. writes without compaction: the scenario appended to a compacted queue
 *    whose compactor does not run (records/s);
 * 2. the compactor alone: one pass over that log (records/s it reads and
 *    keeps or removes, and how many survive);
 * 3. writes while compacting: the scenario appended to a fresh compacted
 *    queue while compactor rounds run back to back, each compacting when
 *    Kafka's default min.cleanable.dirty.ratio (0.5) says so (records/s),
 *    and its ratio to (1).
 * Run: `npm run bench:compaction` (BENCH_UPDATES, BENCH_KEYS to resize).
 * Not part of `npm test`.
 */
import { BatchPos } from '../../protocol/records/batch-header.js';
import { memoryFront, postgresFront } from '../support/fronts.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { buildBatch } from '../../protocol/records/record-batch.js';
import type { CompactionSettings, Core } from '../../src/core/core.js';
import type { CompactionStats } from '../../src/core/rules/compaction.js';
import { planUpdates, type Update } from '../support/compaction-updates.js';
import { findTestDatabase } from '../support/postgres.js';

const UPDATES = Number(process.env['BENCH_UPDATES'] ?? 1_000_000);
const KEYS = Number(process.env['BENCH_KEYS'] ?? 10_000);
const BATCH_RECORDS = 1_000;

/** Kafka's defaults (dirty ratio 0.5) but for the tail: the newest 1 MiB (segment.bytes at its minimum). */
const SETTINGS: CompactionSettings = {
  deleteRetentionMs: 86_400_000,
  minCompactionLagMs: 0,
  maxCompactionLagMs: Number.MAX_SAFE_INTEGER,
  minCleanableDirtyRatio: 0.5,
  segmentBytes: 1 << 20,
  segmentMs: Number.MAX_SAFE_INTEGER,
};

interface BenchCore {
  core: Core;
  runCompaction(): Promise<CompactionStats>;
}

function batches(updates: readonly Update[]): Buffer[] {
  const out: Buffer[] = [];
  const now = Date.now();
  for (let i = 0; i < updates.length; i += BATCH_RECORDS) {
    const records = updates.slice(i, i + BATCH_RECORDS).map((u) => ({ key: u.key, value: u.value, timestamp: now }));
    out.push(buildBatch({ records, compression: CompressionCodec.Lz4, producerId: -1, producerEpoch: -1, baseSequence: -1 }));
  }
  return out;
}

async function compactedQueue(core: Core, name: string): Promise<string> {
  await core.createQueue({ name, partitions: 1, config: { dedupWindowSeconds: 0, retentionMs: -1, maxMessageBytes: 16 << 20, compaction: SETTINGS } });
  return name;
}

/**
 * Appends every batch in order; records/s. Each append waits for the event
 * loop's next turn, as a request arriving on a socket does, so the memory
 * engine's compactor (which yields the same way) gets its share of the
 * thread; both measurements pay it alike.
 */
async function write(core: Core, queue: string, all: readonly Buffer[]): Promise<number> {
  const started = performance.now();
  for (const records of all) {
    await new Promise((r) => setImmediate(r));
    const res = await core.append({ partitions: [{ queue, partition: 0, records }] });
    if (res.partitions[0]!.error) throw new Error(res.partitions[0]!.errorMessage);
  }
  return UPDATES / ((performance.now() - started) / 1000);
}

async function survivors(core: Core, queue: string): Promise<number> {
  let count = 0;
  let at = 0;
  for (;;) {
    const res = await core.read({ partitions: [{ queue, partition: 0, fetchOffset: at, maxBytes: 8 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 8 << 20, isolation: 'read_uncommitted' });
    const got = res.partitions[0]!.batches;
    if (got.length === 0) return count;
    for (const b of got) {
      count += b.readInt32BE(BatchPos.RecordCount);
      at = Number(b.readBigInt64BE(BatchPos.BaseOffset)) + b.readInt32BE(BatchPos.LastOffsetDelta) + 1;
    }
  }
}

async function bench(name: string, open: () => Promise<BenchCore>): Promise<void> {
  const all = batches(planUpdates(UPDATES, KEYS));
  const { core, runCompaction } = await open();
  try {
    const tag = `${process.pid}-${Date.now().toString(36)}`;
    const plain = await compactedQueue(core, `bench-compaction-plain-${tag}`);
    const alone = await write(core, plain, all);

    const started = performance.now();
    const stats = await runCompaction();
    const seconds = (performance.now() - started) / 1000;
    const kept = await survivors(core, plain);

    const busy = await compactedQueue(core, `bench-compaction-busy-${tag}`);
    let writing = true;
    let passes = 0;
    let scanned = 0;
    const compacting = (async () => {
      while (writing) {
        const s = await runCompaction();
        passes++;
        scanned += s.recordsScanned;
        await new Promise((r) => setImmediate(r));
      }
    })();
    const whileCompacting = await write(core, busy, all);
    writing = false;
    await compacting;

    console.log(`\n${name}: ${UPDATES.toLocaleString('en')} updates over ${KEYS.toLocaleString('en')} keys, batches of ${BATCH_RECORDS} (lz4)`);
    console.log(`  writes, compactor idle:      ${Math.round(alone).toLocaleString('en')} records/s`);
    console.log(`  compactor, one pass:         ${Math.round(stats.recordsScanned / seconds).toLocaleString('en')} records/s (${stats.recordsScanned.toLocaleString('en')} records in ${seconds.toFixed(2)} s; ${stats.recordsRemoved.toLocaleString('en')} removed, ${stats.batchesRewritten} batches rewritten, ${stats.batchesRemoved} removed; ${kept.toLocaleString('en')} records left, the 1 MiB tail included)`);
    console.log(`  writes, compactor running:   ${Math.round(whileCompacting).toLocaleString('en')} records/s (${passes} passes over ${scanned.toLocaleString('en')} records meanwhile)`);
    console.log(`  write throughput while compacting ÷ without: ${(whileCompacting / alone).toFixed(2)}`);
    await core.deleteQueue({ name: plain });
    await core.deleteQueue({ name: busy });
  } finally {
    await core.close();
  }
}

await bench('memory', async () => {
  const core = memoryFront({ maintenanceIntervalMs: 0, compactionIntervalMs: 0, maxStoredBytes: 0 });
  return { core, runCompaction: () => core.engine.maintenance.runCompaction() };
});

const found = await findTestDatabase();
if (found.database === null) console.log(`\npostgres: skipped (${found.skipReason})`);
else {
  const database = found.database;
  try {
    await bench(`postgres (${database.source})`, async () => {
      const core = await postgresFront({ url: database.url, schema: database.freshSchema('queen_bench'), maintenanceIntervalMs: 0, compactionIntervalMs: 0 });
      return { core, runCompaction: () => core.engine.maintenance.runCompaction() };
    });
  } finally {
    await database.release();
  }
}

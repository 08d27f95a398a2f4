import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { postgresFront } from '../support/fronts.js';
import type { CoreFront } from '../../src/core/front.js';
import type { PostgresEngine } from '../../src/core/engines/postgres/index.js';
import pg from 'pg';
import { findTestDatabase, startThrowawayCluster } from '../support/postgres.js';
import { recordBatch, uniqueName } from './behaviour.js';

// What only the PostgreSQL engine promises: several cores (standing in for
// several processes: each has its own pool and LISTEN connection) sharing one
// database and schema, migrations racing at start, and ids past a btree's limit.
const found = await findTestDatabase();

if (found.database === null) {
  describe.skip(`postgres engine (skipped: ${found.skipReason})`, () => {
    it('needs a PostgreSQL server', () => {});
  });
} else {
  const database = found.database;
  afterAll(() => database.release());

  describe(`postgres engine (${database.source})`, () => {
    const opened: CoreFront<PostgresEngine>[] = [];
    async function openCores(count: number, schema = database.freshSchema()): Promise<CoreFront<PostgresEngine>[]> {
      const cores = await Promise.all(
        Array.from({ length: count }, () => postgresFront({ url: database.url, schema, maintenanceIntervalMs: 0, poolSize: 4 })),
      );
      opened.push(...cores);
      return cores;
    }
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((c) => c.close()));
    });

    it('applies each migration once when several cores start on one schema at the same moment', async () => {
      const schema = database.freshSchema();
      const cores = await openCores(4, schema);
      const q = uniqueName('q');
      await cores[0]!.createQueue({ name: q, partitions: 1 });
      expect((await cores[3]!.describeQueue({ name: q }))?.partitions).toHaveLength(1);
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        const { rows } = await client.query(`SELECT version, count(*)::int AS times FROM "${schema}".schema_migrations GROUP BY version`);
        expect(rows.length).toBeGreaterThan(0);
        for (const row of rows) expect(row['times']).toBe(1);
      } finally {
        await client.end();
      }
    });

    it('gives queues made before migration 002 no topic configs and Kafka 4\'s timestamp rules', async () => {
      const schema = database.freshSchema();
      const [core] = await openCores(1, schema);
      const q = uniqueName('q');
      await core!.createQueue({ name: q, partitions: 1, config: { retentionMs: 1234 } });
      await Promise.all(opened.splice(0).map((c) => c.close()));
      // Make the row as migration 001 left it, and forget that 002 ran.
      const client = new pg.Client({ connectionString: database.url });
      await client.connect();
      try {
        await client.query(`UPDATE "${schema}".queues SET config = config - 'topicConfigs' - 'timestampBeforeMaxMs' - 'timestampAfterMaxMs'`);
        await client.query(`DELETE FROM "${schema}".schema_migrations WHERE version = 2`);
      } finally {
        await client.end();
      }
      const [reopened] = await openCores(1, schema);
      expect((await reopened!.describeQueue({ name: q }))?.config).toMatchObject({
        retentionMs: 1234,
        topicConfigs: {},
        timestampBeforeMaxMs: Number.MAX_SAFE_INTEGER,
        timestampAfterMaxMs: 3_600_000,
      });
    });

    it('wakes a long-poll read in one core when another core appends', async () => {
      const [writer, reader] = await openCores(2);
      const q = uniqueName('q');
      await writer!.createQueue({ name: q, partitions: 1 });
      const reading = reader!.read({
        partitions: [{ queue: q, partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }],
        minBytes: 1,
        // Far past the test's timeout: only a wake-up from the other core can answer in time.
        maxWaitMs: 120_000,
        maxBytes: 1 << 20,
        isolation: 'read_uncommitted',
      });
      // Let the reader find nothing and start waiting before the append.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await writer!.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['hello']) }] });
      const result = await reading;
      expect(result.partitions[0]!.batches).toHaveLength(1);
      expect(result.partitions[0]!.highWatermark).toBe(1);
    });

    it('wakes a waiting pop in one core when another core pushes', async () => {
      const [writer, popper] = await openCores(2);
      const q = uniqueName('q');
      await writer!.createQueue({ name: q, partitions: 1 });
      const popping = popper!.pop({ queue: q, consumerGroup: 'g', owner: 'w', batch: 1, waitMs: 120_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await writer!.push({ items: [{ queue: q, payload: { hello: 'world' } }] });
      const popped = await popping;
      expect(popped.messages.map((m) => m.payload)).toEqual([{ hello: 'world' }]);
    });

    it('gives appends from two cores to one partition contiguous offsets, none lost, none doubled', async () => {
      const cores = await openCores(2);
      const q = uniqueName('q');
      await cores[0]!.createQueue({ name: q, partitions: 1 });
      const appends = Array.from({ length: 40 }, (_, i) =>
        cores[i % 2]!.append({ partitions: [{ queue: q, partition: 0, records: recordBatch([`r${i}a`, `r${i}b`]) }] }),
      );
      const offsets = (await Promise.all(appends)).map((r) => r.partitions[0]!.baseOffset).sort((a, b) => a - b);
      expect(offsets).toEqual(Array.from({ length: 40 }, (_, i) => i * 2));
      const hw = await cores[1]!.offsets({ partitions: [{ queue: q, partition: 0 }] });
      expect(hw.partitions[0]!.highWatermark).toBe(80);
    });

    it('answers a producer resend through another core with the original offset', async () => {
      const [first, second] = await openCores(2);
      const q = uniqueName('q');
      await first!.createQueue({ name: q, partitions: 1 });
      const { producerId, producerEpoch } = await first!.initProducer({ transactionalId: null, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
      await first!.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['x']) }] });
      const batch = recordBatch(['a', 'b'], { producerId, producerEpoch, baseSequence: 0 });
      const original = await first!.append({ partitions: [{ queue: q, partition: 0, records: batch }] });
      const resent = await second!.append({ partitions: [{ queue: q, partition: 0, records: batch }] });
      expect(original.partitions[0]).toMatchObject({ error: null, baseOffset: 1, duplicate: false });
      expect(resent.partitions[0]).toMatchObject({ error: null, baseOffset: 1, duplicate: true });
      const next = await second!.append({ partitions: [{ queue: q, partition: 0, records: recordBatch(['c'], { producerId, producerEpoch, baseSequence: 2 }) }] });
      expect(next.partitions[0]).toMatchObject({ error: null, baseOffset: 3 });
    });

    it('deduplicates a push whose transactionId is 65,535 bytes, the longest allowed', async () => {
      const [core] = await openCores(1);
      const q = uniqueName('q');
      await core!.createQueue({ name: q, partitions: 1 });
      const transactionId = 'x'.repeat(65_535);
      const [first] = (await core!.push({ items: [{ queue: q, transactionId, payload: 1 }] })).items;
      const [retry] = (await core!.push({ items: [{ queue: q, transactionId, payload: 1 }] })).items;
      expect(first).toMatchObject({ status: 'queued', offset: 0 });
      expect(retry).toMatchObject({ status: 'duplicate', offset: 0, messageId: first!.messageId });
    });

    // The harness's last resort before skipping (CI runs as root, which initdb refuses): proven here, where a server exists anyway.
    it('runs on a throwaway cluster started from the installed binaries', async ({ skip }) => {
      const cluster = await startThrowawayCluster().catch((e: Error) => e);
      if (cluster instanceof Error) return skip(`no throwaway cluster: ${cluster.message}`);
      try {
        const core = await postgresFront({ url: cluster.url, maintenanceIntervalMs: 0 });
        try {
          await core.createQueue({ name: 'throwaway', partitions: 1 });
          const appended = await core.append({ partitions: [{ queue: 'throwaway', partition: 0, records: recordBatch(['a']) }] });
          expect(appended.partitions[0]).toMatchObject({ error: null, baseOffset: 0 });
        } finally {
          await core.close();
        }
      } finally {
        await cluster.stop();
      }
    });

    it('refuses a schema name that could escape its quoting', async () => {
      await expect(postgresFront({ url: database.url, schema: 'bad"; drop schema public; --' })).rejects.toThrow(/schema name/);
    });
  });
}

import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { memoryFront, postgresFront } from '../support/fronts.js';
import type { CoreFront } from '../../src/core/front.js';
import type { PostgresEngine } from '../../src/core/engines/postgres/index.js';
import { BatchAttr, BatchPos } from '../../protocol/records/batch-header.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { buildBatch, decodeBatch, validateBatch } from '../../protocol/records/record-batch.js';
import type { CompactionSettings, Core } from '../../src/core/core.js';
import { findTestDatabase } from '../support/postgres.js';
import { uniqueName } from './behaviour.js';

/**
 * The compactor through the Core interface, on both engines: what a reader
 * finds after compaction (the latest record per key, at its own offset, the
 * tail untouched), tombstones and delete.retention.ms, the lag and ratio
 * settings, keyless records refused, and reads, ListOffsets and native pops
 * across the gaps compaction leaves.
 */

interface Fixture {
  core: Core;
  runCompaction(): Promise<unknown>;
  advanceClock(ms: number): void;
  /** A restart on the same storage (PostgreSQL only). */
  reopen?: () => Promise<Core>;
  close(): Promise<void>;
}

/** Compaction that runs on every pass: no lag, any dirt, a tail of only the newest batch (1 byte). */
const EAGER: CompactionSettings = { deleteRetentionMs: 60_000, minCompactionLagMs: 0, maxCompactionLagMs: Number.MAX_SAFE_INTEGER, minCleanableDirtyRatio: 0, segmentBytes: 1, segmentMs: Number.MAX_SAFE_INTEGER };

type Update = [key: string | null, value: string | null];

function batchOf(updates: Update[], timestamp: number, compression: CompressionCodec = CompressionCodec.None): Buffer {
  return buildBatch({ records: updates.map(([key, value]) => ({ key, value, timestamp })), compression, producerId: -1, producerEpoch: -1, baseSequence: -1 });
}

interface ReadRecord {
  offset: number;
  key: string | null;
  value: string | null;
  timestamp: number;
}

async function readFrom(core: Core, queue: string, fetchOffset = 0): Promise<{ records: ReadRecord[]; batches: Buffer[] }> {
  const records: ReadRecord[] = [];
  const batches: Buffer[] = [];
  let at = fetchOffset;
  for (;;) {
    const res = await core.read({ partitions: [{ queue, partition: 0, fetchOffset: at, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_uncommitted' });
    const p = res.partitions[0]!;
    expect(p.error).toBeNull();
    if (p.batches.length === 0) return { records, batches };
    for (const bytes of p.batches) {
      batches.push(bytes);
      const decoded = decodeBatch(bytes);
      const base = Number(decoded.header.baseOffset);
      for (const r of decoded.records) {
        const offset = base + r.offsetDelta;
        if (offset < at) continue;
        records.push({ offset, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null, timestamp: Number(decoded.header.baseTimestamp) + r.timestampDelta });
      }
      at = base + decoded.header.lastOffsetDelta + 1;
    }
  }
}

async function append(core: Core, queue: string, batch: Buffer): Promise<number> {
  const res = await core.append({ partitions: [{ queue, partition: 0, records: batch }] });
  expect(res.partitions[0]!.error).toBeNull();
  return res.partitions[0]!.baseOffset;
}

function describeCompaction(engine: string, open: () => Promise<Fixture>): void {
  describe(`compaction: ${engine}`, () => {
    let f: Fixture;
    let now: number;
    beforeEach(async () => {
      f = await open();
      now = Date.now();
    });
    afterEach(() => f.close());

    const compactedQueue = async (settings: Partial<CompactionSettings> = {}): Promise<string> => {
      const name = uniqueName('compacted');
      await f.core.createQueue({ name, partitions: 1, config: { compaction: { ...EAGER, ...settings }, retentionMs: -1, dedupWindowSeconds: 0 } });
      return name;
    };

    it('keeps the latest record per key at its own offset, with gaps where the others were, and never touches the newest batch', async () => {
      const queue = await compactedQueue();
      const t = Date.now();
      await append(f.core, queue, batchOf([['a', 'a1'], ['b', 'b1'], ['c', 'c1']], t, CompressionCodec.Gzip));
      await append(f.core, queue, batchOf([['a', 'a2'], ['b', 'b2']], t));
      await append(f.core, queue, batchOf([['a', 'a3']], t, CompressionCodec.Lz4));
      await append(f.core, queue, batchOf([['b', 'b3'], ['d', 'd1']], t));
      await f.runCompaction();
      const { records, batches } = await readFrom(f.core, queue);
      // The last batch is the active tail: compaction neither touches it nor reads its keys (Kafka's active segment).
      expect(records.map((r) => [r.offset, r.key, r.value])).toEqual([
        [2, 'c', 'c1'],
        [4, 'b', 'b2'],
        [5, 'a', 'a3'],
        [6, 'b', 'b3'],
        [7, 'd', 'd1'],
      ]);
      // The rewritten first batch kept its base offset and span, its codec, and a valid CRC.
      const first = validateBatch(batches[0]!, 0, { fromClient: false });
      expect(Number(first.header.baseOffset)).toBe(0);
      expect(first.header.lastOffsetDelta).toBe(2);
      expect(first.header.recordCount).toBe(1);
      expect(first.compression).toBe(CompressionCodec.Gzip);
      expect(validateBatch(batches[2]!, 0, { fromClient: false }).compression).toBe(CompressionCodec.Lz4);
      const offsets = await f.core.offsets({ partitions: [{ queue, partition: 0 }] });
      expect(offsets.partitions[0]).toMatchObject({ highWatermark: 8, logStartOffset: 0 });
    });

    it('lets no record of an aborted transaction supersede a committed one, and never compacts past an open transaction', async () => {
      const queue = await compactedQueue();
      const t = Date.now();
      const transactional = async (transactionalId: string) => {
        const { producerId, producerEpoch } = await f.core.initProducer({ transactionalId, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
        const who = { transactionalId, producerId, producerEpoch };
        await f.core.addPartitionsToTxn({ ...who, partitions: [{ queue, partition: 0 }] });
        let sequence = 0;
        return {
          write: (updates: Update[]) => {
            const batch = buildBatch({ records: updates.map(([key, value]) => ({ key, value, timestamp: t })), producerId, producerEpoch, baseSequence: sequence, isTransactional: true });
            sequence += updates.length;
            return append(f.core, queue, batch);
          },
          end: (commit: boolean) => f.core.endTxn({ ...who, commit }),
        };
      };
      await append(f.core, queue, batchOf([['k', 'committed'], ['j', 'j1']], t));
      const aborted = await transactional(uniqueName('tx-abort'));
      await aborted.write([['k', 'aborted']]);
      await aborted.end(false);
      const open = await transactional(uniqueName('tx-open'));
      await open.write([['j', 'j-open']]);
      await append(f.core, queue, batchOf([['j', 'j2']], t));
      await append(f.core, queue, batchOf([['z', 'tail']], t));
      await f.runCompaction();
      const committedView = async () => {
        const res = await f.core.read({ partitions: [{ queue, partition: 0, fetchOffset: 0, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_committed' });
        const p = res.partitions[0]!;
        const abortedFrom = new Set(p.abortedTransactions.map((a) => a.producerId));
        const out: [string | null, string | null][] = [];
        for (const bytes of p.batches) {
          const decoded = decodeBatch(bytes);
          if (decoded.isControl || (decoded.isTransactional && abortedFrom.has(Number(decoded.header.producerId)))) continue;
          for (const r of decoded.records) out.push([r.key?.toString() ?? null, r.value?.toString() ?? null]);
        }
        return out;
      };
      // The aborted record never happened: k's committed value stays. Nothing from the open transaction on was compacted.
      expect(await committedView()).toContainEqual(['k', 'committed']);
      expect((await readFrom(f.core, queue)).records.map((r) => r.value)).toEqual(expect.arrayContaining(['j1', 'j-open', 'j2']));
      await open.end(true);
      await append(f.core, queue, batchOf([['z', 'tail2']], t));
      await f.runCompaction();
      const after = await committedView();
      expect(after).toContainEqual(['k', 'committed']);
      expect(after.filter(([key]) => key === 'j')).toEqual([['j', 'j2']]);
    });

    it('serves a read that starts in a gap from the next surviving batch, and a read inside a batch with the whole batch', async () => {
      const queue = await compactedQueue();
      const t = Date.now();
      await append(f.core, queue, batchOf([['a', 'a1'], ['b', 'b1']], t));
      await append(f.core, queue, batchOf([['c', 'c1'], ['x', 'x1'], ['c', 'c2']], t));
      await append(f.core, queue, batchOf([['a', 'a2'], ['b', 'b2']], t));
      await append(f.core, queue, batchOf([['e', 'e1']], t));
      await f.runCompaction();
      // Offsets 0..1 are gone (a whole batch); the batch at 2..4 holds x at 3 and c at 4.
      const fromGap = await f.core.read({ partitions: [{ queue, partition: 0, fetchOffset: 1, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_uncommitted' });
      const served = fromGap.partitions[0]!.batches.map((b) => Number(decodeBatch(b).header.baseOffset));
      expect(served[0]).toBe(2);
      const inside = await f.core.read({ partitions: [{ queue, partition: 0, fetchOffset: 4, maxBytes: 1 << 20 }], minBytes: 0, maxWaitMs: 0, maxBytes: 1 << 20, isolation: 'read_uncommitted' });
      const whole = decodeBatch(inside.partitions[0]!.batches[0]!);
      expect(Number(whole.header.baseOffset)).toBe(2);
      expect(whole.records.map((r) => r.value!.toString())).toEqual(['x1', 'c2']);
      expect((await readFrom(f.core, queue, 1)).records.map((r) => r.value)).toEqual(['x1', 'c2', 'a2', 'b2', 'e1']);
      // ListOffsets by time lands on the first surviving record.
      const byTime = await f.core.offsetForTimestamp({ queue, partition: 0, timestamp: t - 1, isolation: 'read_uncommitted' });
      expect(byTime.offset).toBe(3);
    });

    it('lets a native pop read the surviving records and an ack move the group past the gaps', async () => {
      const queue = await compactedQueue();
      const t = Date.now();
      await append(f.core, queue, batchOf([['a', '"a1"'], ['c', '"c1"'], ['b', '"b1"']], t));
      await append(f.core, queue, batchOf([['a', '"a2"'], ['b', '"b2"']], t));
      await append(f.core, queue, batchOf([['z', '"z1"']], t));
      await f.runCompaction();
      const popped = await f.core.pop({ queue, consumerGroup: 'g', owner: 'w', batch: 10, waitMs: 0 });
      expect(popped.messages.map((m) => [m.offset, m.payload])).toEqual([
        [1, 'c1'],
        [3, 'a2'],
        [4, 'b2'],
        [5, 'z1'],
      ]);
      for (const m of popped.messages) await f.core.ack({ queue, partition: m.partition, consumerGroup: 'g', offset: m.offset, status: 'completed', leaseId: popped.lease!.id });
      const committed = await f.core.fetchOffsets({ group: 'g', partitions: [{ queue, partition: 0 }] });
      expect(committed.offsets[0]!.offset).toBe(6);
      const again = await f.core.pop({ queue, consumerGroup: 'g', owner: 'w', batch: 10, waitMs: 0 });
      expect(again.messages).toEqual([]);
    });

    it('keeps a tombstone as its key\'s latest record until delete.retention.ms after the pass that kept it, then drops it', async () => {
      const queue = await compactedQueue({ deleteRetentionMs: 10_000 });
      const t = Date.now();
      await append(f.core, queue, batchOf([['a', 'a1'], ['b', 'b1']], t));
      await append(f.core, queue, batchOf([['a', null]], t));
      await append(f.core, queue, batchOf([['tail', 't']], t));
      await f.runCompaction();
      const kept = await readFrom(f.core, queue);
      expect(kept.records.map((r) => [r.offset, r.key, r.value])).toEqual([
        [1, 'b', 'b1'],
        [2, 'a', null],
        [3, 'tail', 't'],
      ]);
      // The tombstone's batch now carries its delete horizon, and its record's timestamp is unchanged.
      const tombstoneBatch = kept.batches.find((b) => Number(decodeBatch(b).header.baseOffset) === 2)!;
      expect(tombstoneBatch.readInt16BE(BatchPos.Attributes) & BatchAttr.DeleteHorizon).toBe(BatchAttr.DeleteHorizon);
      expect(kept.records[1]!.timestamp).toBe(t);
      // Nothing new is written: the horizon alone makes a pass due once it has passed (KIP-534).
      f.advanceClock(9_000);
      await f.runCompaction();
      expect((await readFrom(f.core, queue)).records.map((r) => r.key)).toEqual(['b', 'a', 'tail']);
      f.advanceClock(2_000);
      await f.runCompaction();
      expect((await readFrom(f.core, queue)).records.map((r) => [r.offset, r.key, r.value])).toEqual([
        [1, 'b', 'b1'],
        [3, 'tail', 't'],
      ]);
    });

    it('leaves records younger than min.compaction.lag.ms, and waits for min.cleanable.dirty.ratio', async () => {
      const lagged = await compactedQueue({ minCompactionLagMs: 5_000 });
      const t = Date.now();
      await append(f.core, lagged, batchOf([['a', 'a1']], t));
      await append(f.core, lagged, batchOf([['a', 'a2']], t));
      await append(f.core, lagged, batchOf([['a', 'a3']], t));
      await f.runCompaction();
      expect((await readFrom(f.core, lagged)).records.map((r) => r.value)).toEqual(['a1', 'a2', 'a3']);
      f.advanceClock(6_000);
      await f.runCompaction();
      // The newest batch is the tail: a3 stays beside a2, the latest before the tail.
      expect((await readFrom(f.core, lagged)).records.map((r) => r.value)).toEqual(['a2', 'a3']);

      // A ratio of 0.9: after one pass, a few new updates are not enough.
      const picky = await compactedQueue({ minCleanableDirtyRatio: 0.9 });
      for (let i = 0; i < 10; i++) await append(f.core, picky, batchOf([[`k${i}`, 'v1']], t));
      await append(f.core, picky, batchOf([['tail', 'x']], t));
      await f.runCompaction();
      await append(f.core, picky, batchOf([['k0', 'v2']], t));
      await append(f.core, picky, batchOf([['tail', 'y']], t));
      await f.runCompaction();
      expect((await readFrom(f.core, picky)).records.filter((r) => r.key === 'k0').map((r) => r.value)).toEqual(['v1', 'v2']);
    });

    it('refuses a record without a key on a compacted queue, as Kafka does, and stores nothing', async () => {
      const queue = await compactedQueue();
      const res = await f.core.append({ partitions: [{ queue, partition: 0, records: batchOf([['a', 'x'], [null, 'y']], Date.now()) }] });
      expect(res.partitions[0]).toMatchObject({ error: 'invalid_record', recordError: { index: 1 } });
      expect(res.partitions[0]!.errorMessage).toMatch(/no key.*compacted/);
      expect((await readFrom(f.core, queue)).records).toEqual([]);
    });

    it('refuses a native push to a compacted queue (it carries no key) and stores nothing', async () => {
      const queue = await compactedQueue();
      await expect(f.core.push({ items: [{ queue, partition: '0', payload: { a: 1 } }] })).rejects.toMatchObject({ code: 'invalid_argument', message: expect.stringMatching(/compacted.*no key/) });
      expect((await readFrom(f.core, queue)).records).toEqual([]);
    });

    it('keeps what a reader positioned in the tail reads: every record from its position on, while appends and compaction run', async () => {
      const queue = await compactedQueue({ segmentBytes: 4096 });
      const t = Date.now();
      const written: [number, string, string][] = [];
      let seen: ReadRecord[] = [];
      let position = 0;
      for (let round = 0; round < 30; round++) {
        for (let i = 0; i < 20; i++) {
          const key = `k${i % 7}`;
          const value = `v${round}-${i}`;
          written.push([await append(f.core, queue, batchOf([[key, value]], t)), key, value]);
        }
        await f.runCompaction();
        // The reader keeps up: it reads what was appended since its position.
        const got = await readFrom(f.core, queue, position);
        seen = seen.concat(got.records);
        position = written.length;
      }
      expect(seen.map((r) => [r.offset, r.key, r.value])).toEqual(written);
      // And compaction did run behind it.
      expect((await readFrom(f.core, queue)).records.length).toBeLessThan(written.length);
    });

    it('survives a restart with the compacted log and goes on compacting from where it stopped', async ({ skip }) => {
      if (!f.reopen) skip('the memory engine has no restart');
      const queue = await compactedQueue();
      const t = Date.now();
      for (let i = 0; i < 5; i++) await append(f.core, queue, batchOf([['a', `a${i}`], ['b', `b${i}`]], t));
      await f.runCompaction();
      const before = (await readFrom(f.core, queue)).records;
      f.core = await f.reopen!();
      expect((await readFrom(f.core, queue)).records).toEqual(before);
      await append(f.core, queue, batchOf([['a', 'a9']], t));
      await f.runCompaction();
      expect((await readFrom(f.core, queue)).records.map((r) => [r.offset, r.value])).toEqual([
        [8, 'a4'],
        [9, 'b4'],
        [10, 'a9'],
      ]);
    });
  });
}

describeCompaction('memory', async () => {
  let now = Date.now();
  const core = memoryFront({ clock: () => now, maintenanceIntervalMs: 0, compactionIntervalMs: 0 });
  return {
    core,
    runCompaction: () => core.engine.maintenance.runCompaction(),
    advanceClock: (ms) => {
      now += ms;
    },
    close: () => core.close(),
  };
});

const found = await findTestDatabase();
if (found.database === null) {
  describe.skip(`compaction: postgres (skipped: ${found.skipReason})`, () => {
    it('needs a PostgreSQL server', () => {});
  });
} else {
  const database = found.database;
  afterAll(() => database.release());
  describeCompaction(`postgres (${database.source})`, async () => {
    let now = Date.now();
    const schema = database.freshSchema();
    const open = (): Promise<CoreFront<PostgresEngine>> => postgresFront({ url: database.url, schema, clock: () => now, maintenanceIntervalMs: 0, compactionIntervalMs: 0, poolSize: 4 });
    let core = await open();
    const fixture: Fixture = {
      core,
      runCompaction: () => core.engine.maintenance.runCompaction(),
      advanceClock: (ms) => {
        now += ms;
      },
      reopen: async () => {
        await core.close();
        core = await open();
        return core;
      },
      close: () => core.close(),
    };
    return fixture;
  });
}

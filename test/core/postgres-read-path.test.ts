import { afterAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import type { Core } from '../../src/core/core.js';
import { binaryCopyRows, inlineIntegers } from '../../src/core/engines/postgres/binary-copy.js';
import { buildBatch } from '../../protocol/records/record-batch.js';
import { postgresFront } from '../support/fronts.js';
import { findTestDatabase } from '../support/postgres.js';

/**
 * The PostgreSQL engine's Fetch path (sql/log.sql `read-batches`, read as
 * binary COPY): stored bytes come back exactly as appended, whatever their
 * values and size, and a read deep in a long log starts at the batch holding
 * the fetch offset. The limits of an answer are in the behaviour suite.
 */
const found = await findTestDatabase();

/** The bytes of a batch the broker does not rewrite (from the magic byte on, the CRC included). */
const stable = (batch: Buffer): Buffer => batch.subarray(16);

async function readAll(core: Core, queue: string, partition: number, fetchOffset: number, maxBytes = 64 << 20): Promise<Buffer[]> {
  const res = await core.read({ partitions: [{ queue, partition, fetchOffset, maxBytes }], minBytes: 0, maxWaitMs: 0, maxBytes, isolation: 'read_uncommitted' });
  const p = res.partitions[0]!;
  expect(p.error).toBeNull();
  return p.batches;
}

if (found.database === null) {
  describe.skip(`PostgreSQL read path (skipped: ${found.skipReason})`, () => {
    it('needs a PostgreSQL server', () => {});
  });
} else {
  const database = found.database;
  afterAll(() => database.release());
  const open = (): Promise<Core> => postgresFront({ url: database.url, schema: database.freshSchema('queen_read_path'), maintenanceIntervalMs: 0, crossProcessWakeups: false });

  describe('PostgreSQL read path', () => {
    it('serves every byte value, and a 3 MiB batch, exactly as appended', async () => {
      const core = await open();
      try {
        await core.createQueue({ name: 'bytes', partitions: 2, config: { maxMessageBytes: 16 << 20 } });
        const everyByte = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
        const small = buildBatch({ records: [{ key: everyByte, value: randomBytes(4096), headers: [{ key: 'h', value: everyByte }] }, { value: null }] });
        const large = buildBatch({ records: Array.from({ length: 48 }, () => ({ value: randomBytes(64 * 1024) })) });
        for (const records of [small, large, small]) {
          const res = await core.append({ partitions: [{ queue: 'bytes', partition: 1, records }] });
          expect(res.partitions[0]!.error).toBeNull();
        }
        const read = await readAll(core, 'bytes', 1, 0);
        // Compared as digests: the matcher walks a 3 MiB Buffer element by element.
        const digest = (b: Buffer) => createHash('sha256').update(stable(b)).digest('hex');
        expect(read.map(digest)).toEqual([small, large, small].map(digest));
        expect(read.map((b) => Number(b.readBigInt64BE(0)))).toEqual([0, 2, 50]);
      } finally {
        await core.close();
      }
    }, 60_000);

    it('reads from the batch holding the fetch offset deep in a long log, and within the partition budget', async () => {
      const core = await open();
      try {
        await core.createQueue({ name: 'long', partitions: 1, config: {} });
        // 400 batches of 10 records: offsets 0-3999.
        const batch = buildBatch({ records: Array.from({ length: 10 }, (_, i) => ({ value: Buffer.from(`record ${i}`) })) });
        for (let i = 0; i < 40; i++) {
          const res = await core.append({ partitions: Array.from({ length: 10 }, () => ({ queue: 'long', partition: 0, records: batch })) });
          expect(res.partitions.every((p) => p.error === null)).toBe(true);
        }
        const bases = (batches: Buffer[]) => batches.map((b) => Number(b.readBigInt64BE(0)));
        // An offset inside a batch: that batch first.
        expect(bases(await readAll(core, 'long', 0, 3_725)).slice(0, 3)).toEqual([3_720, 3_730, 3_740]);
        expect(bases(await readAll(core, 'long', 0, 3_990))).toEqual([3_990]);
        // A budget of two and a half batches: two of them.
        expect(bases(await readAll(core, 'long', 0, 1_000, Math.floor(batch.length * 2.5)))).toEqual([1_000, 1_010]);
        // Below any batch's size: the first one all the same.
        expect(bases(await readAll(core, 'long', 0, 2_001, 10))).toEqual([2_000]);
        expect(await readAll(core, 'long', 0, 4_000)).toEqual([]);
      } finally {
        await core.close();
      }
    }, 120_000);

    it('parses a binary COPY answer however its messages split it', () => {
      const field = (b: Buffer | null): Buffer => (b === null ? Buffer.from([0xff, 0xff, 0xff, 0xff]) : Buffer.concat([int32(b.length), b]));
      const int32 = (n: number): Buffer => Buffer.from([n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff]);
      const rows = [[Buffer.from([0, 0, 0, 0, 0, 0, 0, 1]), randomBytes(300)], [Buffer.from([0, 0, 0, 0, 0, 0, 0, 2]), null], [Buffer.alloc(8), Buffer.alloc(0)]];
      const answer = Buffer.concat([
        Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), int32(0), int32(3), Buffer.from('ext'),
        ...rows.map((r) => Buffer.concat([Buffer.from([0, 2]), ...r.map(field)])),
        Buffer.from([0xff, 0xff]),
      ]);
      for (let cut = 1; cut < answer.length; cut += 7) {
        for (const chunks of [[answer.subarray(0, cut), answer.subarray(cut)], [answer.subarray(0, cut), Buffer.alloc(0), answer.subarray(cut)]]) {
          expect(binaryCopyRows(chunks)).toEqual(rows);
        }
      }
      expect(() => binaryCopyRows([answer.subarray(0, answer.length - 1)])).toThrow(/ends/);
    });

    it('writes only integers into a COPY statement', () => {
      expect(inlineIntegers('SELECT $1::bigint[], $2::int[]', [[1, -2], []])).toBe("SELECT '{1,-2}'::bigint[], '{}'::int[]");
      for (const bad of [1.5, Number.NaN, 2 ** 60]) expect(() => inlineIntegers('$1', [[bad]])).toThrow(/only integers/i);
    });
  });
}

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresOpenOptions } from '../../src/core/engines/postgres/index.js';
import { postgresFront } from '../support/fronts.js';
import type { Core, ReadRequest } from '../../src/core/core.js';
import { waitFor } from '../support/eventually.js';
import { findTestDatabase } from '../support/postgres.js';
import { redisServerMissing, startRedis, type TestRedis } from '../support/redis.js';
import { recordBatch, uniqueName } from './behaviour.js';

// Cross-node wake-ups through Redis pub/sub (src/core/engines/postgres/redis-wakeups.ts):
// two cores on one schema stand in for two nodes. The reader is opened without
// LISTEN where the test must show that Redis (or polling), not NOTIFY, woke it.
const found = await findTestDatabase();
const missing = redisServerMissing();

// Far past the test's timeout: only a wake-up can answer a read in time.
const LONG_WAIT_MS = 120_000;

function longPoll(queue: string, fetchOffset: number): ReadRequest {
  return { partitions: [{ queue, partition: 0, fetchOffset, maxBytes: 1 << 20 }], minBytes: 1, maxWaitMs: LONG_WAIT_MS, maxBytes: 1 << 20, isolation: 'read_uncommitted' };
}

describe.skipIf(found.database === null || missing !== null)(`postgres engine, wake-ups over Redis (${found.skipReason ?? missing ?? 'PostgreSQL and Redis'})`, () => {
  const database = found.database!;
  let redis: TestRedis;
  const opened: Core[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis?.stop();
    await database?.release();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((c) => c.close()));
    if (!redis.running) await redis.start();
  });

  async function open(schema: string, extra: Partial<PostgresOpenOptions> = {}): Promise<Core> {
    const core = await postgresFront({ url: database.url, schema, maintenanceIntervalMs: 0, compactionIntervalMs: 0, poolSize: 4, redisUrl: redis.url, redisKeyPrefix: `t-${schema}`, ...extra });
    opened.push(core);
    return core;
  }

  async function writerAndReader(readerListens: boolean) {
    const schema = database.freshSchema();
    const writer = await open(schema);
    const reader = await open(schema, { crossProcessWakeups: readerListens });
    const queue = uniqueName('q');
    await writer.createQueue({ name: queue, partitions: 1 });
    return { writer, reader, queue };
  }

  it('wakes a long-poll in another core through Redis alone (the reader does not LISTEN)', async () => {
    const { writer, reader, queue } = await writerAndReader(false);
    const reading = reader.read(longPoll(queue, 0));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await writer.append({ partitions: [{ queue, partition: 0, records: recordBatch(['hello']) }] });
    const result = await reading;
    expect(result.partitions[0]!.batches).toHaveLength(1);
    expect(result.partitions[0]!.highWatermark).toBe(1);
  });

  it('keeps appending with Redis stopped, and a waiting core that LISTENs still answers (NOTIFY, or polling)', async () => {
    const { writer, reader, queue } = await writerAndReader(true);
    await redis.stop();
    const reading = reader.read(longPoll(queue, 0));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await writer.append({ partitions: [{ queue, partition: 0, records: recordBatch(['while redis is away']) }] });
    const result = await reading;
    expect(result.partitions[0]!.highWatermark).toBe(1);
  });

  it('wakes a core that does not LISTEN by polling while Redis is away, and again once Redis is back', async () => {
    const { writer, reader, queue } = await writerAndReader(false);
    await redis.stop();
    const whileAway = reader.read(longPoll(queue, 0));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await writer.append({ partitions: [{ queue, partition: 0, records: recordBatch(['a', 'b']) }] });
    expect((await whileAway).partitions[0]!.highWatermark).toBe(2);

    await redis.start();
    // Both of its connections come back on their own; until then appends NOTIFY and the reader polls.
    await waitFor(
      async () => {
        const probe = await reader.read({ ...longPoll(queue, 2), maxWaitMs: 0 });
        return probe.partitions[0]!.highWatermark === 2;
      },
      { what: 'the reader to answer again' },
    );
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const afterReturn = reader.read(longPoll(queue, 2));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await writer.append({ partitions: [{ queue, partition: 0, records: recordBatch(['c']) }] });
    const result = await afterReturn;
    expect(result.partitions[0]!.highWatermark).toBe(3);
    // Nothing appended while Redis was away went missing.
    const all = await reader.read({ ...longPoll(queue, 0), maxWaitMs: 0 });
    expect(all.partitions[0]!.batches.length).toBeGreaterThanOrEqual(1);
    expect(all.partitions[0]!.highWatermark).toBe(3);
  });

  it('refuses to open with a Redis that does not answer, naming it', async () => {
    await redis.stop();
    await expect(open(database.freshSchema())).rejects.toThrow(`Redis at redis://127.0.0.1:${redis.port} could not be reached`);
  });
});

/**
 * Queen's pop over thousands of one-message partitions (Queen's suite test
 * testCgBootstrapNew's shape): ten workers popping one message at a time and
 * acking it over a real socket, first in queue mode, then as a consumer
 * group; every message comes exactly once to each, within a generous
 * deadline. `npm run test:many-partitions` runs it with 5,000 partitions;
 * in `npm test` it runs with 500 over HTTP (each message costs three HTTP
 * requests, which a loaded machine makes slow), and 5,000 drained through
 * the core's calls directly. On the memory engine a pop visits only the
 * partitions with work for its group (src/core/engines/memory/pop-work.ts),
 * so the last test checks that a partition comes back into the walk when it
 * gets work again: an append, the group's position moved back, the group's
 * positions deleted.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { openCore, type Core } from '../../src/core/index.js';
import { buildHttpApi } from '../../src/http/index.js';
import { runManyPartitions } from '../support/many-partitions.js';

const FULL = process.env['MANY_PARTITIONS_FULL'] === '1';
const PARTITIONS = FULL ? 5_000 : 500;
const POPPERS = 10;
/** Per pass over HTTP (at load 60, a request here takes some 20 ms); a pop that looked at every partition took over 120 s for 5,000 here at load 40. */
const DRAIN_DEADLINE_MS = FULL ? 600_000 : 120_000;
/** 5,000 partitions drained through the core: each pop visiting every partition took 12.5 million visits. */
const CORE_PARTITIONS = 5_000;
const CORE_DRAIN_DEADLINE_MS = 30_000;

describe('pop over many partitions (memory)', () => {
  let core: Core;
  let app: FastifyInstance;
  beforeEach(async () => {
    core = await openCore({ engine: 'memory' });
    app = await buildHttpApi({ core, readiness: { engine: 'memory' } });
  });
  afterEach(async () => {
    await app.close();
    await core.close();
  });

  it(`${POPPERS} workers drain ${PARTITIONS} one-message partitions over HTTP, in queue mode and as a group, each message once`, async () => {
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    await core.createQueue({ name: 'many', partitions: 1 });
    const run = await runManyPartitions(url, 'many', PARTITIONS, POPPERS);
    const all = Array.from({ length: PARTITIONS }, (_, i) => i);
    for (const pass of run.passes) {
      const label = pass.group ?? 'queue mode';
      expect([...pass.delivered].sort((a, b) => a - b), `${label}: every message exactly once`).toEqual(all);
      expect(pass.drainMs, `${label}: drained ${PARTITIONS} partitions within ${DRAIN_DEADLINE_MS} ms`).toBeLessThan(DRAIN_DEADLINE_MS);
    }
    console.log(`many partitions: push ${Math.round(run.pushMs)} ms; ${run.passes.map((p) => `${p.group ?? 'queue mode'} drained in ${Math.round(p.drainMs)} ms`).join('; ')}`);
  }, FULL ? 1_800_000 : 400_000);

  it(`${POPPERS} workers drain ${CORE_PARTITIONS} one-message partitions through the core, each message once`, async () => {
    await core.createQueue({ name: 'wide', partitions: 1 });
    for (let i = 0; i < CORE_PARTITIONS; i += 500) {
      const items = Array.from({ length: Math.min(500, CORE_PARTITIONS - i) }, (_, k) => ({ queue: 'wide', partition: `p-${i + k}`, transactionId: `m-${i + k}`, payload: i + k }));
      await core.push({ items });
    }
    const delivered: number[] = [];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: POPPERS }, async (_, w) => {
        for (;;) {
          const { messages } = await core.pop({ queue: 'wide', consumerGroup: 'workers', owner: `w${w}`, batch: 1, waitMs: 0 });
          if (messages.length === 0) return;
          for (const m of messages) {
            delivered.push(m.payload as number);
            await core.ack({ queue: 'wide', partition: m.partition, consumerGroup: 'workers', offset: m.offset, status: 'completed' });
          }
        }
      }),
    );
    const drainMs = performance.now() - started;
    expect(delivered.sort((a, b) => a - b)).toEqual(Array.from({ length: CORE_PARTITIONS }, (_, i) => i));
    expect(drainMs, `drained ${CORE_PARTITIONS} partitions within ${CORE_DRAIN_DEADLINE_MS} ms`).toBeLessThan(CORE_DRAIN_DEADLINE_MS);
    console.log(`many partitions through the core: ${CORE_PARTITIONS} drained in ${Math.round(drainMs)} ms`);
  }, 120_000);

  it('a drained partition comes back to the walk on an append, on its position moved back, and on the group\'s positions deleted', async () => {
    const names = Array.from({ length: 20 }, (_, i) => `p-${i}`);
    await core.createQueue({ name: 'few', partitions: 1 });
    await core.push({ items: names.map((partition, i) => ({ queue: 'few', partition, transactionId: `m-${i}`, payload: i })), createQueues: true });
    const popAck = async () => {
      const { messages } = await core.pop({ queue: 'few', consumerGroup: 'g', owner: 'w', batch: 1, waitMs: 0 });
      for (const m of messages) await core.ack({ queue: 'few', partition: m.partition, consumerGroup: 'g', offset: m.offset, status: 'completed' });
      return messages.map((m) => m.partition);
    };
    const drained: string[] = [];
    for (let got = await popAck(); got.length > 0; got = await popAck()) drained.push(...got);
    expect(drained.sort()).toEqual([...names].sort());

    await core.push({ items: [{ queue: 'few', partition: 'p-7', transactionId: 'm-again', payload: 'again' }] });
    expect(await popAck(), 'an append to a drained partition').toEqual(['p-7']);

    const index = (await core.describeQueue({ name: 'few' }))!.partitions.find((p) => p.name === 'p-3')!.index;
    await core.commitOffsets({ group: 'g', offsets: [{ queue: 'few', partition: index, offset: 0, leaderEpoch: -1, metadata: null }] });
    expect(await popAck(), 'the group moved back on one partition').toEqual(['p-3']);
    expect(await popAck()).toEqual([]);

    await core.deleteOffsets({ group: 'g', partitions: [{ queue: 'few', partition: index }] });
    expect(await popAck(), 'the group\'s position deleted').toEqual(['p-3']);
  });
});

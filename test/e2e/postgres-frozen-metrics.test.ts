/**
 * /metrics and /health are answered from memory: with the database frozen
 * (SIGSTOP of a throwaway cluster of the test's own, never the shared
 * server), both answer over a real socket within a second. /metrics gives
 * the core's figures last read and queen_store_answering 0; /health stays
 * 200 (liveness) and, once its look at the store has hung past the health
 * timeout, says the store is not answering. Thawed, both say it
 * answers again and the figures are fresh.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core/index.js';
import { buildHttpApi } from '../../src/http/index.js';
import { waitFor } from '../support/eventually.js';
import { startThrowawayCluster, type ThrowawayCluster } from '../support/postgres.js';

const cluster: ThrowawayCluster | Error = await startThrowawayCluster().catch((e: Error) => e);
const skipReason = cluster instanceof Error ? `no throwaway PostgreSQL cluster could start: ${cluster.message}` : null;
afterAll(async () => {
  if (!(cluster instanceof Error)) await cluster.stop();
});

/** A GET and how long it took to answer. */
async function timed(url: string): Promise<{ status: number; text: string; ms: number }> {
  const started = performance.now();
  const response = await fetch(url, { signal: AbortSignal.timeout(20_000) });
  const text = await response.text();
  return { status: response.status, text, ms: performance.now() - started };
}

describe.skipIf(skipReason !== null)(`/metrics and /health with PostgreSQL frozen${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('answer within a second from memory, /health saying the store is not answering, and fresh again once it thaws', async () => {
    const pg = cluster as ThrowawayCluster;
    const core: Core = await openCore({ engine: 'postgres', url: pg.url, schema: 'frozen_metrics', maintenanceIntervalMs: 0, poolSize: 4 });
    const app = await buildHttpApi({ core, readiness: { engine: 'postgres' } });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    try {
      const pushed = await fetch(`${base}/api/v1/push`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ items: [{ queue: 'jobs', payload: 1 }, { queue: 'jobs', payload: 2 }] }) });
      expect(pushed.status).toBe(201);
      let before = await timed(`${base}/metrics`);
      await waitFor(
        async () => {
          before = await timed(`${base}/metrics`);
          return before.text.includes('queen_queue_depth_messages{queue="jobs"} 2') && before.text.includes('queen_store_answering 1');
        },
        { what: '/metrics to show the queue\'s depth of 2, read fresh, before the freeze', timeoutMs: 60_000, intervalMs: 200 },
      );
      expect(JSON.parse((await timed(`${base}/health`)).text)).toMatchObject({ status: 'healthy', engine: 'postgres' });

      await pg.freeze();
      try {
        const metrics = await timed(`${base}/metrics`);
        expect(metrics.status).toBe(200);
        expect(metrics.ms).toBeLessThan(1000);
        expect(metrics.text).toContain('queen_store_answering 0');
        expect(metrics.text).toContain('queen_queue_depth_messages{queue="jobs"} 2'); // the last figures read
        // /health answers at once all along; once the read it started has hung past the health timeout (2 s), it says so.
        let health = await timed(`${base}/health`);
        await waitFor(
          async () => {
            health = await timed(`${base}/health`);
            expect(health.status).toBe(200);
            expect(health.ms).toBeLessThan(1000);
            return JSON.parse(health.text).store.answering === false;
          },
          { what: '/health to say the store is not answering while PostgreSQL is frozen', timeoutMs: 20_000, intervalMs: 200, describe: () => health.text },
        );
        expect(JSON.parse(health.text)).toMatchObject({ status: 'healthy', engine: 'postgres', store: { answering: false, message: expect.stringMatching(/has not answered for \d+ ms/) } });
        const later = await timed(`${base}/metrics`);
        expect(later.ms).toBeLessThan(1000);
        expect(later.text).toContain('queen_store_answering 0');
      } finally {
        await pg.thaw();
      }

      await waitFor(async () => JSON.parse((await timed(`${base}/health`)).text).store.answering === true, { what: '/health to say the store answers again after the thaw', timeoutMs: 60_000, intervalMs: 200 });
      await waitFor(async () => (await timed(`${base}/metrics`)).text.includes('queen_store_answering 1'), { what: '/metrics to say the store answers again after the thaw', timeoutMs: 60_000, intervalMs: 200 });
    } finally {
      await app.close();
      await core.close();
    }
  }, 180_000);
});

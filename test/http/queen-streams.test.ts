/**
 * Queen streams end to end, driven by Queen's official JavaScript client
 * (its Stream API, fetched at test time: ../support/queen-js-client.ts)
 * against the gateway's HTTP API on a real socket: a tumbling-window sum over
 * a queue's partitions, written by the client's runner through
 * /streams/v1/queries, /state/get and /cycle. On PostgreSQL the gateway is
 * restarted (its core closed and opened again on the same database) while
 * windows are still open: every message is counted exactly once, the state
 * written before the restart carrying over into the windows closed after it.
 *
 * The windows are closed by the runner's main loop (a later message on the
 * partition), not by its idle flush, so that what closes them is
 * deterministic; the flush racing the main loop is the core's behaviour
 * suite's (a stale flush is skipped: docs/queen-streams.md) and Queen's own
 * streams suites'.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import { openCore, type Core } from '../../src/core/index.js';
import { buildHttpApi } from '../../src/http/index.js';
import { waitFor } from '../support/eventually.js';
import { loadQueenJsClient } from '../support/queen-js-client.js';
import { findTestDatabase } from '../support/postgres.js';

const client = await loadQueenJsClient();
const lookup = await findTestDatabase();
afterAll(() => lookup.database?.release());

type Gateway = { core: Core; url: string; close(): Promise<void> };

/** The HTTP API over a fresh core, listening on loopback (on `port` when given, to come back where it was). */
async function startGateway(openEngine: () => Promise<Core>, engine: string, port = 0): Promise<Gateway> {
  const core = await openEngine();
  const app = await buildHttpApi({ core, readiness: { engine } });
  await app.listen({ host: '127.0.0.1', port });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return { core, url, close: async () => { await app.close(); await core.close(); } };
}

/** Everything the sink holds, read by a group of its own; `into` keeps what earlier reads found. */
async function drainSink(core: Core, sink: string, into: { count: number; sum: number }[]): Promise<void> {
  if (!(await core.describeQueue({ name: sink }))) return;
  for (;;) {
    const { messages, lease } = await core.pop({ queue: sink, consumerGroup: 'checker', owner: 'checker', batch: 100, waitMs: 0 });
    if (messages.length === 0) return;
    into.push(...messages.map((m) => ({ ...(m.payload as { count: number; sum: number }), at: `${m.partition}@${m.offset}` })));
    for (const m of messages) await core.ack({ queue: sink, partition: m.partition, consumerGroup: 'checker', offset: m.offset, status: 'completed', leaseId: lease!.id });
  }
}

const totals = (out: { count: number; sum: number }[]) => ({ count: out.reduce((a, w) => a + (w.count ?? 0), 0), sum: out.reduce((a, w) => a + (w.sum ?? 0), 0) });

const engines = [
  { name: 'memory', skipReason: null as string | null, open: () => openCore({ engine: 'memory' }), restarts: false },
  ...(() => {
    const schema = lookup.database?.freshSchema('queen_streams') ?? '';
    return [{ name: 'postgres', skipReason: lookup.skipReason, open: () => openCore({ engine: 'postgres', url: lookup.database!.url, schema, maintenanceIntervalMs: 0, poolSize: 10 }), restarts: true }];
  })(),
];

describe('Queen streams routes (memory, in-process)', () => {
  it('answer in Queen\'s shapes: 409 on a changed config_hash, nulls for empty lists (Go\'s client), a cycle that cannot commit as 200 success: false', async () => {
    const core = await openCore({ engine: 'memory' });
    const app = await buildHttpApi({ core, readiness: { engine: 'memory' } });
    const call = async (url: string, payload: object) => {
      const r = await app.inject({ method: 'POST', url, payload });
      return { status: r.statusCode, body: r.json() };
    };
    try {
      const registered = await call('/streams/v1/queries', { name: 'q1', source_queue: 'src', sink_queue: null, config_hash: 'a' });
      expect(registered).toMatchObject({ status: 200, body: { success: true, name: 'q1', config_hash: 'a', fresh: true, reset: false } });
      const queryId = registered.body.query_id as string;
      const changed = await call('/streams/v1/queries', { name: 'q1', source_queue: 'src', config_hash: 'b' });
      expect(changed.status).toBe(409);
      expect(changed.body).toMatchObject({ success: false, query_id: queryId, error: expect.stringMatching(/^config_hash mismatch/) });

      const push = await app.inject({ method: 'POST', url: '/api/v1/push', payload: { items: [{ queue: 'src', partition: 'p1', payload: { n: 1 } }] } });
      const partitionId = push.json()[0].partition_id as string;
      const written = await call('/streams/v1/cycle', { query_id: queryId, partition_id: partitionId, state_ops: [{ type: 'upsert', key: 'k', value: { windowEnd: 5 } }], push_items: null, ack: null });
      expect(written).toMatchObject({ status: 200, body: { success: true, query_id: queryId, partition_id: partitionId, state_ops_applied: 1, push_results: [], ack_result: null, replayed: false } });
      const rows = await call('/streams/v1/state/get', { query_id: queryId, partition_id: partitionId, keys: null, key_prefix: null, ripe_at_or_before: null });
      expect(rows).toMatchObject({ status: 200, body: { success: true, rows: [{ key: 'k', value: { windowEnd: 5 } }] } });
      expect(Number.isNaN(Date.parse(rows.body.rows[0].updated_at))).toBe(false);
      // Not popped by the group: the ack is not held, and nothing of the cycle is applied.
      const message = (await app.inject({ method: 'GET', url: '/api/v1/pop/queue/src?batch=1&wait=false' })).json().messages[0];
      const refused = await call('/streams/v1/cycle', { query_id: queryId, partition_id: partitionId, consumer_group: 'other', state_ops: [{ type: 'delete', key: 'k' }], push_items: [{ queue: 'out', payload: 1 }], ack: { transactionId: message.transactionId, leaseId: null, status: 'completed', count: 1 } });
      expect(refused).toMatchObject({ status: 200, body: { success: false, state_ops_applied: 0, error: expect.any(String) } });
      expect((await call('/streams/v1/state/get', { query_id: queryId, partition_id: partitionId })).body.rows).toHaveLength(1);
    } finally {
      await app.close();
      await core.close();
    }
  });
});

for (const engine of engines) {
  const skipReason = 'skipReason' in client ? client.skipReason : engine.skipReason;
  describe.skipIf(skipReason !== null)(`Queen streams with Queen's JavaScript client (${engine.name})${skipReason ? `: ${skipReason}` : ''}`, () => {
    it(`sums tumbling windows per partition exactly once${engine.restarts ? ', across a gateway restart' : ''}`, async () => {
      const { Queen, Stream } = (client as { module: Record<string, any> }).module;
      let gateway = await startGateway(engine.open, engine.name);
      const port = Number(new URL(gateway.url).port);
      const queen = new Queen({ url: gateway.url, handleSignals: false });
      const stamp = `${process.pid.toString(36)}-${Date.now().toString(36)}`;
      const [src, sink, queryId] = [`streams-src-${stamp}`, `streams-sink-${stamp}`, `streams-sum-${stamp}`];
      await queen.queue(src).create();
      await queen.queue(sink).create();
      const errors: string[] = [];
      const handle = await Stream.from(queen.queue(src))
        .windowTumbling({ seconds: 2, idleFlushMs: 600_000 })
        .aggregate({ count: () => 1, sum: (m: { amount: number }) => m.amount })
        .to(queen.queue(sink))
        .run({ queryId, url: gateway.url, batchSize: 50, maxWaitMillis: 500, onError: (e: Error) => errors.push(e.message) });
      const out: { count: number; sum: number }[] = [];
      try {
        const pushAmounts = async (from: number, to: number) => {
          for (let n = from; n <= to; n++) await queen.queue(src).partition(n % 2 === 0 ? 'even' : 'odd').push([{ data: { amount: n } }]);
        };
        await pushAmounts(1, 6);
        // The runner consumed the first six (acked in its cycles) before the gateway goes.
        const group = `streams.${queryId}`;
        let lastConsumed = 0;
        const consumed = async () => {
          const info = await gateway.core.describeQueue({ name: src });
          if (!info) return 0;
          const { offsets } = await gateway.core.fetchOffsets({ group, partitions: info.partitions.map((p) => ({ queue: src, partition: p.index })) });
          lastConsumed = offsets.reduce((a, o) => a + Math.max(o.offset, 0), 0);
          return lastConsumed;
        };
        await waitFor(async () => (await consumed()) === 6, { what: 'the stream to consume the first six messages', timeoutMs: 60_000, describe: () => `consumed ${lastConsumed}; runner ${JSON.stringify(handle.metrics())}; runner errors: ${errors.join(' | ')}` });
        if (engine.restarts) {
          await drainSink(gateway.core, sink, out);
          await gateway.close();
          gateway = await startGateway(engine.open, engine.name, port);
        }
        await pushAmounts(7, 10);
        // Once the windows of 1..10 have ended, a message on each partition closes them (its own window stays open).
        const lastPushedAt = Date.now();
        await waitFor(() => Date.now() > lastPushedAt + 2_100, { what: 'the last window of the ten messages to end' });
        for (const partition of ['even', 'odd']) await queen.queue(src).partition(partition).push([{ data: { amount: 1000 } }]);
        await waitFor(
          async () => {
            await drainSink(gateway.core, sink, out);
            return totals(out).count >= 10;
          },
          { what: 'windows holding all ten messages to close into the sink', timeoutMs: 90_000, describe: () => `sink so far: ${JSON.stringify(out)}; runner errors: ${errors.join(' | ')}` },
        );
      } finally {
        await handle.stop();
      }
      await drainSink(gateway.core, sink, out);
      await gateway.close();
      expect(totals(out), JSON.stringify(out)).toEqual({ count: 10, sum: 55 });
      expect(errors).toEqual(engine.restarts ? errors.filter((e) => /fetch failed|ECONNREFUSED/.test(e)) : []);
      expect(out.length).toBeGreaterThanOrEqual(2); // one window per partition at least
    }, 240_000);
  });
}

/**
 * The rest of the retry contract (issue 18): on every mutating route, a
 * request whose effect committed and whose answer was lost (the gateway
 * stopped before it recorded the answer) is never applied again when the
 * caller retries under its Idempotency-Key, on both engines; and 429 with
 * Retry-After when the HTTP API is at its bound of requests at the core.
 *
 * "The answer was lost" is a gateway that stops between the effect and the
 * write of the answer: its ledger write of the answer fails. The retry goes
 * to another gateway over the same core, as a client's retry behind a load
 * balancer would.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { openCore, type Core } from '../../src/core/index.js';
import { buildHttpApi, startHttpServer, type HttpServer } from '../../src/http/index.js';
import { httpEngines, releaseHttpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();
afterAll(() => releaseHttpEngines());

/** The core as a gateway sees it that stops after each effect, before recording its answer. */
function answerNeverRecorded(core: Core): Core {
  return new Proxy(core, {
    get(target, property) {
      if (property === 'kvPut') {
        return async (req: Parameters<Core['kvPut']>[0]) => {
          if (req.ns === 'http.idempotency' && (req.value as { answer?: unknown }).answer) throw new Error('the gateway stopped before recording the answer');
          return target.kvPut(req);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Core;
}

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`a retry after a lost answer (${engine.name})${engine.skipReason ? `: ${engine.skipReason}` : ''}`, () => {
    let rig: HttpRig;
    let stopping: FastifyInstance;
    beforeEach(async () => {
      rig = await engine.open();
      stopping = await buildHttpApi({ core: answerNeverRecorded(rig.core) });
    });
    afterEach(async () => {
      await stopping.close();
      await rig.close();
    });

    const send = (app: FastifyInstance, method: 'POST' | 'PUT' | 'DELETE', url: string, key: string, body?: object) =>
      app.inject({ method, url, headers: { 'idempotency-key': key, ...(body ? {} : { 'content-type': 'application/json' }) }, ...(body ? { payload: body } : {}) });
    /** The first attempt commits and its answer is lost; the retry goes to the other gateway. */
    const lostThenRetried = async (method: 'POST' | 'PUT' | 'DELETE', url: string, key: string, body?: object) => {
      const first = await send(stopping, method, url, key, body);
      expect(first.statusCode).toBeLessThan(300);
      return { first, retry: await send(rig.app, method, url, key, body) };
    };
    const expectApplied = (retry: { statusCode: number; json(): any }) => {
      expect(retry.statusCode).toBe(409);
      expect(retry.json()).toMatchObject({ code: 'outcome_applied' });
    };
    const depth = async (queue: string) => (await rig.call('GET', `/api/v1/resources/queues/${queue}`)).body.totals.total as number;
    const kv = async (key: string) => rig.core.kvGet({ ns: 'app', key });

    it('push: the retry learns the push took effect, and the message is stored once', async () => {
      // No transactionId: the queue could not deduplicate a second push.
      const { retry } = await lostThenRetried('POST', '/api/v1/push', 'label-1', { items: [{ queue: 'labels', payload: 'label 1' }, { queue: 'labels', payload: 'label 2' }] });
      expectApplied(retry);
      expect(await depth('labels')).toBe(2);
    });

    it('KV incr: counted once', async () => {
      const { first, retry } = await lostThenRetried('POST', '/api/v1/kv/app/visits/incr', 'visit-1', { by: 5 });
      expect(first.json().entry.value).toBe(5);
      expectApplied(retry);
      expect((await kv('visits'))?.value).toBe(5);
    });

    it('KV put, put-if-absent and delete: each applied once', async () => {
      expectApplied((await lostThenRetried('PUT', '/api/v1/kv/app/profile', 'profile-1', { value: { name: 'ada' } })).retry);
      expect((await kv('profile'))?.version).toBe(1);
      expectApplied((await lostThenRetried('POST', '/api/v1/kv/app/lock/put-if-absent', 'lock-1', { value: 'worker-a' })).retry);
      expect((await kv('lock'))?.value).toBe('worker-a');
      expectApplied((await lostThenRetried('DELETE', '/api/v1/kv/app/lock', 'unlock-1')).retry);
      expect(await kv('lock')).toBeNull();
    });

    it('once: the gate is won once, and the retry does not report a lost gate as the outcome', async () => {
      const { first, retry } = await lostThenRetried('POST', '/api/v1/kv/app/welcome-mail/once', 'welcome-1', { forever: true });
      expect(first.json()).toEqual({ won: true });
      expectApplied(retry);
      // A keyed request that lost the gate commits nothing, and its answer is recorded and replayed.
      const lost = await send(rig.app, 'POST', '/api/v1/kv/app/welcome-mail/once', 'welcome-2', { forever: true });
      expect(lost.json()).toEqual({ won: false });
      expect((await send(rig.app, 'POST', '/api/v1/kv/app/welcome-mail/once', 'welcome-2', { forever: true })).headers['idempotency-replayed']).toBe('true');
    });

    it('ack batch: the retry answers every ack as it ran, and acks nothing again', async () => {
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'jobs', transactionId: 'j1', payload: 1 }, { queue: 'jobs', transactionId: 'j2', payload: 2 }] });
      const popped = (await rig.call('GET', '/api/v1/pop/queue/jobs?consumerGroup=w&batch=2')).body.messages;
      const body = { consumerGroup: 'w', acknowledgments: popped.map((m: { transactionId: string; partitionId: string }) => ({ transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed' })) };
      const { first, retry } = await lostThenRetried('POST', '/api/v1/ack/batch', 'jobs-done', body);
      expect(first.json().map((a: { success: boolean }) => a.success)).toEqual([true, true]);
      expect(retry.statusCode).toBe(200);
      expect(retry.json()).toEqual(first.json());
      expect((await rig.call('GET', '/api/v1/pop/queue/jobs?consumerGroup=w&batch=2')).body.messages).toEqual([]);
    });

    it('ack batch stopped part way: the retry answers the acks that ran as they were and runs only the rest', async () => {
      // Two queues, so the first ack (failed: counted, lease released) would answer differently if it ran again.
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'mail', transactionId: 'm1', payload: 1 }, { queue: 'sms', transactionId: 's1', payload: 2 }] });
      const mail = (await rig.call('GET', '/api/v1/pop/queue/mail?consumerGroup=w')).body.messages[0];
      const sms = (await rig.call('GET', '/api/v1/pop/queue/sms?consumerGroup=w')).body.messages[0];
      const body = {
        consumerGroup: 'w',
        acknowledgments: [
          { transactionId: mail.transactionId, partitionId: mail.partitionId, status: 'failed', error: 'smtp down' },
          { transactionId: sms.transactionId, partitionId: sms.partitionId, status: 'completed' },
        ],
      };
      // A gateway that stops after its first ack's core transaction. The batch is first tried as one
      // transaction (src/http/acks.ts applyAcksTogether); here it answers as rolled back (as when one
      // of its acks is not held), so the acks run one by one, and the gateway stops after the first.
      let transactions = 0;
      const stopsAfterOne = await buildHttpApi({
        core: new Proxy(rig.core, {
          get(target, property) {
            if (property === 'transaction') {
              return async (req: Parameters<Core['transaction']>[0]) => {
                if (req.operations.filter((o) => o.op === 'ack').length > 1) return { success: false, reason: 'not_acked', failedIndex: 1, message: 'not held' };
                if (++transactions > 1) throw new Error('the gateway stopped after the first ack');
                return target.transaction(req);
              };
            }
            const value = Reflect.get(target, property, target) as unknown;
            return typeof value === 'function' ? value.bind(target) : value;
          },
        }) as Core,
      });
      try {
        expect((await send(stopsAfterOne, 'POST', '/api/v1/ack/batch', 'notify-1', body)).statusCode).toBe(500);
      } finally {
        await stopsAfterOne.close();
      }
      const retry = await send(rig.app, 'POST', '/api/v1/ack/batch', 'notify-1', body);
      expect(retry.statusCode).toBe(200);
      expect(retry.json()).toMatchObject([
        { index: 0, success: true, leaseReleased: true, transactionId: 'm1' },
        { index: 1, success: true, leaseReleased: false, transactionId: 's1' },
      ]);
      // The failed ack counted once: the message comes back with one retry behind it.
      expect((await rig.call('GET', '/api/v1/pop/queue/mail?consumerGroup=w')).body.messages).toMatchObject([{ transactionId: 'm1', retryCount: 1 }]);
      expect((await rig.call('GET', '/api/v1/pop/queue/sms?consumerGroup=w')).body.messages).toEqual([]);
      // And the whole answer is recorded now.
      const again = await send(rig.app, 'POST', '/api/v1/ack/batch', 'notify-1', body);
      expect(again.headers['idempotency-replayed']).toBe('true');
      expect(again.json()).toEqual(retry.json());
    });

    it('lease renewal: runs again, since a renewal sets the deadline from now; the retry answers the lease', async () => {
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'slow', payload: 1 }] });
      const popped = (await rig.call('GET', '/api/v1/pop/queue/slow?consumerGroup=w')).body;
      const { first, retry } = await lostThenRetried('POST', `/api/v1/lease/${popped.lease.id ?? popped.messages[0].leaseId}/extend`, 'renew-1', { seconds: 120 });
      expect(retry.statusCode).toBe(200);
      expect(retry.json()[0]).toMatchObject({ success: true, leaseId: first.json()[0].leaseId });
      expect(Date.parse(retry.json()[0].expiresAt)).toBeGreaterThanOrEqual(Date.parse(first.json()[0].expiresAt));
    });

    it('configure: runs again and changes nothing; the retry answers the queue as configured (created: false)', async () => {
      const body = { queue: 'orders', options: { retryLimit: 5 } };
      const { first, retry } = await lostThenRetried('POST', '/api/v1/configure', 'orders-setup', body);
      expect(first.statusCode).toBe(201);
      expect(retry.statusCode).toBe(200);
      expect(retry.json()).toMatchObject({ configured: true, created: false, queue: 'orders', queueId: first.json().queueId, partitions: first.json().partitions });
      expect(retry.json().options.retryLimit).toBe(5);
      expect((await rig.call('GET', '/api/v1/resources/queues')).body.queues.filter((q: { name: string }) => q.name === 'orders')).toHaveLength(1);
    });

    it('queue delete: runs again and deletes nothing more; the retry answers deleted with existed: false', async () => {
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'old', payload: 1 }] });
      const { first, retry } = await lostThenRetried('DELETE', '/api/v1/resources/queues/old', 'drop-old');
      expect(first.json()).toMatchObject({ deleted: true, existed: true });
      expect(retry.statusCode).toBe(200);
      expect(retry.json()).toMatchObject({ deleted: true, queue: 'old', existed: false });
      expect((await rig.call('GET', '/api/v1/resources/queues/old')).status).toBe(404);
    });

    it('queue delete: a repeat never deletes a queue of the same name created after the first attempt', async () => {
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'cycle', payload: 1 }] });
      expect((await send(stopping, 'DELETE', '/api/v1/resources/queues/cycle', 'drop-cycle')).json()).toMatchObject({ existed: true });
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'cycle', payload: 'new life' }] });
      const retry = await send(rig.app, 'DELETE', '/api/v1/resources/queues/cycle', 'drop-cycle');
      expect(retry.json()).toMatchObject({ deleted: true, existed: false });
      expect(await depth('cycle')).toBe(1);
    });

    it('a keyed push whose item repeats a stored transactionId answers it duplicate; a retry after a lost answer stores nothing twice', async () => {
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'jobs', transactionId: 'j1', payload: 1 }] });
      const body = { items: [{ queue: 'jobs', transactionId: 'j1', payload: 1 }, { queue: 'jobs', transactionId: 'j2', payload: 2 }, { queue: 'jobs', payload: 'no id' }] };
      const { first, retry } = await lostThenRetried('POST', '/api/v1/push', 'jobs-batch', body);
      expect(first.json().map((r: { status: string }) => r.status)).toEqual(['duplicate', 'queued', 'queued']);
      expectApplied(retry);
      expect(await depth('jobs')).toBe(3);
      // Answered and recorded: the same key replays the answer.
      const recorded = await send(rig.app, 'POST', '/api/v1/push', 'jobs-batch-2', body);
      expect((await send(rig.app, 'POST', '/api/v1/push', 'jobs-batch-2', body)).json()).toEqual(recorded.json());
    });
  });
}

describe('load shedding (a real socket)', () => {
  let core: Core;
  let server: HttpServer;
  beforeEach(async () => {
    core = await openCore({ engine: 'memory' });
    server = await startHttpServer({ core, host: '127.0.0.1', port: 0, maxInFlight: 3 });
  });
  afterEach(async () => {
    await server.close();
    await core.close();
  });

  it('past its bound of requests at the core, a push is answered 429 with Retry-After and writes nothing; once slots free, pushes succeed', async () => {
    const pops = [1, 2, 3].map(() => {
      const abort = new AbortController();
      const answer = fetch(`${server.url}/api/v1/pop/queue/work?wait=true&timeout=30000`, { signal: abort.signal }).catch(() => null);
      return { abort, answer };
    });
    // The pops hold every slot once a counted request is refused.
    let probe: Response;
    do {
      probe = await fetch(`${server.url}/api/v1/resources/queues`);
      await probe.arrayBuffer();
    } while (probe.status !== 429);
    const push = () =>
      fetch(`${server.url}/api/v1/push`, { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': 'work-1' }, body: JSON.stringify({ items: [{ queue: 'work', payload: 'w1' }] }) });
    const refused = await push();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const answer = (await refused.json()) as { code: string; error: string };
    expect(answer).toMatchObject({ code: 'overloaded' });
    expect(answer.error).toMatch(/limit of 3 requests.*nothing was done.*Retry-After/);
    expect(await core.describeQueue({ name: 'work' })).toBeNull();
    // Health and metrics stay answerable while the API is full.
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    for (const pop of pops) pop.abort.abort();
    await Promise.all(pops.map((p) => p.answer));
    // The same key runs: the refused request claimed nothing.
    let accepted = await push();
    while (accepted.status === 429) accepted = await push();
    expect(accepted.status).toBe(201);
    expect(accepted.headers.get('idempotency-replayed')).toBeNull();
    expect((await core.offsets({ partitions: [{ queue: 'work', partition: 0 }] })).partitions[0]!.highWatermark).toBe(1);
  });
});

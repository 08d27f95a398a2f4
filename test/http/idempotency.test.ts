/**
 * The seed's retry contract over HTTP (shared/seeds/exactly-once-effects.txt):
 * an Idempotency-Key on a mutating request replays the first answer for the
 * same request and refuses a different one; when the core does not answer,
 * the caller learns whether the request provably never left (503, with
 * Retry-After) or may have taken effect (an explicit unknown outcome naming
 * the key), never a bare 500. The first part on both engines; the second
 * with the core in another process behind the RPC, which is where a core
 * stops answering.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core/index.js';
import { buildHttpApi } from '../../src/http/index.js';
import { connectCore, RpcServer, type RpcCore } from '../../src/rpc/index.js';
import { httpEngines, releaseHttpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();
afterAll(() => releaseHttpEngines());

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`Idempotency-Key (${engine.name})${engine.skipReason ? `: ${engine.skipReason}` : ''}`, () => {
    let rig: HttpRig;
    beforeEach(async () => {
      rig = await engine.open();
    });
    afterEach(() => rig.close());

    const send = (method: 'POST' | 'DELETE', url: string, key: string, body?: object) =>
      rig.app.inject({ method, url, headers: { 'idempotency-key': key, ...(body ? {} : { 'content-type': 'application/json' }) }, ...(body ? { payload: body } : {}) });
    const depth = async (queue: string) => (await rig.call('GET', `/api/v1/resources/queues/${queue}`)).body.totals.total as number;

    it('a repeat answers the first answer with Idempotency-Replayed: true and writes nothing; a different request under the key is a 409', async () => {
      // No transactionId: without the key, every repeat of this push would be a new message.
      const body = { items: [{ queue: 'labels', payload: { order: 1042 } }] };
      const first = await send('POST', '/api/v1/push', 'order-1042-shipping-label', body);
      expect(first.statusCode).toBe(201);
      expect(first.headers['idempotency-replayed']).toBeUndefined();
      const repeat = await send('POST', '/api/v1/push', 'order-1042-shipping-label', body);
      expect(repeat.statusCode).toBe(201);
      expect(repeat.headers['idempotency-replayed']).toBe('true');
      expect(repeat.json()).toEqual(first.json());
      expect(await depth('labels')).toBe(1);
      const changed = await send('POST', '/api/v1/push', 'order-1042-shipping-label', { items: [{ queue: 'labels', payload: { order: 1042, address: 'new' } }] });
      expect(changed.statusCode).toBe(409);
      expect(changed.json()).toMatchObject({ code: 'idempotency_key_reused' });
      expect(changed.json().error).toMatch(/first sent with a different request.*new key/);
      expect(await depth('labels')).toBe(1);
      // The key names one request: the same body on another route is a different request.
      expect((await send('POST', '/api/v1/transaction', 'order-1042-shipping-label', { operations: [{ type: 'push', ...body }] })).statusCode).toBe(409);
    });

    it('an ack repeated under its key answers success again, where a bare repeat finds nothing held', async () => {
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'jobs', transactionId: 'j1', payload: 1 }] });
      const [m] = (await rig.call('GET', '/api/v1/pop/queue/jobs?consumerGroup=w')).body.messages;
      const ack = { transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', consumerGroup: 'w' };
      expect((await send('POST', '/api/v1/ack', 'ack-j1', ack)).json()[0].success).toBe(true);
      const repeat = await send('POST', '/api/v1/ack', 'ack-j1', ack);
      expect(repeat.headers['idempotency-replayed']).toBe('true');
      expect(repeat.json()[0].success).toBe(true);
      expect((await rig.call('POST', '/api/v1/ack', ack)).body[0].success).toBe(false);
    });

    it('a DELETE with an empty JSON body replays too, and a request its schema refuses claims no key', async () => {
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'gone', payload: 1 }] });
      expect((await send('DELETE', '/api/v1/resources/queues/gone', 'drop-gone')).json()).toMatchObject({ existed: true });
      const again = await send('DELETE', '/api/v1/resources/queues/gone', 'drop-gone');
      expect(again.headers['idempotency-replayed']).toBe('true');
      expect(again.json()).toMatchObject({ existed: true });
      expect((await send('POST', '/api/v1/push', 'bad-then-good', { items: [{ payload: 1 }] })).statusCode).toBe(400);
      expect((await send('POST', '/api/v1/push', 'bad-then-good', { items: [{ queue: 'gone', payload: 2 }] })).statusCode).toBe(201);
      const badKey = await rig.app.inject({ method: 'POST', url: '/api/v1/push', headers: { 'idempotency-key': 'x'.repeat(300) }, payload: { items: [{ queue: 'gone', payload: 3 }] } });
      expect(badKey.statusCode).toBe(400);
      expect(badKey.json().error).toMatch(/Idempotency-Key header must be 1 to 255 printable ASCII characters/);
    });
  });
}

describe('when the core does not answer (core behind the RPC)', () => {
  const SECRET = 'idempotency-test-secret-0123456789';
  let core: Core;
  let server: RpcServer;
  let rpc: RpcCore;
  /** The core method whose next answer is lost: the call takes effect, and the connection drops before its answer goes out. */
  let dropNextReply: string | null = null;
  beforeEach(async () => {
    core = await openCore({ engine: 'memory' });
    server = new RpcServer({
      core,
      secret: SECRET,
      faults: {
        beforeReply(call) {
          if (call.method !== dropNextReply) return;
          dropNextReply = null;
          return 'drop-connection';
        },
      },
    });
    const address = await server.listen({ host: '127.0.0.1', port: 0 });
    rpc = await connectCore({ address, secret: SECRET, callTimeoutMs: 1_000 });
    await core.createQueue({ name: 'labels', partitions: 1, partitionNames: ['Default'] });
  });
  afterEach(async () => {
    await rpc.close();
    await server.close();
    await core.close();
  });

  it('a request that reached the core and lost its answer is an explicit unknown outcome naming the key; a keyed push\'s repeat learns it took effect, and nothing runs twice', async () => {
    const app = await buildHttpApi({ core: rpc });
    const push = () => app.inject({ method: 'POST', url: '/api/v1/push', headers: { 'idempotency-key': 'label-7' }, payload: { items: [{ queue: 'labels', payload: 'label 7' }] } });
    // A keyed push is one core transaction carrying its key's ledger entry.
    dropNextReply = 'transaction';
    const lost = await push();
    expect(lost.statusCode).toBe(504);
    expect(lost.json()).toMatchObject({ code: 'outcome_unknown', idempotencyKey: 'label-7' });
    expect(lost.json().error).toMatch(/may or may not have taken effect.*same Idempotency-Key/);
    const repeat = await push();
    expect(repeat.statusCode).toBe(409);
    expect(repeat.json()).toMatchObject({ code: 'outcome_applied' });
    expect((await core.offsets({ partitions: [{ queue: 'labels', partition: 0 }] })).partitions[0]!.highWatermark).toBe(1);
    await app.close();
  });

  it('an ack batch stopped after its first ack (one core transaction per ack): a repeat answers that ack as it ran and runs only the rest', async () => {
    const app = await buildHttpApi({ core: rpc });
    await core.push({ items: [{ queue: 'labels', transactionId: 'l1', payload: 'l1' }, { queue: 'labels', transactionId: 'l2', payload: 'l2' }] });
    const [m, n] = (await app.inject({ method: 'GET', url: '/api/v1/pop/queue/labels?consumerGroup=w&batch=2' })).json().messages;
    const ackBatch = () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/ack/batch',
        headers: { 'idempotency-key': 'ack-l1' },
        payload: { consumerGroup: 'w', acknowledgments: [{ transactionId: m.transactionId, partitionId: m.partitionId, status: 'failed' }, { transactionId: n.transactionId, partitionId: n.partitionId, status: 'failed' }] },
      });
    dropNextReply = 'transaction';
    expect((await ackBatch()).json()).toMatchObject({ code: 'outcome_unknown', idempotencyKey: 'ack-l1' });
    const repeat = await ackBatch();
    expect(repeat.statusCode).toBe(200);
    // The first ack released the lease, so the second finds the message no longer held, as it would have the first time.
    expect(repeat.json()).toMatchObject([
      { index: 0, success: true, leaseReleased: true },
      { index: 1, success: false, leaseReleased: false },
    ]);
    // Failed once, not twice.
    const [again] = (await app.inject({ method: 'GET', url: '/api/v1/pop/queue/labels?consumerGroup=w' })).json().messages;
    expect(again.retryCount).toBe(1);
    await app.close();
  });

  it('a transaction writes its key\'s ledger entry with its effect, so a repeat after a lost answer learns it took effect', async () => {
    const app = await buildHttpApi({ core: rpc });
    const commit = () =>
      app.inject({
        method: 'POST',
        url: '/api/v1/transaction',
        headers: { 'idempotency-key': 'welcome-u1' },
        payload: { operations: [{ type: 'push', items: [{ queue: 'labels', payload: 'welcome' }] }, { type: 'kv.incr', ns: 'counters', key: 'welcomes' }] },
      });
    dropNextReply = 'transaction';
    expect((await commit()).json()).toMatchObject({ code: 'outcome_unknown', idempotencyKey: 'welcome-u1' });
    const repeat = await commit();
    expect(repeat.statusCode).toBe(409);
    expect(repeat.json()).toMatchObject({ code: 'outcome_applied' });
    expect(repeat.json().error).toMatch(/took effect.*answer was lost.*Do not send it again/);
    expect((await core.kvGet({ ns: 'counters', key: 'welcomes' }))?.value).toBe(1);
    expect((await core.offsets({ partitions: [{ queue: 'labels', partition: 0 }] })).partitions[0]!.highWatermark).toBe(1);
    await app.close();
  });

  it('a request that never reached the core is a 503 with Retry-After, and the same key runs once the core is back', async () => {
    const app = await buildHttpApi({ core: rpc });
    const push = () => app.inject({ method: 'POST', url: '/api/v1/push', headers: { 'idempotency-key': 'label-8' }, payload: { items: [{ queue: 'labels', payload: 'label 8' }] } });
    const address = (server as unknown as { server: import('node:net').Server }).server.address() as import('node:net').AddressInfo;
    await server.close();
    // Once the gateway has seen the connection go, a call is not sent at all.
    await new Promise((r) => setTimeout(r, 200));
    const refused = await push();
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.json()).toMatchObject({ code: 'core_unavailable' });
    expect(refused.json().error).toMatch(/Nothing was written; send it again/);
    server = new RpcServer({ core, secret: SECRET });
    await server.listen({ host: '127.0.0.1', port: address.port });
    let answered = await push();
    for (let i = 0; i < 20 && answered.statusCode === 503; i++) answered = await push();
    expect(answered.statusCode).toBe(201);
    expect((await core.offsets({ partitions: [{ queue: 'labels', partition: 0 }] })).partitions[0]!.highWatermark).toBe(1);
    await app.close();
  });
});

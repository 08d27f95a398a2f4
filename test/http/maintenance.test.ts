/**
 * Queen's maintenance modes over HTTP, on both engines: pushes answered
 * `buffered` and delivered once, in order, when push maintenance ends (also
 * by another gateway, after the one that buffered them is gone); pops
 * answering nothing during pop maintenance; a switch on one gateway followed
 * by another on the same store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildHttpApi } from '../../src/http/index.js';
import { waitFor } from '../support/eventually.js';
import { httpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`maintenance modes over HTTP: ${engine.name}${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
    let rig: HttpRig;
    const popAll = async (group: string) =>
      (await rig.call('GET', `/api/v1/pop/queue/orders?consumerGroup=${group}&batch=100&autoAck=true`)).body.messages as { data: unknown; transactionId: string }[];

    beforeEach(async () => {
      rig = await engine.open();
      await rig.call('POST', '/api/v1/configure', { queue: 'orders' });
    });
    afterEach(async () => {
      // The third test closes the app itself; the core goes either way.
      await rig.close().catch(() => rig.core.close());
    });

    it('buffers pushes during push maintenance and delivers each once, in order, with its transaction id, when it ends', async () => {
      await rig.client.queue('orders').push([{ data: 'before' }]);
      const on = await rig.call('POST', '/api/v1/system/maintenance', { enabled: true });
      expect(on).toMatchObject({ status: 200, body: { maintenanceMode: true } });

      const pushed = await rig.call('POST', '/api/v1/push', { items: [1, 2, 3].map((n) => ({ queue: 'orders', transactionId: `order-${n}`, payload: { n } })) });
      expect(pushed.status).toBe(201);
      expect(pushed.body).toEqual([1, 2, 3].map((n) => ({ status: 'buffered', queue: 'orders', partition: 'Default', transactionId: `order-${n}` })));
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'invoices', payload: 'new queue' }] });

      expect((await popAll('billing')).map((m) => m.data)).toEqual(['before']);
      expect((await rig.call('GET', '/api/v1/system/maintenance')).body).toMatchObject({ maintenanceMode: true, popMaintenanceMode: false, bufferedMessages: 4 });

      await rig.call('POST', '/api/v1/system/maintenance', { enabled: false });
      const delivered: { data: unknown; transactionId: string }[] = [];
      await waitFor(async () => {
        delivered.push(...(await popAll('billing')));
        return delivered.length >= 3;
      }, { what: 'the three buffered pushes delivered to orders', timeoutMs: 30_000 });
      expect(delivered.map((m) => [m.data, m.transactionId])).toEqual([1, 2, 3].map((n) => [{ n }, `order-${n}`]));
      await waitFor(async () => (await rig.call('GET', '/api/v1/system/maintenance')).body.bufferedMessages === 0, { what: 'the buffer empty', timeoutMs: 30_000 });
      expect((await rig.call('GET', '/api/v1/pop/queue/invoices?consumerGroup=billing&autoAck=true')).body.messages.map((m: { data: unknown }) => m.data)).toEqual(['new queue']);
      expect(await popAll('billing')).toEqual([]);
    });

    it('answers pops with no messages during pop maintenance, and delivers them after', async () => {
      await rig.client.queue('orders').push([{ data: 'a' }, { data: 'b' }]);
      expect((await rig.call('POST', '/api/v1/system/maintenance/pop', { enabled: true })).body).toMatchObject({ popMaintenanceMode: true });
      expect((await rig.call('GET', '/api/v1/system/maintenance/pop')).body.popMaintenanceMode).toBe(true);
      const during = await rig.call('GET', '/api/v1/pop/queue/orders?consumerGroup=billing&batch=10&wait=true&timeout=200');
      expect(during).toMatchObject({ status: 200, body: { success: true, messages: [] } });
      await rig.call('POST', '/api/v1/system/maintenance/pop', { enabled: false });
      expect((await popAll('billing')).map((m) => m.data)).toEqual(['a', 'b']);
    });

    it('a switch made on one gateway is followed by another on the same store, which also delivers what the first left buffered', async () => {
      const other = await buildHttpApi({ core: rig.core });
      try {
        await rig.call('POST', '/api/v1/system/maintenance', { enabled: true });
        await rig.call('POST', '/api/v1/push', { items: [{ queue: 'orders', payload: 'kept' }] });
        await waitFor(async () => (await other.inject({ method: 'GET', url: '/api/v1/system/maintenance' })).json().maintenanceMode === true, { what: 'the other gateway to see push maintenance on', timeoutMs: 10_000 });
        const bufferedThere = await other.inject({ method: 'POST', url: '/api/v1/push', payload: { items: [{ queue: 'orders', payload: 'kept too' }] } });
        expect(bufferedThere.json()[0].status).toBe('buffered');
        await rig.app.close(); // the first gateway goes away with its drainer
        await other.inject({ method: 'POST', url: '/api/v1/system/maintenance', payload: { enabled: false } });
        const got: unknown[] = [];
        await waitFor(async () => {
          got.push(...(await other.inject({ method: 'GET', url: '/api/v1/pop/queue/orders?consumerGroup=g&batch=10&autoAck=true' })).json().messages.map((m: { data: unknown }) => m.data));
          return got.length >= 2;
        }, { what: 'both buffered pushes delivered by the remaining gateway', timeoutMs: 30_000 });
        expect(got).toEqual(['kept', 'kept too']);
      } finally {
        await other.close();
      }
    });

    it('refuses a switch without a boolean and changes nothing', async () => {
      const bad = await rig.call('POST', '/api/v1/system/maintenance', { enabled: 'yes' });
      expect(bad.status).toBe(400);
      expect((await rig.call('GET', '/api/v1/system/maintenance')).body.maintenanceMode).toBe(false);
      expect((await rig.call('POST', '/api/v1/system/maintenance/pop', {})).status).toBe(400);
    });
  });
}

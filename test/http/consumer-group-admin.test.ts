/**
 * Queen's consumer-group administration over HTTP, on both engines: seeking a
 * group on a queue (to a time, to the end, one partition to its end) and
 * deleting its position on a queue or the whole group; refused, as Kafka
 * refuses it, while the group has a live Kafka member.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { httpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`consumer-group administration over HTTP: ${engine.name}${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
    let rig: HttpRig;
    const pop = async (group: string) =>
      (await rig.call('GET', `/api/v1/pop/queue/orders?consumerGroup=${group}&batch=10&autoAck=true`)).body.messages.map((m: { data: unknown }) => m.data);

    beforeEach(async () => {
      rig = await engine.open();
      expect((await rig.call('POST', '/api/v1/configure', { queue: 'orders' })).status).toBeLessThan(300);
      for (const n of [1, 2, 3]) {
        await rig.client.queue('orders').push([{ data: n }]);
        rig.advance(10_000);
      }
    });
    afterEach(() => rig.close());

    it('seeks a group to a time (after the last message at or before it), to the end, and back before the first message', async () => {
      expect(await pop('billing')).toEqual([1, 2, 3]);
      const { body: second } = await rig.call('GET', '/api/v1/pop/queue/orders?consumerGroup=auditors&batch=2&autoAck=true');
      const at = new Date(second.messages[1].timestamp).toISOString();

      const seek = await rig.call('POST', '/api/v1/consumer-groups/billing/queues/orders/seek', { timestamp: at });
      expect(seek).toMatchObject({ status: 200, body: { success: true, consumerGroup: 'billing', queueName: 'orders', seekToEnd: false, partitionsUpdated: 1 } });
      expect(await pop('billing')).toEqual([3]);

      const before = new Date(second.messages[0].timestamp - 1).toISOString();
      expect((await rig.call('POST', '/api/v1/consumer-groups/billing/queues/orders/seek', { timestamp: before })).status).toBe(200);
      expect(await pop('billing')).toEqual([1, 2, 3]);

      expect((await rig.call('POST', '/api/v1/consumer-groups/auditors/queues/orders/seek', { toEnd: true })).body).toMatchObject({ seekToEnd: true, partitionsUpdated: 1 });
      expect(await pop('auditors')).toEqual([]);
      await rig.client.queue('orders').push([{ data: 4 }]);
      expect(await pop('auditors')).toEqual([4]);
    });

    it('seeks one partition to its end', async () => {
      expect(await pop('billing')).toEqual([1, 2, 3]);
      await rig.call('POST', '/api/v1/consumer-groups/billing/queues/orders/seek', { timestamp: new Date(0).toISOString() });
      const seek = await rig.call('POST', '/api/v1/consumer-groups/billing/queues/orders/partitions/Default/seek');
      expect(seek).toMatchObject({ status: 200, body: { success: true, partitionName: 'Default', partitionsUpdated: 1 } });
      expect(await pop('billing')).toEqual([]);
      expect((await rig.call('POST', '/api/v1/consumer-groups/billing/queues/orders/partitions/Nope/seek')).status).toBe(404);
    });

    it('refuses a seek that names neither a time nor the end, or a time that is not one, and changes nothing', async () => {
      expect(await pop('billing')).toEqual([1, 2, 3]);
      const none = await rig.call('POST', '/api/v1/consumer-groups/billing/queues/orders/seek', {});
      expect(none).toMatchObject({ status: 400, body: { code: 'invalid_request' } });
      expect(none.body.message).toMatch(/toEnd.*timestamp/);
      expect((await rig.call('POST', '/api/v1/consumer-groups/billing/queues/orders/seek', { timestamp: 'yesterday' })).status).toBe(400);
      await rig.client.queue('orders').push([{ data: 4 }]);
      expect(await pop('billing')).toEqual([4]);
    });

    it('deletes a group\'s position on one queue, then the whole group; the group starts again from its subscription', async () => {
      await rig.call('POST', '/api/v1/configure', { queue: 'invoices' });
      await rig.client.queue('invoices').push([{ data: 'x' }]);
      expect(await pop('billing')).toEqual([1, 2, 3]);
      expect((await rig.call('GET', '/api/v1/pop/queue/invoices?consumerGroup=billing&autoAck=true')).body.messages).toHaveLength(1);

      const onQueue = await rig.call('DELETE', '/api/v1/consumer-groups/billing/queues/orders');
      expect(onQueue).toMatchObject({ status: 200, body: { success: true, queueName: 'orders', deletedPartitions: 1 } });
      const listed = (await rig.call('GET', '/api/v1/resources/consumer-groups')).body.consumer_groups.find((g: { name: string }) => g.name === 'billing');
      expect(listed.partitions.map((p: { queue: string }) => p.queue)).toEqual(['invoices']);
      expect(await pop('billing')).toEqual([1, 2, 3]);

      const whole = await rig.call('DELETE', '/api/v1/consumer-groups/billing');
      expect(whole).toMatchObject({ status: 200, body: { success: true, consumerGroup: 'billing', deletedPartitions: 2 } });
      const groups = (await rig.call('GET', '/api/v1/resources/consumer-groups')).body.consumer_groups.map((g: { name: string }) => g.name);
      expect(groups).not.toContain('billing');
      // Deleting a group nobody knows is not an error, as in Queen.
      expect((await rig.call('DELETE', '/api/v1/consumer-groups/nobody')).body).toMatchObject({ success: true, deletedPartitions: 0 });
    });

    it('refuses to delete or seek a group while it has a live Kafka member, and changes nothing', async () => {
      expect(await pop('live')).toEqual([1, 2, 3]);
      const joined = await rig.core.consumerGroupHeartbeat({
        group: 'live', memberId: 'member-1', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 30_000,
        subscribedTopicNames: ['orders'], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [], clientId: 'test', clientHost: '127.0.0.1', apiVersion: 1,
      });
      expect(joined.error).toBeNull();
      for (const [method, url, body] of [
        ['DELETE', '/api/v1/consumer-groups/live', undefined],
        ['DELETE', '/api/v1/consumer-groups/live/queues/orders', undefined],
        ['POST', '/api/v1/consumer-groups/live/queues/orders/seek', { timestamp: new Date(0).toISOString() }],
      ] as const) {
        const refused = await rig.call(method, url, body);
        expect(refused, `${method} ${url}`).toMatchObject({ status: 409, body: { code: 'group_not_empty' } });
        expect(refused.body.message).toMatch(/live Kafka members/);
      }
      const { offsets } = await rig.core.fetchOffsets({ group: 'live', partitions: null });
      expect(offsets.map((o) => o.offset)).toEqual([3]);
    });
  });
}

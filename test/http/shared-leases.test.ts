/**
 * Queen's multi-partition pop under one lease, on both engines: every
 * message of a pop that claims several partitions carries one leaseId; one
 * renew extends every partition's lease; acks with it act under each
 * message's own partition lease; another worker gets nothing meanwhile.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { httpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`one lease across partitions over HTTP: ${engine.name}${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
    let rig: HttpRig;
    beforeEach(async () => {
      rig = await engine.open();
      await rig.call('POST', '/api/v1/configure', { queue: 'jobs' });
      for (const p of ['a', 'b', 'c']) await rig.call('POST', '/api/v1/push', { items: [1, 2].map((n) => ({ queue: 'jobs', partition: p, payload: `${p}${n}` })) });
    });
    afterEach(() => rig.close());

    it('answers one leaseId for every partition claimed; one renew extends them all; acks with it complete each partition', async () => {
      const { body } = await rig.call('GET', '/api/v1/pop/queue/jobs?consumerGroup=workers&batch=10&partitions=3&leaseMs=5000');
      expect(body.partitionsClaimed).toBe(3);
      expect(body.messages.map((m: { data: string }) => m.data).sort()).toEqual(['a1', 'a2', 'b1', 'b2', 'c1', 'c2']);
      const ids = new Set(body.messages.map((m: { leaseId: string }) => m.leaseId));
      expect(ids.size).toBe(1);
      const [shared] = [...ids] as string[];
      expect(body.leaseId).toBe(shared);
      expect(body.lease.id).toBe(shared);

      rig.advance(4_000);
      const renewed = await rig.call('POST', `/api/v1/lease/${shared}/extend`, { extendMs: 10_000 });
      expect(renewed).toMatchObject({ status: 200, body: [{ leaseId: shared, success: true }] });
      rig.advance(4_000); // past the first deadline: every partition's lease was renewed, so nobody else gets a message
      expect((await rig.call('GET', '/api/v1/pop/queue/jobs?consumerGroup=workers&batch=10&partitions=3')).body.messages).toEqual([]);

      const acks = await rig.call('POST', '/api/v1/ack/batch', {
        consumerGroup: 'workers',
        acknowledgments: body.messages.map((m: { transactionId: string; partitionId: string }) => ({ transactionId: m.transactionId, partitionId: m.partitionId, leaseId: shared, status: 'completed' })),
      });
      expect(acks.body.map((a: { success: boolean }) => a.success)).toEqual([true, true, true, true, true, true]);
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'jobs', partition: 'b', payload: 'b3' }] });
      expect((await rig.call('GET', '/api/v1/pop/queue/jobs?consumerGroup=workers&batch=10&partitions=3')).body.messages.map((m: { data: string }) => m.data)).toEqual(['b3']);
    });

    it('a pop of one partition answers that lease\'s own id, and a shared id nobody issued is an ended lease (409)', async () => {
      const { body } = await rig.call('GET', '/api/v1/pop/queue/jobs/partition/a?consumerGroup=workers&batch=10');
      expect(body.leaseId).not.toMatch(/^shared-/);
      expect(body.messages.every((m: { leaseId: string }) => m.leaseId === body.leaseId)).toBe(true);
      const unknown = await rig.call('POST', '/api/v1/lease/shared-00000000-0000-0000-0000-000000000000/extend', { extendMs: 1000 });
      expect(unknown).toMatchObject({ status: 409, body: { code: 'unknown_lease' } });
    });
  });
}

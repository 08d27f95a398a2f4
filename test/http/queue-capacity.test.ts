/**
 * Queen's `maxSize` over HTTP, on both engines: a push that would leave more
 * messages waiting than the cap fails the items for that queue with Queen's
 * sentence and pushes the rest; taking messages in queue mode makes room.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { httpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`queue maxSize over HTTP: ${engine.name}${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
    let rig: HttpRig;
    const push = (items: { queue: string; payload: unknown }[]) => rig.call('POST', '/api/v1/push', { items });
    beforeEach(async () => {
      rig = await engine.open();
    });
    afterEach(() => rig.close());

    it('fails the items that would pass the cap, pushes the rest, and makes room as queue mode takes messages', async () => {
      const configured = await rig.call('POST', '/api/v1/configure', { queue: 'capped', options: { maxSize: 3, encryptionEnabled: false } });
      expect(configured.status).toBe(201);
      expect(configured.body.options.maxSize).toBe(3);
      await rig.call('POST', '/api/v1/configure', { queue: 'free' });

      expect((await push([1, 2].map((n) => ({ queue: 'capped', payload: n })))).body.map((r: { status: string }) => r.status)).toEqual(['queued', 'queued']);
      const over = await push([{ queue: 'capped', payload: 3 }, { queue: 'free', payload: 'x' }, { queue: 'capped', payload: 4 }]);
      expect(over.status).toBe(201);
      expect(over.body.map((r: { status: string }) => r.status)).toEqual(['failed', 'queued', 'failed']);
      expect(over.body[0].error).toBe("Queue 'capped' would exceed max capacity (3). Current: 2, Batch: 2");

      // A consumer group's reading does not make room; queue mode's does.
      expect((await rig.call('GET', '/api/v1/pop/queue/capped?consumerGroup=audit&batch=10&autoAck=true')).body.messages).toHaveLength(2);
      expect((await push([{ queue: 'capped', payload: 3 }, { queue: 'capped', payload: 4 }])).body.map((r: { status: string }) => r.status)).toEqual(['failed', 'failed']);
      expect((await rig.call('GET', '/api/v1/pop/queue/capped?batch=10&autoAck=true')).body.messages.map((m: { data: unknown }) => m.data)).toEqual([1, 2]);
      expect((await push([3, 4, 5].map((n) => ({ queue: 'capped', payload: n })))).body.map((r: { status: string }) => r.status)).toEqual(['queued', 'queued', 'queued']);
      expect((await push([{ queue: 'capped', payload: 6 }])).body[0].status).toBe('failed');
    });

    it('a cap raised by configure applies at once; 0 means none', async () => {
      await rig.call('POST', '/api/v1/configure', { queue: 'capped', options: { maxSize: 1 } });
      expect((await push([1, 2].map((n) => ({ queue: 'capped', payload: n })))).body.map((r: { status: string }) => r.status)).toEqual(['failed', 'failed']);
      await rig.call('POST', '/api/v1/configure', { queue: 'capped', options: { maxSize: 0 } });
      expect((await push([1, 2].map((n) => ({ queue: 'capped', payload: n })))).body.map((r: { status: string }) => r.status)).toEqual(['queued', 'queued']);
    });
  });
}

/**
 * Queen's maxWaitTimeSeconds and completedRetentionSeconds over HTTP, on both
 * engines, with the core's clock moved by the test: a message that waited
 * longer than maxWaitTimeSeconds is never delivered (queue mode and groups
 * alike), and a group that starts later does not see the messages every
 * other group consumed more than completedRetentionSeconds ago.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { httpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`maxWaitTimeSeconds and completedRetentionSeconds: ${engine.name}${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
    let rig: HttpRig;
    const push = (queue: string, ...payloads: unknown[]) => rig.call('POST', '/api/v1/push', { items: payloads.map((payload) => ({ queue, payload })) });
    const pop = async (queue: string, query = '', batch = 10) => (await rig.call('GET', `/api/v1/pop/queue/${queue}?batch=${batch}&autoAck=true${query}`)).body.messages.map((m: { data: unknown }) => m.data);
    beforeEach(async () => {
      rig = await engine.open();
    });
    afterEach(() => rig.close());

    it('maxWaitTimeSeconds: a message that waited longer is passed over by queue mode and by groups; configure answers the setting', async () => {
      const configured = await rig.call('POST', '/api/v1/configure', { queue: 'waits', options: { maxWaitTimeSeconds: 10 } });
      expect(configured.status).toBe(201);
      expect(configured.body.options.maxWaitTimeSeconds).toBe(10);
      await push('waits', 'old-1', 'old-2');
      rig.advance(9_000);
      await push('waits', 'recent');
      rig.advance(2_000);
      await push('waits', 'new');
      expect(await pop('waits')).toEqual(['recent', 'new']);
      expect(await pop('waits', '&consumerGroup=late&subscriptionMode=all')).toEqual(['recent', 'new']);
      // A queue without the setting keeps every message however long it waits.
      await push('keeps', 'old');
      rig.advance(3_600_000);
      expect(await pop('keeps')).toEqual(['old']);
    });

    it('maxWaitTimeSeconds: an expired message after live ones ends the pop; the next pop passes it over', async () => {
      await rig.call('POST', '/api/v1/configure', { queue: 'mixed', options: { maxWaitTimeSeconds: 5 } });
      await push('mixed', 'a');
      rig.advance(4_000);
      await push('mixed', 'b');
      const leased = (await rig.call('GET', '/api/v1/pop/queue/mixed?batch=10')).body.messages;
      expect(leased.map((m: { data: unknown }) => m.data)).toEqual(['a', 'b']);
      // Not acked: the lease runs out after 'a' has waited too long.
      rig.advance(400_000);
      expect(await pop('mixed')).toEqual([]);
    });

    it('completedRetentionSeconds: a group starting later misses what every other group consumed that long ago', async () => {
      const configured = await rig.call('POST', '/api/v1/configure', { queue: 'done', options: { completedRetentionSeconds: 5, retentionEnabled: true } });
      expect(configured.body.options.completedRetentionSeconds).toBe(5);
      await rig.call('POST', '/api/v1/configure', { queue: 'kept' });
      for (const queue of ['done', 'kept']) {
        await push(queue, 'a', 'b', 'c');
        expect(await pop(queue, '&consumerGroup=first', 2)).toEqual(['a', 'b']);
      }
      // Within the retention a new group still reads them.
      expect(await pop('done', '&consumerGroup=early&subscriptionMode=all')).toEqual(['a', 'b', 'c']);
      rig.advance(6_000);
      // 'c' was not consumed by "first", so it stays; a queue without the setting keeps all.
      expect(await pop('done', '&consumerGroup=late&subscriptionMode=all')).toEqual(['c']);
      expect(await pop('kept', '&consumerGroup=late&subscriptionMode=all')).toEqual(['a', 'b', 'c']);
      // The groups that already read keep their positions.
      expect(await pop('done', '&consumerGroup=first')).toEqual(['c']);
    });
  });
}

import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/core.js';

/**
 * Queen's native push, ack and transaction as the core decides them once
 * (src/core/native/), part of the behaviour suite (./behaviour.ts): on every
 * engine and through the RPC. What the rest of the suite leaves out: the
 * push's createQueues option (Queen creates a queue on its first push), what
 * a refused or rolled-back call leaves behind (nothing: no queue, no
 * partition), and several acks of one lease inside one transaction.
 */

interface Fixture {
  core(): Core;
  newQueue(): Promise<string>;
  uniqueName(base: string): string;
}

async function refusal(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'expected the call to be refused').toMatchObject({ name: 'CoreError' });
  return error as { code: string; message: string };
}

export function describeNative(fx: Fixture): void {
  describe('native push options and all-or-nothing', () => {
    it('refuses a push to a queue that does not exist, and creates nothing, unless createQueues is set', async () => {
      const core = fx.core();
      const queue = fx.uniqueName('auto');
      const refused = await refusal(core.push({ items: [{ queue, payload: 1 }] }));
      expect(refused.code).toBe('unknown_queue');
      expect(refused.message).toContain(queue);
      expect(await core.describeQueue({ name: queue })).toBeNull();

      const { items } = await core.push({ items: [{ queue, partition: 'first', payload: 1 }, { queue, partition: 'second', payload: 2 }], createQueues: true });
      expect(items.map((i) => [i.status, i.partition, i.partitionIndex, i.offset])).toEqual([
        ['queued', 'first', 0, 0],
        ['queued', 'second', 1, 0],
      ]);
      const described = await core.describeQueue({ name: queue });
      expect(described!.partitions).toEqual([
        { index: 0, name: 'first' },
        { index: 1, name: 'second' },
      ]);
      // Once the queue exists the option costs nothing and changes nothing.
      expect((await core.push({ items: [{ queue, partition: 'first', payload: 3 }], createQueues: true })).items[0]).toMatchObject({ status: 'queued', offset: 1 });
    });

    it('refuses createQueues that is not true or false', async () => {
      const refused = await refusal(fx.core().push({ items: [], createQueues: 'yes' as unknown as boolean }));
      expect(refused.code).toBe('invalid_argument');
      expect(refused.message).toMatch(/createQueues must be true or false/);
    });

    it('deletes the queues createQueues made when the call is then refused for another reason', async () => {
      const core = fx.core();
      const existing = await fx.newQueue();
      const fresh = fx.uniqueName('auto');
      const refused = await refusal(
        core.transaction({
          operations: [
            { op: 'push', queue: fresh, payload: 'x' },
            { op: 'ack', queue: existing, partition: 'no-such-partition', consumerGroup: 'g', offset: 0, status: 'completed' },
          ],
          createQueues: true,
        }),
      );
      expect(refused.code).toBe('unknown_partition');
      expect(refused.message).toBe(`Queue "${existing}" has no partition named "no-such-partition".`);
      expect(await core.describeQueue({ name: fresh })).toBeNull();
    });

    it('leaves no new partition behind when a transaction that pushes to it rolls back', async () => {
      const core = fx.core();
      const queue = await fx.newQueue();
      const outcome = await core.transaction({
        operations: [
          { op: 'push', queue, partition: 'brand-new', payload: 'x' },
          { op: 'ack', queue, partition: '0', consumerGroup: 'g', offset: 0, status: 'completed', required: true },
        ],
      });
      expect(outcome).toMatchObject({ success: false, reason: 'not_acked', failedIndex: 1 });
      expect((await core.describeQueue({ name: queue }))!.partitions.map((p) => p.name)).toEqual(['0']);
    });

    it('applies several acks of one lease in one transaction in order, and ends the lease when all it handed out is acked', async () => {
      const core = fx.core();
      const queue = await fx.newQueue();
      await core.push({ items: ['a', 'b', 'c'].map((payload) => ({ queue, payload })) });
      const popped = await core.pop({ queue, consumerGroup: 'g', owner: 'w', batch: 2, waitMs: 0 });
      expect(popped.messages.map((m) => m.payload)).toEqual(['a', 'b']);
      const ack = (offset: number) => ({ op: 'ack' as const, queue, partition: 'Default', consumerGroup: 'g', offset, status: 'completed' as const, required: true });
      // Out of order, and one offset twice: the second ack of offset 1 finds it done and the lease ended.
      const outcome = await core.transaction({ operations: [ack(1), ack(0), ack(1)] });
      expect(outcome).toEqual({ success: true, results: [{ acked: true }, { acked: true }, { acked: false }] });
      const next = await core.pop({ queue, consumerGroup: 'g', owner: 'w2', batch: 5, waitMs: 0 });
      expect(next.messages.map((m) => m.payload)).toEqual(['c']);
    });

    it('answers a failed ack by ending the lease, so the message and those after it come again', async () => {
      const core = fx.core();
      const queue = await fx.newQueue();
      await core.push({ items: ['a', 'b'].map((payload) => ({ queue, payload })) });
      const popped = await core.pop({ queue, consumerGroup: 'g', owner: 'w', batch: 2, waitMs: 0 });
      expect(await core.ack({ queue, partition: 'Default', consumerGroup: 'g', offset: popped.messages[0]!.offset, status: 'completed' })).toEqual({ acked: true });
      expect(await core.ack({ queue, partition: 'Default', consumerGroup: 'g', offset: popped.messages[1]!.offset, status: 'failed' })).toEqual({ acked: true });
      // The lease is gone: acking it again changes nothing.
      expect(await core.ack({ queue, partition: 'Default', consumerGroup: 'g', offset: popped.messages[1]!.offset, status: 'completed' })).toEqual({ acked: false });
      const again = await core.pop({ queue, consumerGroup: 'g', owner: 'w2', batch: 5, waitMs: 0 });
      expect(again.messages.map((m) => m.payload)).toEqual(['b']);
    });
  });
}

import { describe, expect, it } from 'vitest';
import type { Core } from '../../src/core/core.js';

/**
 * Queen streams as the core decides them once (src/core/streams/), part of the
 * behaviour suite (./behaviour.ts): on every engine and through the RPC. A
 * query's registration and its fingerprint; a cycle's state writes, output
 * pushes and source acks committing together or not at all; a repeated cycle
 * applying nothing again; the state reads the SDKs make (by key, by prefix,
 * ripe windows); a gate's partial ack; and, where the engine is durable, all
 * of it across a restart.
 */

interface Fixture {
  core(): Core;
  newQueue(): Promise<string>;
  uniqueName(base: string): string;
  /** Closes the core and opens another on the same storage; null when the engine is not durable. */
  reopen(): Promise<Core> | null;
}

const register = (core: Core, name: string, source: string, configHash = 'h1', reset = false) =>
  core.streamsRegisterQuery({ name, sourceQueue: source, sinkQueue: null, configHash, reset });

async function queryIdOf(core: Core, name: string, source: string): Promise<string> {
  const registered = await register(core, name, source);
  if (!registered.success) throw new Error(registered.error);
  return registered.queryId;
}

export function describeStreams(fx: Fixture): void {
  describe('Queen streams', () => {
    it('registers a query once per name, refuses a changed operator chain, and drops its state on reset', async () => {
      const core = fx.core();
      const source = await fx.newQueue();
      const name = fx.uniqueName('query');
      const first = await register(core, name, source);
      expect(first).toMatchObject({ success: true, fresh: true, reset: false, name, configHash: 'h1' });
      const queryId = (first as { queryId: string }).queryId;
      expect(await register(core, name, source)).toMatchObject({ success: true, fresh: false, queryId });
      await core.streamsCycle({ queryId, source: { queue: source, partition: 'Default' }, consumerGroup: 'g', stateOps: [{ type: 'upsert', key: 'w1', value: { sum: 1 } }], pushItems: [], ack: null, releaseLease: true });

      const changed = await register(core, name, source, 'h2');
      expect(changed).toMatchObject({ success: false, queryId, name });
      expect((changed as { error: string }).error).toMatch(/^config_hash mismatch: .*operator chain changed.*reset: true/);
      expect((await core.streamsStateGet({ queryId, source: { queue: source, partition: 'Default' } })).rows).toHaveLength(1);

      expect(await register(core, name, source, 'h2', true)).toMatchObject({ success: true, fresh: false, reset: true, queryId, configHash: 'h2' });
      expect((await core.streamsStateGet({ queryId, source: { queue: source, partition: 'Default' } })).rows).toEqual([]);
    });

    it('commits a cycle\'s state, output and acks together, and answers a repeat of it as replayed without applying it again', async () => {
      const core = fx.core();
      const source = await fx.newQueue();
      const sink = fx.uniqueName('sink');
      const queryId = await queryIdOf(core, fx.uniqueName('sum'), source);
      await core.push({ items: [1, 2, 3].map((n) => ({ queue: source, payload: { n } })) });
      const popped = await core.pop({ queue: source, consumerGroup: 'streams.q', owner: 'w', batch: 10, waitMs: 0 });
      expect(popped.messages).toHaveLength(3);
      const cycle = {
        queryId, source: { queue: source, partition: 'Default' }, consumerGroup: 'streams.q', releaseLease: true,
        stateOps: [{ type: 'upsert' as const, key: 'win:0', value: { sum: 6, windowEnd: 1000 } }],
        pushItems: [{ queue: sink, payload: { sum: 6 } }],
        ack: { offset: popped.messages[2]!.offset, leaseId: popped.lease!.id },
      };
      const done = await core.streamsCycle(cycle);
      expect(done).toMatchObject({ success: true, replayed: false, stateOpsApplied: 1, ack: { acked: 3, leaseReleased: true } });
      expect(done.pushResults.map((r) => [r.queue, r.status, r.offset])).toEqual([[sink, 'queued', 0]]);

      const again = await core.streamsCycle(cycle);
      expect(again).toMatchObject({ success: true, replayed: true, stateOpsApplied: 0, pushResults: [] });
      const output = await core.pop({ queue: sink, consumerGroup: 'reader', owner: 'r', batch: 10, waitMs: 0 });
      expect(output.messages.map((m) => m.payload)).toEqual([{ sum: 6 }]);
      // All three source messages are done for the group: nothing comes again.
      expect((await core.pop({ queue: source, consumerGroup: 'streams.q', owner: 'w2', batch: 10, waitMs: 0 })).messages).toEqual([]);
      const rows = (await core.streamsStateGet({ queryId, source: { queue: source, partition: 'Default' } })).rows;
      expect(rows.map((r) => [r.key, r.value])).toEqual([['win:0', { sum: 6, windowEnd: 1000 }]]);
    });

    it('applies nothing of a cycle whose ack the group does not hold, and answers why', async () => {
      const core = fx.core();
      const source = await fx.newQueue();
      const sink = fx.uniqueName('sink');
      const queryId = await queryIdOf(core, fx.uniqueName('q'), source);
      await core.push({ items: [{ queue: source, payload: 'a' }] });
      const outcome = await core.streamsCycle({
        queryId, source: { queue: source, partition: 'Default' }, consumerGroup: 'g', releaseLease: true,
        stateOps: [{ type: 'upsert', key: 'k', value: 1 }], pushItems: [{ queue: sink, payload: 'out' }], ack: { offset: 0 },
      });
      expect(outcome).toMatchObject({ success: false, replayed: false, stateOpsApplied: 0 });
      expect(outcome.error).toBeTruthy();
      expect((await core.streamsStateGet({ queryId, source: { queue: source, partition: 'Default' } })).rows).toEqual([]);
      // The sink may have been created for the push (as a rolled-back transaction leaves it), but holds nothing.
      if (await core.describeQueue({ name: sink })) expect((await core.pop({ queue: sink, consumerGroup: 'r', owner: 'r', batch: 10, waitMs: 0 })).messages).toEqual([]);
      const unknown = await core.streamsCycle({ queryId: 'no-such-query', source: { queue: source, partition: 'Default' }, consumerGroup: 'g', releaseLease: true, stateOps: [], pushItems: [], ack: null });
      expect(unknown).toMatchObject({ success: false });
      expect(unknown.error).toMatch(/No streaming query has id no-such-query/);
    });

    it('reads state by keys, by prefix and by ripe window end, per partition', async () => {
      const core = fx.core();
      const source = await fx.newQueue();
      const queryId = await queryIdOf(core, fx.uniqueName('q'), source);
      const p = { queue: source, partition: 'Default' };
      await core.streamsCycle({
        queryId, source: p, consumerGroup: 'g', releaseLease: true, pushItems: [], ack: null,
        stateOps: [
          { type: 'upsert', key: 'tumb\u001f1', value: { windowEnd: 100 } },
          { type: 'upsert', key: 'tumb\u001f2', value: { windowEnd: 200 } },
          { type: 'upsert', key: 'wm', value: { eventTimeMs: 5 } },
          { type: 'upsert', key: 'gone', value: 1 },
          { type: 'delete', key: 'gone' },
        ],
      });
      const keys = async (req: object) => (await core.streamsStateGet({ queryId, source: p, ...req })).rows.map((r) => r.key);
      expect(await keys({})).toEqual(['tumb\u001f1', 'tumb\u001f2', 'wm']);
      expect(await keys({ keys: ['wm', 'missing'] })).toEqual(['wm']);
      expect(await keys({ keyPrefix: 'tumb\u001f' })).toEqual(['tumb\u001f1', 'tumb\u001f2']);
      expect(await keys({ keyPrefix: 'tumb\u001f', ripeAtOrBefore: 150 })).toEqual(['tumb\u001f1']);
      expect(await keys({ ripeAtOrBefore: 150 })).toEqual(['tumb\u001f1']);
      expect((await core.streamsStateGet({ queryId, source: { queue: source, partition: 'other' } })).rows).toEqual([]);
    });

    it('keeps the rest of the lease on a partial ack (a gate), and hands it back on a releasing one', async () => {
      const core = fx.core();
      const source = await fx.newQueue();
      const queryId = await queryIdOf(core, fx.uniqueName('gate'), source);
      await core.push({ items: ['a', 'b', 'c'].map((payload) => ({ queue: source, payload })) });
      const popped = await core.pop({ queue: source, consumerGroup: 'g', owner: 'w', batch: 10, waitMs: 0 });
      const base = { queryId, source: { queue: source, partition: 'Default' }, consumerGroup: 'g', stateOps: [], pushItems: [] };
      expect(await core.streamsCycle({ ...base, releaseLease: false, ack: { offset: popped.messages[0]!.offset, leaseId: popped.lease!.id } })).toMatchObject({ success: true, ack: { acked: 1, leaseReleased: false } });
      // 'b' and 'c' are still leased to w.
      expect((await core.pop({ queue: source, consumerGroup: 'g', owner: 'w2', batch: 10, waitMs: 0 })).messages).toEqual([]);
      expect(await core.streamsCycle({ ...base, releaseLease: true, ack: { offset: popped.messages[1]!.offset, leaseId: popped.lease!.id } })).toMatchObject({ success: true, ack: { acked: 1 } });
      const again = await core.pop({ queue: source, consumerGroup: 'g', owner: 'w2', batch: 10, waitMs: 0 });
      expect(again.messages.map((m) => m.payload)).toEqual(['c']);
    });

    it('skips a flush read before a main-loop cycle changed the partition\'s state, leaving its windows for the next flush', async () => {
      const core = fx.core();
      const source = await fx.newQueue();
      const sink = fx.uniqueName('sink');
      const queryId = await queryIdOf(core, fx.uniqueName('flush'), source);
      const p = { queue: source, partition: 'Default' };
      await core.push({ items: [{ queue: source, payload: 1 }, { queue: source, payload: 2 }] });
      const popped = await core.pop({ queue: source, consumerGroup: 'g', owner: 'w', batch: 1, waitMs: 0 });
      const window = { type: 'upsert' as const, key: 'tumb\u001fw1', value: { windowEnd: 10, sum: 1 } };
      await core.streamsCycle({ queryId, source: p, consumerGroup: 'g', releaseLease: true, stateOps: [window], pushItems: [], ack: { offset: popped.messages[0]!.offset } });
      const flush = () => core.streamsCycle({ queryId, source: p, consumerGroup: 'g', releaseLease: true, stateOps: [{ type: 'delete', key: window.key }], pushItems: [{ queue: sink, payload: { sum: 1 } }], ack: null });
      const stored = async () => (await core.streamsStateGet({ queryId, source: p, keys: [window.key] })).rows.map((r) => r.value);

      // The flush reads the ripe window; the main loop then reads every key for its next message: its cycle is in flight.
      await core.streamsStateGet({ queryId, source: p, ripeAtOrBefore: 100 });
      const next = await core.pop({ queue: source, consumerGroup: 'g', owner: 'w', batch: 1, waitMs: 0 });
      await core.streamsStateGet({ queryId, source: p });
      expect(await flush()).toMatchObject({ success: true, skipped: true, stateOpsApplied: 0, pushResults: [] });
      // The main loop commits the window with its message added; the flush's read is older than that commit.
      await core.streamsCycle({ queryId, source: p, consumerGroup: 'g', releaseLease: true, stateOps: [{ ...window, value: { windowEnd: 10, sum: 3 } }], pushItems: [], ack: { offset: next.messages[0]!.offset } });
      expect(await flush()).toMatchObject({ success: true, skipped: true });
      expect(await stored()).toEqual([{ windowEnd: 10, sum: 3 }]);
      // Read again, the flush closes the window as stored.
      await core.streamsStateGet({ queryId, source: p, ripeAtOrBefore: 100 });
      expect(await flush()).toMatchObject({ success: true, stateOpsApplied: 1 });
      expect(await stored()).toEqual([]);
    });

    it('never lets a main-loop read see a window a flush is closing: the read waits for the flush, or the flush is skipped', async () => {
      const core = fx.core();
      const source = await fx.newQueue();
      const sink = fx.uniqueName('sink');
      const queryId = await queryIdOf(core, fx.uniqueName('flushing'), source);
      const p = { queue: source, partition: 'Default' };
      const key = 'tumb\u001fw1';
      const seen: string[] = [];
      await core.push({ items: Array.from({ length: 12 }, (_, i) => ({ queue: source, payload: i })) });
      // The main loop's read comes a little later each round: before the flush is judged, while it commits, after.
      for (let round = 0; round < 12; round++) {
        await core.streamsCycle({ queryId, source: p, consumerGroup: 'g', releaseLease: true, stateOps: [{ type: 'upsert', key, value: { windowEnd: 10, round } }], pushItems: [], ack: null });
        await core.streamsStateGet({ queryId, source: p, ripeAtOrBefore: 100 });
        const flushing = core.streamsCycle({ queryId, source: p, consumerGroup: 'g', releaseLease: true, stateOps: [{ type: 'delete', key }], pushItems: [{ queue: sink, payload: { round } }], ack: null });
        await new Promise((r) => setTimeout(r, round * 2));
        const rows = (await core.streamsStateGet({ queryId, source: p })).rows;
        const flushed = (await flushing).stateOpsApplied === 1;
        // Closed by the flush: the read must not see the window (the main loop would add to it and emit it again).
        expect(rows.length, `round ${round}: flush ${flushed ? 'applied' : 'skipped'}, read saw ${rows.length} rows`).toBe(flushed ? 0 : 1);
        seen.push(flushed ? 'applied' : 'skipped');
        // The main loop's cycle for this read (it acks a message), so the next flush is judged against a settled partition.
        const popped = await core.pop({ queue: source, consumerGroup: 'g', owner: 'w', batch: 1, waitMs: 0 });
        await core.streamsCycle({ queryId, source: p, consumerGroup: 'g', releaseLease: true, stateOps: [], pushItems: [], ack: { offset: popped.messages[0]!.offset, leaseId: popped.lease!.id } });
      }
      expect(seen).toContain('applied');
    });

    it('keeps registrations, state and committed cycles across a restart where the engine is durable', async () => {
      let core = fx.core();
      const source = await fx.newQueue();
      const name = fx.uniqueName('durable');
      const queryId = await queryIdOf(core, name, source);
      await core.push({ items: [{ queue: source, payload: 1 }] });
      const popped = await core.pop({ queue: source, consumerGroup: 'g', owner: 'w', batch: 10, waitMs: 0 });
      const cycle = { queryId, source: { queue: source, partition: 'Default' }, consumerGroup: 'g', releaseLease: true, stateOps: [{ type: 'upsert' as const, key: 'w', value: { sum: 1 } }], pushItems: [], ack: { offset: popped.messages[0]!.offset } };
      expect(await core.streamsCycle(cycle)).toMatchObject({ success: true, replayed: false });
      const reopened = fx.reopen();
      if (!reopened) return;
      core = await reopened;
      expect(await register(core, name, source)).toMatchObject({ success: true, fresh: false, queryId });
      expect((await core.streamsStateGet({ queryId, source: cycle.source })).rows.map((r) => r.value)).toEqual([{ sum: 1 }]);
      expect(await core.streamsCycle(cycle)).toMatchObject({ success: true, replayed: true });
    });
  });
}

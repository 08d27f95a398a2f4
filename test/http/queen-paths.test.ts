/**
 * Queen's busy paths on both engines, as its clients drive them over the HTTP
 * API: an ack/batch of a hundred acks is one core transaction (on PostgreSQL
 * one write-acks statement), a queue-mode pop over many one-message
 * partitions by ten consumers looks only at partitions with work (no look at
 * every partition per pop), and long-polls more than the pool's size wait
 * without holding a connection, so a push and an ack still go through.
 * /metrics and /health with a frozen database: test/e2e/postgres-frozen-metrics.test.ts.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { statementLatency } from '../../src/metrics/postgres.js';
import { waitFor, within } from '../support/eventually.js';
import { httpEngines, releaseHttpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();
afterAll(() => releaseHttpEngines());

/** How often the postgres engine has run a named statement in this process. */
const statementRuns = (name: string) => statementLatency(name).count;

type Popped = Record<string, any>;

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`Queen's busy paths (${engine.name})${engine.skipReason ? `: ${engine.skipReason}` : ''}`, () => {
    let rig: HttpRig;
    beforeEach(async () => {
      rig = await engine.open();
    });
    afterEach(() => rig.close());

    const push = async (items: { queue: string; partition?: string; payload: unknown }[]) => {
      const { status } = await rig.call('POST', '/api/v1/push', { items: items.map((i) => ({ partition: 'Default', ...i })) });
      expect(status).toBe(201);
    };
    const pop = async (queue: string, query: string): Promise<Popped[]> => {
      const { status, body } = await rig.call('GET', `/api/v1/pop/queue/${queue}?wait=false${query}`);
      expect(status).toBe(200);
      return body.messages;
    };
    const ackBatch = async (messages: Popped[], group: string | null, leaseOf = (m: Popped) => m['leaseId']) => {
      const { status, body } = await rig.call('POST', '/api/v1/ack/batch', {
        acknowledgments: messages.map((m) => ({ transactionId: m['transactionId'], partitionId: m['partitionId'], status: 'completed', leaseId: leaseOf(m) })),
        consumerGroup: group,
      });
      expect(status).toBe(200);
      return body as { success: boolean; error: string | null }[];
    };

    it('an ack/batch of 100 acks applies them all in one core transaction (PostgreSQL: one write-acks statement)', async () => {
      await push(Array.from({ length: 100 }, (_, i) => ({ queue: 'jobs', payload: i })));
      const messages = await pop('jobs', '&batch=100&consumerGroup=workers');
      expect(messages).toHaveLength(100);
      const before = statementRuns('write-acks');
      const answers = await ackBatch(messages, 'workers');
      expect(answers.every((a) => a.success)).toBe(true);
      if (engine.name === 'postgres') expect(statementRuns('write-acks') - before).toBe(1);
      // The group moved past all of them: nothing is delivered again, a new push is.
      await push([{ queue: 'jobs', payload: 'next' }]);
      expect((await pop('jobs', '&batch=100&consumerGroup=workers')).map((m) => m['data'])).toEqual(['next']);
    });

    it('an ack/batch with one stale leaseId answers that ack failed and applies the others', async () => {
      await push(Array.from({ length: 5 }, (_, i) => ({ queue: 'jobs', partition: `p${i}`, payload: i })));
      const messages: Popped[] = [];
      for (let i = 0; i < 5; i++) messages.push(...(await pop('jobs', '&batch=1')));
      expect(messages).toHaveLength(5);
      const answers = await ackBatch(messages, null, (m) => (m === messages[2] ? '00000000-0000-4000-8000-000000000000' : m['leaseId']));
      expect(answers.map((a) => a.success)).toEqual([true, true, false, true, true]);
      expect(answers[2]!.error).toBeTruthy();
    });

    it('ten consumers drain 120 one-message partitions in queue mode, each message once, without a look at every partition per pop', async () => {
      const PARTITIONS = 120;
      await push(Array.from({ length: PARTITIONS }, (_, i) => ({ queue: 'wide', partition: `p${i}`, payload: i })));
      const claimsBefore = statementRuns('claim-pop-candidate');
      const seen: number[] = [];
      let pops = 0;
      const consumer = async () => {
        for (let empty = 0; empty < 3; ) {
          pops++;
          const messages = await pop('wide', '&batch=1');
          if (messages.length === 0) {
            empty++;
            continue;
          }
          seen.push(...messages.map((m) => m['data'] as number));
          expect((await ackBatch(messages, null)).every((a) => a.success)).toBe(true);
        }
      };
      await Promise.all(Array.from({ length: 10 }, consumer));
      expect(seen.sort((a, b) => a - b)).toEqual(Array.from({ length: PARTITIONS }, (_, i) => i));
      if (engine.name === 'postgres') {
        // One statement claims a partition with work: a pop that walked the partitions would claim one after another.
        const claims = statementRuns('claim-pop-candidate') - claimsBefore;
        expect(claims).toBeLessThan(pops * 3);
      }
    }, 240_000);

    it('more long-polls than pooled connections (4) wait without holding one: a push and an ack on another queue answer promptly', async () => {
      await push([{ queue: 'idle', payload: 'first' }]);
      expect(await pop('idle', '&batch=1')).toHaveLength(1); // leased: the polls below find nothing
      const looks = statementRuns('claim-pop-candidate');
      const polls = Array.from({ length: 12 }, () => rig.call('GET', '/api/v1/pop/queue/idle?wait=true&timeout=20000&batch=1'));
      if (engine.name === 'postgres') {
        await waitFor(() => statementRuns('claim-pop-candidate') - looks >= 12, { what: 'all 12 long-polls to have looked once and begun waiting', timeoutMs: 60_000 });
      }
      const answered = await within(
        (async () => {
          await push([{ queue: 'busy', payload: 'work' }]);
          const messages = await pop('busy', '&batch=1');
          return ackBatch(messages, null);
        })(),
        10_000,
        'a push, a pop and an ack on another queue while 12 long-polls wait on a pool of 4 (a starved pool would hold them until the polls end, 20 s)',
      );
      expect(answered).toEqual([expect.objectContaining({ success: true })]);
      // The polls still wait; a push to their queue (a partition without a lease) wakes them, and one of them gets it.
      await push([{ queue: 'idle', partition: 'other', payload: 'wake' }]);
      const results = await within(Promise.all(polls), 60_000, 'the 12 long-polls to answer');
      const got = results.flatMap((r) => r.body.messages.map((m: Popped) => m['data']));
      expect(got).toEqual(['wake']);
    }, 120_000);
  });
}

/**
 * A Queen streams cycle that fails its message (issue 32): an ack with status
 * `failed` or `dlq` in POST /streams/v1/cycle answers as Queen's cycle does.
 * The message goes to the dead-letter queue with the client's error (or
 * "Streaming cycle reported failure"), the group moves past it, the lease is
 * released so the rest of the batch comes again, and the cycle's state writes
 * commit with it. A status Queen does not name is a cycle that fails (200,
 * success: false) and applies nothing. On both engines, through the routes.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { httpEngines, releaseHttpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();
afterAll(() => releaseHttpEngines());

type Popped = { transactionId: string; partitionId: string; leaseId: string; data: { n: number } };

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`a streams cycle that fails its message (${engine.name})${engine.skipReason ? `: ${engine.skipReason}` : ''}`, () => {
    let rig: HttpRig;
    beforeEach(async () => {
      rig = await engine.open();
    });
    afterEach(() => rig.close());

    /** A query over a fresh queue of `n` messages, and the first `batch` of them popped by its group. */
    async function setUp(queue: string, n: number, batch: number) {
      expect((await rig.call('POST', '/api/v1/push', { items: Array.from({ length: n }, (_, i) => ({ queue, transactionId: `${queue}-${i}`, payload: { n: i } })) })).status).toBe(201);
      const registered = await rig.call('POST', '/streams/v1/queries', { name: `q-${queue}`, source_queue: queue, config_hash: 'h1' });
      expect(registered.status).toBe(200);
      const popped = (await rig.call('GET', `/api/v1/pop/queue/${queue}?consumerGroup=streams.g&batch=${batch}&wait=false`)).body.messages as Popped[];
      expect(popped.map((m) => m.data.n)).toEqual(Array.from({ length: batch }, (_, i) => i));
      return { queryId: registered.body.query_id as string, popped };
    }

    const cycle = (queryId: string, message: Popped, ack: Record<string, unknown>, key = 'w') =>
      rig.call('POST', '/streams/v1/cycle', {
        query_id: queryId, partition_id: message.partitionId, consumer_group: 'streams.g',
        state_ops: [{ type: 'upsert', key, value: { seen: message.data.n } }],
        ack: { transactionId: message.transactionId, leaseId: message.leaseId, ...ack },
      });

    const deadLetters = async (queue: string) =>
      ((await rig.call('GET', `/api/v1/dlq?queue=${queue}&consumerGroup=streams.g`)).body.messages as { transactionId: string; errorMessage: string }[])
        .map((m) => [m.transactionId, m.errorMessage]);

    it('sends a message acked "dlq" to the dead-letter queue with its error, moves the group past it and hands the rest of the lease back', async () => {
      const { queryId, popped } = await setUp('fails', 4, 3);
      const answer = await cycle(queryId, popped[1]!, { status: 'dlq', error: 'cannot parse' });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ success: true, state_ops_applied: 1, ack_result: { success: true, dlq: true } });
      expect(await deadLetters('fails')).toEqual([['fails-1', 'cannot parse']]);
      // Messages 0 and 1 are behind the group; 2 was leased with them and comes again, then 3.
      const again = (await rig.call('GET', '/api/v1/pop/queue/fails?consumerGroup=streams.g&batch=10&wait=false')).body.messages as Popped[];
      expect(again.map((m) => m.data.n)).toEqual([2, 3]);
      const state = await rig.call('POST', '/streams/v1/state/get', { query_id: queryId, partition_id: popped[0]!.partitionId });
      expect(state.body.rows.map((r: { key: string; value: unknown }) => [r.key, r.value])).toEqual([['w', { seen: 1 }]]);
    });

    it('treats "failed" as Queen\'s cycle does (straight to the dead-letter queue, no retries), with its default error', async () => {
      const { queryId, popped } = await setUp('failing', 2, 2);
      expect((await cycle(queryId, popped[1]!, { status: 'failed' })).body).toMatchObject({ success: true, ack_result: { dlq: true } });
      expect(await deadLetters('failing')).toEqual([['failing-1', 'Streaming cycle reported failure']]);
      expect((await rig.call('GET', '/api/v1/pop/queue/failing?consumerGroup=streams.g&batch=10&wait=false')).body.messages).toEqual([]);
    });

    it('answers a status Queen does not name as a cycle that failed, applying nothing', async () => {
      const { queryId, popped } = await setUp('unknown', 1, 1);
      const answer = await cycle(queryId, popped[0]!, { status: 'retry' });
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ success: false, state_ops_applied: 0, ack_result: null, error: expect.stringMatching(/^Unknown ack.status: retry/) });
      expect((await rig.call('POST', '/streams/v1/state/get', { query_id: queryId, partition_id: popped[0]!.partitionId })).body.rows).toEqual([]);
      expect(await deadLetters('unknown')).toEqual([]);
      // Completed still acks as before.
      expect((await cycle(queryId, popped[0]!, { status: 'completed' })).body).toMatchObject({ success: true, ack_result: { dlq: false, lease_released: true } });
    });
  });
}

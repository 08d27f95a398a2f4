/**
 * Defects found while making the API Queen's, each on both engines:
 * transactionIds are compared as the exact text the client sent (U+0000 and
 * lone surrogates included), and a push that names no partition never adds
 * one to a queue a Kafka client created.
 */
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../src/index.js';
import { httpEngines, releaseHttpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();
afterAll(() => releaseHttpEngines());

// Three ids UTF-8 would make one, and one a PostgreSQL text column cannot hold.
const IDS = ['x\ud800y', 'x\udbffy', 'x\uFFFDy', 'nul\u0000inside'];

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`transactionIds are the exact text sent (${engine.name})${engine.skipReason ? `: ${engine.skipReason}` : ''}`, () => {
    let rig: HttpRig;
    beforeEach(async () => {
      rig = await engine.open();
    });
    afterEach(() => rig.close());

    const push = (ids: string[]) => rig.call('POST', '/api/v1/push', { items: ids.map((id, i) => ({ queue: 'ids', transactionId: id, payload: i })) });

    it('ids with U+0000 or lone surrogates are each stored once, popped as sent, and each deduplicated on its own', async () => {
      const first = await push(IDS);
      expect(first.status).toBe(201);
      expect(first.body.map((r: { status: string }) => r.status)).toEqual(['queued', 'queued', 'queued', 'queued']);
      expect(first.body.map((r: { transaction_id: string }) => r.transaction_id)).toEqual(IDS);
      const { body } = await rig.call('GET', '/api/v1/pop/queue/ids?consumerGroup=g&batch=10');
      expect(body.messages.map((m: { transactionId: string; data: number }) => [m.transactionId, m.data])).toEqual(IDS.map((id, i) => [id, i]));
      const again = await push([...IDS].reverse());
      expect(again.body.map((r: { status: string }) => r.status)).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate']);
      expect(again.body.map((r: { message_id: string }) => r.message_id)).toEqual(first.body.map((r: { message_id: string }) => r.message_id).reverse());
      // An ack names the message by the same exact id.
      const m = body.messages[0];
      const ack = await rig.call('POST', '/api/v1/ack', { transactionId: m.transactionId, partitionId: m.partitionId, status: 'completed', consumerGroup: 'g' });
      expect(ack.body[0]).toMatchObject({ success: true, transactionId: IDS[0] });
    });
  });
}

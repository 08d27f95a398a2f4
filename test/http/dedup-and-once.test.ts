/**
 * seeds/dedup-and-once.txt over HTTP and through the client, on every engine.
 * Each test is named after the sentence it proves.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { QueenDuplicateError, type Message } from '../../src/client/index.js';
import { httpEngines, releaseHttpEngines, type HttpRig } from './support.js';

const engines = await httpEngines();
afterAll(() => releaseHttpEngines());

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`seeds/dedup-and-once.txt over HTTP: ${engine.name}${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
    let rig: HttpRig;
    beforeEach(async () => {
      rig = await engine.open();
      for (const queue of ['payments', 'refunds', 'emails', 'signups']) expect((await rig.call('POST', '/api/v1/configure', { queue })).status).toBe(201);
    });
    afterEach(() => rig.close());

    const push = (items: object[]) => rig.call('POST', '/api/v1/push', { items });
    const order = (extra: object = {}) => ({ queue: 'payments', partition: 'customer-42', transactionId: 'order-9137-paid', payload: { orderId: 9137, amount: 99.5 }, ...extra });
    const partitionEnd = async (queue: string, partition: string) => {
      const { body } = await rig.call('GET', `/api/v1/resources/queues/${queue}`);
      return (body.partitions as { name: string; highWatermark: number }[]).find((p) => p.name === partition)?.highWatermark ?? 0;
    };
    const popAll = async (queue: string, group: string) => {
      const { body } = await rig.call('GET', `/api/v1/pop/queue/${queue}?consumerGroup=${group}&batch=100`);
      return body.messages as { data: unknown; offset: number }[];
    };

    it('"Push the same id to the same partition again, inside the queue\'s dedup window, and the broker writes nothing and answers with the original message."', async () => {
      const first = await push([order()]);
      rig.advance(10 * 60_000);
      const retry = await push([order()]);
      expect(retry.body[0]).toEqual({ ...first.body[0], status: 'duplicate' });
      expect(await partitionEnd('payments', 'customer-42')).toBe(1);
    });

    it('"retry[0].status is \'duplicate\': the second push wrote nothing and answers with the first message\'s id."', async () => {
      const data = { orderId: 9137, amount: 99.5 };
      const first = await rig.client.queue('payments').partition('customer-42').push([{ transactionId: 'order-9137-paid', data }]);
      const retry = await rig.client.queue('payments').partition('customer-42').push([{ transactionId: 'order-9137-paid', data }]);
      expect(first[0]!.status).toBe('queued');
      expect(retry[0]!.status).toBe('duplicate');
      expect(retry[0]!.messageId).toBe(first[0]!.messageId);
      expect(await partitionEnd('payments', 'customer-42')).toBe(1);
    });

    it('"Over HTTP the retry answers HTTP 201 with "status": "duplicate", the original message_id and the original offset, and nothing is appended."', async () => {
      await push([order({ transactionId: 'order-9136-paid' })]);
      const first = await push([order()]);
      expect(first.status).toBe(201);
      expect(first.body[0]).toMatchObject({ status: 'queued', offset: 1 });
      const retry = await push([order()]);
      expect(retry.status).toBe(201);
      expect(retry.body[0]).toMatchObject({ status: 'duplicate', message_id: first.body[0].message_id, offset: 1, transaction_id: 'order-9137-paid' });
      expect(await partitionEnd('payments', 'customer-42')).toBe(2);
      expect((await popAll('payments', 'auditor')).map((m) => m.offset)).toEqual([0, 1]);
    });

    it('"The scope is one partition. The same id in another partition ... is a different message"', async () => {
      const a = await push([order()]);
      const b = await push([order({ partition: 'customer-43' })]);
      expect(b.body[0].status).toBe('queued');
      expect(b.body[0].message_id).not.toBe(a.body[0].message_id);
      // "which is why every retry of a message must go to the same partition"
      expect((await push([order({ partition: 'customer-43' })])).body[0]).toMatchObject({ status: 'duplicate', message_id: b.body[0].message_id });
    });

    it('"The same id in ... another queue, is a different message"', async () => {
      const a = await push([order()]);
      const b = await push([order({ queue: 'refunds' })]);
      expect(b.body[0]).toMatchObject({ status: 'queued', queue: 'refunds', offset: 0 });
      expect(b.body[0].message_id).not.toBe(a.body[0].message_id);
    });

    it('"The window is the queue\'s dedupWindowSeconds, 3,600 seconds by default"', async () => {
      const { body } = await rig.call('GET', '/api/v1/resources/queues/payments');
      expect(body.config.dedup_window_seconds).toBe(3600);
      const first = await push([order()]);
      rig.advance(HOUR_MS - 1_000);
      expect((await push([order()])).body[0]).toMatchObject({ status: 'duplicate', message_id: first.body[0].message_id });
    });

    it('"The window is bounded: outside dedupWindowSeconds, the same id is a new message."', async () => {
      await rig.call('POST', '/api/v1/configure', { queue: 'payments', options: { dedupWindowSeconds: 60 } });
      const first = await push([order()]);
      rig.advance(61_000);
      const later = await push([order()]);
      expect(later.body[0]).toMatchObject({ status: 'queued', offset: 1 });
      expect(later.body[0].message_id).not.toBe(first.body[0].message_id);
    });

    it('"0 turns the check off."', async () => {
      expect((await rig.call('POST', '/api/v1/configure', { queue: 'payments', options: { dedupWindowSeconds: 0 } })).body.options.dedupWindowSeconds).toBe(0);
      const first = await push([order()]);
      const second = await push([order()]);
      expect([first.body[0].status, second.body[0].status]).toEqual(['queued', 'queued']);
      expect(second.body[0].offset).toBe(1);
    });

    for (const window of [3600, 0]) {
      it(`"Inside one request, an id repeated for the same queue and partition is stored once, whatever the window, and the repeats answer duplicate." (window ${window})`, async () => {
        await rig.call('POST', '/api/v1/configure', { queue: 'payments', options: { dedupWindowSeconds: window } });
        const { status, body } = await push([order(), order({ payload: 'again' }), order({ transactionId: 'other' }), order()]);
        expect(status).toBe(201);
        expect(body.map((i: { status: string }) => i.status)).toEqual(['queued', 'duplicate', 'queued', 'duplicate']);
        expect(body[1].message_id).toBe(body[0].message_id);
        expect(body[3].offset).toBe(body[0].offset);
        expect(await partitionEnd('payments', 'customer-42')).toBe(2);
      });
    }

    it('"A push without an id gets the message id as its transactionId, which is new every time, so nothing is deduplicated"', async () => {
      const item = { queue: 'payments', payload: { same: true } };
      const a = await push([item]);
      const b = await push([item]);
      for (const r of [a, b]) expect(r.body[0].transaction_id).toBe(r.body[0].message_id);
      expect([a.body[0].status, b.body[0].status]).toEqual(['queued', 'queued']);
      expect(await partitionEnd('payments', 'Default')).toBe(2);
    });

    it('"(the JS SDK mints a UUIDv7 when you pass none, to the same effect)" and "A fresh UUID per attempt deduplicates nothing."', async () => {
      const a = await rig.client.queue('payments').push([{ data: { same: true } }]);
      const b = await rig.client.queue('payments').push([{ data: { same: true } }]);
      expect(a[0]!.transactionId).toMatch(UUID_V7);
      expect(b[0]!.transactionId).toMatch(UUID_V7);
      expect(a[0]!.transactionId).not.toBe(b[0]!.transactionId);
      expect([a[0]!.status, b[0]!.status]).toEqual(['queued', 'queued']);
    });

    // ─── Transactions ────────────────────────────────────────────────────────

    const popOne = async (queue: string, group: string): Promise<Message> => {
      const [message] = await rig.client.queue(queue).pop({ consumerGroup: group });
      expect(message, `a message to pop from ${queue}`).toBeDefined();
      return message!;
    };

    it('"When a push inside a transaction carries an id its partition already stores, the whole transaction rolls back with reason: "duplicate": the ack, the KV writes and the timers are not written either."', async () => {
      await push([{ queue: 'signups', payload: { userId: 'u1' } }]);
      await push([{ queue: 'emails', transactionId: 'welcome-u1', payload: 'sent before' }]);
      const message = await popOne('signups', 'mailer');
      const { status, body } = await rig.call('POST', '/api/v1/transaction', {
        operations: [
          { type: 'ack', queue: 'signups', partition: message.partition, offset: message.offset, status: 'completed', consumerGroup: 'mailer' },
          { type: 'kv.put', ns: 'profiles', key: 'u1', value: { welcomed: true } },
          { type: 'kv.incr', ns: 'counters', key: 'welcomes' },
          { type: 'push', items: [{ queue: 'emails', payload: 'fresh' }, { queue: 'emails', transactionId: 'welcome-u1', payload: 'again' }] },
        ],
      });
      expect(status).toBe(200);
      expect(body).toMatchObject({ success: false, reason: 'duplicate', failed_index: 3, failed_item: 1 });
      expect(body.message).toMatch(/nothing in the transaction was written/);
      expect((await rig.call('GET', '/api/v1/kv/profiles/u1')).status).toBe(404);
      expect((await rig.call('GET', '/api/v1/kv/counters/welcomes')).status).toBe(404);
      expect(await partitionEnd('emails', 'Default')).toBe(1);
      // The ack was not written: once the lease is given up, the message comes again.
      await rig.client.ack(message, 'failed');
      expect((await popOne('signups', 'mailer')).offset).toBe(message.offset);
    });

    it('"If the first attempt committed, the retry finds its push ids and writes nothing"', async () => {
      const attempt = () => rig.client.transaction().queue('emails').push([{ transactionId: 'invoice-77', data: 'invoice' }]).incr('counters', 'invoices').commit();
      expect((await attempt()).success).toBe(true);
      await expect(attempt()).rejects.toBeInstanceOf(QueenDuplicateError);
      expect(await partitionEnd('emails', 'Default')).toBe(1);
      expect((await rig.client.kv.get('counters', 'invoices'))!.value).toBe(1);
    });

    it('"if it didn\'t, the retry commits."', async () => {
      // The first attempt never reached the core (say it timed out on the way), so nothing holds its id.
      const retry = await rig.client.transaction().queue('emails').push([{ transactionId: 'invoice-78', data: 'invoice' }]).incr('counters', 'invoices').commit();
      expect(retry.success).toBe(true);
      expect(await partitionEnd('emails', 'Default')).toBe(1);
    });

    it('"(An id repeated within the same transaction is different: it is stored once, answered with "duplicate": true, and the transaction commits.)"', async () => {
      const { body } = await rig.call('POST', '/api/v1/transaction', {
        operations: [
          { type: 'push', items: [{ queue: 'emails', transactionId: 'mail-1', payload: 'a' }] },
          { type: 'push', items: [{ queue: 'emails', transactionId: 'mail-1', payload: 'a again' }] },
        ],
      });
      expect(body.success).toBe(true);
      expect(body.results[0].items[0]).toMatchObject({ status: 'queued', duplicate: false });
      expect(body.results[1].items[0]).toMatchObject({ status: 'duplicate', duplicate: true, message_id: body.results[0].items[0].message_id });
      expect(await partitionEnd('emails', 'Default')).toBe(1);
    });

    // ─── once ────────────────────────────────────────────────────────────────

    it('"once writes a marker in the step\'s transaction and refuses the whole transaction when the marker already exists"', async () => {
      const step = (data: string) => rig.client.transaction().queue('emails').push([{ data }]).once('welcome', 'u1', { ttl: '7d' }).commit();
      expect((await step('first')).success).toBe(true);
      expect(await rig.client.kv.get('welcome', 'u1')).toMatchObject({ value: true });
      expect(await step('second')).toMatchObject({ success: false, reason: 'kv_precondition', failedIndex: 1 });
      expect(await partitionEnd('emails', 'Default')).toBe(1);
    });

    it('"once(ns, key, opts) is a KV putIfAbsent with required: true."', async () => {
      await rig.client.kv.put('welcome', 'u2', 'already there');
      const viaOnce = await rig.client.transaction().once('welcome', 'u2', { forever: true }).commit();
      const viaPutIfAbsent = await rig.client.transaction().putIfAbsent('welcome', 'u2', true, { required: true, forever: true }).commit();
      expect(viaOnce).toMatchObject({ success: false, reason: 'kv_precondition', failedIndex: 0 });
      expect(viaPutIfAbsent).toMatchObject({ success: false, reason: 'kv_precondition', failedIndex: 0 });
      // Without required, a putIfAbsent that finds the key is no reason to roll back.
      expect((await rig.client.transaction().putIfAbsent('welcome', 'u2', true).commit()).success).toBe(true);
    });

    it('"A lost gate answers HTTP 200 with reason: "kv_precondition", and the JS SDK returns that answer from commit() without throwing."', async () => {
      expect((await rig.client.kv.once('welcome', 'u3', { ttl: '7d' })).won).toBe(true);
      const { status, body } = await rig.call('POST', '/api/v1/transaction', { operations: [{ type: 'once', ns: 'welcome', key: 'u3', ttl: '7d' }] });
      expect(status).toBe(200);
      expect(body).toMatchObject({ success: false, reason: 'kv_precondition', failed_index: 0 });
      const answer = await rig.client.transaction().once('welcome', 'u3', { ttl: '7d' }).commit();
      expect(answer).toMatchObject({ success: false, reason: 'kv_precondition', failedIndex: 0 });
    });

    it('"The ack rolled back too, which is why the example acks on its own."', async () => {
      await push([{ queue: 'signups', payload: { userId: 'u4' } }]);
      await rig.client.kv.once('welcome', 'u4', { ttl: '7d' });
      const message = await popOne('signups', 'mailer');
      const res = await rig.client.transaction().ack(message, 'completed', { consumerGroup: 'mailer' }).queue('emails').push([{ data: 'mail' }]).once('welcome', 'u4', { ttl: '7d' }).commit();
      expect(res.success).toBe(false);
      // Had the transaction's ack been written, the lease would be over and this ack would find nothing to do.
      expect(await rig.client.ack(message, 'completed', { group: 'mailer' })).toEqual({ acked: true });
      expect(await rig.client.queue('signups').pop({ consumerGroup: 'mailer' })).toEqual([]);
    });

    it('"Outside a transaction, queen.kv.once(ns, key, { ttl }) returns { won }."', async () => {
      expect(await rig.client.kv.once('welcome', 'u5', { ttl: '7d' })).toEqual({ won: true });
      expect(await rig.client.kv.once('welcome', 'u5', { ttl: '7d' })).toEqual({ won: false });
      expect((await rig.call('POST', '/api/v1/kv/welcome/u5/once', { ttl: 3600 })).body).toEqual({ won: false });
    });

    it('"A transaction checks its pushes before its KV operations. If it also pushes with a deterministic id, a repeat rolls back with duplicate first, and the JS SDK throws that one"', async () => {
      const step = () => rig.client.transaction().once('welcome', 'u6', { ttl: '7d' }).queue('emails').push([{ transactionId: 'welcome-mail-u6', data: 'mail' }]).commit();
      expect((await step()).success).toBe(true);
      // Both the gate and the push id now refuse a repeat; the push is judged first, though it comes second.
      const { body } = await rig.call('POST', '/api/v1/transaction', {
        operations: [{ type: 'once', ns: 'welcome', key: 'u6', ttl: '7d' }, { type: 'push', items: [{ queue: 'emails', transactionId: 'welcome-mail-u6', payload: 'mail' }] }],
      });
      expect(body).toMatchObject({ success: false, reason: 'duplicate', failed_index: 1 });
      const thrown = await step().catch((e: unknown) => e);
      expect(thrown).toBeInstanceOf(QueenDuplicateError);
      expect(thrown).toMatchObject({ reason: 'duplicate', failedIndex: 1, failedItem: 0 });
    });

    it('"A once marker lives as long as you say (ttl ...). After it expires, a redelivery runs the step again"', async () => {
      expect((await rig.client.kv.once('welcome', 'u7', { ttl: '7d' })).won).toBe(true);
      rig.advance(7 * DAY_MS - 60_000);
      expect((await rig.client.kv.once('welcome', 'u7', { ttl: '7d' })).won).toBe(false);
      rig.advance(120_000);
      expect((await rig.client.kv.once('welcome', 'u7', { ttl: '7d' })).won).toBe(true);
      // A TTL in seconds and in minutes means the same.
      expect((await rig.client.kv.once('welcome', 'u8', { ttl: 1800 })).won).toBe(true);
      expect((await rig.client.kv.get('welcome', 'u8'))!.expiresAt).toBe((await rig.client.kv.putIfAbsent('welcome', 'u9', 1, { ttl: '30m' })).entry!.expiresAt);
    });

    it('"A once marker lives as long as you say (... or forever: true)."', async () => {
      expect((await rig.client.transaction().once('welcome', 'u10', { forever: true }).commit()).success).toBe(true);
      rig.advance(10 * 365 * DAY_MS);
      expect(await rig.client.kv.get('welcome', 'u10')).toMatchObject({ expiresAt: null });
      expect((await rig.client.kv.once('welcome', 'u10', { ttl: '7d' })).won).toBe(false);
    });

    it('"A transactionId is at most 65,535 bytes."', async () => {
      const longest = 'x'.repeat(65_535);
      expect((await push([order({ transactionId: longest })])).body[0]).toMatchObject({ status: 'queued', transaction_id: longest });
      expect((await push([order({ transactionId: longest })])).body[0].status).toBe('duplicate');
      // 21,846 three-byte characters are 65,538 bytes, though only 21,846 characters.
      for (const tooLong of ['x'.repeat(65_536), '€'.repeat(21_846)]) {
        const { status, body } = await push([order({ transactionId: tooLong, partition: 'customer-99' })]);
        expect(status).toBe(400);
        expect(body).toMatchObject({ code: 'transaction_id_too_long' });
        expect(body.message).toMatch(/at most 65535 bytes/);
        const viaTransaction = await rig.call('POST', '/api/v1/transaction', { operations: [{ type: 'push', items: [order({ transactionId: tooLong, partition: 'customer-99' })] }] });
        expect(viaTransaction.status).toBe(400);
      }
      expect(await partitionEnd('payments', 'customer-99')).toBe(0);
    });

    // ─── The pattern ─────────────────────────────────────────────────────────

    it('consume-transform-produce ("ack + push + once in one transaction") run twice for the same input produces one output', async () => {
      await push([{ queue: 'signups', transactionId: 'signup-u11', payload: { userId: 'u11', email: 'u11@example.com' } }]);
      const step = async (message: Message) => {
        const { userId, email } = message.data as { userId: string; email: string };
        const res = await rig.client
          .transaction()
          .ack(message, 'completed', { consumerGroup: 'mailer' })
          .queue('emails')
          .push([{ data: { to: email, template: 'welcome' } }])
          .once('welcome', userId, { ttl: '7d' })
          .commit();
        if (res.success === false) await rig.client.ack(message, 'completed', { group: 'mailer' }); // already done
        return res;
      };
      // The first worker pops, then stalls past its lease; the input is delivered again to a second worker.
      const firstDelivery = await rig.client.queue('signups').pop({ consumerGroup: 'mailer', leaseMs: 1_000 });
      rig.advance(2_000);
      const secondDelivery = await rig.client.queue('signups').pop({ consumerGroup: 'mailer' });
      expect(secondDelivery[0]!.messageId).toBe(firstDelivery[0]!.messageId);
      expect((await step(secondDelivery[0]!)).success).toBe(true);
      expect(await step(firstDelivery[0]!)).toMatchObject({ success: false, reason: 'kv_precondition' });
      // And a third time, from the same message object, as a retry after a lost answer would.
      expect((await step(secondDelivery[0]!)).success).toBe(false);
      const outputs = await popAll('emails', 'outbox');
      expect(outputs.map((m) => m.data)).toEqual([{ to: 'u11@example.com', template: 'welcome' }]);
      expect(await rig.client.queue('signups').pop({ consumerGroup: 'mailer' })).toEqual([]);
    });
  });
}

/**
 * Queen's own HTTP contract, as its official JavaScript client (queen-mq,
 * clients/client-js in the queen-mq/queen repository) speaks it: the exact
 * request bodies and query strings that client sends, and the answer fields
 * it reads, on both engines. The client itself is not on the npm registry,
 * so these requests are written here from its source and Queen's server
 * routes; none of its code is used.
 */
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { httpEngines, releaseHttpEngines, type HttpRig } from './support.js';

// What the client's QueueBuilder.create() sends when no options are given (its QUEUE_DEFAULTS).
const QUEUE_DEFAULTS = { leaseTime: 300, retryLimit: 3, priority: 0, delayedProcessing: 0, windowBuffer: 0, maxSize: 0, retentionSeconds: 0, completedRetentionSeconds: 0, encryptionEnabled: false };

const engines = await httpEngines();
afterAll(() => releaseHttpEngines());

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`Queen's HTTP contract as its JavaScript client uses it (${engine.name})${engine.skipReason ? `: ${engine.skipReason}` : ''}`, () => {
    let rig: HttpRig;
    beforeEach(async () => {
      rig = await engine.open();
    });
    afterEach(() => rig.close());

    const create = (queue: string, options: object = {}) =>
      rig.call('POST', '/api/v1/configure', { queue, namespace: 'shop', task: 'checkout', options: { ...QUEUE_DEFAULTS, ...options } });
    // PushBuilder: every item carries queue, partition ('Default' unless set) and a transactionId.
    const push = (queue: string, items: { data: unknown; transactionId: string }[], partition = 'Default') =>
      rig.call('POST', '/api/v1/push', { items: items.map((i) => ({ queue, partition, payload: i.data, transactionId: i.transactionId })) });
    const pop = async (queue: string, query = '') => {
      const { status, body } = await rig.call('GET', `/api/v1/pop/queue/${queue}?batch=1&wait=false&timeout=30000${query}`);
      expect(status).toBe(200);
      return body.messages as Record<string, any>[];
    };
    // Queen.ack(message, status, { group }): the fields the client copies from a popped message.
    const ack = (message: Record<string, any>, status: string, group: string | null = null, error: string | null = null) =>
      rig.call('POST', '/api/v1/ack', { transactionId: message.transactionId, partitionId: message.partitionId, status, error, consumerGroup: group, leaseId: message.leaseId });

    it('create() with namespace, task and the full option set answers configured, with the options as set', async () => {
      const { status, body } = await create('orders', { retryLimit: 5, leaseTime: 60 });
      expect(status).toBe(201);
      expect(body).toMatchObject({ configured: true, queue: 'orders', namespace: 'shop', task: 'checkout', options: { retryLimit: 5, leaseTime: 60, delayedProcessing: 0, retentionSeconds: 0 } });
      expect(typeof body.partitionId).toBe('string');
      const again = await create('orders', { retryLimit: 1 });
      expect(again.status).toBe(200);
      expect(again.body.options.retryLimit).toBe(1);
    });

    it('a push to a queue that does not exist creates the queue and the partition, and answers a bare array', async () => {
      const { status, body } = await push('fresh', [{ data: { n: 1 }, transactionId: 'a' }], 'customer-42');
      expect(status).toBe(201);
      expect(body).toEqual([expect.objectContaining({ index: 0, status: 'queued', transaction_id: 'a', queueName: 'fresh' })]);
      expect(typeof body[0].message_id).toBe('string');
      const [message] = await pop('fresh');
      expect(message).toMatchObject({ data: { n: 1 }, partition: 'customer-42', transactionId: 'a' });
    });

    it('a repeated transactionId answers status "duplicate" with the original message_id, which is what fires onDuplicate', async () => {
      const first = await push('orders', [{ data: 'x', transactionId: 'order-1' }]);
      const repeat = await push('orders', [{ data: 'x', transactionId: 'order-1' }, { data: 'y', transactionId: 'order-2' }]);
      expect(repeat.body.map((r: { status: string }) => r.status)).toEqual(['duplicate', 'queued']);
      expect(repeat.body[0].message_id).toBe(first.body[0].message_id);
    });

    it('pop without a group is queue mode: each message goes to one consumer, with Queen\'s field names', async () => {
      await push('orders', [{ data: { n: 1 }, transactionId: 't1' }, { data: { n: 2 }, transactionId: 't2' }]);
      const [first] = await pop('orders');
      expect(first).toMatchObject({ transactionId: 't1', data: { n: 1 }, partition: 'Default', consumerGroup: '__QUEUE_MODE__', retryCount: 0 });
      for (const field of ['id', 'partitionId', 'leaseId', 'createdAt']) expect(typeof first![field], field).toBe('string');
      expect(Number.isNaN(Date.parse(first!.createdAt))).toBe(false);
      // The partition is leased to the first consumer until it acks.
      expect(await pop('orders')).toEqual([]);
      expect((await ack(first!, 'completed')).body).toEqual([expect.objectContaining({ index: 0, transactionId: 't1', success: true, dlq: false })]);
      expect((await pop('orders')).map((m) => m.data)).toEqual([{ n: 2 }]);
    });

    it('with groups, every group gets every message; acks by transactionId and partitionId, one or a batch', async () => {
      await push('orders', [{ data: 1, transactionId: 't1' }, { data: 2, transactionId: 't2' }, { data: 3, transactionId: 't3' }]);
      const batch = (await rig.call('GET', '/api/v1/pop/queue/orders?batch=2&wait=false&timeout=30000&consumerGroup=billing')).body.messages;
      expect(batch.map((m: { data: number }) => m.data)).toEqual([1, 2]);
      const { body } = await rig.call('POST', '/api/v1/ack/batch', {
        acknowledgments: batch.map((m: Record<string, unknown>) => ({ transactionId: m['transactionId'], partitionId: m['partitionId'], status: 'completed', error: null, leaseId: m['leaseId'] })),
        consumerGroup: 'billing',
      });
      expect(body.map((r: { success: boolean }) => r.success)).toEqual([true, true]);
      expect((await pop('orders', '&consumerGroup=billing')).map((m) => m.data)).toEqual([3]);
      expect((await pop('orders', '&consumerGroup=audit')).map((m) => m.data)).toEqual([1]);
    });

    it('an ack naming no message it can find answers success: false with a sentence; a bad partitionId is a 400 with `error`', async () => {
      await push('orders', [{ data: 1, transactionId: 't1' }]);
      const [m] = await pop('orders');
      const missing = await ack({ ...m, transactionId: 'never-pushed' }, 'completed');
      expect(missing.body).toEqual([expect.objectContaining({ success: false, error: expect.stringMatching(/No such message/) })]);
      const bad = await ack({ ...m, partitionId: 'not-one-of-ours' }, 'completed');
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/is not a partition id this server handed out/);
    });

    it('a failed message is delivered again with its retryCount, and after retryLimit retries it moves to the dead-letter queue', async () => {
      await create('orders', { retryLimit: 2 });
      await push('orders', [{ data: 'poison', transactionId: 'bad-1' }, { data: 'fine', transactionId: 'ok-1' }]);
      const counts: number[] = [];
      for (let attempt = 0; attempt < 3; attempt++) {
        const [m] = await pop('orders', '&consumerGroup=workers');
        expect(m!.data).toBe('poison');
        counts.push(m!.retryCount);
        const { body } = await ack(m!, 'failed', 'workers', `attempt ${attempt} failed`);
        expect(body[0]).toMatchObject({ success: true, dlq: attempt === 2 });
      }
      expect(counts).toEqual([0, 1, 2]);
      // The group has moved past it.
      expect((await pop('orders', '&consumerGroup=workers')).map((m) => m.data)).toEqual(['fine']);
      const dlq = (await rig.call('GET', '/api/v1/dlq?queue=orders&limit=100&offset=0&consumerGroup=workers')).body;
      expect(dlq.total).toBe(1);
      expect(dlq.messages[0]).toMatchObject({ transactionId: 'bad-1', data: 'poison', consumerGroup: 'workers', retryCount: 2, errorMessage: 'attempt 2 failed', queue: 'orders', partition: 'Default' });
      // Another group is untouched by this one's failures.
      expect((await pop('orders', '&consumerGroup=audit')).map((m) => [m.data, m.retryCount])).toEqual([['poison', 0]]);
      expect((await rig.call('GET', '/api/v1/dlq?queue=orders&consumerGroup=audit')).body.total).toBe(0);
    });

    it('status "dlq" moves a message to the dead-letter queue at once; "retry" hands it back without counting', async () => {
      await push('orders', [{ data: 'a', transactionId: 'a' }, { data: 'b', transactionId: 'b' }]);
      const [a] = await pop('orders');
      expect((await ack(a!, 'retry')).body[0].success).toBe(true);
      const [again] = await pop('orders');
      expect(again).toMatchObject({ transactionId: 'a', retryCount: 0 });
      expect((await ack(again!, 'dlq')).body[0]).toMatchObject({ success: true, dlq: true });
      expect((await pop('orders')).map((m) => m.data)).toEqual(['b']);
      expect((await rig.call('GET', '/api/v1/dlq?queue=orders')).body.messages.map((m: { transactionId: string }) => m.transactionId)).toEqual(['a']);
    });

    it('delayedProcessing holds a message back until it is that old', async () => {
      await create('later', { delayedProcessing: 2 });
      await push('later', [{ data: 'soon', transactionId: 's' }]);
      expect(await pop('later')).toEqual([]);
      rig.advance(1_500);
      expect(await pop('later')).toEqual([]);
      rig.advance(600);
      expect((await pop('later')).map((m) => m.data)).toEqual(['soon']);
    });

    it('windowBuffer holds a partition back until it has had no new message for that long', async () => {
      await create('bursts', { windowBuffer: 2 });
      await push('bursts', [{ data: 'a', transactionId: 'a' }]);
      rig.advance(1_500);
      await push('bursts', [{ data: 'b', transactionId: 'b' }]);
      rig.advance(1_500);
      expect(await pop('bursts')).toEqual([]);
      rig.advance(600);
      const { body } = await rig.call('GET', '/api/v1/pop/queue/bursts?batch=10');
      expect(body.messages.map((m: { data: string }) => m.data)).toEqual(['a', 'b']);
    });

    it('renew() posts an empty body and extends the lease by 60 s, Queen\'s default', async () => {
      await create('orders', { leaseTime: 1 });
      await push('orders', [{ data: 1, transactionId: 't1' }]);
      const [m] = await pop('orders');
      rig.advance(900);
      const { status, body } = await rig.call('POST', `/api/v1/lease/${m!.leaseId}/extend`, {});
      expect(status).toBe(200);
      expect(body[0]).toMatchObject({ leaseId: m!.leaseId, success: true });
      rig.advance(50_000);
      expect(await pop('orders')).toEqual([]);
      rig.advance(11_000);
      expect((await pop('orders')).map((x) => x.transactionId)).toEqual(['t1']);
    });

    it('a transaction as the client commits it: acks by transactionId and partitionId, requiredLeases, a push without a partition to a new queue', async () => {
      await push('orders', [{ data: { order: 7 }, transactionId: 'order-7' }]);
      const [m] = await pop('orders', '&consumerGroup=shipping');
      const { status, body } = await rig.call('POST', '/api/v1/transaction', {
        operations: [
          { type: 'ack', transactionId: m!.transactionId, partitionId: m!.partitionId, status: 'completed', consumerGroup: 'shipping' },
          { type: 'push', items: [{ queue: 'shipments', payload: { order: 7 } }] },
        ],
        requiredLeases: [m!.leaseId],
      });
      expect(status).toBe(200);
      expect(body).toMatchObject({ success: true });
      expect(typeof body.transactionId).toBe('string');
      expect(await pop('orders', '&consumerGroup=shipping')).toEqual([]);
      expect((await pop('shipments')).map((x) => [x.data, x.partition])).toEqual([[{ order: 7 }, 'Default']]);
    });

    it('delete() sends Content-Type: application/json with no body; deleting twice answers existed: false', async () => {
      await push('orders', [{ data: 1, transactionId: 't1' }]);
      const del = () => rig.app.inject({ method: 'DELETE', url: '/api/v1/resources/queues/orders', headers: { 'content-type': 'application/json' } });
      const first = await del();
      expect(first.statusCode).toBe(200);
      expect(first.json()).toEqual({ deleted: true, queue: 'orders', existed: true });
      expect((await del()).json()).toEqual({ deleted: true, queue: 'orders', existed: false });
      expect((await rig.call('GET', '/api/v1/resources/queues/orders')).status).toBe(404);
    });

    it('the admin listings: health, overview, queues, one queue, namespaces, tasks, consumer groups', async () => {
      await create('orders');
      await push('orders', [{ data: 1, transactionId: 't1' }, { data: 2, transactionId: 't2' }]);
      const [m] = await pop('orders', '&consumerGroup=billing');
      await ack(m!, 'completed', 'billing');
      expect((await rig.call('GET', '/health')).body).toMatchObject({ status: 'healthy', engine: engine.name });
      expect((await rig.call('GET', '/api/v1/resources/overview')).body).toMatchObject({ queues: 1, partitions: 1, namespaces: 1, tasks: 1, messages: { total: 2 } });
      expect((await rig.call('GET', '/api/v1/resources/queues')).body.queues).toEqual([
        expect.objectContaining({ name: 'orders', namespace: 'shop', task: 'checkout', partitions: 1, messages: { total: 2, pending: 2, processing: 0 } }),
      ]);
      const orders = (await rig.call('GET', '/api/v1/resources/queues/orders')).body;
      expect(orders).toMatchObject({ name: 'orders', totals: { total: 2 }, partitions: [expect.objectContaining({ name: 'Default', stats: expect.objectContaining({ total: 2 }) })] });
      expect((await rig.call('GET', '/api/v1/resources/namespaces')).body.namespaces).toEqual([expect.objectContaining({ namespace: 'shop', queues: 1 })]);
      expect((await rig.call('GET', '/api/v1/resources/tasks')).body.tasks).toEqual([expect.objectContaining({ task: 'checkout', queues: 1 })]);
      expect((await rig.call('GET', '/api/v1/consumer-groups')).body).toEqual([expect.objectContaining({ name: 'billing', queueName: 'orders', totalLag: 1, state: 'Lagging' })]);
    });

    it('a traceId pushed with a message comes back on its pop, in a push and in a transaction', async () => {
      const traceId = '0190a6f2-7b1c-7d2e-9f3a-4b5c6d7e8f90';
      await rig.call('POST', '/api/v1/push', { items: [{ queue: 'orders', partition: 'Default', payload: 1, transactionId: 't1', traceId }] });
      await rig.call('POST', '/api/v1/transaction', { operations: [{ type: 'push', items: [{ queue: 'orders', payload: 2, traceId }] }, { type: 'push', items: [{ queue: 'orders', payload: 3 }] }] });
      const { body } = await rig.call('GET', '/api/v1/pop/queue/orders?batch=10&consumerGroup=g');
      expect(body.messages.map((m: { data: number; traceId: string | null; headers: unknown[] }) => [m.data, m.traceId, m.headers])).toEqual([
        [1, traceId, []],
        [2, traceId, []],
        [3, null, []],
      ]);
    });

    it('partitions(n) pops from up to n partitions in one call, the batch shared among them', async () => {
      for (const partition of ['p1', 'p2', 'p3']) await push('orders', [{ data: partition, transactionId: partition }], partition);
      const { body } = await rig.call('GET', '/api/v1/pop/queue/orders?batch=10&wait=false&timeout=30000&consumerGroup=g&partitions=2');
      expect(body.messages.map((m: { data: string }) => m.data).sort()).toHaveLength(2);
      expect(new Set(body.messages.map((m: { partition: string }) => m.partition)).size).toBe(2);
      const acks = await rig.call('POST', '/api/v1/ack/batch', {
        acknowledgments: body.messages.map((m: Record<string, unknown>) => ({ transactionId: m['transactionId'], partitionId: m['partitionId'], status: 'completed', leaseId: m['leaseId'] })),
        consumerGroup: 'g',
      });
      expect(acks.body.map((r: { success: boolean }) => r.success)).toEqual([true, true]);
      const rest = (await rig.call('GET', '/api/v1/pop/queue/orders?batch=10&consumerGroup=g&partitions=3')).body.messages;
      expect(rest).toHaveLength(1);
    });

    it('subscriptionMode "new" starts a group that never read the queue at the messages pushed after its first pop', async () => {
      await push('orders', [{ data: 'history', transactionId: 'h' }]);
      expect(await pop('orders', '&consumerGroup=late&subscriptionMode=new')).toEqual([]);
      await push('orders', [{ data: 'fresh', transactionId: 'f' }]);
      expect((await pop('orders', '&consumerGroup=late&subscriptionMode=new')).map((m) => m.data)).toEqual(['fresh']);
      // A group without a mode reads from the start.
      expect((await pop('orders', '&consumerGroup=early')).map((m) => m.data)).toEqual(['history']);
    });

    it('a subscriptionMode Queen does not name (from_beginning) reads from the start, as "all" does', async () => {
      await push('orders', [{ data: 'history', transactionId: 'h' }]);
      expect((await pop('orders', '&consumerGroup=replay&subscriptionMode=from_beginning')).map((m) => m.data)).toEqual(['history']);
    });

    it('an empty push answers 201 with an empty array and creates nothing', async () => {
      const { status, body } = await rig.call('POST', '/api/v1/push', { items: [] });
      expect(status).toBe(201);
      expect(body).toEqual([]);
      expect((await rig.call('GET', '/api/v1/resources/queues')).body.queues).toEqual([]);
    });

    it('a push item field Queen does not read (producerSub) is ignored: the item is queued and popped as sent', async () => {
      const { status, body } = await rig.call('POST', '/api/v1/push', { items: [{ queue: 'orders', payload: { n: 1 }, transactionId: 'p1', producerSub: 'someone-else' }] });
      expect(status).toBe(201);
      expect(body).toEqual([expect.objectContaining({ status: 'queued', transaction_id: 'p1' })]);
      const [message] = await pop('orders');
      expect(message).toMatchObject({ data: { n: 1 }, transactionId: 'p1' });
      // Queen stamps producerSub from the caller's credentials; without any it is null, never the body's.
      expect(message!.producerSub).toBeNull();
    });

    it('a 2.1 MB payload is queued and popped whole: a queue made over HTTP has no per-message limit, as Queen\'s', async () => {
      const blob = 'q'.repeat(2_100_000);
      const { status, body } = await push('big', [{ data: { blob }, transactionId: 'big-1' }]);
      expect(status).toBe(201);
      expect(body[0].status).toBe('queued');
      const [message] = await pop('big');
      expect(message!.data.blob.length).toBe(blob.length);
    });

    it('subscriptionFrom starts a new group at the first message pushed at or after that time', async () => {
      await push('orders', [{ data: 'old', transactionId: 'o' }]);
      rig.advance(60_000);
      await push('orders', [{ data: 'new', transactionId: 'n' }]);
      const [old] = await pop('orders', '&consumerGroup=reader');
      const between = new Date(Date.parse(old!.createdAt) + 30_000).toISOString();
      expect((await pop('orders', `&consumerGroup=replayer&subscriptionFrom=${encodeURIComponent(between)}`)).map((m) => m.data)).toEqual(['new']);
      const bad = await rig.call('GET', '/api/v1/pop/queue/orders?consumerGroup=x&subscriptionFrom=yesterday');
      expect(bad.status).toBe(400);
      expect(bad.body.error).toMatch(/neither "now" nor a time in ISO 8601/);
    });

    it('what is not built answers 501 naming it: a route', async () => {
      expect((await rig.call('GET', '/api/v1/pop?namespace=shop&batch=1')).status).toBe(501);
    });
  });
}

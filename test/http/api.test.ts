/**
 * The rest of the HTTP API on the memory engine: consuming with leases and
 * long-polls, KV, queue configuration and listings, health and metrics, and
 * bad input (4xx with a sentence, nothing written).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openCore } from '../../src/core/index.js';
import { startHttpServer, type HttpServer } from '../../src/http/index.js';
import { QueenClient, QueenHttpError } from '../../src/client/index.js';
import { waitFor } from '../support/eventually.js';
import { httpEngines, type HttpRig } from './support.js';

const memory = (await httpEngines()).find((e) => e.name === 'memory')!;

describe('HTTP API: consuming, KV, configuration, listings, operations', () => {
  let rig: HttpRig;
  beforeEach(async () => {
    rig = await memory.open();
    await rig.call('POST', '/api/v1/configure', { queue: 'jobs' });
  });
  afterEach(() => rig.close());

  it('pop takes the partition lease (owner, deadline) for its group; other workers of the group get nothing until it ends', async () => {
    await rig.client.queue('jobs').push([{ data: 1 }, { data: 2 }]);
    const { status, body } = await rig.call('GET', '/api/v1/pop/queue/jobs/partition/Default?consumerGroup=workers&batch=10&owner=worker-a&leaseMs=60000');
    expect(status).toBe(200);
    expect(body.messages.map((m: { data: unknown }) => m.data)).toEqual([1, 2]);
    expect(body.lease).toMatchObject({ owner: 'worker-a', consumerGroup: 'workers', partition: 'Default' });
    expect(body.messages[0].leaseId).toBe(body.lease.id);
    expect(body.lease.deadline).toBeGreaterThan(Date.now());
    expect((await rig.call('GET', '/api/v1/pop/queue/jobs?consumerGroup=workers&owner=worker-b')).body).toMatchObject({ messages: [], lease: null });
    // Another group has its own position and lease.
    expect((await rig.call('GET', '/api/v1/pop/queue/jobs?consumerGroup=auditors')).body.messages).toHaveLength(1);
  });

  it('ack completed moves the group on; ack failed ends the lease and the message comes again', async () => {
    await rig.client.queue('jobs').push([{ data: 'a' }, { data: 'b' }]);
    const [a] = await rig.client.queue('jobs').pop({ consumerGroup: 'workers' });
    expect(await rig.client.ack(a!, 'completed')).toEqual({ acked: true });
    const [b] = await rig.client.queue('jobs').pop({ consumerGroup: 'workers' });
    expect(b!.data).toBe('b');
    expect(await rig.client.ack(b!, 'failed')).toEqual({ acked: true });
    const [again] = await rig.client.queue('jobs').pop({ consumerGroup: 'workers' });
    expect(again).toMatchObject({ data: 'b', offset: b!.offset });
  });

  it('a lease can be renewed while held, and renewing one that ended is a 409 with a sentence', async () => {
    await rig.client.queue('jobs').push([{ data: 'a' }]);
    const [m] = await rig.client.queue('jobs').pop({ consumerGroup: 'workers', leaseMs: 1_000 });
    rig.advance(900);
    const renewed = await rig.client.renewLease(m!, 10_000);
    expect(renewed.id).toBe(m!.leaseId);
    rig.advance(5_000);
    expect(await rig.client.queue('jobs').pop({ consumerGroup: 'workers' })).toEqual([]);
    rig.advance(6_000);
    const err = await rig.client.renewLease(m!, 1_000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QueenHttpError);
    expect(err).toMatchObject({ status: 409, code: 'unknown_lease' });
    expect((err as Error).message).toMatch(/Pop again/);
  });

  it('a long-poll pop answers as soon as a message arrives', async () => {
    const waiting = rig.client.queue('jobs').pop({ consumerGroup: 'workers', wait: true, timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 50));
    await rig.client.queue('jobs').push([{ data: 'late' }]);
    expect((await waiting).map((m) => m.data)).toEqual(['late']);
  });

  it('KV: get, put with a version check, putIfAbsent, incr, delete, prefix listing, TTLs', async () => {
    const kv = rig.client.kv;
    expect(await kv.get('app', 'missing')).toBeNull();
    expect((await kv.put('app', 'config/a', { on: true }, { ttl: '30m' })).entry).toMatchObject({ version: 1, value: { on: true } });
    expect(await kv.put('app', 'config/a', { on: false }, { expectedVersion: 7 })).toMatchObject({ applied: false, entry: { version: 1 } });
    expect(await kv.put('app', 'config/a', { on: false }, { expectedVersion: 1, ttl: 1800 })).toMatchObject({ applied: true, entry: { version: 2 } });
    expect((await kv.putIfAbsent('app', 'config/a', 'no')).applied).toBe(false);
    expect((await kv.incr('app', 'hits', 5)).value).toBe(5);
    expect((await kv.incr('app', 'hits')).value).toBe(6);
    expect((await kv.list('app', 'config/')).map((e) => e.key)).toEqual(['config/a']);
    rig.advance(31 * 60_000);
    expect(await kv.get('app', 'config/a')).toBeNull();
    expect(await kv.delete('app', 'hits')).toEqual({ deleted: true });
    expect(await kv.get('app', 'hits')).toBeNull();
  });

  it('configure creates a queue, then changes its dedup window, lease time and retention', async () => {
    const created = await rig.call('POST', '/api/v1/configure', { queue: 'orders', partitions: 3, options: { leaseTime: 60 } });
    expect(created.status).toBe(201);
    expect(created.body.partitions.map((p: { name: string }) => p.name)).toEqual(['0', '1', '2']);
    const altered = await rig.call('POST', '/api/v1/configure', { queue: 'orders', options: { dedupWindowSeconds: 0, leaseTime: 5, retentionSeconds: -1 } });
    expect(altered.status).toBe(200);
    // Queen says "keep forever" with retentionSeconds 0.
    expect(altered.body).toMatchObject({ configured: true, created: false, queue: 'orders', options: { dedupWindowSeconds: 0, leaseTime: 5, retentionSeconds: 0 } });
    await rig.client.queue('orders').push([{ data: 1 }]);
    const before = Date.now();
    const { lease } = (await rig.call('GET', '/api/v1/pop/queue/orders?consumerGroup=g')).body;
    // The lease runs the queue's leaseTime (5 s) on the core's clock, which started at the test's start.
    expect(lease.deadline).toBeLessThanOrEqual(Date.now() + 5_000);
    expect(lease.deadline).toBeGreaterThan(before - 60_000 + 5_000);
  });

  it('listings: queues with depth, partitions with offsets, consumer groups with lag', async () => {
    await rig.client.queue('jobs').partition('p1').push([{ data: 1 }, { data: 2 }, { data: 3 }]);
    const [m] = await rig.client.queue('jobs').partition('p1').pop({ consumerGroup: 'workers' });
    await rig.client.ack(m!, 'completed');
    const queues = (await rig.call('GET', '/api/v1/resources/queues')).body.queues;
    expect(queues).toEqual([expect.objectContaining({ name: 'jobs', partitions: 2, messages: { total: 3, pending: 3, processing: 0 } })]);
    const jobs = (await rig.call('GET', '/api/v1/resources/queues/jobs')).body;
    expect(jobs.partitions).toContainEqual(expect.objectContaining({ name: 'p1', index: 1, logStartOffset: 0, highWatermark: 3, stats: expect.objectContaining({ total: 3 }) }));
    const groups = (await rig.call('GET', '/api/v1/resources/consumer-groups')).body.consumer_groups;
    expect(groups).toEqual([{ name: 'workers', lag: 2, partitions: [{ queue: 'jobs', partition: 'p1', partition_index: 1, offset: 1, high_watermark: 3, lag: 2 }] }]);
    expect((await rig.call('DELETE', '/api/v1/resources/queues/jobs')).body).toEqual({ deleted: true, queue: 'jobs', existed: true });
    expect((await rig.call('GET', '/api/v1/resources/queues/jobs')).status).toBe(404);
  });

  it('/health answers healthy naming the engine, /ready answers ready, and /metrics is Prometheus text with requests, pushes, pops, acks, depth and lag', async () => {
    expect(await rig.client.health()).toMatchObject({ status: 'healthy', engine: 'memory' });
    expect(await rig.call('GET', '/ready')).toMatchObject({ status: 200, body: { status: 'ready', engine: 'memory', reachable: true } });
    await rig.client.queue('jobs').push([{ transactionId: 't1', data: 1 }, { transactionId: 't1', data: 1 }, { data: 2 }]);
    const [m] = await rig.client.queue('jobs').pop({ consumerGroup: 'workers' });
    await rig.client.ack(m!, 'completed');
    const { status, body } = await rig.call('GET', '/metrics');
    expect(status).toBe(200);
    const text = body as string;
    expect(text).toContain('# TYPE queen_http_requests_total counter');
    expect(text).toContain('queen_http_requests_total{route="/api/v1/push",method="POST",status="201"} 1');
    expect(text).toContain('queen_http_pushed_messages_total{queue="jobs",status="queued"} 2');
    expect(text).toContain('queen_http_pushed_messages_total{queue="jobs",status="duplicate"} 1');
    expect(text).toContain('queen_http_popped_messages_total{queue="jobs"} 1');
    expect(text).toContain('queen_http_acks_total{queue="jobs",status="completed"} 1');
    expect(text).toContain('queen_queue_depth_messages{queue="jobs"} 2');
    expect(text).toContain('queen_consumer_group_lag_messages{group="workers",queue="jobs"} 1');
  });
});

describe('HTTP API: bad input gets a 4xx with a sentence, and nothing is written', () => {
  let rig: HttpRig;
  beforeEach(async () => {
    rig = await memory.open();
    await rig.call('POST', '/api/v1/configure', { queue: 'jobs' });
  });
  afterEach(() => rig.close());

  const depth = async () => (await rig.call('GET', '/api/v1/resources/queues/jobs')).body.totals.total as number;
  const expectSentence = (message: unknown) => {
    expect(typeof message).toBe('string');
    expect(message as string).toMatch(/^[A-Za-z"].*\.$/s);
  };

  it.each([
    ['a missing queue', { items: [{ payload: 1 }] }, /items\[0\] is missing the required field "queue"/],
    ['a misspelt body field', { item: [{ queue: 'jobs', payload: 1 }] }, /missing the required field "items"/],
    ['a queue that is not a string', { items: [{ queue: { name: 'jobs' }, payload: 1 }] }, /items\[0\]\.queue must be string/],
    ['items that is not a list', { items: { queue: 'jobs', payload: 1 } }, /items must be array/],
    ['a bad queue name', { items: [{ queue: 'no spaces', payload: 1 }] }, /may only contain ASCII letters/],
    ['a good item beside a bad one', { items: [{ queue: 'jobs', payload: 1 }, { queue: 'jobs', payload: 2, partition: '' }] }, /partition/],
  ])('push with %s is a 400', async (_what, body, sentence) => {
    const { status, body: answer } = await rig.call('POST', '/api/v1/push', body);
    expect(status).toBe(400);
    expect(answer.message).toMatch(sentence);
    expectSentence(answer.message);
    expect(await depth()).toBe(0);
  });

  it('a bad item beside a push to a queue that does not exist creates nothing and writes nothing', async () => {
    const { status } = await rig.call('POST', '/api/v1/push', { items: [{ queue: 'jobs', payload: 1 }, { queue: 'nope', payload: 2, transactionId: 'x'.repeat(70_000) }] });
    expect(status).toBe(400);
    expect(await depth()).toBe(0);
    expect((await rig.call('GET', '/api/v1/resources/queues/nope')).status).toBe(404);
    // A pop of a queue that does not exist is empty, as Queen's is: its consumers start before the first push.
    expect((await rig.call('GET', '/api/v1/pop/queue/nope?consumerGroup=g')).body).toMatchObject({ messages: [] });
  });

  it('an oversized body is a 413, whatever is in it', async () => {
    const small = await openCore({ engine: 'memory' });
    const { buildHttpApi } = await import('../../src/http/index.js');
    const app = await buildHttpApi({ core: small, bodyLimit: 1024 });
    await small.createQueue({ name: 'jobs', partitions: 1 });
    const r = await app.inject({ method: 'POST', url: '/api/v1/push', payload: { items: [{ queue: 'jobs', payload: 'x'.repeat(2048) }] } });
    expect(r.statusCode).toBe(413);
    expect(r.json()).toMatchObject({ code: 'body_too_large' });
    expectSentence(r.json().message);
    expect((await small.offsets({ partitions: [{ queue: 'jobs', partition: 0 }] })).partitions[0]!.highWatermark).toBe(0);
    await app.close();
    await small.close();
  });

  it('a body that is not JSON is a 400 that says so', async () => {
    const r = await rig.app.inject({ method: 'POST', url: '/api/v1/push', payload: '{"items": [', headers: { 'content-type': 'application/json' } });
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ code: 'invalid_json' });
    expect(await depth()).toBe(0);
  });

  it('a transaction with one bad operation writes none of the good ones', async () => {
    const cases: [object, RegExp][] = [
      [{ type: 'bogus' }, /"bogus" is not an operation/],
      [{ type: 'once', ns: 'steps', key: 'k' }, /needs a ttl/],
      [{ type: 'once', ns: 'steps', key: 'k', ttl: 'a week' }, /is not a duration/],
      [{ type: 'once', ns: 'steps', key: 'k', ttl: '7d', forever: true }, /both ttl and forever/],
      [{ type: 'ack', queue: 'jobs', partition: 'Default', offset: -1, status: 'completed', consumerGroup: 'g' }, /offset must be >= 0/],
      [{ type: 'ack', queue: 'jobs', partition: 'Default', offset: 0, status: 'done', consumerGroup: 'g' }, /must be one of "completed", "success", "failed", "dlq", "retry"/],
    ];
    for (const [bad, sentence] of cases) {
      const { status, body } = await rig.call('POST', '/api/v1/transaction', {
        operations: [{ type: 'push', items: [{ queue: 'jobs', payload: 1 }] }, { type: 'kv.put', ns: 'steps', key: 'written', value: 1 }, bad],
      });
      expect(status, JSON.stringify(bad)).toBe(400);
      expect(body.message).toMatch(sentence);
      expectSentence(body.message);
    }
    expect(await depth()).toBe(0);
    expect(await rig.client.kv.get('steps', 'written')).toBeNull();
  });

  it('unknown routes are 404 and Queen routes not built are 501, each with a sentence', async () => {
    const unknown = await rig.call('GET', '/api/v2/everything');
    expect(unknown.status).toBe(404);
    expectSentence(unknown.body.message);
    const traces = await rig.call('GET', '/api/v1/traces/names');
    expect(traces.status).toBe(501);
    expect(traces.body).toMatchObject({ code: 'not_supported' });
    expect(traces.body.error).toMatch(/message traces\) is not built/);
  });

  it('configure refuses a bad option without creating the queue', async () => {
    const { status, body } = await rig.call('POST', '/api/v1/configure', { queue: 'orders', options: { dedupWindowSeconds: -5 } });
    expect(status).toBe(400);
    expect(body.message).toMatch(/dedupWindowSeconds must be >= 0/);
    expect((await rig.call('GET', '/api/v1/resources/queues/orders')).status).toBe(404);
  });

  it('configure with the empty name answers configured as Queen does, creates nothing, and a push to it is still refused', async () => {
    const before = (await rig.call('GET', '/api/v1/resources/queues')).body.queues.length;
    const { status, body } = await rig.call('POST', '/api/v1/configure', { queue: '', options: { leaseTime: 30 } });
    expect(status).toBe(200);
    expect(body).toMatchObject({ configured: true, created: false, queue: '', queueId: null, partitions: [] });
    expect((await rig.call('GET', '/api/v1/resources/queues')).body.queues).toHaveLength(before);
    expect((await rig.call('POST', '/api/v1/push', { items: [{ queue: '', payload: 1 }] })).status).toBe(400);
  });
});

describe('HTTP API on a socket', () => {
  let server: HttpServer;
  let close: () => Promise<void>;
  beforeEach(async () => {
    const core = await openCore({ engine: 'memory' });
    await core.createQueue({ name: 'jobs', partitions: 1 });
    server = await startHttpServer({ core, port: 0 });
    close = async () => {
      await server.close();
      await core.close();
    };
  });
  afterEach(() => close());

  it('a long-poll whose client goes away is cancelled: it takes no lease, and the next worker gets the message', async () => {
    const client = new QueenClient(server.url);
    const abandoned = new AbortController();
    const poll = client.queue('jobs').pop({ consumerGroup: 'workers', wait: true, timeoutMs: 60_000, signal: abandoned.signal }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    abandoned.abort();
    expect(await poll).toBeInstanceOf(Error);
    // Give the server a moment to see the socket close before the message arrives.
    await new Promise((r) => setTimeout(r, 100));
    await client.queue('jobs').push([{ data: 'for whoever is still there' }]);
    let got: unknown[] = [];
    await waitFor(async () => (got = await client.queue('jobs').pop({ consumerGroup: 'workers' })).length > 0, { what: 'the message reaching the next worker', timeoutMs: 10_000 });
    expect(got).toHaveLength(1);
  });

  it('close() ends a long-poll that is still waiting', async () => {
    const client = new QueenClient(server.url);
    const poll = client.queue('jobs').pop({ consumerGroup: 'workers', wait: true, timeoutMs: 120_000 }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    await server.close();
    await poll;
  });
});

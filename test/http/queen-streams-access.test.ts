/**
 * Queen streams' routes under the gateway's ACLs (issue 32, as
 * ./access.test.ts does for the rest of the HTTP API): registering a query
 * needs READ on its source queue and WRITE on its sink; a cycle READ on the
 * source (and on its consumer group) and WRITE where it pushes; reading state
 * READ on the source. A refusal is 403 naming what is missing, and applies
 * nothing. Real sockets, bearer tokens, ACLs stored in the core.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../src/index.js';
import { waitFor } from '../support/eventually.js';

describe('Queen streams routes under ACLs', () => {
  let dir: string;
  let broker: Broker;
  let url: string;
  const alice = { authorization: 'Bearer alice-token-0123456789', 'content-type': 'application/json' };
  const bob = { authorization: 'Bearer bob-token-0123456789', 'content-type': 'application/json' };
  const post = (path: string, headers: Record<string, string>, body: unknown) => fetch(`${url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'queen-streams-access-'));
    const tokensFile = join(dir, 'tokens.txt');
    writeFileSync(tokensFile, 'admin=admin-token-0123456789\nalice=alice-token-0123456789\nbob=bob-token-0123456789\n');
    broker = await startBroker({
      listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port: 0 }],
      authorization: { enabled: true, superUsers: ['User:admin'] },
      http: { port: 0, auth: { tokensFile } },
    });
    url = broker.httpUrl!;
    const allow = (principal: string, resourceType: 'TOPIC' | 'GROUP', resourceName: string, operation: 'ALL' | 'READ') =>
      ({ resourceType, resourceName, patternType: 'PREFIXED' as const, principal, host: '*', operation, permission: 'ALLOW' as const });
    await broker.core.createAcls({
      bindings: [
        allow('User:alice', 'TOPIC', 'alice-', 'ALL'),
        allow('User:alice', 'GROUP', 'streams.alice', 'READ'),
        allow('User:bob', 'TOPIC', 'bob-', 'ALL'),
        allow('User:bob', 'GROUP', 'streams.bob', 'READ'),
      ],
    });
  });
  afterAll(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  async function refusedFor(response: Response, missing: string): Promise<void> {
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ code: 'forbidden', message: expect.stringContaining(missing) });
  }

  it('lets a principal register a query and run cycles on its own queues only, and says what another one lacks', async () => {
    const source = `alice-src-${Date.now()}`;
    const sink = `alice-sink-${Date.now()}`;
    // The gateway reads ACLs again within its refresh interval.
    await waitFor(async () => (await post('/api/v1/push', alice, { items: [1, 2].map((n) => ({ queue: source, payload: { n } })) })).status === 201, { what: 'alice allowed to push to her queue', timeoutMs: 30_000, intervalMs: 100 });

    await refusedFor(await post('/streams/v1/queries', bob, { name: 'bob-reads-alice', source_queue: source, config_hash: 'h' }), `READ on queue '${source}'`);
    await refusedFor(await post('/streams/v1/queries', alice, { name: 'alice-writes-bob', source_queue: source, sink_queue: 'bob-sink', config_hash: 'h' }), `WRITE on queue 'bob-sink'`);
    const registered = await post('/streams/v1/queries', alice, { name: 'alice-sum', source_queue: source, sink_queue: sink, config_hash: 'h' });
    expect(registered.status).toBe(200);
    const queryId = ((await registered.json()) as { query_id: string }).query_id;

    const popped = await fetch(`${url}/api/v1/pop/queue/${source}?consumerGroup=streams.alice&batch=2&wait=false`, { headers: alice });
    expect(popped.status).toBe(200);
    const messages = ((await popped.json()) as { messages: { transactionId: string; partitionId: string; leaseId: string }[] }).messages;
    expect(messages).toHaveLength(2);
    const last = messages[1]!;
    const cycle = (headers: Record<string, string>, extra: Record<string, unknown>) =>
      post('/streams/v1/cycle', headers, {
        query_id: queryId, partition_id: last.partitionId, consumer_group: 'streams.alice',
        state_ops: [{ type: 'upsert', key: 'w', value: { sum: 3 } }],
        ack: { transactionId: last.transactionId, leaseId: last.leaseId }, ...extra,
      });

    await refusedFor(await cycle(bob, {}), `READ on queue '${source}'`);
    await refusedFor(await cycle(alice, { consumer_group: 'streams.bob' }), `READ on consumer group 'streams.bob'`);
    await refusedFor(await cycle(alice, { push_items: [{ queue: 'bob-out', payload: { sum: 3 } }] }), `WRITE on queue 'bob-out'`);
    await refusedFor(await post('/streams/v1/state/get', bob, { query_id: queryId, partition_id: last.partitionId }), `READ on queue '${source}'`);
    // None of the refused cycles applied anything.
    const before = await post('/streams/v1/state/get', alice, { query_id: queryId, partition_id: last.partitionId });
    expect(before.status).toBe(200);
    expect(((await before.json()) as { rows: unknown[] }).rows).toEqual([]);

    const done = await cycle(alice, { push_items: [{ queue: sink, payload: { sum: 3 } }] });
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({ success: true, state_ops_applied: 1, ack_result: { success: true } });
    const after = await post('/streams/v1/state/get', alice, { query_id: queryId, partition_id: last.partitionId });
    expect(((await after.json()) as { rows: { key: string; value: unknown }[] }).rows.map((r) => [r.key, r.value])).toEqual([['w', { sum: 3 }]]);
  }, 60_000);
});

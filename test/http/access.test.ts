/**
 * The HTTP API behind authentication and the gateway's ACLs (issue 19):
 * bearer tokens from a file and Basic with the SASL/PLAIN users; 401 without
 * or with wrong credentials, 403 naming the missing ACL; a queue is a TOPIC
 * resource, so the ACLs a Kafka client is held to hold here too.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../src/index.js';

describe('HTTP API with authentication and ACLs', () => {
  let dir: string;
  let broker: Broker;
  let url: string;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' });
  const basic = (user: string, password: string) => ({ authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`, 'content-type': 'application/json' });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'queen-http-access-'));
    const tokensFile = join(dir, 'tokens.txt');
    writeFileSync(tokensFile, '# name=token\nadmin=admin-token-0123456789\nalice=alice-token-0123456789\n');
    const usersFile = join(dir, 'users.txt');
    writeFileSync(usersFile, 'bob=bob-secret\n');
    broker = await startBroker({
      listeners: [{ name: 'SASL_PLAINTEXT', host: '127.0.0.1', port: 0 }],
      sasl: { mechanisms: ['PLAIN'], plainUsersFile: usersFile },
      authorization: { enabled: true, superUsers: ['User:admin'] },
      http: { port: 0, auth: { tokensFile, basic: true } },
    });
    url = broker.httpUrl!;
  });
  afterAll(async () => {
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 401 with WWW-Authenticate without credentials or with wrong ones, and leaves /health open', async () => {
    const none = await fetch(`${url}/api/v1/resources/queues`);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/Bearer.*Basic/);
    expect(await none.json()).toMatchObject({ code: 'unauthenticated', message: expect.stringMatching(/Authorization header/) });
    expect((await fetch(`${url}/api/v1/resources/queues`, { headers: bearer('guess') })).status).toBe(401);
    expect((await fetch(`${url}/api/v1/resources/queues`, { headers: basic('bob', 'wrong') })).status).toBe(401);
    expect((await fetch(`${url}/health`)).status).toBe(200);
  });

  it("applies the Kafka ACLs to queues: bob cannot push to, pop from, describe or delete alice's queue", async () => {
    const queue = `alice-q-${Date.now()}`;
    const configure = (headers: Record<string, string>) => fetch(`${url}/api/v1/configure`, { method: 'POST', headers, body: JSON.stringify({ queue }) });
    const push = (headers: Record<string, string>) => fetch(`${url}/api/v1/push`, { method: 'POST', headers, body: JSON.stringify({ items: [{ queue, payload: { n: 1 } }] }) });

    const refused = await configure(bearer('alice-token-0123456789'));
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({ code: 'forbidden', message: expect.stringContaining(`ALTER_CONFIGS on queue '${queue}'`) });
    expect((await configure(bearer('admin-token-0123456789'))).status).toBeLessThan(300);

    await broker.core.createAcls({ bindings: [{ resourceType: 'TOPIC', resourceName: 'alice-', patternType: 'PREFIXED', principal: 'User:alice', host: '*', operation: 'ALL', permission: 'ALLOW' }] });
    // The gateway reads ACLs again within its refresh interval.
    let pushed = 0;
    for (let i = 0; i < 100; i++) {
      pushed = (await push(bearer('alice-token-0123456789'))).status;
      if (pushed !== 403) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(pushed).toBe(201);

    const bob = basic('bob', 'bob-secret');
    expect((await push(bob)).status).toBe(403);
    expect((await fetch(`${url}/api/v1/pop/queue/${queue}?wait=false`, { headers: bob })).status).toBe(403);
    expect((await fetch(`${url}/api/v1/resources/queues/${queue}`, { headers: bob })).status).toBe(403);
    const deleted = await fetch(`${url}/api/v1/resources/queues/${queue}`, { method: 'DELETE', headers: bob });
    expect(deleted.status).toBe(403);
    expect(await deleted.json()).toMatchObject({ message: expect.stringContaining(`DELETE on queue '${queue}'`) });
    expect(await broker.core.describeQueue({ name: queue })).not.toBeNull();

    // alice reads her own queue back.
    const popped = await fetch(`${url}/api/v1/pop/queue/${queue}?wait=false`, { headers: bearer('alice-token-0123456789') });
    expect(popped.status).toBe(200);
    expect(((await popped.json()) as { messages: { data?: unknown; payload?: unknown }[] }).messages).toHaveLength(1);
  }, 30_000);
});

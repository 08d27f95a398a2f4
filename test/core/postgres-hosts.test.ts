/**
 * Following the primary (src/core/engines/postgres/hosts.ts): a URL naming
 * several servers is read as libpq reads it, the router asks the servers in
 * turn and remembers the one that accepts writes, asks again after a fault,
 * and says "unavailable" (retriable) while none does. Against the real
 * PostgreSQL: a URL whose first server is a closed port reaches the second;
 * with a synchronous standby required, a server without one commits nothing
 * and answers unavailable. The failover itself, with pg_auto_failover and
 * real clients, is test/e2e/postgres-failover.test.ts.
 */
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDatabaseUrl, PrimaryRouter, type ServerAddress, type ServerRole } from '../../src/core/engines/postgres/hosts.js';
import pg from 'pg';
import { Connector, Database, DEFAULT_DATABASE_TIMEOUTS } from '../../src/core/engines/postgres/database.js';
import { within } from '../support/eventually.js';
import { findTestDatabase } from '../support/postgres.js';

describe('a PostgreSQL URL naming several servers', () => {
  it('lists every server, defaults the port, and keeps the first for what pg parses', () => {
    const target = parseDatabaseUrl('postgres://u:p%40ss@db1:6432,db2,[::1]:7000/queen?target_session_attrs=read-write&sslmode=disable');
    expect(target.servers).toEqual([
      { host: 'db1', port: 6432 },
      { host: 'db2', port: 5432 },
      { host: '::1', port: 7000 },
    ]);
    expect(target.followPrimary).toBe(true);
    expect(target.baseUrl).toBe('postgres://u:p%40ss@db1:6432/queen?sslmode=disable');
  });

  it('follows the primary with several servers or target_session_attrs=read-write, and not for one plain server', () => {
    expect(parseDatabaseUrl('postgres://u@a:1,b:2/db').followPrimary).toBe(true);
    expect(parseDatabaseUrl('postgresql://u@a:1/db?target_session_attrs=read-write').followPrimary).toBe(true);
    const plain = parseDatabaseUrl('postgres://u:p@a:1/db');
    expect(plain.followPrimary).toBe(false);
    expect(plain.baseUrl).toBe('postgres://u:p@a:1/db');
  });

  it('refuses what the core cannot use, in a sentence that says what to write', () => {
    expect(() => parseDatabaseUrl('postgres://u@a,b/db?target_session_attrs=standby')).toThrow(/target_session_attrs=standby cannot serve the core, which writes; use read-write/);
    expect(() => parseDatabaseUrl('postgres://u:secret@a:1,b:99999/db')).toThrow(/port 99999.*u:\*\*\*@/);
    expect(() => parseDatabaseUrl('postgres://u@a:1,,b:2/db')).toThrow(/not host or host:port/);
  });
});

describe('the primary router', () => {
  const servers: ServerAddress[] = [
    { host: 'a', port: 1 },
    { host: 'b', port: 2 },
    { host: 'c', port: 3 },
  ];
  /** A probe over a table of answers, counting its calls. */
  function probeOf(roles: Record<string, ServerRole | 'down'>): { probe: (s: ServerAddress) => Promise<ServerRole>; asked: string[] } {
    const asked: string[] = [];
    return {
      asked,
      probe: async (s) => {
        asked.push(s.host);
        await new Promise((resolve) => setTimeout(resolve, 5));
        const role = roles[s.host]!;
        if (role === 'down') throw new Error(`connect ECONNREFUSED ${s.host}:${s.port}`);
        return role;
      },
    };
  }

  it('asks the servers in turn, skips the down and the standbys, and remembers the primary', async () => {
    const { probe, asked } = probeOf({ a: 'down', b: 'standby', c: 'primary' });
    const router = new PrimaryRouter(servers, probe);
    expect(await router.primary()).toEqual({ host: 'c', port: 3 });
    expect(await router.primary()).toEqual({ host: 'c', port: 3 });
    expect(asked).toEqual(['a', 'b', 'c']);
  });

  it('runs one search for many waiting connections', async () => {
    const { probe, asked } = probeOf({ a: 'standby', b: 'primary', c: 'standby' });
    const router = new PrimaryRouter(servers, probe);
    const found = await Promise.all(Array.from({ length: 20 }, () => router.primary()));
    expect(new Set(found.map((s) => s.host))).toEqual(new Set(['b']));
    expect(asked).toEqual(['a', 'b']);
  });

  it('asks again after a fault, and finds the new primary', async () => {
    const roles: Record<string, ServerRole | 'down'> = { a: 'primary', b: 'standby', c: 'standby' };
    const { probe } = probeOf(roles);
    const router = new PrimaryRouter(servers, probe);
    expect((await router.primary()).host).toBe('a');
    roles['a'] = 'down';
    roles['c'] = 'primary';
    router.forget({ host: 'b', port: 2 });
    expect((await router.primary()).host, 'forgetting another server keeps the primary').toBe('a');
    router.forget({ host: 'a', port: 1 });
    expect((await router.primary()).host).toBe('c');
  });

  it('answers unavailable, naming what each server said, while none accepts writes', async () => {
    const { probe } = probeOf({ a: 'down', b: 'standby', c: 'standby' });
    const router = new PrimaryRouter(servers, probe);
    const error = await router.primary().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'unavailable' });
    expect((error as Error).message).toMatch(/No PostgreSQL server accepts writes now \(a:1: connect ECONNREFUSED a:1; b:2 is a standby or read-only; c:3 is a standby or read-only\); a failover may be under way: retry in a moment\./);
  });
});

const lookup = await findTestDatabase();

describe.skipIf(lookup.database === null)(`the routed engine connection against real PostgreSQL${lookup.skipReason ? ` (skipped: ${lookup.skipReason})` : ''}`, () => {
  const database = lookup.database!;
  afterAll(() => database.release());

  async function closedPort(): Promise<number> {
    return new Promise((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const port = (server.address() as { port: number }).port;
        server.close(() => resolve(port));
      });
    });
  }

  /** The test server's URL with a closed port named first. */
  async function twoServerUrl(): Promise<string> {
    const u = new URL(database.url);
    return database.url.replace(`@${u.host}`, `@127.0.0.1:${await closedPort()},${u.hostname}:${u.port || '5432'}`);
  }

  function open(url: string, requireSyncStandby: boolean, schema: string): Database {
    return new Database({ url, schema, poolSize: 2, applicationName: 'hosts-test', timeouts: DEFAULT_DATABASE_TIMEOUTS, requireSyncStandby });
  }

  it('passes over a server that refuses and works on the one that accepts writes', { timeout: 60_000 }, async () => {
    const db = open(await twoServerUrl(), false, database.freshSchema('hosts'));
    try {
      const rows = await db.transaction(async (_tx, client) => (await client.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby')).rows);
      expect(rows).toEqual([{ standby: false }]);
      expect(db.connector.router?.servers).toHaveLength(2);
    } finally {
      await db.close();
    }
  });

  it('with a synchronous standby required, a server without one commits nothing and answers unavailable', { timeout: 60_000 }, async () => {
    const schema = database.freshSchema('hosts_sync');
    const db = open(await twoServerUrl(), true, schema);
    const plain = open(database.url, false, schema);
    try {
      await plain.transaction(async (_tx, client) => void (await client.query(`CREATE SCHEMA "${schema}"`)));
      const error = await db.transaction(async (_tx, client) => void (await client.query(`CREATE TABLE "${schema}".written (n int)`))).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: 'unavailable' });
      expect((error as Error).message).toMatch(/does not wait for a synchronous standby/);
      const tables = await plain.transaction(async (_tx, client) => (await client.query('SELECT 1 FROM pg_tables WHERE schemaname = $1', [schema])).rows);
      expect(tables, 'the transaction was rolled back, not committed').toEqual([]);
    } finally {
      await db.close();
      await plain.close();
    }
  });

  it('a routed connection the server ends while no query runs (a demoted primary restarting) fails its next query instead of ending the process', { timeout: 60_000 }, async () => {
    const connector = new Connector(`${database.url}${database.url.includes('?') ? '&' : '?'}target_session_attrs=read-write`, DEFAULT_DATABASE_TIMEOUTS);
    const { Client, ...config } = connector.poolConfig({ applicationName: 'hosts-test-ended' }, 1);
    const client = new Client(config);
    await client.connect();
    const ended = new Promise((resolve) => client.once('end', resolve));
    const [{ pid }] = (await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      // What a restarting server sends each session: FATAL 57P01, "terminating connection due to administrator command".
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    } finally {
      await admin.end();
    }
    await within(ended, 20_000, 'the terminated connection to end');
    await expect(client.query('SELECT 1')).rejects.toThrow();
  });
});

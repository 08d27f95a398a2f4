/**
 * Finds a PostgreSQL server for the tests, in this order:
 *
 *   1. DATABASE_URL, when set (a failure to reach it is an error, not a skip:
 *      someone asked for that server);
 *   2. the local server with the role and database that `npm test`
 *      (scripts/test.sh) creates, postgres://queen_test:queen_test@127.0.0.1:5432/queen_test;
 *   3. a throwaway cluster started from the installed binaries (initdb,
 *      pg_ctl) in a temp dir on a free port, stopped by `release()`;
 *   4. none: `skipReason` says why, and the suites report themselves skipped.
 *
 * Each test run isolates itself with uniquely named schemas (`freshSchema`)
 * that `release()` drops, so runs and parallel files never collide.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, chmod } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

const run = promisify(execFile);

export const LOCAL_TEST_URL = 'postgres://queen_test:queen_test@127.0.0.1:5432/queen_test';
const BINARY_DIRS = ['', '/usr/lib/postgresql/16/bin/', '/usr/lib/postgresql/15/bin/'];

export interface TestDatabase {
  url: string;
  /** Where the server came from, for the suite's title. */
  source: 'DATABASE_URL' | 'local' | 'throwaway';
  /** A new, empty schema name unique to this run; dropped by release(). */
  freshSchema(prefix?: string): string;
  /** Drops the schemas handed out and stops a throwaway cluster. */
  release(): Promise<void>;
}

export type TestDatabaseLookup = { database: TestDatabase; skipReason: null } | { database: null; skipReason: string };

export async function findTestDatabase(): Promise<TestDatabaseLookup> {
  const explicit = process.env['DATABASE_URL'];
  if (explicit) {
    const problem = await probe(explicit);
    if (problem) throw new Error(`DATABASE_URL is set but its server cannot be used: ${problem}`);
    return { database: testDatabase(explicit, 'DATABASE_URL', null), skipReason: null };
  }

  const localProblem = await probeOrCreate(LOCAL_TEST_URL);
  if (!localProblem) return { database: testDatabase(LOCAL_TEST_URL, 'local', null), skipReason: null };

  const cluster = await startThrowawayCluster().catch((e: Error) => e);
  if (!(cluster instanceof Error)) {
    return { database: testDatabase(cluster.url, 'throwaway', cluster.stop), skipReason: null };
  }
  return {
    database: null,
    skipReason:
      `no PostgreSQL: DATABASE_URL is unset, ${LOCAL_TEST_URL} answered "${localProblem}", ` +
      `and a throwaway cluster could not start (${cluster.message})`,
  };
}

function testDatabase(url: string, source: TestDatabase['source'], stop: (() => Promise<void>) | null): TestDatabase {
  const schemas: string[] = [];
  const runTag = `${process.pid.toString(36)}_${randomBytes(3).toString('hex')}`;
  return {
    url,
    source,
    freshSchema(prefix = 'queen_test') {
      const name = `${prefix}_${runTag}_${schemas.length}`;
      schemas.push(name);
      return name;
    },
    async release() {
      if (schemas.length > 0) {
        const sql = postgres(url, { max: 1, onnotice: () => {} });
        try {
          for (const schema of schemas.splice(0)) await sql.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        } finally {
          await sql.end({ timeout: 5 });
        }
      }
      if (stop) await stop();
    },
  };
}

/** Null when the server answers, else why not. */
async function probe(url: string): Promise<string | null> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return null;
  } catch (e) {
    return describeError(e);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/** Like probe, but creates the database when the server says it does not exist. */
async function probeOrCreate(url: string): Promise<string | null> {
  const problem = await probe(url);
  if (problem === null || !problem.includes('3D000')) return problem;
  const target = new URL(url);
  const database = target.pathname.slice(1);
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const sql = postgres(admin.toString(), { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql.unsafe(`CREATE DATABASE "${database}"`);
  } catch (e) {
    // Another test file may have created it a moment ago.
    if ((e as { code?: string }).code !== '42P04') return describeError(e);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
  return probe(url);
}

function describeError(e: unknown): string {
  const err = e as { code?: string; message?: string };
  return `${err.code ? `${err.code} ` : ''}${err.message ?? String(e)}`;
}

function findBinary(name: string): string | null {
  for (const dir of BINARY_DIRS) {
    if (dir === '') {
      for (const p of (process.env['PATH'] ?? '').split(':')) {
        if (p && existsSync(join(p, name))) return join(p, name);
      }
    } else if (existsSync(dir + name)) {
      return dir + name;
    }
  }
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/**
 * initdb refuses to run as root, and CI runs as root: there the cluster is
 * created and started as the `postgres` user through runuser.
 */
export interface ThrowawayCluster {
  url: string;
  port: number;
  /** Stops the server for good and removes its files. */
  stop: () => Promise<void>;
  /** Fault tests: shuts the server down (fast mode: clients are disconnected), keeping its data. */
  halt: () => Promise<void>;
  /** Fault tests: starts a halted server again on the same port and data. */
  restart: () => Promise<void>;
  /** Fault tests: SIGSTOPs the postmaster and every backend, so connections stay open and nothing answers. */
  freeze: () => Promise<void>;
  /** Undoes freeze (SIGCONT). */
  thaw: () => Promise<void>;
}

/** The postmaster's pid, from postmaster.pid. */
async function postmasterPid(dataDir: string): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  return Number((await readFile(join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

/** The pids whose parent is `parent` (backends and background workers of a postmaster), from /proc. */
async function childrenOf(parent: number): Promise<number[]> {
  const { readFile, readdir } = await import('node:fs/promises');
  const children: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // Field 4 (after the parenthesised command name) is the parent pid.
    if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === parent) children.push(Number(entry));
  }
  return children;
}

export async function startThrowawayCluster(): Promise<ThrowawayCluster> {
  const initdb = findBinary('initdb');
  const pgCtl = findBinary('pg_ctl');
  if (!initdb || !pgCtl) throw new Error('initdb or pg_ctl is not installed');

  const asRoot = process.getuid?.() === 0;
  const runuser = asRoot ? findBinary('runuser') ?? '/usr/sbin/runuser' : null;
  const exec = (file: string, args: string[]) =>
    runuser ? run(runuser, ['-u', 'postgres', '--', file, ...args]) : run(file, args);

  const dir = await mkdtemp(join(tmpdir(), 'queen-pg-'));
  if (asRoot) {
    await chmod(dir, 0o777);
    await run('chown', ['postgres', dir]);
  }
  const dataDir = join(dir, 'data');
  const port = await freePort();
  const user = asRoot ? 'postgres' : (process.env['USER'] ?? 'postgres');
  await exec(initdb, ['-D', dataDir, '-U', user, '-A', 'trust', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  await exec(pgCtl, ['-D', dataDir, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
  const url = `postgres://${user}@127.0.0.1:${port}/postgres`;
  let frozen: number[] = [];
  const signal = (pids: number[], sig: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, sig);
      } catch {
        // Gone already.
      }
    }
  };
  return {
    url,
    port,
    stop: async () => {
      signal(frozen, 'SIGCONT');
      await exec(pgCtl, ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
    halt: async () => {
      await exec(pgCtl, ['-D', dataDir, '-m', 'fast', '-w', '-t', '30', 'stop']);
    },
    restart: async () => {
      await exec(pgCtl, ['-D', dataDir, '-o', options, '-l', join(dir, 'log'), '-w', '-t', '30', 'start']);
    },
    freeze: async () => {
      // The postmaster first, so it forks no backend while its children are listed; then every
      // child, listed again until a pass finds none new (one forked just before the stop shows
      // up late, and left running it would answer its connection all through the freeze).
      const postmaster = await postmasterPid(dataDir);
      frozen = [postmaster];
      signal(frozen, 'SIGSTOP');
      for (;;) {
        const fresh = (await childrenOf(postmaster)).filter((pid) => !frozen.includes(pid));
        if (fresh.length === 0) break;
        signal(fresh, 'SIGSTOP');
        frozen.push(...fresh);
      }
    },
    thaw: async () => {
      signal(frozen, 'SIGCONT');
      frozen = [];
    },
  };
}

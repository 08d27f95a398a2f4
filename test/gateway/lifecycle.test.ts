/**
 * A gateway process's life, run as users run it: `npm start` stopped by
 * SIGTERM to npm; a gateway whose stdout reader has gone still stopping on
 * SIGTERM; an HTTP long-poll in flight answered before the process exits;
 * /health (live) and /ready (serving) naming the engine; and a gateway
 * started before its PostgreSQL answers, waiting for it (logged) and serving
 * once it does, or giving up with a sentence after --database-wait-ms.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startChaosProxy, type ChaosProxy } from '../support/chaos-proxy.js';
import { waitFor, within } from '../support/eventually.js';
import { freePort } from '../support/gateway.js';
import { findTestDatabase } from '../support/postgres.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/queen-gateway.js', import.meta.url));

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function start(command: string, args: string[], env: NodeJS.ProcessEnv = {}): Running {
  const child = spawn(command, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

function gateway(args: string[], env: NodeJS.ProcessEnv = {}): Running {
  return start(process.execPath, [BIN, 'serve', ...args], env);
}

async function ready(run: Running, what: string): Promise<void> {
  await waitFor(() => run.stdout().includes('"ready: point bootstrap.servers') || run.child.exitCode !== null, { what, timeoutMs: 90_000, describe: () => run.stderr() + run.stdout().slice(-2000) });
  if (run.child.exitCode !== null) throw new Error(`it exited with ${run.child.exitCode}: ${run.stderr()}`);
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const started: Running[] = [];
afterAll(() => {
  for (const run of started) if (run.child.exitCode === null) run.child.kill('SIGKILL');
});

describe('stopping', () => {
  it('npm start: SIGTERM to npm stops the gateway, its ports close and no process remains', async () => {
    const [port, httpPort] = [await freePort(), await freePort()];
    const npm = start('npm', ['start', '--', '--port', String(port), '--http-port', String(httpPort)]);
    started.push(npm);
    await ready(npm, 'the gateway under npm start to be ready');
    const children = readFileSync(`/proc/${npm.child.pid}/task/${npm.child.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
    expect(children, 'npm runs the gateway itself, not a shell that runs it').toHaveLength(1);
    const [gatewayPid] = children as [number];
    expect(readFileSync(`/proc/${gatewayPid}/cmdline`, 'utf8')).toContain('queen-gateway.js');
    npm.child.kill('SIGTERM');
    await within(npm.exited, 30_000, 'npm to exit after SIGTERM');
    await waitFor(() => !alive(gatewayPid), { what: `the gateway (pid ${gatewayPid}) to exit after SIGTERM to npm`, timeoutMs: 30_000 });
    expect(await accepts(port), 'the Kafka port is closed').toBe(false);
    expect(await accepts(httpPort), 'the HTTP port is closed').toBe(false);
  }, 120_000);

  it('a gateway whose stdout reader has gone still stops on SIGTERM', async () => {
    const run = gateway(['--port', '0', '--http-port', '0', '--log-level', 'debug']);
    started.push(run);
    await ready(run, 'the gateway to be ready');
    run.child.stdout!.destroy(); // the reader of its logs is gone: every log line now meets EPIPE
    run.child.kill('SIGTERM');
    expect(await within(run.exited, 30_000, 'the gateway with a closed stdout to exit after SIGTERM')).toBe(0);
  }, 120_000);

  it('answers an HTTP long-poll in flight before it exits, within the shutdown grace', async () => {
    const httpPort = await freePort();
    const run = gateway(['--port', '0', '--http-port', String(httpPort), '--http-max-in-flight', '1', '--shutdown-grace-ms', '20000']);
    started.push(run);
    await ready(run, 'the gateway to be ready');
    const base = `http://127.0.0.1:${httpPort}`;
    const since = Date.now();
    const poll = fetch(`${base}/api/v1/pop/queue/jobs?wait=true&timeout=120000`).then(async (r) => ({ status: r.status, retryAfter: r.headers.get('retry-after'), body: await r.text(), at: Date.now() }));
    // With one request allowed at the core, the long-poll holding it makes any other counted request 429.
    await waitFor(async () => (await fetch(`${base}/api/v1/resources/queues`)).status === 429, { what: 'the long-poll to hold the only request slot' });
    const signalled = Date.now();
    run.child.kill('SIGTERM');
    const answer = await within(poll, 30_000, 'the long-poll to be answered after SIGTERM');
    expect(answer.status === 200 || answer.status === 204 || (answer.status === 503 && answer.retryAfter !== null), `answered ${answer.status} ${answer.body}`).toBe(true);
    expect(answer.body).not.toContain('"payload"');
    expect(answer.at - signalled, 'answered at once, not at the end of its 120 s wait').toBeLessThan(20_000);
    expect(await within(run.exited, 30_000, 'the gateway to exit after answering the long-poll')).toBe(0);
    expect(Date.now() - since).toBeLessThan(120_000);
  }, 120_000);
});

describe('/health and /ready', () => {
  it('say the process lives and serves, name the memory engine, and report the listeners', async () => {
    const httpPort = await freePort();
    const run = gateway(['--port', '0', '--http-port', String(httpPort)]);
    started.push(run);
    await ready(run, 'the gateway to be ready');
    const health = await fetch(`http://127.0.0.1:${httpPort}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: 'healthy', engine: 'memory', server: 'queen-gateway', store: { answering: true, lastAnsweredAt: null, message: null } });
    const readiness = await fetch(`http://127.0.0.1:${httpPort}/ready`);
    expect(readiness.status).toBe(200);
    expect(await readiness.json()).toEqual({ status: 'ready', engine: 'memory', reachable: true, listeners: { kafka: true, http: true }, server: 'queen-gateway' });
    run.child.kill('SIGTERM');
    expect(await within(run.exited, 30_000, 'the gateway to exit')).toBe(0);
  }, 120_000);
});

const found = await findTestDatabase();

describe.skipIf(found.database === null)(`waiting for PostgreSQL at start${found.skipReason ? `: ${found.skipReason}` : ''}`, () => {
  const proxies: ChaosProxy[] = [];
  afterAll(async () => {
    for (const proxy of proxies) await proxy.close();
    await found.database?.release();
  });

  /** A URL of the test database whose server is reached through a proxy that refuses connections until told where to forward. */
  async function lateDatabase(): Promise<{ url: string; /** ":password@" */ password: string; open: () => void; proxy: ChaosProxy }> {
    const real = new URL(found.database!.url);
    const proxy = await startChaosProxy();
    proxies.push(proxy);
    const url = new URL(real);
    url.host = `127.0.0.1:${proxy.port}`;
    // The credentials as the URL carries them: the test database's password may equal its name, which is printed.
    return { url: url.toString(), password: `:${real.password}@`, proxy, open: () => proxy.forwardTo(Number(real.port || 5432), real.hostname) };
  }

  it('starts before the database answers, logs each attempt, and serves once it does', async () => {
    const db = await lateDatabase();
    const httpPort = await freePort();
    const run = gateway(['--port', '0', '--http-port', String(httpPort), '--engine', 'postgres', '--database-url', db.url, '--database-schema', found.database!.freshSchema('queen_wait'), '--database-wait-ms', '120000']);
    started.push(run);
    await waitFor(() => run.stdout().split('\n').filter((l) => l.includes('the database does not answer yet')).length >= 2 || run.child.exitCode !== null, {
      what: 'two logged attempts at a database that does not answer yet',
      timeoutMs: 60_000,
      describe: () => run.stderr() + run.stdout().slice(-2000),
    });
    expect(run.child.exitCode, run.stderr()).toBeNull();
    expect(await accepts(httpPort), 'nothing listens while the database is awaited').toBe(false);
    db.open();
    await ready(run, 'the gateway to be ready once PostgreSQL answers');
    const readiness = await fetch(`http://127.0.0.1:${httpPort}/ready`);
    expect(readiness.status).toBe(200);
    expect(await readiness.json()).toMatchObject({ status: 'ready', engine: 'postgres', reachable: true });
    expect(run.stdout()).not.toContain(db.password);
    run.child.kill('SIGTERM');
    expect(await within(run.exited, 30_000, 'the gateway to exit')).toBe(0);
  }, 180_000);

  it('gives up with one sentence after --database-wait-ms, exit code 1, the password never printed', async () => {
    const db = await lateDatabase();
    const run = gateway(['--port', '0', '--no-http', '--engine', 'postgres', '--database-url', db.url, '--database-wait-ms', '2000']);
    started.push(run);
    expect(await within(run.exited, 60_000, 'the gateway to give up waiting')).toBe(1);
    const lines = run.stderr().trim().split('\n');
    expect(lines, run.stderr()).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^The gateway could not start: Waited 2000 ms for the database \\(--database-wait-ms\\) and it still does not answer: PostgreSQL at 127\\.0\\.0\\.1:${db.proxy.port} .*\\.$`));
    expect(run.stderr() + run.stdout()).not.toContain(db.password);
  }, 120_000);
});

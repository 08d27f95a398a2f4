import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { waitFor } from './eventually.js';
import { freePort } from './gateway.js';

/**
 * A Redis of the test's own on loopback and a free port, persistence off, so
 * a test can stop it and start it again on the same port (the cluster's
 * fault scenarios). Skipped with a reason when redis-server is not installed.
 */

export interface TestRedis {
  url: string;
  port: number;
  /** Stops the server (SIGKILL: nothing to flush, persistence is off) and waits until it is gone. */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty. */
  start(): Promise<void>;
  readonly running: boolean;
  /** The server's process id while it runs (a fault campaign pauses it with SIGSTOP). */
  readonly pid: number | undefined;
}

export function redisServerMissing(): string | null {
  const found = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  return found.error ? 'redis-server is not installed (apt-get install redis-server)' : null;
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.setEncoding('utf8');
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (reply: string) => {
      socket.destroy();
      resolve(reply.startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}

export async function startRedis(): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const start = async () => {
    const spawned = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--loglevel', 'warning'], { stdio: 'ignore' });
    child = spawned;
    exited = new Promise((resolve) => spawned.once('exit', () => resolve()));
    await waitFor(() => answers(port), { what: `redis-server to answer on 127.0.0.1:${port}`, timeoutMs: 10_000, intervalMs: 25 });
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get running() {
      const c = child as ChildProcess | null;
      return c !== null && c.exitCode === null && c.signalCode === null;
    },
    get pid() {
      return (child as ChildProcess | null)?.pid;
    },
    async stop() {
      const c = child as ChildProcess | null;
      if (c && c.exitCode === null && c.signalCode === null) {
        c.kill('SIGKILL');
        await exited;
      }
      child = null;
    },
    start,
  };
}

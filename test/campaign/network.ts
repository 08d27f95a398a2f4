/**
 * A link the fault campaign can cut and slow: a network namespace of its own
 * on this machine with one veth pair to the root namespace (10.231.N.1 on
 * the host side, 10.231.N.2 inside; addresses of this namespace only), and
 * the campaign's Redis run inside it, bound to 10.231.N.2. Every core and
 * gateway reaches Redis over the veth, so
 *
 * - `cut()` sets the host end down: packets are dropped both ways, open TCP
 *   connections stall (no reset) until `heal()` sets it up again, as in a
 *   switch failure;
 * - `slow()` puts a token bucket (tc tbf, 256 kbit/s, 400 ms of queue) on
 *   both ends: requests crawl and queue up. This kernel has no netem qdisc
 *   (`tc qdisc add ... netem` answers "Specified qdisc kind is unknown"), so
 *   fixed delay and random loss are not available; tbf's queueing delay and
 *   the cut stand in for them.
 *
 * Needs root (ip netns); `networkFaultsMissing()` says why not otherwise,
 * and the campaign then runs its Redis on loopback without link faults.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { waitFor } from '../support/eventually.js';
import type { TestRedis } from '../support/redis.js';

export interface RedisLink {
  redis: TestRedis;
  /** Drops every packet between Redis and the rest until heal(). */
  cut(): void;
  /** Throttles the link (tbf) until heal(). */
  slow(): void;
  heal(): void;
  /** Stops Redis and removes the namespace and its veth pair. */
  remove(): Promise<void>;
}

function ip(...args: string[]): void {
  const run = spawnSync('ip', args, { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`ip ${args.join(' ')} failed: ${run.stderr.trim() || run.error?.message}`);
}

function tc(...args: string[]): void {
  spawnSync('tc', args, { encoding: 'utf8' });
}

/** Why network faults cannot run here, or null when they can (a namespace is made and removed to find out). */
export function networkFaultsMissing(): string | null {
  if (process.getuid?.() !== 0) return 'network faults need root (ip netns)';
  const probe = `qcmp-probe-${process.pid}`;
  const made = spawnSync('ip', ['netns', 'add', probe], { encoding: 'utf8' });
  if (made.status !== 0) return `ip netns add failed: ${made.stderr.trim() || made.error?.message}`;
  spawnSync('ip', ['netns', 'del', probe]);
  return null;
}

function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, host);
    socket.setEncoding('utf8');
    socket.setTimeout(2_000, () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (reply: string) => {
      socket.destroy();
      resolve(reply.startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}

/** Makes namespace number `n` (1-250) with its veth pair and starts Redis in it on `port`. */
export async function startRedisBehindLink(n: number, port: number): Promise<RedisLink> {
  const ns = `qcmp-${n}`;
  const host = `qc${n}h`;
  const inside = `qc${n}n`;
  const hostAddress = `10.231.${n}.1`;
  const address = `10.231.${n}.2`;
  spawnSync('ip', ['netns', 'del', ns]); // a namespace left by a killed run
  spawnSync('ip', ['link', 'del', host]);
  ip('netns', 'add', ns);
  ip('link', 'add', host, 'type', 'veth', 'peer', 'name', inside);
  ip('link', 'set', inside, 'netns', ns);
  ip('addr', 'add', `${hostAddress}/30`, 'dev', host);
  ip('link', 'set', host, 'up');
  ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${address}/30`, 'dev', inside);
  ip('netns', 'exec', ns, 'ip', 'link', 'set', inside, 'up');
  ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');

  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const alive = () => child !== null && child.exitCode === null && child.signalCode === null;
  const start = async () => {
    // `ip netns exec` enters the namespace and execs redis-server: the child's pid is Redis's own.
    const spawned = spawn('ip', ['netns', 'exec', ns, 'redis-server', '--port', String(port), '--bind', address, '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--loglevel', 'warning'], { stdio: 'ignore' });
    child = spawned;
    exited = new Promise((resolve) => spawned.once('exit', () => resolve()));
    await waitFor(() => answers(address, port), { what: `redis-server to answer on ${address}:${port} in namespace ${ns}`, timeoutMs: 15_000, intervalMs: 50 });
  };
  const stop = async () => {
    if (alive()) {
      child!.kill('SIGCONT');
      child!.kill('SIGKILL');
      await exited;
    }
    child = null;
  };
  const heal = () => {
    tc('qdisc', 'del', 'dev', host, 'root');
    spawnSync('ip', ['netns', 'exec', ns, 'tc', 'qdisc', 'del', 'dev', inside, 'root']);
    ip('link', 'set', host, 'up');
  };
  await start();
  const redis: TestRedis = {
    url: `redis://${address}:${port}`,
    port,
    get running() {
      return alive();
    },
    get pid() {
      return child?.pid;
    },
    stop,
    start,
  };
  return {
    redis,
    cut: () => ip('link', 'set', host, 'down'),
    slow: () => {
      const bucket = ['root', 'tbf', 'rate', '256kbit', 'burst', '16kbit', 'latency', '400ms'];
      tc('qdisc', 'replace', 'dev', host, ...bucket);
      spawnSync('ip', ['netns', 'exec', ns, 'tc', 'qdisc', 'replace', 'dev', inside, ...bucket]);
    },
    heal,
    async remove() {
      await stop();
      spawnSync('ip', ['netns', 'del', ns]);
      spawnSync('ip', ['link', 'del', host]);
    },
  };
}

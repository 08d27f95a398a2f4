/**
 * A cluster on loopback, every part a real process: a Redis of its own
 * (./redis.ts, so a test can stop and restart it), cores
 * (`queen-gateway core`, PostgreSQL engine, one schema between them) and
 * gateways (`queen-gateway gateway --core ... --redis-url ...`), each on a
 * free port it keeps across restarts, so its derived node id and address
 * stay the same, as a restarted server's would.
 *
 * `gatewayCores[i]` names the core gateway i uses. Every process can be
 * SIGKILLed, stopped (SIGTERM, graceful) and started again.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ApiKey } from '../../protocol/api-keys.js';
import { RawConnection } from './raw-connection.js';
import { waitFor } from './eventually.js';
import { freePort, LogCapture } from './gateway.js';
import { startRedis, type TestRedis } from './redis.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
const SECRET = 'cluster-rig-rpc-secret';

export interface RigProcess {
  name: string;
  logs: LogCapture;
  readonly pid: number | undefined;
  readonly running: boolean;
  /** SIGKILL, and wait until it is gone. */
  kill(): Promise<void>;
  /** SIGTERM (graceful shutdown), and wait until it is gone. */
  stop(): Promise<void>;
  /** Starts it again with the same flags and port; resolves once it says it is ready. */
  start(): Promise<void>;
}

export interface RigGateway extends RigProcess {
  port: number;
  bootstrap: string;
  core: number;
  /** Queen's HTTP API of this gateway ("http://127.0.0.1:port"), when the rig was asked for it. */
  httpUrl: string | null;
}

export interface ClusterRig {
  redis: TestRedis;
  cores: RigProcess[];
  gateways: RigGateway[];
  /** Every gateway, comma-separated, for bootstrap.servers. */
  bootstrap: string;
  /** Each process's state and last log lines, for a failure message. */
  describe(lines?: number): string;
  /**
   * Resolves once every running gateway's Metadata lists every running
   * gateway. Until then two gateways can answer with different lists (each
   * reads the registry on its heartbeat), and librdkafka drops the handle of
   * a broker one answer leaves out, failing a request in flight to it
   * ("Broker handle destroyed"): a load starts on an agreed cluster.
   */
  converged(): Promise<void>;
  stop(): Promise<void>;
}

/** The ports of the gateways a Metadata request through `port` lists, sorted. */
export async function listedPorts(port: number): Promise<number[]> {
  const raw = await RawConnection.open(port);
  const answer = await raw.request(ApiKey.Metadata, 12, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false }).finally(() => raw.destroy());
  return (answer.brokers as { port: number }[]).map((b) => b.port).sort((a, b) => a - b);
}

export interface ClusterRigOptions {
  database: { url: string; schema: string };
  /** The core of each gateway, by index into the cores; default [0, 1, 0] over two cores. */
  gatewayCores?: number[];
  cores?: number;
  /** How long a killed gateway stays listed; short, so tests see it go quickly. */
  nodeTtlMs?: number;
  defaultPartitions?: number;
  /** Serve Queen's HTTP API on every gateway too (a free port each); default off. */
  http?: boolean;
  /** A Redis the caller started (the fault campaign's, in a network namespace); default one of the rig's own. */
  redis?: TestRedis;
}

function rigProcess(name: string, args: () => string[], ready: string): RigProcess {
  const logs = new LogCapture();
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();
  const alive = () => child !== null && child.exitCode === null && child.signalCode === null;
  const end = async (signal: NodeJS.Signals) => {
    if (!alive()) return;
    child!.kill(signal);
    const forced = setTimeout(() => child?.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(forced);
  };
  return {
    name,
    logs,
    get pid() {
      return child?.pid;
    },
    get running() {
      return alive();
    },
    kill: () => end('SIGKILL'),
    stop: () => end('SIGTERM'),
    async start() {
      const readyBefore = logs.matching(ready).length;
      const spawned = spawn(process.execPath, ['--import', 'tsx', CLI, ...args()], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NODE_ENV: 'test', QUEEN_RPC_SECRET: SECRET },
      });
      child = spawned;
      spawned.stdout!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
      spawned.stderr!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
      exited = new Promise((resolve) => spawned.once('exit', () => resolve()));
      await waitFor(() => logs.matching(ready).length > readyBefore || spawned.exitCode !== null, {
        what: `${name} to be ready`,
        timeoutMs: 180_000, // a core migrating a replicated store on a busy machine takes minutes
        intervalMs: 50,
        describe: () => logs.tail(),
      });
      if (spawned.exitCode !== null) throw new Error(`${name} exited with ${spawned.exitCode} before it was ready:\n${logs.tail()}`);
    },
  };
}

export async function startClusterRig(options: ClusterRigOptions): Promise<ClusterRig> {
  const gatewayCores = options.gatewayCores ?? [0, 1, 0];
  const coreCount = options.cores ?? Math.max(...gatewayCores) + 1;
  const redis = options.redis ?? (await startRedis());
  const keyPrefix = `rig-${options.database.schema}`;
  const started: RigProcess[] = [];
  const stop = async () => {
    await Promise.all(started.filter((p) => p.name.startsWith('gateway')).map((p) => p.stop()));
    await Promise.all(started.filter((p) => p.name.startsWith('core')).map((p) => p.stop()));
    await redis.stop();
  };
  try {
    const cores: RigProcess[] = [];
    const rpcPorts: number[] = [];
    for (let i = 0; i < coreCount; i++) {
      const rpcPort = await freePort();
      rpcPorts.push(rpcPort);
      const core = rigProcess(
        `core ${i}`,
        () => [
          'core',
          '--rpc-host', '127.0.0.1',
          '--rpc-port', String(rpcPort),
          '--engine', 'postgres',
          '--database-url', options.database.url,
          '--database-schema', options.database.schema,
          '--database-pool-size', '6',
          '--redis-url', redis.url,
          '--redis-key-prefix', keyPrefix,
          '--group-initial-rebalance-delay-ms', '0',
          // Below the members' 6 s session timeout: a killed core's groups move before members give up.
          '--coordinator-lease-ms', '3000',
          '--log-level', 'info',
        ],
        'ready',
      );
      started.push(core);
      cores.push(core);
    }
    // The first core migrates the schema; the others find it done.
    await cores[0]!.start();
    await Promise.all(cores.slice(1).map((c) => c.start()));

    const gateways: RigGateway[] = [];
    for (const [i, coreIndex] of gatewayCores.entries()) {
      const port = await freePort();
      const httpPort = options.http ? await freePort() : null;
      const proc = rigProcess(
        `gateway ${i}`,
        () => [
          'gateway',
          '--core', `127.0.0.1:${rpcPorts[coreIndex]}`,
          '--host', '127.0.0.1',
          '--port', String(port),
          ...(httpPort === null ? ['--no-http'] : ['--http-port', String(httpPort)]),
          '--redis-url', redis.url,
          '--redis-key-prefix', keyPrefix,
          '--node-ttl-ms', String(options.nodeTtlMs ?? 1_500),
          '--default-partitions', String(options.defaultPartitions ?? 1),
          '--shutdown-grace-ms', '2000',
          '--log-level', 'info',
        ],
        'ready',
      );
      const gateway: RigGateway = Object.assign(proc, { port, bootstrap: `127.0.0.1:${port}`, core: coreIndex, httpUrl: httpPort === null ? null : `http://127.0.0.1:${httpPort}` });
      started.push(gateway);
      gateways.push(gateway);
    }
    await Promise.all(gateways.map((g) => g.start()));
    const describe = (lines = 12) =>
      [...cores, ...gateways].map((p) => `--- ${p.name} (${p.running ? `pid ${p.pid}` : 'not running'}):\n${p.logs.tail(lines)}`).join('\n');
    const converged = async () => {
      const serving = gateways.filter((g) => g.running).map((g) => g.port).sort((a, b) => a - b);
      const agreed = async () => (await Promise.all(serving.map(listedPorts))).every((listed) => listed.join() === serving.join());
      await waitFor(agreed, { what: `every gateway's Metadata to list the ${serving.length} running gateways`, timeoutMs: 30_000, describe: () => describe() });
    };
    await converged();
    return { redis, cores, gateways, bootstrap: gateways.map((g) => g.bootstrap).join(','), describe, converged, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

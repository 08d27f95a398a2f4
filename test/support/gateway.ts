/**
 * Runs the gateway for the end-to-end suites, two ways:
 *
 * - in-process through the library entry `startBroker`, the way users' test
 *   suites embed it: quick, one per describe block;
 * - as a child process through the CLI, for fault tests: it can be SIGKILLed
 *   and started again on the same port over the same PostgreSQL schema.
 *
 * Either way the gateway's pino log is captured, so tests can assert what it
 * said (why it closed a connection, for instance).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { pino } from 'pino';
import { startBroker, type ConsumerCoordinatorOptions, type CoordinatorOptions } from '../../src/index.js';
import type { EngineChoice } from './engines.js';
import { waitFor } from './eventually.js';

export interface GatewayOptions {
  engine: EngineChoice;
  /** Create unknown topics on Metadata/Produce. Default false: tests create what they use. */
  autoCreateTopics?: boolean;
  defaultPartitions?: number;
  /** Listen port; default a free one. */
  port?: number;
  /** The port Metadata advertises, when clients must dial something else (the chaos proxy). */
  advertisedPort?: number;
  /**
   * Group coordinator settings; suites usually pass `{ initialRebalanceDelayMs: 0 }`.
   * The child process takes the ones its CLI has flags for (the initial delay,
   * session-timeout bounds and group size).
   */
  groups?: Partial<CoordinatorOptions>;
  /** KIP-848 consumer group settings (in-process only); suites usually shorten the heartbeat interval. */
  consumerGroups?: Partial<ConsumerCoordinatorOptions>;
  /** The transaction.version level ApiVersions finalizes (--transaction-version); default 2. */
  transactionVersion?: number;
}

export interface LogEntry {
  level?: number;
  msg?: string;
  [field: string]: unknown;
}

/** The gateway's log lines, parsed when they are JSON, kept raw always. */
export class LogCapture {
  readonly lines: string[] = [];
  readonly entries: LogEntry[] = [];
  private partial = '';

  write(chunk: string): void {
    const text = this.partial + chunk;
    const parts = text.split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) this.add(line);
  }

  private add(line: string): void {
    if (line.trim() === '') return;
    this.lines.push(line);
    try {
      this.entries.push(JSON.parse(line) as LogEntry);
    } catch {
      this.entries.push({ msg: line });
    }
  }

  /** Lines containing every one of `needles`. */
  matching(...needles: string[]): string[] {
    return this.lines.filter((line) => needles.every((n) => line.includes(n)));
  }

  tail(n = 20): string {
    return this.lines.slice(-n).join('\n');
  }
}

export interface RunningGateway {
  /** The advertised address: what clients are given (the proxy's, when there is one). */
  bootstrap: string;
  host: string;
  /** The port the gateway itself listens on. */
  port: number;
  logs: LogCapture;
  stop(): Promise<void>;
}

// ─── In-process ──────────────────────────────────────────────────────────────

/** Starts gateway and core in this process through the library entry. */
export async function startGateway(options: GatewayOptions): Promise<RunningGateway> {
  const logs = new LogCapture();
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.write(chunk.toString());
        done();
      },
    }),
  );
  // Behind a proxy the advertised port is the proxy's, so the listen port must be known up front.
  const port = options.port ?? (options.advertisedPort === undefined ? 0 : await freePort());
  const engine = options.engine;
  const broker = await startBroker({
    host: '127.0.0.1',
    port,
    ...(options.advertisedPort === undefined ? {} : { advertisedHost: '127.0.0.1', advertisedPort: options.advertisedPort }),
    autoCreateTopics: options.autoCreateTopics ?? false,
    ...(options.defaultPartitions === undefined ? {} : { defaultPartitions: options.defaultPartitions }),
    ...(options.transactionVersion === undefined ? {} : { transactionVersion: options.transactionVersion }),
    ...(engine.engine === 'memory' ? { engine: 'memory' } : { engine: 'postgres', url: engine.url, schema: engine.schema }),
    logger,
    shutdownGraceMs: 2_000,
    ...(options.groups === undefined ? {} : { groups: options.groups }),
    ...(options.consumerGroups === undefined ? {} : { consumerGroups: options.consumerGroups }),
  });
  return {
    bootstrap: broker.bootstrap,
    host: broker.host,
    port: options.advertisedPort === undefined ? broker.port : port,
    logs,
    stop: () => broker.stop(),
  };
}

// ─── Child process ───────────────────────────────────────────────────────────

const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface GatewayProcess extends RunningGateway {
  /** The running child's pid. */
  readonly pid: number | undefined;
  /** Kills the child with SIGKILL and waits for it to be gone. */
  kill(): Promise<void>;
  /** Starts a new child with the same options on the same port. */
  restart(): Promise<void>;
}

/** A TCP port free right now on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

function cliArguments(options: GatewayOptions, port: number, clusterId: string): string[] {
  const args = ['serve', '--host', '127.0.0.1', '--port', String(port), '--cluster-id', clusterId, '--log-level', 'debug'];
  // The suites speak Kafka only; the native HTTP API's fixed default port would collide between parallel children.
  args.push('--no-http');
  if (options.advertisedPort !== undefined) args.push('--advertised-host', '127.0.0.1', '--advertised-port', String(options.advertisedPort));
  args.push(options.autoCreateTopics ? '--auto-create-topics' : '--no-auto-create-topics');
  if (options.defaultPartitions !== undefined) args.push('--default-partitions', String(options.defaultPartitions));
  if (options.transactionVersion !== undefined) args.push('--transaction-version', String(options.transactionVersion));
  const groups = options.groups ?? {};
  if (groups.initialRebalanceDelayMs !== undefined) args.push('--group-initial-rebalance-delay-ms', String(groups.initialRebalanceDelayMs));
  if (groups.minSessionTimeoutMs !== undefined) args.push('--group-min-session-timeout-ms', String(groups.minSessionTimeoutMs));
  if (groups.maxSessionTimeoutMs !== undefined) args.push('--group-max-session-timeout-ms', String(groups.maxSessionTimeoutMs));
  if (groups.maxGroupSize !== undefined) args.push('--group-max-size', String(groups.maxGroupSize));
  if (options.engine.engine === 'postgres') {
    args.push('--engine', 'postgres', '--database-url', options.engine.url, '--database-schema', options.engine.schema);
  } else {
    args.push('--engine', 'memory');
  }
  return args;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts the CLI's `serve` in a child process and waits until it accepts connections. */
export async function startGatewayProcess(options: GatewayOptions): Promise<GatewayProcess> {
  const port = options.port ?? (await freePort());
  // One cluster id for every start: a restarted broker is the same cluster to its clients.
  const clusterId = randomBytes(16).toString('base64url');
  const logs = new LogCapture();
  let child: ChildProcess | null = null;
  let exited: Promise<void> = Promise.resolve();

  const launch = async () => {
    const spawned = spawn(process.execPath, ['--import', 'tsx', CLI, ...cliArguments(options, port, clusterId)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NODE_ENV: 'test' },
    });
    child = spawned;
    spawned.stdout!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
    spawned.stderr!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
    let exitCode: number | null | undefined;
    exited = new Promise((resolve) =>
      spawned.once('exit', (code) => {
        exitCode = code;
        resolve();
      }),
    );
    await waitFor(async () => exitCode !== undefined || (await canConnect(port)), {
      what: `the gateway process to listen on 127.0.0.1:${port}`,
      timeoutMs: 30_000,
      intervalMs: 50,
      describe: () => `its output so far:\n${logs.tail()}`,
    });
    if (exitCode !== undefined) throw new Error(`the gateway process exited with ${exitCode} before listening:\n${logs.tail()}`);
  };

  await launch();
  return {
    bootstrap: `127.0.0.1:${port}`,
    host: '127.0.0.1',
    port,
    logs,
    get pid() {
      return (child as ChildProcess | null)?.pid;
    },
    async kill() {
      (child as ChildProcess | null)?.kill('SIGKILL');
      await exited;
    },
    restart: launch,
    async stop() {
      const running = child as ChildProcess | null;
      if (running && running.exitCode === null && running.signalCode === null) {
        running.kill('SIGTERM');
        const forced = setTimeout(() => running.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(forced);
      }
    },
  };
}

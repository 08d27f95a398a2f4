/**
 * Queen nodes for the coordinator-lease suites: each a `serve` process (a
 * gateway and its own core) on one PostgreSQL schema, registered in one
 * Redis, so that clients see one cluster and each group or transactional id
 * is coordinated by one of the cores. A node can be SIGKILLed, or frozen
 * (SIGSTOP) and thawed (SIGCONT) to play an owner that lost its lease
 * without noticing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ApiKey } from '../../protocol/api-keys.js';
import { waitFor } from './eventually.js';
import { freePort, LogCapture } from './gateway.js';
import { RawConnection } from './raw-connection.js';

const CLI = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));

export interface NodeOptions {
  databaseUrl: string;
  schema: string;
  redisUrl: string;
  clusterId: string;
  /** How long a core's coordinator lease outlives its last renewal. */
  leaseMs: number;
  /** How long a gateway stays listed after its last heartbeat. */
  nodeTtlMs: number;
  /** The registry's key prefix: one per test, so no test sees another's nodes. */
  keyPrefix: string;
}

export interface QueenNode {
  readonly port: number;
  readonly bootstrap: string;
  readonly logs: LogCapture;
  readonly pid: number | undefined;
  kill(): Promise<void>;
  freeze(): void;
  thaw(): void;
  stop(): Promise<void>;
}

export async function startNode(options: NodeOptions): Promise<QueenNode> {
  const port = await freePort();
  const logs = new LogCapture();
  const args = [
    'serve', '--host', '127.0.0.1', '--port', String(port), '--no-http', '--log-level', 'info',
    '--cluster-id', options.clusterId,
    '--engine', 'postgres', '--database-url', options.databaseUrl, '--database-schema', options.schema,
    '--redis-url', options.redisUrl, '--node-ttl-ms', String(options.nodeTtlMs), '--redis-key-prefix', options.keyPrefix,
    '--coordinator-lease-ms', String(options.leaseMs),
    '--group-initial-rebalance-delay-ms', '500',
    '--no-auto-create-topics',
  ];
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_ENV: 'test' } });
  child.stdout!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => logs.write(d));
  let gone = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      gone = true;
      resolve();
    }),
  );
  await waitFor(() => gone || logs.lines.some((l) => l.includes('joined the cluster')), {
    what: `the node on 127.0.0.1:${port} to join the cluster`,
    timeoutMs: 40_000,
    describe: () => logs.tail(),
  });
  if (gone) throw new Error(`the node on 127.0.0.1:${port} exited before joining the cluster:\n${logs.tail()}`);
  return {
    port,
    bootstrap: `127.0.0.1:${port}`,
    logs,
    pid: child.pid,
    async kill() {
      if (!gone) child.kill('SIGKILL');
      await exited;
    },
    freeze: () => void child.kill('SIGSTOP'),
    thaw: () => void child.kill('SIGCONT'),
    async stop() {
      if (gone) return;
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(forced);
    },
  };
}

/** FindCoordinator (v3) asked of `node`: the port of the gateway it names, or the error code. */
export async function coordinatorPort(node: QueenNode, key: string, keyType: 0 | 1 = 0): Promise<{ port: number; errorCode: number }> {
  const raw = await RawConnection.open(node.port);
  try {
    const answer = await raw.request(ApiKey.FindCoordinator, 3, { key, keyType });
    return { port: answer.port as number, errorCode: answer.errorCode as number };
  } finally {
    raw.destroy();
  }
}

/**
 * Waits until every node's Metadata lists every node's gateway. A client that
 * bootstraps from one node keeps only the brokers that node's Metadata named:
 * asked before the others registered, it would know that node alone, and
 * could reach nobody once it died.
 */
export async function untilEachListsAll(nodes: readonly QueenNode[], timeoutMs = 30_000): Promise<void> {
  const wanted = nodes.map((n) => n.port).sort((x, y) => x - y);
  let last = '';
  await waitFor(
    async () => {
      const listed = await Promise.all(
        nodes.map(async (n) => {
          const raw = await RawConnection.open(n.port);
          try {
            const answer = await raw.request(ApiKey.Metadata, 9, { topics: [], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
            return (answer.brokers as { port: number }[]).map((b) => b.port).sort((x, y) => x - y);
          } finally {
            raw.destroy();
          }
        }),
      );
      last = JSON.stringify(listed);
      return listed.every((ports) => JSON.stringify(ports) === JSON.stringify(wanted));
    },
    { what: `every node's Metadata to list all ${nodes.length} gateways`, timeoutMs, describe: () => last },
  );
}

/** The node whose gateway every live node names as the coordinator of `key`, once they agree. */
export async function coordinatorOf(nodes: readonly QueenNode[], key: string, keyType: 0 | 1 = 0, timeoutMs = 30_000): Promise<QueenNode> {
  let found: QueenNode | undefined;
  let last = '';
  await waitFor(
    async () => {
      const answers = await Promise.all(nodes.map((n) => coordinatorPort(n, key, keyType).catch((e: Error) => ({ port: -1, errorCode: -1, e: e.message }))));
      last = JSON.stringify(answers);
      const ports = new Set(answers.map((a) => (a.errorCode === 0 ? a.port : -1)));
      if (ports.size !== 1 || ports.has(-1)) return false;
      found = nodes.find((n) => ports.has(n.port));
      return found !== undefined;
    },
    { what: `every node to name one coordinator for ${key}`, timeoutMs, describe: () => last },
  );
  return found!;
}

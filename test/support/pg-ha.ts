/**
 * A replicated PostgreSQL on this machine, for failover tests and benchmarks:
 * pg_auto_failover's monitor and three PostgreSQL 15 nodes on loopback ports,
 * each with its own data directory under .tmp/, one primary and two standbys
 * with synchronous replication (`synchronous_standby_names = ANY 1 (...)`,
 * number_sync_standbys 1). Debian's `postgresql-15-auto-failover` package
 * provides pg_autoctl; docs/failover.md says why this manager.
 *
 *   const ha = await startPgHa();
 *   ha.url                      // postgres://postgres@h:p1,h:p2,h:p3/queen?target_session_attrs=read-write
 *   const old = await ha.primary();
 *   await ha.kill(old);         // SIGKILL: the node's pg_autoctl and PostgreSQL, as if the machine died
 *   await ha.waitForPrimary({ not: old });
 *   await ha.stop();            // stops what it started, by process group, and removes the files
 *
 * The monitor's health checks are tightened (a check a second, a node
 * unhealthy after 3 s, a dead primary given up after 5 s) so a failover takes
 * seconds, not the minute the defaults allow; docs/failover.md gives the
 * production view. As root, everything runs as the `postgres` user (PostgreSQL
 * refuses root). The .tmp directory is chowned to it for that.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, openSync, closeSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';

export interface PgHaNode {
  name: string;
  port: number;
  dataDir: string;
}

export interface PgHaCluster {
  /** The core's URL: every node, the one that accepts writes chosen by the core (target_session_attrs=read-write). */
  url: string;
  /** The URL of one node alone. */
  urlOf(node: PgHaNode): string;
  nodes: PgHaNode[];
  /** Where the rig's files and logs are. */
  dir: string;
  /** The node the monitor names primary now. */
  primary(): Promise<PgHaNode>;
  /** Waits (up to timeoutMs) until a primary other than `not` is serving with a synchronous standby again. */
  waitForPrimary(options?: { not?: PgHaNode; timeoutMs?: number }): Promise<PgHaNode>;
  /**
   * Kills a node's processes (pg_autoctl and PostgreSQL) with the signal, SIGKILL by default;
   * `keeperOnly` signals pg_autoctl alone, the PostgreSQL it started runs on. `monitor` is a node too.
   */
  kill(node: PgHaNode, signal?: NodeJS.Signals, options?: { keeperOnly?: boolean }): Promise<void>;
  /** Starts a killed node's pg_autoctl again (`pg_autoctl run`): a node rejoins as a standby, the monitor serves again. */
  restart(node: PgHaNode): void;
  /** The monitor, as a node: kill() and restart() take it. */
  monitor: PgHaNode;
  /** The nodes the monitor names secondary and that report so (streaming, a candidate for promotion). */
  standbys(): Promise<PgHaNode[]>;
  /** Stops everything it started and removes its files. */
  stop(): Promise<void>;
}

const PG_BIN = '/usr/lib/postgresql/15/bin';
const REPO = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What a test names when pg_auto_failover is not installed. */
export function pgHaMissing(): string | null {
  if (!existsSync('/usr/bin/pg_autoctl')) return 'pg_autoctl is not installed (apt-get install postgresql-15-auto-failover)';
  if (!existsSync(`${PG_BIN}/pg_ctl`)) return `PostgreSQL 15 is not installed (${PG_BIN}/pg_ctl)`;
  return null;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

async function waitFor<T>(what: string, timeoutMs: number, check: () => Promise<T | null>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const value = await check();
      if (value !== null) return value;
    } catch (e) {
      last = ` (last: ${(e as Error).message})`;
    }
    if (Date.now() > deadline) throw new Error(`pg-ha: waited ${timeoutMs} ms for ${what}${last}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Long because the rig's steps share its state (children, ports, the monitor's connection) and read best in the order they run. */
export async function startPgHa(options: { timeoutMs?: number } = {}): Promise<PgHaCluster> {
  const missing = pgHaMissing();
  if (missing) throw new Error(`pg-ha: ${missing}`);
  const timeoutMs = options.timeoutMs ?? 120_000;
  const asRoot = process.getuid?.() === 0;
  const dir = join(REPO, '.tmp', `pg-ha-${process.pid}-${randomBytes(3).toString('hex')}`);
  for (const sub of ['', 'config', 'data', 'run']) mkdirSync(join(dir, sub), { recursive: true });
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString());
    for (const sub of ['', 'config', 'data', 'run']) chownSync(join(dir, sub), uid, gid);
  }
  const groups: ChildProcess[] = [];
  const byNode = new Map<string, ChildProcess>();

  const autoctl = (name: string, args: string[]): ChildProcess => {
    const log = openSync(join(dir, `${name}.log`), 'a');
    const env = [`XDG_CONFIG_HOME=${dir}/config`, `XDG_DATA_HOME=${dir}/data`, `XDG_RUNTIME_DIR=${dir}/run`, `PATH=${PG_BIN}:/usr/bin:/bin`];
    const command = ['env', ...env, 'pg_autoctl', ...args];
    // detached: a process group of its own, so kill() and stop() reach pg_autoctl and every PostgreSQL process under it.
    const child = asRoot ? spawn('runuser', ['-u', 'postgres', '--', ...command], { detached: true, stdio: ['ignore', log, log] }) : spawn(command[0]!, command.slice(1), { detached: true, stdio: ['ignore', log, log] });
    closeSync(log);
    child.on('error', () => {});
    groups.push(child);
    byNode.set(name, child);
    return child;
  };
  const signalGroup = (child: ChildProcess, signal: NodeJS.Signals): void => {
    if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  const exited = (child: ChildProcess, ms: number): Promise<boolean> =>
    child.exitCode !== null || child.signalCode !== null
      ? Promise.resolve(true)
      : new Promise((resolve) => {
          const timer = setTimeout(() => resolve(false), ms);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve(true);
          });
        });

  const monitorPort = await freePort();
  const nodes: PgHaNode[] = [];
  for (const name of ['node1', 'node2', 'node3']) nodes.push({ name, port: await freePort(), dataDir: join(dir, name) });
  const monitorUrl = `postgres://autoctl_node@127.0.0.1:${monitorPort}/pg_auto_failover?sslmode=disable`;
  const monitorSql = postgres(`postgres://postgres@127.0.0.1:${monitorPort}/pg_auto_failover`, { max: 1, connect_timeout: 5, onnotice: () => {} });
  const urlOf = (node: PgHaNode): string => `postgres://postgres@127.0.0.1:${node.port}/queen`;

  const stop = async (): Promise<void> => {
    await monitorSql.end({ timeout: 1 }).catch(() => {});
    // Standbys first, the monitor last, so nothing fails over while the rig goes.
    // A node a test left stopped (SIGSTOP) hears SIGTERM only once it runs again.
    for (const node of nodes) for (const pid of postgresProcesses(node.dataDir)) signalPid(pid, 'SIGCONT');
    for (const child of groups) signalGroup(child, 'SIGCONT');
    for (const child of [...groups].reverse()) signalGroup(child, 'SIGTERM');
    for (const child of groups) if (!(await exited(child, 15_000))) signalGroup(child, 'SIGKILL');
    for (const child of groups) await exited(child, 5_000);
    // A node whose pg_autoctl was killed leaves PostgreSQL processes of its own sessions behind.
    for (const dataDir of [join(dir, 'monitor'), ...nodes.map((n) => n.dataDir)]) {
      for (const pid of postgresProcesses(dataDir)) {
        signalPid(pid, 'SIGCONT');
        signalPid(pid, 'SIGKILL');
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    autoctl('monitor', ['create', 'monitor', '--pgdata', join(dir, 'monitor'), '--pgport', String(monitorPort), '--hostname', '127.0.0.1', '--auth', 'trust', '--no-ssl', '--pgctl', `${PG_BIN}/pg_ctl`, '--run']);
    await waitFor('the monitor to answer', timeoutMs, async () => ((await monitorSql`select 1 from pg_extension where extname = 'pgautofailover'`).length === 1 ? true : null));
    for (const [setting, value] of [['health_check_period', 1000], ['health_check_timeout', 1000], ['health_check_max_retries', 1], ['health_check_retry_delay', 500], ['node_considered_unhealthy_timeout', 3000], ['primary_demote_timeout', 5000]] as const) {
      await monitorSql.unsafe(`ALTER SYSTEM SET pgautofailover.${setting} = ${value}`);
    }
    await monitorSql`select pg_reload_conf()`;
    const createNode = (node: PgHaNode): ChildProcess =>
      autoctl(node.name, ['create', 'postgres', '--pgdata', node.dataDir, '--pgport', String(node.port), '--pghost', '127.0.0.1', '--listen', '127.0.0.1', '--hostname', '127.0.0.1', '--name', node.name, '--dbname', 'queen', '--monitor', monitorUrl, '--auth', 'trust', '--no-ssl', '--pgctl', `${PG_BIN}/pg_ctl`, '--run']);
    createNode(nodes[0]!);
    await waitFor(`${nodes[0]!.name} to be the first primary`, timeoutMs, async () => ((await states(monitorSql)).get(nodes[0]!.name) === 'single/single' ? true : null));
    createNode(nodes[1]!);
    createNode(nodes[2]!);
    const first = postgres(urlOf(nodes[0]!), { max: 1, connect_timeout: 5, onnotice: () => {} });
    try {
      // pg_basebackup waits for a spread checkpoint; asking for one now starts the standbys in seconds.
      await waitFor('two synchronous standbys', timeoutMs, async () => {
        await first`checkpoint`;
        const s = await states(monitorSql);
        if (s.get('node1') !== 'primary/primary' || s.get('node2') !== 'secondary/secondary' || s.get('node3') !== 'secondary/secondary') return null;
        const [{ names }] = (await first`select current_setting('synchronous_standby_names') as names`) as unknown as [{ names: string }];
        return names.startsWith('ANY 1') ? true : null;
      });
    } finally {
      await first.end({ timeout: 1 }).catch(() => {});
    }
  } catch (e) {
    await stop();
    throw e;
  }

  const primary = async (): Promise<PgHaNode> => {
    const [row] = (await monitorSql`select primary_name from pgautofailover.get_primary('default', 0)`) as unknown as [{ primary_name: string } | undefined];
    const node = nodes.find((n) => n.name === row?.primary_name);
    if (!node) throw new Error(`pg-ha: the monitor names no primary (${JSON.stringify(row)})`);
    return node;
  };

  const monitor: PgHaNode = { name: 'monitor', port: monitorPort, dataDir: join(dir, 'monitor') };
  const everyNode = (name: string) => (name === 'monitor' ? monitor : nodes.find((n) => n.name === name));

  return {
    monitor,
    url: `postgres://postgres@${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}/queen?target_session_attrs=read-write`,
    urlOf,
    nodes,
    dir,
    primary,
    async waitForPrimary({ not, timeoutMs: waitMs = 60_000 } = {}) {
      return waitFor(`a primary${not ? ` other than ${not.name}` : ''} with a synchronous standby`, waitMs, async () => {
        const node = await primary();
        if (not && node.name === not.name) return null;
        return (await states(monitorSql)).get(node.name) === 'primary/primary' ? node : null;
      });
    },
    async kill(node, signal = 'SIGKILL', { keeperOnly = false } = {}) {
      const child = byNode.get(node.name);
      if (!child) throw new Error(`pg-ha: no node ${node.name}`);
      // PostgreSQL's children each start a session of their own: they are signalled by pid, beside pg_autoctl's group.
      const postgresPids = keeperOnly ? [] : postgresProcesses(node.dataDir);
      signalGroup(child, signal);
      for (const pid of postgresPids) signalPid(pid, signal);
      if (signal === 'SIGKILL' && !(await exited(child, 10_000))) throw new Error(`pg-ha: ${node.name} did not exit on SIGKILL within 10 s`);
    },
    restart(node) {
      if (!everyNode(node.name)) throw new Error(`pg-ha: no node ${node.name}`);
      autoctl(node.name, ['run', '--pgdata', node.dataDir]);
    },
    async standbys() {
      const s = await states(monitorSql);
      return nodes.filter((n) => s.get(n.name) === 'secondary/secondary');
    },
    stop,
  };
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // gone meanwhile
  }
}

/** The postmaster of a data directory (postmaster.pid) and every process it started; none when it is not running. */
function postgresProcesses(dataDir: string): number[] {
  let postmaster: number;
  try {
    postmaster = Number(readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return [];
  }
  // A stale file of a killed node may name a pid reused since: only a postmaster of this directory counts.
  try {
    if (!readFileSync(`/proc/${postmaster}/cmdline`, 'utf8').includes(dataDir)) return [];
  } catch {
    return [];
  }
  const pids = [postmaster];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4, after the command name in parentheses, is the parent pid.
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Each node's "reported/goal" state, as the monitor has it. */
async function states(sql: postgres.Sql): Promise<Map<string, string>> {
  const rows = (await sql`select nodename, reportedstate::text as reported, goalstate::text as goal from pgautofailover.node`) as unknown as { nodename: string; reported: string; goal: string }[];
  return new Map(rows.map((r) => [r.nodename, `${r.reported}/${r.goal}`]));
}

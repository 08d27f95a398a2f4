/**
 * The PostgreSQL engine: `openPostgresEngine({ url, schema })` migrates the
 * schema (under an advisory lock), starts listening for other processes'
 * appends and returns the engine. Several cores, in one process or many, may
 * share one database and schema. DRIVER.md says why pg and why LISTEN/NOTIFY.
 */
import { randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { isUnavailableError } from './availability.js';
import { CoreError } from '../../errors.js';
import { checkSchemaName, Database, DEFAULT_DATABASE_TIMEOUTS } from './database.js';
import { describeServer, parseDatabaseUrl } from './hosts.js';
import { migrate } from './migrations.js';
import { PostgresEngine } from './postgres-engine.js';
import { appendLimitsOf } from '../../rules/batches.js';
import { Wakeups } from './wakeups.js';

export { PostgresEngine } from './postgres-engine.js';

export interface PostgresOpenOptions {
  /** postgres://user:password@host:port/database */
  url: string;
  /** The schema holding this core's tables; created when missing. Default "queen". */
  schema?: string;
  /** Connections in the pool. Default 10. */
  poolSize?: number;
  /** Epoch-ms clock for TTLs, dedup windows, leases and retention; tests inject one. */
  clock?: () => number;
  /** How often retention and expiry run; 0 turns the timer off. Default 30 s. */
  maintenanceIntervalMs?: number;
  /** How many append results the requestId ledger keeps. Default 10,000. */
  appendLedgerSize?: number;
  /** Coalesce concurrent appends into one transaction. Default true; false only to measure the gain. */
  groupCommit?: boolean;
  /** Most append calls one transaction takes. Default 256. */
  maxGroupSize?: number;
  /** LISTEN for other processes' appends to wake long-polls here. Default true. */
  crossProcessWakeups?: boolean;
  /**
   * NOTIFY other processes of each append transaction. Default true; off only
   * when one process is alone on the database, or to measure what it costs.
   */
  notifyAppends?: boolean;
  /** How long opening a connection (or waiting for a free one) may take. Default 5 s. */
  connectTimeoutMs?: number;
  /** How long one statement may take, on the server and waiting for its answer. Default 10 s. */
  statementTimeoutMs?: number;
  /**
   * Acknowledge a write only once a synchronous standby has it: commit only
   * while the server waits for one, and make every commit wait. Default: on
   * when the URL names several servers (docs/failover.md).
   */
  requireSyncStandby?: boolean;
  /**
   * With a URL naming several servers: a Fetch at least this many records
   * behind the high watermark reads its batches from a standby, taking a
   * lagging consumer's load off the primary. Off when absent.
   */
  standbyReadLagRecords?: number;
  /** pino logger for the database's fault episodes (one line when it stops answering, one when it is back). */
  log?: Logger;
  /** Bytes one produced compressed batch may inflate to while it is checked. Default 16 MiB. */
  maxInflatedBatchBytes?: number;
  /** Bytes all compressed batches of one append may inflate to together. Default 64 MiB. */
  maxInflatedRequestBytes?: number;
  /** How often the compactor looks at compacted queues; 0 turns it off. Default 15 s, Kafka's cleaner backoff. */
  compactionIntervalMs?: number;
  /**
   * How long a group's or transactional id's coordinator lease outlives its
   * holder's last renewal: how soon another core takes over from one that
   * died. Default 10 s, below every client's default session timeout.
   */
  coordinatorLeaseMs?: number;
  /**
   * Redis for cross-node wake-ups (redis-wakeups.ts): appends are announced
   * by pub/sub after commit rather than by NOTIFY inside the transaction.
   * Absent: LISTEN/NOTIFY.
   */
  redisUrl?: string;
  /** Prefix of the Redis channel, so clusters can share a Redis. Default "queen". */
  redisKeyPrefix?: string;
  /** With a redisUrl, which carries wake-ups: 'redis' (the default, see README.md's figures) or 'notify'. */
  crossNodeWakeups?: 'redis' | 'notify';
}

/**
 * Why the database cannot be used at start, as one sentence saying what to
 * fix. The URL is named by host, port and database only: never its password.
 * A database that does not answer (yet) is CoreError('unavailable'), so a
 * caller may wait for it (the CLI's --database-wait-ms); a wrong password or
 * database name is a plain Error: waiting would not mend it.
 */
function startProblem(url: string, e: unknown): Error {
  let where = 'the database URL';
  try {
    const target = parseDatabaseUrl(url);
    const u = new URL(target.baseUrl);
    const database = JSON.stringify(decodeURIComponent(u.pathname.slice(1)) || 'default');
    where = target.servers.length > 1 ? `the PostgreSQL servers ${target.servers.map(describeServer).join(', ')} (database ${database})` : `PostgreSQL at ${u.hostname || 'localhost'}:${u.port || '5432'} (database ${database})`;
  } catch {
    return new Error('The PostgreSQL URL is not a valid URL; give one like postgres://user:pass@localhost:5432/queen, or postgres://user:pass@h1:5432,h2:5432/queen for a replicated store.');
  }
  const err = e as { code?: string; message?: string };
  const reason = err.message ?? String(e);
  if (err.code === 'ECONNREFUSED') return new CoreError('unavailable', `${where} refused the connection; start PostgreSQL there or point the database URL at a running server.`);
  if (err.code === 'ENOTFOUND' || err.code === 'EAI_AGAIN') return new CoreError('unavailable', `${where}: the host name does not resolve; correct the database URL.`);
  if (err.code === '28P01' || err.code === '28000') return new Error(`${where} refused the credentials (${reason}); correct the user and password in the database URL.`);
  if (err.code === '3D000') return new Error(`${where} has no such database (${reason}); create it or correct the database URL.`);
  if (isUnavailableError(e)) return new CoreError('unavailable', `${where} did not answer (${reason}); check that PostgreSQL is running and reachable, or correct the database URL.`);
  return new Error(`${where} could not be prepared (${reason}); check the database URL and that this user may create the schema.`);
}

export async function openPostgresEngine(options: PostgresOpenOptions): Promise<PostgresEngine> {
  if (typeof options?.url !== 'string' || options.url.length === 0) {
    throw new Error('The postgres engine needs a database URL: pass url (for example postgres://user:pass@localhost:5432/queen).');
  }
  const schema = checkSchemaName(options.schema ?? 'queen');
  // A host list or target_session_attrs this engine cannot follow is said before anything connects.
  parseDatabaseUrl(options.url);
  const appendLimits = appendLimitsOf(options);
  const timeouts = {
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_DATABASE_TIMEOUTS.connectTimeoutMs,
    statementTimeoutMs: options.statementTimeoutMs ?? DEFAULT_DATABASE_TIMEOUTS.statementTimeoutMs,
  };
  try {
    await migrate(options.url, schema, timeouts);
  } catch (e) {
    throw startProblem(options.url, e);
  }
  const db = new Database({
    url: options.url,
    schema,
    poolSize: options.poolSize ?? 10,
    applicationName: 'queen-core',
    timeouts,
    ...(options.log === undefined ? {} : { log: options.log }),
    ...(options.requireSyncStandby === undefined ? {} : { requireSyncStandby: options.requireSyncStandby }),
    ...(options.standbyReadLagRecords === undefined ? {} : { standbyReadLagRecords: options.standbyReadLagRecords }),
  });
  const wakeups = new Wakeups(randomUUID(), `queen_appends_${schema}`.slice(0, 63));
  if (options.crossProcessWakeups !== false) {
    try {
      await wakeups.listen(() => db.newClient());
    } catch (e) {
      await wakeups.close();
      await db.close();
      throw startProblem(options.url, e);
    }
  }
  if (options.redisUrl !== undefined && options.crossNodeWakeups !== 'notify' && options.notifyAppends !== false) {
    try {
      const { RedisWakeupRelay } = await import('./redis-wakeups.js');
      const log = options.log ?? pino({ level: 'silent' });
      wakeups.useRelay(await RedisWakeupRelay.open(options.redisUrl, `${options.redisKeyPrefix ?? 'queen'}:appends:${schema}`, wakeups, log));
    } catch (e) {
      await wakeups.close();
      await db.close();
      throw e;
    }
  }
  return new PostgresEngine(db, wakeups, {
    clock: options.clock ?? Date.now,
    maintenanceIntervalMs: options.maintenanceIntervalMs ?? 30_000,
    appendLedgerSize: options.appendLedgerSize ?? 10_000,
    groupCommit: options.groupCommit ?? true,
    maxGroupSize: options.maxGroupSize ?? 256,
    notifyAppends: options.notifyAppends ?? true,
    appendLimits,
    compactionIntervalMs: options.compactionIntervalMs ?? 15_000,
    coordinatorLeaseMs: options.coordinatorLeaseMs ?? 10_000,
  });
}

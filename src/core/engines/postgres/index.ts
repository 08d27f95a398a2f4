/**
 * The PostgreSQL engine: `openPostgresCore({ url, schema })` migrates the
 * schema (under an advisory lock), starts listening for other processes'
 * appends and returns a Core. Several cores, in one process or many, may
 * share one database and schema. DRIVER.md says why pg and why LISTEN/NOTIFY.
 */
import { randomUUID } from 'node:crypto';
import { checkSchemaName, Database } from './database.js';
import { migrate } from './migrations.js';
import { PostgresCore } from './postgres-core.js';
import { appendLimitsOf } from '../../rules/batches.js';
import { Wakeups } from './wakeups.js';

export { PostgresCore } from './postgres-core.js';

export interface PostgresCoreOptions {
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
  /** Bytes one produced compressed batch may inflate to while it is checked. Default 16 MiB. */
  maxInflatedBatchBytes?: number;
  /** Bytes all compressed batches of one append may inflate to together. Default 64 MiB. */
  maxInflatedRequestBytes?: number;
}

export async function openPostgresCore(options: PostgresCoreOptions): Promise<PostgresCore> {
  if (typeof options?.url !== 'string' || options.url.length === 0) {
    throw new Error('openPostgresCore needs a url, such as postgres://postgres@127.0.0.1:5432/queen.');
  }
  const schema = checkSchemaName(options.schema ?? 'queen');
  const appendLimits = appendLimitsOf(options);
  await migrate(options.url, schema);
  const db = new Database({ url: options.url, schema, poolSize: options.poolSize ?? 10, applicationName: 'queen-core' });
  const wakeups = new Wakeups(randomUUID(), `queen_appends_${schema}`.slice(0, 63));
  if (options.crossProcessWakeups !== false) {
    try {
      await wakeups.listen(() => db.newClient());
    } catch (e) {
      await wakeups.close();
      await db.close();
      throw e;
    }
  }
  return new PostgresCore(db, wakeups, {
    clock: options.clock ?? Date.now,
    maintenanceIntervalMs: options.maintenanceIntervalMs ?? 30_000,
    appendLedgerSize: options.appendLedgerSize ?? 10_000,
    groupCommit: options.groupCommit ?? true,
    maxGroupSize: options.maxGroupSize ?? 256,
    notifyAppends: options.notifyAppends ?? true,
    appendLimits,
  });
}

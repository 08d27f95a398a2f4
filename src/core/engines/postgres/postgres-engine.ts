import { PostgresShares } from './shares.js';
import type { Engine } from '../../engine.js';
import { TRANSACTION_SWEEP_INTERVAL_MS } from '../../rules/kafka-transactions.js';
import { PostgresAccess } from './access.js';
import { PostgresCopies } from './copies.js';
import type { Database } from './database.js';
import { PostgresKv } from './kv.js';
import { PostgresLog } from './log.js';
import { PostgresMaintenance } from './maintenance.js';
import { PostgresNative } from './native.js';
import { PostgresOffsets } from './offsets.js';
import { PostgresProducers } from './producers.js';
import { PostgresQueues } from './queues.js';
import { PostgresScramCredentials } from './scram-credentials.js';
import { PostgresStore, type PostgresEngineOptions } from './store.js';
import type { Wakeups } from './wakeups.js';
import type { PostgresTransactions } from './kafka-transactions.js';
import type { PostgresCoordination } from './coordination.js';

export type { PostgresEngineOptions } from './store.js';

/**
 * The PostgreSQL engine: durable, and shared by every core on the same
 * database and schema. The rules (src/core/rules) decide; the domain files
 * read what they need under the right lock and write what they decided, each
 * call in one database transaction, so a call either happens whole or not at
 * all, and a restart changes no answer. Behaviour matches the memory engine
 * exactly: one behaviour suite runs against both.
 */
export class PostgresEngine implements Engine {
  private readonly store: PostgresStore;
  readonly queues: PostgresQueues;
  readonly log: PostgresLog;
  readonly copies: PostgresCopies;
  readonly producers: PostgresProducers;
  readonly offsets: PostgresOffsets;
  readonly kafkaTransactions: PostgresTransactions;
  readonly kv: PostgresKv;
  readonly native: PostgresNative;
  readonly access: PostgresAccess;
  readonly scramCredentials: PostgresScramCredentials;
  readonly shares: PostgresShares;
  readonly maintenance: PostgresMaintenance;
  /** Coordinator leases shared with the other cores on the database: the front routes group calls by them. */
  readonly coordination: PostgresCoordination;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(db: Database, wakeups: Wakeups, options: PostgresEngineOptions) {
    const store = (this.store = new PostgresStore(db, wakeups, options));
    this.queues = new PostgresQueues(store);
    this.log = new PostgresLog(store);
    this.copies = new PostgresCopies(store);
    this.producers = new PostgresProducers(store);
    this.offsets = new PostgresOffsets(store);
    this.kafkaTransactions = store.kafkaTxns;
    this.kv = new PostgresKv(store);
    this.native = new PostgresNative(store);
    this.access = new PostgresAccess(db);
    this.scramCredentials = new PostgresScramCredentials(db);
    this.shares = new PostgresShares(db);
    this.maintenance = new PostgresMaintenance(store);
    this.coordination = store.coordination;
    if (options.maintenanceIntervalMs > 0) {
      // One sweep at a time: a database that hangs must not collect a queue of them, each holding a connection.
      let sweeping = false;
      this.timers.push(
        setInterval(() => {
          if (sweeping) return;
          sweeping = true;
          void this.maintenance
            .abortExpiredTransactions()
            .catch(() => {})
            .finally(() => (sweeping = false));
        }, Math.min(options.maintenanceIntervalMs, TRANSACTION_SWEEP_INTERVAL_MS)),
      );
      this.timers.push(setInterval(() => void this.maintenance.runMaintenance().catch(() => {}), options.maintenanceIntervalMs));
    }
    if (options.compactionIntervalMs > 0) {
      this.timers.push(setInterval(() => void this.maintenance.runCompaction().catch(() => {}), options.compactionIntervalMs));
    }
    for (const timer of this.timers) timer.unref();
  }

  async close(): Promise<void> {
    if (this.store.closed) return;
    this.store.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    await this.maintenance.settled();
    await this.coordination.releaseAll().catch(() => {});
    for (const finish of [...this.store.pending]) finish();
    await this.store.wakeups.close();
    await this.store.db.close();
  }
}

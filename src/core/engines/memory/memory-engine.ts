import type { Engine, EngineAccess } from '../../engine.js';
import { appendLimitsOf } from '../../rules/batches.js';
import { TRANSACTION_SWEEP_INTERVAL_MS } from '../../rules/kafka-transactions.js';
import { MemoryAcls } from './acls.js';
import { MemoryCopies } from './copies.js';
import { MemoryKv } from './kv.js';
import { MemoryLog } from './log.js';
import { MemoryMaintenance } from './maintenance.js';
import { MemoryNative } from './native.js';
import { MemoryOffsets } from './offsets.js';
import { MemoryProducers } from './producers.js';
import { MemoryQueues } from './queues.js';
import { MemoryQuotas } from './quotas.js';
import { MemoryScramCredentials } from './scram-credentials.js';
import { MemoryShares } from './shares.js';
import type { Logger } from 'pino';
import type { MemoryTransactions } from './kafka-transactions.js';
import type { PartitionState } from './store.js';
import { defaultMemoryLimitBytes } from './limits.js';
import { MemoryStore } from './store.js';

export { defaultMemoryLimitBytes } from './limits.js';

/**
 * The memory engine: the embedded default for development and tests. Every
 * call runs to completion without yielding between its checks and its writes,
 * so each append, push or transaction is atomic exactly as a database
 * transaction is in the PostgreSQL engine, and concurrent callers are
 * serialized per process. Lost on exit.
 */

export interface MemoryEngineOptions {
  /** Epoch-ms clock for TTLs, dedup windows, leases and retention; tests inject one. */
  clock?: () => number;
  /** How often retention and expiry run; 0 turns the timer off (tests call runMaintenance). */
  maintenanceIntervalMs?: number;
  /** How many append results the requestId ledger keeps. */
  appendLedgerSize?: number;
  /**
   * Most bytes of records (across all partitions) and KV entries kept in
   * memory; past it, appends, pushes and KV writes that add bytes are refused with CoreError('storage_full') until
   * retention or deletion makes room. Default a quarter of the machine's
   * memory (defaultMemoryLimitBytes); 0 = no limit.
   */
  maxStoredBytes?: number;
  /** pino logger: says once when the limit starts refusing writes, once when there is room again. */
  log?: Logger;
  /** Bytes one produced compressed batch may inflate to while it is checked. Default 16 MiB. */
  maxInflatedBatchBytes?: number;
  /** Bytes all compressed batches of one append may inflate to together. Default 64 MiB. */
  maxInflatedRequestBytes?: number;
  /** How often the compactor looks at compacted queues; 0 turns the timer off (tests call runCompaction). Default 15 s, Kafka's cleaner backoff. */
  compactionIntervalMs?: number;
}


export class MemoryEngine implements Engine {
  private readonly store: MemoryStore;
  readonly queues: MemoryQueues;
  readonly log: MemoryLog;
  readonly copies: MemoryCopies;
  readonly producers: MemoryProducers;
  readonly offsets: MemoryOffsets;
  readonly kafkaTransactions: MemoryTransactions<PartitionState>;
  readonly kv: MemoryKv;
  readonly native: MemoryNative;
  readonly access: EngineAccess;
  readonly scramCredentials = new MemoryScramCredentials();
  readonly shares: MemoryShares;
  readonly maintenance: MemoryMaintenance;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(options: MemoryEngineOptions = {}) {
    const store = (this.store = new MemoryStore({
      clock: options.clock ?? Date.now,
      appendLedgerSize: options.appendLedgerSize ?? 10_000,
      appendLimits: appendLimitsOf(options),
      maxStoredBytes: options.maxStoredBytes ?? defaultMemoryLimitBytes(),
      log: options.log ?? null,
    }));
    this.queues = new MemoryQueues(store);
    this.log = new MemoryLog(store);
    this.copies = new MemoryCopies(store);
    this.producers = new MemoryProducers(store);
    this.offsets = new MemoryOffsets(store);
    this.kafkaTransactions = store.kafkaTxns;
    this.kv = new MemoryKv(store);
    this.native = new MemoryNative(store);
    this.shares = new MemoryShares(() => store.clock());
    const acls = new MemoryAcls();
    const quotas = new MemoryQuotas();
    this.access = {
      createAcls: (req) => acls.create(req),
      listAcls: () => acls.list(),
      deleteAcls: (req) => acls.delete(req),
      alterClientQuotas: (req) => quotas.alter(req),
      listClientQuotas: () => quotas.list(),
    };
    this.maintenance = new MemoryMaintenance(store);
    const interval = options.maintenanceIntervalMs ?? 30_000;
    if (interval > 0) {
      this.timers.push(setInterval(() => void this.maintenance.runMaintenance(), interval));
      this.timers.push(setInterval(() => void this.maintenance.abortExpiredTransactions(), Math.min(interval, TRANSACTION_SWEEP_INTERVAL_MS)));
    }
    const compactionInterval = options.compactionIntervalMs ?? 15_000;
    if (compactionInterval > 0) this.timers.push(setInterval(() => void this.maintenance.runCompaction(), compactionInterval));
    for (const timer of this.timers) timer.unref();
  }

  async close(): Promise<void> {
    if (this.store.closed) return;
    this.store.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const finish of [...this.store.pending]) finish();
  }
}

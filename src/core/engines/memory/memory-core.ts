import type { Core } from '../../core.js';
import { requirePartitionRefs } from '../../rules/requests.js';
import { validateGroupName } from '../../rules/names.js';
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
import type { Logger } from 'pino';
import { defaultMemoryLimitBytes, MemoryStore } from './store.js';

export { defaultMemoryLimitBytes } from './store.js';

/**
 * The memory engine: the embedded default for development and tests. Every
 * call runs to completion without yielding between its checks and its writes,
 * so each append, push or transaction is atomic exactly as a database
 * transaction is in the PostgreSQL engine, and concurrent callers are
 * serialized per process. Lost on exit.
 */

export interface MemoryCoreOptions {
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


export class MemoryCore implements Core {
  private readonly store: MemoryStore;
  readonly queues: MemoryQueues;
  readonly log: MemoryLog;
  readonly producers: MemoryProducers;
  readonly offsets_: MemoryOffsets;
  readonly kv: MemoryKv;
  readonly native: MemoryNative;
  readonly copies: MemoryCopies;
  readonly maintenance: MemoryMaintenance;
  readonly acls = new MemoryAcls();
  readonly quotas = new MemoryQuotas();
  readonly scram = new MemoryScramCredentials();
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(options: MemoryCoreOptions = {}) {
    this.store = new MemoryStore({
      clock: options.clock ?? Date.now,
      appendLedgerSize: options.appendLedgerSize ?? 10_000,
      appendLimits: appendLimitsOf(options),
      maxStoredBytes: options.maxStoredBytes ?? defaultMemoryLimitBytes(),
      log: options.log ?? null,
    });
    const s = this.store;
    this.queues = new MemoryQueues(s);
    this.log = new MemoryLog(s);
    this.producers = new MemoryProducers(s);
    this.offsets_ = new MemoryOffsets(s);
    this.kv = new MemoryKv(s);
    this.native = new MemoryNative(s);
    this.copies = new MemoryCopies(s);
    this.maintenance = new MemoryMaintenance(s);
    const interval = options.maintenanceIntervalMs ?? 30_000;
    if (interval > 0) {
      this.timers.push(setInterval(() => this.maintenance.runMaintenance(), interval));
      this.timers.push(setInterval(() => this.maintenance.abortExpiredTransactions(), Math.min(interval, TRANSACTION_SWEEP_INTERVAL_MS)));
    }
    const compactionInterval = options.compactionIntervalMs ?? 15_000;
    if (compactionInterval > 0) this.timers.push(setInterval(() => void this.maintenance.runCompaction(), compactionInterval));
    for (const timer of this.timers) timer.unref();
  }

  createQueue: Core['createQueue'] = (req) => this.queues.create(req);
  listQueues: Core['listQueues'] = () => this.queues.list();
  describeQueue: Core['describeQueue'] = (req) => this.queues.describe(req);
  deleteQueue: Core['deleteQueue'] = (req) => this.queues.delete(req);
  addPartitions: Core['addPartitions'] = (req) => this.queues.addPartitions(req);
  alterQueue: Core['alterQueue'] = (req) => this.queues.alter(req);
  append: Core['append'] = (req) => this.log.append(req);
  read: Core['read'] = (req, options) => this.log.read(req, options);
  offsets: Core['offsets'] = (req) => this.log.offsets(req);
  offsetForTimestamp: Core['offsetForTimestamp'] = (req) => this.log.offsetForTimestamp(req);
  deleteRecords: Core['deleteRecords'] = (req) => this.log.deleteRecords(req);
  initProducer: Core['initProducer'] = (req) => this.producers.init(req);
  describeProducers: Core['describeProducers'] = (req) => this.producers.describe(req);
  commitOffsets: Core['commitOffsets'] = (req) => this.offsets_.commit(req);
  fetchOffsets: Core['fetchOffsets'] = (req) => this.offsets_.fetch(req);
  deleteOffsets: Core['deleteOffsets'] = (req) => this.offsets_.delete(req);
  listGroups: Core['listGroups'] = () => this.offsets_.listGroups();
  kvGet: Core['kvGet'] = (req) => this.kv.get(req);
  kvGetMany: Core['kvGetMany'] = (req) => this.kv.getMany(req);
  kvGetPrefix: Core['kvGetPrefix'] = (req) => this.kv.getPrefix(req);
  kvPut: Core['kvPut'] = (req) => this.kv.put(req);
  kvPutIfAbsent: Core['kvPutIfAbsent'] = (req) => this.kv.putIfAbsent(req);
  kvDelete: Core['kvDelete'] = (req) => this.kv.delete(req);
  kvIncr: Core['kvIncr'] = (req) => this.kv.incr(req);
  once: Core['once'] = (req) => this.kv.once(req);
  push: Core['push'] = (req) => this.native.push(req);
  pop: Core['pop'] = (req, options) => this.native.pop(req, options);
  ack: Core['ack'] = (req) => this.native.ack(req);
  renewLease: Core['renewLease'] = (req) => this.native.renewLease(req);
  transaction: Core['transaction'] = (req) => this.native.transaction(req);
  appendAt: Core['appendAt'] = (req) => this.copies.appendAt(req);

  // ─── Kafka transactions (./kafka-transactions.ts) ───────────────────────────

  addPartitionsToTxn: Core['addPartitionsToTxn'] = async (req) => (this.store.checkOpen(), this.store.kafkaTxns.addPartitions(req));
  addOffsetsToTxn: Core['addOffsetsToTxn'] = async (req) => (this.store.checkOpen(), this.store.kafkaTxns.addOffsets(req));
  txnOffsetCommit: Core['txnOffsetCommit'] = async (req) => (this.store.checkOpen(), this.store.kafkaTxns.txnOffsetCommit(req));
  endTxn: Core['endTxn'] = async (req) => (this.store.checkOpen(), this.store.kafkaTxns.endTxn(req));
  describeTransactions: Core['describeTransactions'] = async (req) => (this.store.checkOpen(), { transactions: this.store.kafkaTxns.describe(req?.transactionalIds) });
  listTransactions: Core['listTransactions'] = async (req) => (this.store.checkOpen(), { transactions: this.store.kafkaTxns.list(req) });
  unstableOffsets: Core['unstableOffsets'] = async (req) => {
    this.store.checkOpen();
    const group = validateGroupName(req?.group);
    const partitions = req.partitions === null || req.partitions === undefined ? null : requirePartitionRefs(req.partitions);
    return { partitions: this.store.kafkaTxns.unstableOffsets(group, partitions) };
  };

  // ─── ACLs, client quotas, SCRAM credentials ─────────────────────────────────

  createAcls: Core['createAcls'] = async (req) => (this.store.checkOpen(), this.acls.create(req));
  listAcls: Core['listAcls'] = async () => (this.store.checkOpen(), this.acls.list());
  deleteAcls: Core['deleteAcls'] = async (req) => (this.store.checkOpen(), this.acls.delete(req));
  alterClientQuotas: Core['alterClientQuotas'] = async (req) => (this.store.checkOpen(), this.quotas.alter(req));
  listClientQuotas: Core['listClientQuotas'] = async () => (this.store.checkOpen(), this.quotas.list());
  describeScramCredentials: Core['describeScramCredentials'] = async (req) => (this.store.checkOpen(), this.scram.describe(req));
  alterScramCredentials: Core['alterScramCredentials'] = async (req) => (this.store.checkOpen(), this.scram.alter(req));
  scramCredential: Core['scramCredential'] = async (req) => (this.store.checkOpen(), this.scram.get(req));

  // ─── Lifecycle and maintenance (./maintenance.ts) ──────────────────────────

  runMaintenance(): void {
    this.maintenance.runMaintenance();
  }

  runCompaction(): ReturnType<MemoryMaintenance['runCompaction']> {
    return this.maintenance.runCompaction();
  }

  abortExpiredTransactions(): void {
    this.maintenance.abortExpiredTransactions();
  }

  async close(): Promise<void> {
    if (this.store.closed) return;
    this.store.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const finish of [...this.store.pending]) finish();
  }
}

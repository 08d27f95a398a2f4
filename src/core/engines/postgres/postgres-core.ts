import type { Core } from '../../core.js';
import { TRANSACTION_SWEEP_INTERVAL_MS } from '../../rules/kafka-transactions.js';
import { requirePartitionRefs } from '../../rules/requests.js';
import { validateGroupName } from '../../rules/names.js';
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

export type { PostgresEngineOptions } from './store.js';

/**
 * The PostgreSQL engine: durable, and shared by every core on the same
 * database and schema. The rules (src/core/rules) decide; the domain files
 * read what they need under the right lock and write what they decided, each
 * call in one database transaction, so a call either happens whole or not at
 * all, and a restart changes no answer. Behaviour matches the memory engine
 * exactly: one behaviour suite runs against both.
 */
export class PostgresCore implements Core {
  private readonly store: PostgresStore;
  readonly queues: PostgresQueues;
  readonly log: PostgresLog;
  readonly producers: PostgresProducers;
  readonly offsets_: PostgresOffsets;
  readonly kv: PostgresKv;
  readonly native: PostgresNative;
  readonly copies: PostgresCopies;
  readonly maintenance: PostgresMaintenance;
  readonly access: PostgresAccess;
  readonly scram: PostgresScramCredentials;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(db: Database, wakeups: Wakeups, options: PostgresEngineOptions) {
    const s = (this.store = new PostgresStore(db, wakeups, options));
    this.queues = new PostgresQueues(s);
    this.log = new PostgresLog(s);
    this.producers = new PostgresProducers(s);
    this.offsets_ = new PostgresOffsets(s);
    this.kv = new PostgresKv(s);
    this.native = new PostgresNative(s);
    this.copies = new PostgresCopies(s);
    this.maintenance = new PostgresMaintenance(s);
    this.access = new PostgresAccess(db);
    this.scram = new PostgresScramCredentials(db);
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
  describeTransactions: Core['describeTransactions'] = async (req) => (this.store.checkOpen(), { transactions: await this.store.kafkaTxns.describe(req?.transactionalIds) });
  listTransactions: Core['listTransactions'] = async (req) => (this.store.checkOpen(), { transactions: await this.store.kafkaTxns.list(req) });
  unstableOffsets: Core['unstableOffsets'] = async (req) => {
    this.store.checkOpen();
    const group = validateGroupName(req?.group);
    const partitions = req.partitions === null || req.partitions === undefined ? null : requirePartitionRefs(req.partitions);
    return { partitions: await this.store.kafkaTxns.unstableOffsets(group, partitions) };
  };

  // ─── ACLs, client quotas (./access.ts), SCRAM credentials ──────────────────

  createAcls: Core['createAcls'] = async (req) => (this.store.checkOpen(), this.access.createAcls(req));
  listAcls: Core['listAcls'] = async () => (this.store.checkOpen(), this.access.listAcls());
  deleteAcls: Core['deleteAcls'] = async (req) => (this.store.checkOpen(), this.access.deleteAcls(req));
  alterClientQuotas: Core['alterClientQuotas'] = async (req) => (this.store.checkOpen(), this.access.alterClientQuotas(req));
  listClientQuotas: Core['listClientQuotas'] = async () => (this.store.checkOpen(), this.access.listClientQuotas());
  describeScramCredentials: Core['describeScramCredentials'] = async (req) => (this.store.checkOpen(), this.scram.describe(req));
  alterScramCredentials: Core['alterScramCredentials'] = async (req) => (this.store.checkOpen(), this.scram.alter(req));
  scramCredential: Core['scramCredential'] = async (req) => (this.store.checkOpen(), this.scram.get(req));

  // ─── Lifecycle and maintenance (./maintenance.ts) ──────────────────────────

  runMaintenance(): Promise<void> {
    return this.maintenance.runMaintenance();
  }

  runCompaction(): ReturnType<PostgresMaintenance['runCompaction']> {
    return this.maintenance.runCompaction();
  }

  abortExpiredTransactions(): Promise<void> {
    return this.maintenance.abortExpiredTransactions();
  }

  async close(): Promise<void> {
    if (this.store.closed) return;
    this.store.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    await this.maintenance.settled();
    for (const finish of [...this.store.pending]) finish();
    await this.store.wakeups.close();
    await this.store.db.close();
  }
}

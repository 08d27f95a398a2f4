import { randomUUID } from 'node:crypto';
import type {
  AppendAtRequest,
  AppendAtResult,
  AckRequest,
  AddPartitionsRequest,
  AlterQueueRequest,
  AddOffsetsToTxnRequest,
  AddPartitionsToTxnRequest,
  AddPartitionsToTxnResult,
  AppendPartitionResult,
  AppendRequest,
  AppendResult,
  CallOptions,
  CommitOffsetsRequest,
  CommittedOffset,
  Core,
  CreateQueueRequest,
  DeleteOffsetsRequest,
  DeleteRecordsRequest,
  DeleteRecordsResult,
  EndTxnRequest,
  KafkaTxnState,
  ListTransactionsRequest,
  TransactionDescription,
  TxnOffsetCommitRequest,
  FetchOffsetsRequest,
  FetchOffsetsResult,
  GroupSummary,
  InitProducerRequest,
  InitProducerResult,
  KvEntry,
  KvIncrRequest,
  KvPutRequest,
  KvPutResult,
  Lease,
  OffsetForTimestampRequest,
  OffsetForTimestampResult,
  OnceRequest,
  PartitionOffsets,
  PartitionRef,
  PopRequest,
  PopResult,
  ProducerState,
  PushRequest,
  PushResult,
  QueueConfig,
  QueueInfo,
  ReadError,
  ReadPartitionResult,
  ReadRequest,
  ReadResult,
  RenewLeaseRequest,
  TransactionRequest,
  TransactionResult,
  UnreadableRange,
} from '../../core.js';
import { DEFAULT_QUEUE_CONFIG, EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP } from '../../core.js';
import { BatchPos, setBaseOffset } from '../../../../protocol/records/batch-header.js';
import { CoreError } from '../../errors.js';
import { requireArray, requireCommittedOffset, requireInteger, requirePartitionCount } from '../../rules/arguments.js';
import { checkAckRequest, checkAppendRequest, checkPopRequest, checkReadRequest, requirePartitionRefs } from '../../rules/requests.js';
import { checkInitProducer, MAX_PRODUCER_EPOCH } from '../../rules/init-producer.js';
import { recordAtOrAfter } from '../../rules/timestamps.js';
import { appendRefusal, checkQueueRules, keepInPlace, parseAppend, prepareForStorage, storedBatchLimit, type AppendLimits, type ParsedAppend } from '../../rules/batches.js';
import { mergeQueueConfig, resolveQueueConfig } from '../../rules/config.js';
import { assemblePushResults, dedupCutoff, planPush, splitByHits, type DedupHit, type FirstOutcome, type PlannedPush, type PushPlan } from '../../rules/dedup.js';
import { checkKvWrite, decideIncr, decidePut, decidePutIfAbsent, kvValueFromJson, kvValueToJson, liveOrNull, ONCE_MARKER_VALUE, validateExpectedVersion, validateLifetime, validateOptionalLifetime } from '../../rules/kv.js';
import { deliveredWithGaps, inWindowBuffer, isLeaseLive, leaseHoldsOffset, popVisibleUntil, positionAfterAcks, requireCurrentLease } from '../../rules/leases.js';
import { queuesToRoute, routePushItems } from '../../rules/push-routing.js';
import { newQueuePartitionNames, validateGroupName, validateKvKey, validateKvNamespace, validateKvPrefix, validatePartitionName, validateQueueName } from '../../rules/names.js';
import { encodePushBatch, PopCollector } from '../../rules/native-records.js';
import { advanceWindows, checkPartitionSequences, isIdempotent, lastSequenceInWindow, type ProducerWindow, type RetainedBatch } from '../../rules/producer-window.js';
import { retentionStartOffset } from '../../rules/retention.js';
import { evaluateKvOperations, firstStoredDuplicate, firstUnheldAck, kvSlot, planTransaction, transactionPushResult } from '../../rules/transaction.js';
import { mintQueueId } from '../../rules/uuidv7.js';
import { Database, type Statements } from './database.js';
import { PostgresScramCredentials } from './scram-credentials.js';
import type { AlterScramCredentialsRequest, AlterScramCredentialsResult, ScramCredential, ScramCredentialRef, ScramUser } from '../../rules/scram-credentials.js';
import { GroupCommit } from './group-commit.js';
import { LogWrites, transactionIdHash } from './log-writes.js';
import { partitionKey, queueKey, Wakeups } from './wakeups.js';
import { PostgresTransactions, type AppendTransactions } from './kafka-transactions.js';
import { isAbortedBatch, TRANSACTION_SWEEP_INTERVAL_MS, transactionalProducers } from '../../rules/kafka-transactions.js';
import { compactPostgres } from './compaction.js';
import { emptyCompactionStats, refuseNativePushToCompacted, type CompactionStats } from '../../rules/compaction.js';
import { PostgresAccess } from './access.js';
import { checkAppendAtRequest, parseCopies } from '../../rules/copied-batches.js';
import { planCopies } from './copies.js';
import { PostgresCoordination } from './coordination.js';

/**
 * The PostgreSQL engine: durable, and shared by every core on the same
 * database and schema. The rules (src/core/rules) decide; this file reads
 * what they need under the right lock and writes what they decided, each
 * call in one database transaction, so a call either happens whole or not at
 * all, and a restart changes no answer. Behaviour matches the memory engine
 * exactly: one behaviour suite runs against both.
 */

export interface PostgresEngineOptions {
  /** Epoch-ms clock for TTLs, dedup windows, leases and retention; tests inject one. */
  clock: () => number;
  /** How often retention and expiry run; 0 turns the timer off (tests call runMaintenance). */
  maintenanceIntervalMs: number;
  /** How many append results the requestId ledger keeps. */
  appendLedgerSize: number;
  /** Coalesce concurrent appends into one transaction (off only to measure what it gains). */
  groupCommit: boolean;
  maxGroupSize: number;
  /** NOTIFY other processes of appends (their long-polls wake). */
  notifyAppends: boolean;
  /** How far produced batches may inflate while they are checked. */
  appendLimits: AppendLimits;
  /** How often the compactor looks at compacted queues; 0 turns the timer off (tests call runCompaction). */
  compactionIntervalMs: number;
  /** How long a coordinator lease lasts past its last renewal (./coordination.ts). */
  coordinatorLeaseMs: number;
}

interface PartitionRow {
  id: number;
  idx: number;
  name: string;
  next_offset: number;
  log_start_offset: number;
}

interface LockedPartitionRow extends PartitionRow {
  queue_id: string;
  queue_name: string;
  config: QueueConfig;
}

interface FoundPartitionRow {
  queue_id: string | null;
  config: QueueConfig | null;
  id: number | null;
  idx: number | null;
  name: string | null;
  next_offset: number | null;
  log_start_offset: number | null;
  partition_count: number | null;
  /** The first offset of the partition's earliest open Kafka transaction (its last stable offset), null when none. */
  open_txn_offset: number | null;
}

interface QueueRow {
  id: string;
  name: string;
  config: QueueConfig;
  created_at: number;
}

interface KvRow {
  ns: string;
  key: string;
  value: unknown;
  version: number;
  expires_at: number | null;
}

interface LeaseRow {
  id: string;
  owner: string;
  deadline: number;
  from_offset: number;
  to_offset: number;
  acked: number[];
  /** The offsets handed out, when there are gaps between them (rules/leases.ts positionAfterAcks). */
  delivered: number[] | null;
}

interface AppendCall {
  partitions: AppendRequest['partitions'];
  requestId: string | undefined;
  /** The partitions' batches, checked before the call joins a transaction (parseAppend). */
  parsed: ParsedAppend[];
}

interface PushTargets {
  queues: Map<string, QueueRow>;
}

interface PreparedPush {
  /** "queue\0partition" → the partition, locked. */
  partitions: Map<string, PartitionRow & { queueName: string; config: QueueConfig }>;
  hits: Map<string, Map<string, DedupHit>>;
}

interface CheckedAck {
  queue: QueueRow;
  partition: PartitionRow;
  req: AckRequest;
}

/** Thrown inside a transaction to roll it back and still answer. */
class RollbackWith<T> {
  constructor(readonly result: T) {}
}

const MAX_PREFIX_LIMIT = 10_000;
/** Batches a pop decodes per round trip. */
const POP_BATCH_ROWS = 64;

function groupKeyOf(queue: string, partition: string): string {
  return `${queue}\u0000${partition}`;
}

function toEntry(row: KvRow): KvEntry {
  // Read as JSON text (see kv.sql), so a counter past 2^53 keeps its exact digits.
  return { ns: row.ns, key: row.key, value: kvValueFromJson(row.value as string), version: row.version, expiresAt: row.expires_at };
}

export class PostgresCore implements Core {
  private readonly clock: () => number;
  private readonly appends: GroupCommit<AppendCall, AppendResult>;
  private readonly pending = new Set<() => void>();
  private maintenanceTimer: NodeJS.Timeout | null = null;
  private transactionSweep: NodeJS.Timeout | null = null;
  /** Kafka's transaction coordinator (./kafka-transactions.ts). */
  private readonly kafkaTxns: PostgresTransactions;
  private closed = false;
  private compactionTimer: NodeJS.Timeout | null = null;
  private compacting: Promise<CompactionStats> | null = null;
  /** Coordinator leases and stored group membership, shared with the other cores on the database. */
  readonly coordination: PostgresCoordination;

  constructor(
    private readonly db: Database,
    private readonly wakeups: Wakeups,
    private readonly options: PostgresEngineOptions,
  ) {
    this.clock = options.clock;
    this.appends = new GroupCommit((calls) => this.commitAppends(calls), options.maxGroupSize, options.groupCommit);
    this.coordination = new PostgresCoordination(db, () => this.clock(), options.coordinatorLeaseMs);
    this.kafkaTxns = new PostgresTransactions(db, {
      holdLease: (tx, transactionalId) => this.coordination.holdInTransaction(tx, 'transaction', transactionalId),
      clock: () => this.clock(),
      writeLog: (tx, writes) => this.write(tx, writes),
      wake: (writes) => this.wakeTouched(writes),
    });
    if (options.maintenanceIntervalMs > 0) {
      // One sweep at a time: a database that hangs must not collect a queue of them, each holding a connection.
      let sweeping = false;
      this.transactionSweep = setInterval(() => {
        if (sweeping) return;
        sweeping = true;
        void this.abortExpiredTransactions()
          .catch(() => {})
          .finally(() => (sweeping = false));
      }, Math.min(options.maintenanceIntervalMs, TRANSACTION_SWEEP_INTERVAL_MS));
      this.transactionSweep.unref();
      this.maintenanceTimer = setInterval(() => void this.runMaintenance().catch(() => {}), options.maintenanceIntervalMs);
      this.maintenanceTimer.unref();
    }
    if (options.compactionIntervalMs > 0) {
      this.compactionTimer = setInterval(() => void this.runCompaction().catch(() => {}), options.compactionIntervalMs);
      this.compactionTimer.unref();
    }
  }

  // ─── Queues ────────────────────────────────────────────────────────────────

  async createQueue(req: CreateQueueRequest): Promise<QueueInfo> {
    this.checkOpen();
    const name = validateQueueName(req?.name);
    const partitionNames = newQueuePartitionNames(req);
    const config = resolveQueueConfig(req.config);
    const created = await this.db.transaction(async (tx) => {
      const inserted = await tx.one('insert-queue', [mintQueueId(), name, config, this.clock()]);
      if (!inserted) return false;
      await tx.run('insert-partitions', [inserted['id'], partitionNames.map((_, i) => i), partitionNames]);
      return true;
    });
    if (!created && !req.ifNotExists) {
      throw new CoreError('queue_exists', `Queue "${name}" already exists; use ifNotExists to accept it as it is.`);
    }
    return (await this.describeQueue({ name }))!;
  }

  async listQueues(): Promise<QueueInfo[]> {
    this.checkOpen();
    return (await this.db.statements.run<QueueRow & { partitions: QueueInfo['partitions'] }>('describe-queues', [null])).map((r) => this.info(r));
  }

  async describeQueue(req: { name: string }): Promise<QueueInfo | null> {
    this.checkOpen();
    const name = validateQueueName(req?.name);
    const row = await this.db.statements.one<QueueRow & { partitions: QueueInfo['partitions'] }>('describe-queues', [name]);
    return row ? this.info(row) : null;
  }

  async deleteQueue(req: { name: string }): Promise<void> {
    this.checkOpen();
    const name = validateQueueName(req?.name);
    const partitionCount = await this.db.transaction(async (tx) => {
      const queue = await this.lockQueue(tx, name);
      const count = await tx.one<{ count: number }>('partition-count-and-names', [queue.id, 0]);
      await tx.run('delete-queue', [queue.id, name]);
      return count?.count ?? 0;
    });
    const keys = [queueKey(name)];
    for (let i = 0; i < partitionCount; i++) keys.push(partitionKey(name, i));
    this.wakeups.wake(keys);
  }

  async addPartitions(req: AddPartitionsRequest): Promise<QueueInfo> {
    this.checkOpen();
    const name = validateQueueName(req?.name);
    await this.db.transaction(async (tx) => {
      const queue = await this.lockQueue(tx, name);
      const total = requirePartitionCount(req.totalCount, 'totalCount');
      const { count } = (await tx.one<{ count: number }>('partition-count-and-names', [queue.id, 0]))!;
      if (total <= count) {
        throw new CoreError('invalid_argument', `Queue "${name}" already has ${count} partitions; totalCount must exceed that, got ${total}.`);
      }
      const indexes = Array.from({ length: total - count }, (_, i) => count + i);
      const taken = await tx.one<{ name: string }>('partition-name-taken', [queue.id, indexes.map(String)]);
      if (taken) {
        throw new CoreError('invalid_argument', `Queue "${name}" already has a partition named "${taken.name}" at another index; cannot add partition ${taken.name}.`);
      }
      await tx.run('insert-partitions', [queue.id, indexes, indexes.map(String)]);
    });
    return (await this.describeQueue({ name }))!;
  }

  async alterQueue(req: AlterQueueRequest): Promise<QueueInfo> {
    this.checkOpen();
    const name = validateQueueName(req?.name);
    await this.db.transaction(async (tx) => {
      const queue = await this.lockQueue(tx, name);
      await tx.run('update-queue-config', [queue.id, mergeQueueConfig(queue.config, req.config)]);
    });
    return (await this.describeQueue({ name }))!;
  }

  // ─── The log ───────────────────────────────────────────────────────────────

  async append(req: AppendRequest): Promise<AppendResult> {
    this.checkOpen();
    const { partitions: parts } = checkAppendRequest(req);
    // Records are checked (and inflated) here, outside the transaction, so no partition lock waits on them.
    return this.appends.submit({ partitions: parts, requestId: req.requestId, parsed: parseAppend(parts, this.options.appendLimits) });
  }

  /**
   * One transaction for a group of append calls: lock every partition they
   * touch (in id order), read the ledger and the producer windows, let the
   * rules decide each call in arrival order (each seeing the windows and
   * offsets the earlier ones left), then write it all in one statement.
   */
  private async commitAppends(calls: AppendCall[]): Promise<AppendResult[]> {
    const now = this.clock();
    const { results, writes } = await this.db.transaction(async (tx) => {
      const refs = new Map<string, { queue: string; index: number }>();
      for (const call of calls) for (const p of call.partitions) refs.set(groupKeyOf(p.queue, String(p.partition)), { queue: p.queue, index: p.partition });
      const wanted = [...refs.values()];
      const locked = await tx.run<LockedPartitionRow>('lock-partitions', [wanted.map((r) => r.queue), wanted.map((r) => r.index)]);
      const partitions = new Map<string, LockedPartitionRow>();
      for (const row of locked) partitions.set(groupKeyOf(row.queue_name, String(row.idx)), row);

      let queueSizes = new Map<string, number>();
      if (partitions.size < refs.size) {
        const missing = [...new Set(wanted.filter((r) => !partitions.has(groupKeyOf(r.queue, String(r.index)))).map((r) => r.queue))];
        const rows = await tx.run<{ name: string; partition_count: number }>('existing-queues', [missing]);
        queueSizes = new Map(rows.map((r) => [r.name, r.partition_count]));
      }

      const requestIds = [...new Set(calls.map((c) => c.requestId).filter((id): id is string => id !== undefined))];
      const ledger = new Map<string, AppendResult>();
      if (requestIds.length > 0) {
        for (const row of await tx.run<{ request_id: string; result: AppendResult }>('append-ledger', [requestIds])) ledger.set(row.request_id, row.result);
      }

      // The windows to read are those of the producers in the batches.
      const parsed = calls.map((call) =>
        call.partitions.map((p, i): ParsedAppend | null => {
          const row = partitions.get(groupKeyOf(p.queue, String(p.partition)));
          return row ? checkQueueRules(call.parsed[i]!, row.config, now) : null;
        }),
      );
      const windowKeys = new Map<string, [number, number]>();
      calls.forEach((call, c) =>
        call.partitions.forEach((p, i) => {
          const result = parsed[c]![i];
          if (!result?.ok) return;
          const partitionId = partitions.get(groupKeyOf(p.queue, String(p.partition)))!.id;
          for (const b of result.batches) if (isIdempotent(b)) windowKeys.set(`${partitionId}:${b.producerId}`, [partitionId, b.producerId]);
        }),
      );
      const windows = new Map<string, ProducerWindow>();
      if (windowKeys.size > 0) {
        const keys = [...windowKeys.values()];
        const rows = await tx.run<{ partition_id: number; producer_id: number; producer_epoch: number; retained: RetainedBatch[]; last_timestamp: number }>(
          'producer-windows',
          [keys.map((k) => k[0]), keys.map((k) => k[1])],
        );
        for (const r of rows) {
          windows.set(`${r.partition_id}:${r.producer_id}`, { producerId: r.producer_id, producerEpoch: r.producer_epoch, batches: r.retained, lastTimestamp: r.last_timestamp });
        }
      }

      // The transactions of the transactional producers among the batches, read under the partitions' locks.
      const txnProducers = new Set<number>();
      for (const callParsed of parsed) for (const result of callParsed) if (result?.ok) for (const id of transactionalProducers(result.batches)) txnProducers.add(id);
      const transactions = await this.kafkaTxns.forAppend(tx, [...txnProducers], [...partitions.values()].map((r) => r.id));
      const txnFirsts = new Map<string, { transactionalId: string; partitionId: number; offset: number }>();

      const writes = new LogWrites();
      const results = calls.map((call, c): AppendResult => {
        if (call.requestId !== undefined) {
          const earlier = ledger.get(call.requestId);
          if (earlier) return structuredClone(earlier);
        }
        const inPlace = keepInPlace(call);
        const result: AppendResult = {
          partitions: call.partitions.map((p, i) => {
            const row = partitions.get(groupKeyOf(p.queue, String(p.partition)));
            return this.appendPartition(p, row, queueSizes, parsed[c]![i] ?? null, windows, writes, now, inPlace, transactions, txnFirsts);
          }),
        };
        if (call.requestId !== undefined) {
          ledger.set(call.requestId, result);
          writes.ledger.push({ requestId: call.requestId, result, createdAt: now });
        }
        return result;
      });
      await this.write(tx, writes);
      await this.kafkaTxns.recordFirstOffsets(tx, txnFirsts);
      return { results, writes };
    });
    this.wakeTouched(writes);
    return results.map((r) => structuredClone(r));
  }

  private appendPartition(
    p: AppendRequest['partitions'][number],
    row: LockedPartitionRow | undefined,
    queueSizes: Map<string, number>,
    parsed: ParsedAppend | null,
    windows: Map<string, ProducerWindow>,
    writes: LogWrites,
    now: number,
    inPlace: boolean,
    transactions: AppendTransactions,
    txnFirsts: Map<string, { transactionalId: string; partitionId: number; offset: number }>,
  ): AppendPartitionResult {
    const base = { queue: p.queue, partition: p.partition, baseOffset: -1, logAppendTime: -1, logStartOffset: -1, duplicate: false };
    if (!row || !parsed) {
      const count = queueSizes.get(p.queue);
      if (count === undefined) return { ...base, error: 'unknown_queue', errorMessage: `Queue "${p.queue}" does not exist.` };
      return { ...base, error: 'unknown_partition', errorMessage: `Queue "${p.queue}" has partitions 0 to ${count - 1}; there is no partition ${p.partition}.` };
    }
    if (!parsed.ok) return { ...base, logStartOffset: row.log_start_offset, ...appendRefusal(parsed) };
    const txnRefusal = PostgresTransactions.checkAppend(transactions, row.id, parsed.batches);
    if (txnRefusal) return { ...base, logStartOffset: row.log_start_offset, error: txnRefusal.error, errorMessage: txnRefusal.message };
    const windowOf = (producerId: number): ProducerWindow | null => windows.get(`${row.id}:${producerId}`) ?? null;
    const plan = checkPartitionSequences(parsed.batches, windowOf);
    if (plan.kind === 'duplicate') {
      return { ...base, error: null, baseOffset: plan.baseOffset, logStartOffset: row.log_start_offset, duplicate: true };
    }
    if (plan.kind !== 'append') return { ...base, logStartOffset: row.log_start_offset, error: plan.kind, errorMessage: plan.message };
    const logAppendTime = row.config.timestampType === 'LogAppendTime' ? now : null;
    const baseOffset = row.next_offset;
    const appended = parsed.batches.map((batch) => {
      const offset = row.next_offset;
      const maxTimestamp = logAppendTime ?? batch.maxTimestamp;
      const bytes = prepareForStorage(p.records, batch, offset, logAppendTime, inPlace);
      row.next_offset = offset + batch.offsetCount;
      writes.addBatch({ partitionId: row.id, baseOffset: offset, nextOffset: row.next_offset, maxTimestamp, appendedAt: now, bytes }, { queue: row.queue_name, index: row.idx });
      const txn = batch.isTransactional ? transactions.get(batch.producerId) : undefined;
      const firstKey = txn ? `${txn.transactionalId}\u0000${row.id}` : '';
      if (txn && !txnFirsts.has(firstKey)) txnFirsts.set(firstKey, { transactionalId: txn.transactionalId, partitionId: row.id, offset });
      return { ...batch, baseOffset: offset, maxTimestamp };
    });
    for (const [producerId, window] of advanceWindows(appended, windowOf)) {
      windows.set(`${row.id}:${producerId}`, window);
      writes.setWindow(row.id, window);
    }
    return { ...base, error: null, baseOffset, logAppendTime: logAppendTime ?? -1, logStartOffset: row.log_start_offset };
  }

  /** Copies at given offsets (./copies.ts): one transaction, outside the group commit, which decides offsets itself. */
  async appendAt(req: AppendAtRequest): Promise<AppendAtResult> {
    this.checkOpen();
    const parts = checkAppendAtRequest(req);
    // Checked (and inflated) before the transaction, so no partition lock waits on it.
    const parsed = parseCopies(parts, this.options.appendLimits);
    const { results, writes } = await this.db.transaction(async (tx) => {
      const planned = await planCopies(tx, parts, parsed, this.clock());
      await this.write(tx, planned.writes);
      return planned;
    });
    this.wakeTouched(writes);
    return { partitions: results };
  }

  private async write(tx: Statements, writes: LogWrites): Promise<void> {
    if (writes.isEmpty) return;
    const channel = this.options.notifyAppends && this.wakeups.notifyInTransaction ? this.wakeups.channel : '';
    writes.notified = channel !== '';
    await tx.run('append-write', writes.parameters(channel, channel ? this.wakeups.payloadFor([...writes.touched.values()]) : ''));
  }

  private wakeTouched(writes: LogWrites): void {
    const keys: string[] = [];
    for (const { queue, index } of writes.touched.values()) keys.push(partitionKey(queue, index), queueKey(queue));
    if (keys.length > 0) this.wakeups.wake(keys);
    if (this.options.notifyAppends) this.wakeups.announce([...writes.touched.values()], writes.notified);
  }

  async read(req: ReadRequest, options?: CallOptions): Promise<ReadResult> {
    this.checkOpen();
    const { partitions: parts, minBytes, maxWaitMs, maxBytes } = checkReadRequest(req);
    const compute = async (final: boolean): Promise<ReadResult | null> => {
      const result = await this.collectRead(parts, maxBytes, req.isolation);
      const bytes = result.partitions.reduce((n, p) => n + p.batches.reduce((m, b) => m + b.length, 0), 0);
      const anyError = result.partitions.some((p) => p.error !== null);
      return final || anyError || bytes >= minBytes || (bytes > 0 && bytes >= maxBytes) ? result : null;
    };
    const keys = parts.map((p) => partitionKey(p.queue, p.partition));
    return this.longPoll(keys, maxWaitMs, options?.signal, compute, () => this.emptyRead(parts));
  }

  private async findPartitions(refs: PartitionRef[]): Promise<FoundPartitionRow[]> {
    return this.db.statements.run<FoundPartitionRow>('find-partitions', [refs.map((r) => r.queue), refs.map((r) => r.partition)]);
  }

  private async collectRead(parts: ReadRequest['partitions'], maxBytes: number, isolation: ReadRequest['isolation']): Promise<ReadResult> {
    const rows = await this.findPartitions(parts);
    let total = 0;
    let first = true;
    const partitions: ReadPartitionResult[] = [];
    for (const [i, p] of parts.entries()) {
      const row = rows[i]!;
      if (row.queue_id === null || row.id === null) {
        partitions.push({ ...this.emptyPartitionRead(p), error: row.queue_id === null ? 'unknown_queue' : 'unknown_partition' });
        continue;
      }
      const highWatermark = row.next_offset!;
      const lastStableOffset = row.open_txn_offset ?? highWatermark;
      const offsets = { highWatermark, lastStableOffset, logStartOffset: row.log_start_offset! };
      if (p.fetchOffset < offsets.logStartOffset || p.fetchOffset > highWatermark) {
        partitions.push({ queue: p.queue, partition: p.partition, error: 'offset_out_of_range', ...offsets, batches: [], abortedTransactions: [] });
        continue;
      }
      const budget = Math.min(p.maxBytes, maxBytes - total);
      const readable = isolation === 'read_committed' ? lastStableOffset : highWatermark;
      const found = await this.db.statements.run<{ base_offset: number; bytes: Buffer }>('read-batches', [row.id, p.fetchOffset, readable, budget, first, maxBytes - total]);
      const batches = found.map((b) => b.bytes);
      for (const b of batches) total += b.length;
      if (batches.length > 0) first = false;
      const last = found.at(-1);
      const abortedTransactions =
        isolation === 'read_committed' && last ? await this.kafkaTxns.abortedIn(row.id, p.fetchOffset, last.base_offset + last.bytes.readInt32BE(BatchPos.LastOffsetDelta) + 1) : [];
      partitions.push({ queue: p.queue, partition: p.partition, error: null, ...offsets, batches, abortedTransactions });
    }
    return { partitions };
  }

  private emptyPartitionRead(p: PartitionRef): ReadPartitionResult {
    return { queue: p.queue, partition: p.partition, error: null, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, batches: [], abortedTransactions: [] };
  }

  private emptyRead(parts: PartitionRef[]): ReadResult {
    return { partitions: parts.map((p) => this.emptyPartitionRead(p)) };
  }

  async offsets(req: { partitions: PartitionRef[] }): Promise<{ partitions: (PartitionOffsets & { error: ReadError | null })[] }> {
    this.checkOpen();
    const parts = requirePartitionRefs(req?.partitions);
    const rows = parts.length > 0 ? await this.findPartitions(parts) : [];
    return {
      partitions: parts.map((p, i) => {
        const row = rows[i]!;
        if (row.queue_id === null || row.id === null) {
          return { queue: p.queue, partition: p.partition, error: row.queue_id === null ? 'unknown_queue' : 'unknown_partition', logStartOffset: -1, highWatermark: -1, lastStableOffset: -1 };
        }
        return { queue: p.queue, partition: p.partition, error: null, logStartOffset: row.log_start_offset!, highWatermark: row.next_offset!, lastStableOffset: row.open_txn_offset ?? row.next_offset! };
      }),
    };
  }

  async offsetForTimestamp(req: OffsetForTimestampRequest): Promise<OffsetForTimestampResult> {
    this.checkOpen();
    const row = await this.partition(req);
    const timestamp = requireInteger(req.timestamp, 'timestamp', -3);
    const answer = (offset: number, ts: number): OffsetForTimestampResult => ({ queue: req.queue, partition: req.partition, offset, timestamp: ts });
    const read = { where: `${req.queue}/${req.partition}`, maxBytes: storedBatchLimit(this.options.appendLimits) };
    const readable = req.isolation === 'read_committed' ? row.last_stable_offset : row.next_offset;
    if (timestamp === LATEST_TIMESTAMP) return answer(readable, -1);
    if (timestamp === EARLIEST_TIMESTAMP) return answer(row.log_start_offset, -1);
    if (timestamp === MAX_TIMESTAMP) {
      const best = await this.db.statements.one<{ max_timestamp: number; bytes: Buffer }>('max-timestamp-batch', [row.id]);
      const found = best && recordAtOrAfter(best.bytes, best.max_timestamp, row.log_start_offset, read);
      return found ? answer(found.offset, found.timestamp) : answer(-1, -1);
    }
    // Batches are found by their max timestamp; only the one holding the answer is decoded.
    let from = row.log_start_offset;
    for (;;) {
      const batch = await this.db.statements.one<{ next_offset: number; bytes: Buffer }>('batch-at-timestamp', [row.id, from, readable, timestamp]);
      if (!batch) return answer(-1, -1);
      const found = recordAtOrAfter(batch.bytes, timestamp, row.log_start_offset, read);
      if (found) return answer(found.offset, found.timestamp);
      from = batch.next_offset;
    }
  }

  async deleteRecords(req: DeleteRecordsRequest): Promise<DeleteRecordsResult> {
    this.checkOpen();
    const row = await this.partition(req);
    const before = requireInteger(req.beforeOffset, 'beforeOffset', -1);
    const lowWatermark = await this.db.transaction(async (tx) => {
      const locked = (await tx.one<PartitionRow>('lock-partition', [row.id]))!;
      const target = before === -1 ? locked.next_offset : before;
      if (target > locked.next_offset) {
        throw new CoreError('invalid_argument', `beforeOffset ${target} is past the high watermark ${locked.next_offset} of ${req.queue}/${req.partition}.`);
      }
      if (target <= locked.log_start_offset) return locked.log_start_offset;
      await tx.run('truncate-log', [row.id, target]);
      return target;
    });
    return { queue: req.queue, partition: req.partition, lowWatermark };
  }

  // ─── Idempotent producer ───────────────────────────────────────────────────

  async initProducer(req: InitProducerRequest): Promise<InitProducerResult> {
    this.checkOpen();
    const { producerId, producerEpoch } = checkInitProducer(req);
    if (req.transactionalId !== null) return this.kafkaTxns.initTransactional({ ...req, transactionalId: req.transactionalId, producerId, producerEpoch });
    return this.db.transaction(async (tx) => {
      const fresh = async (): Promise<InitProducerResult> => {
        const row = (await tx.one<{ producer_id: number; producer_epoch: number }>('new-producer'))!;
        return { producerId: row.producer_id, producerEpoch: row.producer_epoch };
      };
      const bump = async (identity: InitProducerResult): Promise<InitProducerResult> =>
        identity.producerEpoch + 1 >= MAX_PRODUCER_EPOCH ? fresh() : { producerId: identity.producerId, producerEpoch: identity.producerEpoch + 1 };
      let identity: InitProducerResult;
      const current = producerId >= 0 ? await tx.one<{ producer_epoch: number }>('producer-epoch', [producerId]) : null;
      // KIP-360: a producer bumping its own epoch after a sequence error keeps its id.
      identity = current && current.producer_epoch === producerEpoch ? await bump({ producerId, producerEpoch }) : await fresh();
      await tx.run('set-producer-epoch', [identity.producerId, identity.producerEpoch]);
      return identity;
    });
  }

  async describeProducers(req: PartitionRef): Promise<{ producers: ProducerState[] }> {
    this.checkOpen();
    const row = await this.partition(req);
    const rows = await this.db.statements.run<{ producer_id: number; producer_epoch: number; retained: RetainedBatch[]; last_timestamp: number }>('partition-producers', [row.id]);
    const openTransactions = await this.kafkaTxns.openFirstOffsets(row.id);
    return {
      producers: rows.map((r) => ({
        producerId: r.producer_id,
        producerEpoch: r.producer_epoch,
        lastSequence: lastSequenceInWindow({ producerId: r.producer_id, producerEpoch: r.producer_epoch, batches: r.retained, lastTimestamp: r.last_timestamp }),
        lastTimestamp: r.last_timestamp,
        coordinatorEpoch: -1,
        currentTxnStartOffset: openTransactions.get(r.producer_id) ?? -1,
      })),
    };
  }

  // ─── Consumer-group offsets ────────────────────────────────────────────────

  async commitOffsets(req: CommitOffsetsRequest): Promise<void> {
    this.checkOpen();
    const group = validateGroupName(req?.group);
    const offsets = requireArray<CommittedOffset>(req.offsets, 'offsets');
    // Everything is checked before anything is written.
    const checked = offsets.map((o, i) => {
      validateQueueName(o?.queue);
      requireInteger(o.partition, `offsets[${i}].partition`);
      requireCommittedOffset(o.offset, `offsets[${i}].offset`);
      const leaderEpoch = o.leaderEpoch === undefined ? -1 : requireInteger(o.leaderEpoch, `offsets[${i}].leaderEpoch`, -1);
      if (o.metadata !== null && o.metadata !== undefined && typeof o.metadata !== 'string') {
        throw new CoreError('invalid_argument', `offsets[${i}].metadata must be a string or null.`);
      }
      return { queue: o.queue, partition: o.partition, offset: o.offset, leaderEpoch, metadata: o.metadata ?? null };
    });
    if (checked.length === 0) return;
    const rows = await this.findPartitions(checked);
    checked.forEach((o, i) => this.requireFound(o, rows[i]!));
    const fence = req.fence;
    await this.db.transaction(async (tx) => {
      if (fence) await this.coordination.checkFence(tx, { kind: 'group', key: group, ...fence });
      await tx.run('commit-offsets', [
        group,
        checked.map((o) => o.queue),
        checked.map((o) => o.partition),
        checked.map((o) => o.offset),
        checked.map((o) => o.leaderEpoch),
        checked.map((o) => o.metadata),
      ]);
    });
  }

  async fetchOffsets(req: FetchOffsetsRequest): Promise<FetchOffsetsResult> {
    this.checkOpen();
    const group = validateGroupName(req?.group);
    type OffsetRow = { queue_name: string | null; partition_idx: number | null; committed: number | null; leader_epoch: number | null; metadata: string | null };
    if (req.partitions === null || req.partitions === undefined) {
      const rows = await this.db.statements.run<OffsetRow>('group-offsets-all', [group]);
      return { offsets: rows.map((r) => ({ queue: r.queue_name!, partition: r.partition_idx!, offset: r.committed!, leaderEpoch: r.leader_epoch!, metadata: r.metadata })) };
    }
    const parts = requirePartitionRefs(req.partitions);
    if (parts.length === 0) return { offsets: [] };
    const rows = await this.db.statements.run<OffsetRow>('group-offsets-some', [group, parts.map((p) => p.queue), parts.map((p) => p.partition)]);
    return {
      offsets: parts.map((p, i) => {
        const r = rows[i]!;
        return r.committed === null
          ? { queue: p.queue, partition: p.partition, offset: -1, leaderEpoch: -1, metadata: null }
          : { queue: p.queue, partition: p.partition, offset: r.committed, leaderEpoch: r.leader_epoch!, metadata: r.metadata };
      }),
    };
  }

  async deleteOffsets(req: DeleteOffsetsRequest): Promise<void> {
    this.checkOpen();
    const group = validateGroupName(req?.group);
    const parts = requirePartitionRefs(req.partitions);
    if (parts.length === 0) return;
    await this.db.statements.run('delete-offsets', [group, parts.map((p) => p.queue), parts.map((p) => p.partition)]);
  }

  async listGroups(): Promise<{ groups: GroupSummary[] }> {
    this.checkOpen();
    const rows = await this.db.statements.run<{ group_name: string }>('list-groups');
    return { groups: rows.map((r) => ({ group: r.group_name, protocolType: 'consumer' })) };
  }

  // ─── KV and once ───────────────────────────────────────────────────────────

  async kvGet(req: { ns: string; key: string }): Promise<KvEntry | null> {
    this.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const key = validateKvKey(req.key);
    const row = await this.db.statements.one<KvRow>('kv-get', [ns, key]);
    return row ? liveOrNull(toEntry(row), this.clock()) : null;
  }

  async kvGetMany(req: { ns: string; keys: string[] }): Promise<(KvEntry | null)[]> {
    this.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const keys = requireArray<string>(req.keys, 'keys').map((k) => validateKvKey(k));
    if (keys.length === 0) return [];
    const rows = await this.db.statements.run<KvRow>('kv-get-many', [ns, keys]);
    const now = this.clock();
    return rows.map((r) => (r.key === null ? null : liveOrNull(toEntry(r), now)));
  }

  async kvGetPrefix(req: { ns: string; prefix: string; limit?: number }): Promise<KvEntry[]> {
    this.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const prefix = validateKvPrefix(req.prefix);
    const limit = req.limit === undefined ? 1000 : requireInteger(req.limit, 'limit', 1, MAX_PREFIX_LIMIT);
    const rows = await this.db.statements.run<KvRow>('kv-get-prefix', [ns, prefix, this.clock(), limit]);
    return rows.map(toEntry);
  }

  async kvPut(req: KvPutRequest): Promise<KvPutResult> {
    this.checkOpen();
    const write = checkKvWrite(req);
    const expectedVersion = validateExpectedVersion(req.expectedVersion);
    return this.kvDecide(write.ns, write.key, (current, now) => decidePut(current, { ...write, expectedVersion }, now));
  }

  async kvPutIfAbsent(req: Omit<KvPutRequest, 'expectedVersion'>): Promise<KvPutResult> {
    this.checkOpen();
    const write = checkKvWrite(req);
    return this.kvDecide(write.ns, write.key, (current, now) => decidePutIfAbsent(current, write, now));
  }

  async kvDelete(req: { ns: string; key: string }): Promise<{ deleted: boolean }> {
    this.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const key = validateKvKey(req.key);
    return this.db.transaction(async (tx) => {
      const current = await this.lockKv(tx, ns, key);
      await tx.run('kv-delete', [ns, key]);
      return { deleted: liveOrNull(current, this.clock()) !== null };
    });
  }

  async kvIncr(req: KvIncrRequest): Promise<KvEntry> {
    this.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const key = validateKvKey(req.key);
    const lifetime = validateOptionalLifetime(req.lifetime);
    return this.db.transaction(async (tx) => {
      const entry = decideIncr(await this.lockKv(tx, ns, key), { ns, key, by: req.by, lifetime }, this.clock());
      await this.storeKv(tx, entry);
      return entry;
    });
  }

  async once(req: OnceRequest): Promise<{ won: boolean }> {
    this.checkOpen();
    const ns = validateKvNamespace(req?.ns);
    const key = validateKvKey(req.key);
    const lifetime = validateLifetime(req.lifetime);
    const decided = await this.kvDecide(ns, key, (current, now) => decidePutIfAbsent(current, { ns, key, value: ONCE_MARKER_VALUE, lifetime }, now));
    return { won: decided.applied };
  }

  private async kvDecide(ns: string, key: string, decide: (current: KvEntry | null, now: number) => KvPutResult): Promise<KvPutResult> {
    return this.db.transaction(async (tx) => {
      const decided = decide(await this.lockKv(tx, ns, key), this.clock());
      if (decided.applied && decided.entry) await this.storeKv(tx, decided.entry);
      return decided;
    });
  }

  /** The entry as stored (expired or not), with the key's lock held until commit. */
  private async lockKv(tx: Statements, ns: string, key: string): Promise<KvEntry | null> {
    await tx.run('lock-kv-slot', [ns, key]);
    const row = await tx.one<KvRow>('kv-get', [ns, key]);
    return row ? toEntry(row) : null;
  }

  private async storeKv(tx: Statements, entry: KvEntry): Promise<void> {
    await tx.run('kv-upsert', [entry.ns, entry.key, kvValueToJson(entry.value), entry.version, entry.expiresAt]);
  }

  // ─── Native push ───────────────────────────────────────────────────────────

  async push(req: PushRequest): Promise<PushResult> {
    this.checkOpen();
    const now = this.clock();
    const plan = planPush(await this.routePushes(req?.items), now);
    const { items, writes } = await this.db.transaction(async (tx) => {
      const targets = await this.checkPushTargets(tx, plan);
      const prepared = await this.preparePush(tx, plan, targets, now);
      const writes = new LogWrites();
      const items = this.planPushWrites(plan, prepared, writes, now);
      await this.write(tx, writes);
      return { items, writes };
    });
    this.wakeTouched(writes);
    return { items };
  }

  /** Pushes into Kafka topics get their partition (../../rules/push-routing.ts). */
  private async routePushes<T>(items: T): Promise<T> {
    const partitions = new Map<string, QueueInfo['partitions']>();
    for (const name of queuesToRoute(items)) {
      const row = await this.db.statements.one<QueueRow & { partitions: QueueInfo['partitions'] }>('describe-queues', [name]);
      if (row?.config.fixedPartitionCount) partitions.set(name, row.partitions);
    }
    return routePushItems(items, (name) => partitions.get(name));
  }

  /** Queues must exist and each payload must fit, before anything is written. */
  private async checkPushTargets(tx: Statements, plan: PushPlan): Promise<PushTargets> {
    const queues = new Map<string, QueueRow>();
    for (const item of plan.items) {
      let queue = queues.get(item.queue);
      if (!queue) {
        const rows = await tx.run<QueueRow & { partitions: unknown }>('describe-queues', [item.queue]);
        if (rows.length === 0) throw new CoreError('unknown_queue', `Queue "${item.queue}" does not exist; create it first.`);
        queue = rows[0]!;
        queues.set(item.queue, queue);
      }
      refuseNativePushToCompacted(queue.name, queue.config, item.index);
      const size = Buffer.byteLength(item.payloadJson, 'utf8');
      if (size > queue.config.maxMessageBytes) {
        throw new CoreError('invalid_argument', `Item ${item.index}'s payload is ${size} bytes as JSON; queue "${queue.name}" accepts at most ${queue.config.maxMessageBytes}.`);
      }
    }
    return { queues };
  }

  /**
   * Resolves the pushed-to partitions (a new name gets the next free index,
   * under the queue's row lock), locks them in id order, and looks their ids
   * up in the dedup index under that lock, so the answer is exact.
   */
  private async preparePush(tx: Statements, plan: PushPlan, targets: PushTargets, now: number): Promise<PreparedPush> {
    const partitions: PreparedPush['partitions'] = new Map();
    for (const group of plan.partitions) {
      const queue = targets.queues.get(group.queue)!;
      let row = await tx.one<PartitionRow>('partition-by-name', [queue.id, group.partition]);
      if (!row) {
        await tx.run('lock-queue', [queue.name]);
        row = (await tx.one<PartitionRow>('partition-by-name', [queue.id, group.partition])) ?? (await tx.one<PartitionRow>('create-named-partition', [queue.id, group.partition]))!;
      }
      partitions.set(groupKeyOf(group.queue, group.partition), { ...row, queueName: queue.name, config: queue.config });
    }
    const ids = [...new Set([...partitions.values()].map((p) => p.id))];
    if (ids.length === 0) return { partitions, hits: new Map() };
    const locked = new Map((await tx.run<PartitionRow>('lock-partitions-by-id', [ids])).map((r) => [r.id, r]));
    for (const p of partitions.values()) {
      const fresh = locked.get(p.id)!;
      p.next_offset = fresh.next_offset;
      p.log_start_offset = fresh.log_start_offset;
    }
    const hits = new Map<string, Map<string, DedupHit>>();
    for (const group of plan.partitions) {
      const key = groupKeyOf(group.queue, group.partition);
      const partition = partitions.get(key)!;
      const cutoff = dedupCutoff(now, partition.config.dedupWindowSeconds);
      const found = new Map<string, DedupHit>();
      hits.set(key, found);
      if (cutoff === null) continue;
      const byHash = new Map(group.firsts.map((item) => [transactionIdHash(item.transactionId).toString('hex'), item.transactionId]));
      const rows = await tx.run<{ id_hash: Buffer; message_id: string; message_offset: number }>('dedup-hits', [partition.id, [...byHash.keys()].map((h) => Buffer.from(h, 'hex')), cutoff]);
      for (const r of rows) found.set(byHash.get(r.id_hash.toString('hex'))!, { messageId: r.message_id, offset: r.message_offset });
    }
    return { partitions, hits };
  }

  private hitOf(prepared: PreparedPush, item: PlannedPush): DedupHit | null {
    return prepared.hits.get(groupKeyOf(item.queue, item.partition))?.get(item.transactionId) ?? null;
  }

  /** What a push writes: one batch per partition for the ids not already stored, and their dedup rows. */
  private planPushWrites(plan: PushPlan, prepared: PreparedPush, writes: LogWrites, now: number): PushResult['items'] {
    const outcomes = new Map<number, FirstOutcome>();
    for (const group of plan.partitions) {
      const key = groupKeyOf(group.queue, group.partition);
      const partition = prepared.partitions.get(key)!;
      const { toWrite, stored } = splitByHits(group, prepared.hits.get(key)!);
      for (const [index, hit] of stored) outcomes.set(index, { status: 'duplicate', ...hit, partitionIndex: partition.idx });
      if (toWrite.length === 0) continue;
      const baseOffset = partition.next_offset;
      const bytes = encodePushBatch(toWrite, now);
      setBaseOffset(bytes, 0, baseOffset);
      partition.next_offset = baseOffset + toWrite.length;
      writes.addBatch({ partitionId: partition.id, baseOffset, nextOffset: partition.next_offset, maxTimestamp: now, appendedAt: now, bytes }, { queue: partition.queueName, index: partition.idx });
      toWrite.forEach((item, i) => {
        const offset = baseOffset + i;
        outcomes.set(item.index, { status: 'queued', messageId: item.messageId, offset, partitionIndex: partition.idx });
        if (partition.config.dedupWindowSeconds > 0) {
          writes.dedup.push({ partitionId: partition.id, transactionId: item.transactionId, messageId: item.messageId, offset, storedAt: now });
        }
      });
    }
    return assemblePushResults(plan, (index) => outcomes.get(index)!);
  }

  // ─── Native consume ────────────────────────────────────────────────────────

  async pop(req: PopRequest, options?: CallOptions): Promise<PopResult> {
    this.checkOpen();
    const queue = await this.queue(req?.queue);
    const { partitionName, group, batch, waitMs, leaseMs } = checkPopRequest(req);
    let keys = [queueKey(queue.name)];
    if (partitionName !== undefined) {
      const row = await this.db.statements.one<PartitionRow>('partition-by-name', [queue.id, partitionName]);
      if (!row) throw new CoreError('unknown_partition', `Queue "${queue.name}" has no partition named "${partitionName}".`);
      keys = [partitionKey(queue.name, row.idx)];
    }
    const compute = async (final: boolean): Promise<PopResult | null> => {
      const popped = await this.tryPop(queue.name, partitionName, group, req.owner, batch, leaseMs);
      return popped ?? (final ? { messages: [], lease: null } : null);
    };
    return this.longPoll(keys, waitMs, options?.signal, compute, () => ({ messages: [], lease: null }));
  }

  private async tryPop(queueName: string, partitionName: string | undefined, group: string, owner: string, batch: number, leaseMs: number | undefined): Promise<PopResult | null> {
    return this.db.transaction(async (tx) => {
      // The queue may have been deleted while this pop waited: then there is nothing to pop.
      const queue = await tx.one<QueueRow>('describe-queues', [queueName]);
      if (!queue) return null;
      const now = this.clock();
      const all = await tx.run<PartitionRow>('queue-partitions', [queue.id]);
      const candidates = partitionName === undefined ? all : all.filter((p) => p.name === partitionName);
      const unreadable: UnreadableRange[] = [];
      for (const partition of candidates) {
        // Another popper on this partition and group: leave it to them.
        const lock = await tx.one<{ locked: boolean }>('try-lock-consumer', [partition.id, group]);
        if (!lock?.locked) continue;
        const held = await tx.one<LeaseRow>('lease-for-update', [partition.id, group]);
        if (held && isLeaseLive(held, now)) continue;
        if (held) await tx.run('delete-lease', [partition.id, group]);
        const committed = await tx.one<{ committed: number }>('group-position', [group, queue.name, partition.idx]);
        const position = Math.max(committed?.committed ?? 0, partition.log_start_offset);
        if (position >= partition.next_offset) continue;
        // Records of an open Kafka transaction are not delivered: the pop stops at the last stable offset.
        const lastStable = (await tx.one<{ first_offset: number | null }>('txn-open-offsets', [[partition.id]]))?.first_offset ?? partition.next_offset;
        if (position >= lastStable) continue;
        if ((queue.config.windowBufferMs ?? 0) > 0) {
          const newest = await tx.one<{ appended_at: number }>('newest-append', [partition.id]);
          if (inWindowBuffer(queue.config.windowBufferMs, newest ? Number(newest.appended_at) : null, now)) continue;
        }
        const collected = await this.readMessages(tx, queue, partition, position, lastStable, batch, popVisibleUntil(queue.config.delayedProcessingMs ?? 0, now));
        if (collected.unreadable.length > 0) {
          unreadable.push(...collected.unreadable);
          await tx.run('set-group-position', [group, queue.name, partition.idx, collected.position]);
        }
        const { messages } = collected;
        if (messages.length === 0) continue;
        const lease: Lease = { id: randomUUID(), queue: queue.name, partition: partition.name, consumerGroup: group, owner, deadline: now + (leaseMs ?? queue.config.leaseMs) };
        await tx.run('insert-lease', [lease.id, partition.id, group, owner, lease.deadline, collected.position, messages[messages.length - 1]!.offset + 1, deliveredWithGaps(messages.map((m) => m.offset))]);
        return { messages, lease, ...(unreadable.length > 0 ? { unreadable } : {}) };
      }
      return unreadable.length > 0 ? { messages: [], lease: null, unreadable } : null;
    });
  }

  private async readMessages(tx: Statements, queue: QueueRow, partition: PartitionRow, position: number, lastStable: number, batch: number, visibleUntil: number): Promise<PopCollector> {
    const where = { queue: queue.name, queueId: queue.id, partition: partition.name, partitionIndex: partition.idx };
    const collected = new PopCollector(position, batch, where, storedBatchLimit(this.options.appendLimits), visibleUntil);
    const aborted = await this.kafkaTxns.abortedFrom(tx, partition.id, position);
    let from = position;
    for (;;) {
      const rows = await tx.run<{ base_offset: number; next_offset: number; bytes: Buffer }>('native-batches', [partition.id, from, POP_BATCH_ROWS]);
      for (const row of rows) {
        if (row.base_offset >= lastStable) return collected;
        if (!collected.take({ nextOffset: row.next_offset, bytes: row.bytes }, (producerId) => isAbortedBatch(aborted, producerId, row.base_offset))) return collected;
      }
      if (rows.length < POP_BATCH_ROWS) return collected;
      from = rows[rows.length - 1]!.next_offset;
    }
  }

  async ack(req: AckRequest): Promise<{ acked: boolean }> {
    this.checkOpen();
    const { acked, woken } = await this.db.transaction(async (tx) => {
      const checked = await this.checkAck(tx, req);
      return this.applyAck(tx, checked);
    });
    if (woken) this.wakeups.wake(woken);
    return { acked };
  }

  /** Validates an ack and resolves its partition; a stale leaseId fails the call. */
  private async checkAck(tx: Statements, req: AckRequest): Promise<CheckedAck> {
    const queue = await this.queue(req?.queue, tx);
    const { partitionName: name, group } = checkAckRequest(req);
    const partition = await tx.one<PartitionRow>('partition-by-name', [queue.id, name]);
    if (!partition) throw new CoreError('unknown_partition', `Queue "${queue.name}" has no partition named "${name}".`);
    await tx.run('lock-consumer', [partition.id, group]);
    if (req.leaseId !== undefined) {
      const lease = await tx.one<LeaseRow>('lease-for-update', [partition.id, group]);
      requireCurrentLease(lease, req.leaseId, this.clock(), `group "${group}" on ${queue.name}/${name}`);
    }
    return { queue, partition, req };
  }

  /**
   * Completed: the offset is done; the group's position moves over every done
   * offset at its front, and the lease ends when all it handed out is done.
   * Failed: the lease ends and the group's position stays, so the message and
   * those after it are delivered again. Returns the wake-up keys for poppers
   * when the lease ended.
   */
  private async leaseOfAck(tx: Statements, { partition, req }: CheckedAck): Promise<LeaseRow | null> {
    const lease = await tx.one<LeaseRow>('lease-for-update', [partition.id, req.consumerGroup]);
    const range = lease && { deadline: lease.deadline, fromOffset: lease.from_offset, toOffset: lease.to_offset };
    return leaseHoldsOffset(range, req.offset, this.clock()) ? lease : null;
  }

  private async ackHolds(tx: Statements, checked: CheckedAck): Promise<boolean> {
    return (await this.leaseOfAck(tx, checked)) !== null;
  }

  private async applyAck(tx: Statements, checked: CheckedAck): Promise<{ acked: boolean; woken: string[] | null }> {
    const { queue, partition, req } = checked;
    const lease = await this.leaseOfAck(tx, checked);
    if (!lease) return { acked: false, woken: null };
    const woken = [partitionKey(queue.name, partition.idx), queueKey(queue.name)];
    if (req.status === 'failed') {
      await tx.run('delete-lease', [partition.id, req.consumerGroup]);
      return { acked: true, woken };
    }
    const acked = new Set(lease.acked);
    acked.add(req.offset);
    const committed = await tx.one<{ committed: number }>('group-position', [req.consumerGroup, queue.name, partition.idx]);
    const from = Math.max(committed?.committed ?? 0, lease.from_offset);
    const position = positionAfterAcks(from, acked, lease.delivered, lease.to_offset);
    await tx.run('set-group-position', [req.consumerGroup, queue.name, partition.idx, position]);
    if (position >= lease.to_offset) {
      await tx.run('delete-lease', [partition.id, req.consumerGroup]);
      return { acked: true, woken };
    }
    await tx.run('set-lease-acked', [partition.id, req.consumerGroup, [...acked].filter((o) => o >= position)]);
    return { acked: true, woken: null };
  }

  async renewLease(req: RenewLeaseRequest): Promise<Lease> {
    this.checkOpen();
    const extendMs = requireInteger(req?.extendMs, 'extendMs', 1);
    const leaseId = typeof req.leaseId === 'string' && /^[0-9a-f-]{36}$/i.test(req.leaseId) ? req.leaseId : null;
    return this.db.transaction(async (tx) => {
      const now = this.clock();
      const row = leaseId
        ? await tx.one<{ id: string; group_name: string; owner: string; deadline: number; partition_name: string; queue_name: string }>('lease-by-id', [leaseId])
        : null;
      if (!row || !isLeaseLive(row, now)) {
        throw new CoreError('unknown_lease', `Lease ${String(req.leaseId)} is not held: it expired, was released or never existed. Pop again to get a new lease.`);
      }
      const deadline = now + extendMs;
      await tx.run('extend-lease', [row.id, deadline]);
      return { id: row.id, queue: row.queue_name, partition: row.partition_name, consumerGroup: row.group_name, owner: row.owner, deadline };
    });
  }

  // ─── Native transaction ────────────────────────────────────────────────────

  async transaction(req: TransactionRequest): Promise<TransactionResult> {
    this.checkOpen();
    const now = this.clock();
    const plan = planTransaction({ ...req, operations: await this.routePushes(req?.operations) }, now);
    try {
      const { result, writes, woken } = await this.db.transaction(async (tx) => {
        const targets = await this.checkPushTargets(tx, plan.push);
        const acks: { opIndex: number; checked: CheckedAck }[] = [];
        // Consumer locks in one global order, so two transactions acking the same partitions cannot deadlock.
        const lockOrder = [...plan.acks].sort((a, b) => kvSlot(`${a.ack.queue}\u0000${a.ack.partition}`, a.ack.consumerGroup).localeCompare(kvSlot(`${b.ack.queue}\u0000${b.ack.partition}`, b.ack.consumerGroup)));
        for (const { opIndex, ack } of lockOrder) acks.push({ opIndex, checked: await this.checkAck(tx, ack) });
        // Applied in the order the caller gave.
        acks.sort((a, b) => a.opIndex - b.opIndex);
        const prepared = await this.preparePush(tx, plan.push, targets, now);
        const duplicate = firstStoredDuplicate(plan, (item) => this.hitOf(prepared, item));
        if (duplicate) throw new RollbackWith(duplicate);
        const current = new Map<string, KvEntry | null>();
        for (const { op } of [...plan.kv].sort((a, b) => kvSlot(a.op.ns, a.op.key).localeCompare(kvSlot(b.op.ns, b.op.key)))) {
          const slot = kvSlot(op.ns, op.key);
          if (!current.has(slot)) current.set(slot, await this.lockKv(tx, op.ns, op.key));
        }
        const kv = evaluateKvOperations(plan.kv, (ns, key) => current.get(kvSlot(ns, key)) ?? null, now);
        if (!kv.ok) throw new RollbackWith(kv.result);
        const holding: boolean[] = [];
        for (const [i, { checked }] of acks.entries()) holding.push(!plan.acks[i]!.required || (await this.ackHolds(tx, checked)));
        const unheld = firstUnheldAck(plan, (i) => holding[i]!);
        if (unheld) throw new RollbackWith(unheld);
        // Every check has passed: write it all in this transaction.
        const results: unknown[] = new Array(plan.operationCount);
        const writes = new LogWrites();
        this.planPushWrites(plan.push, prepared, writes, now).forEach((r, i) => (results[plan.opIndexOfItem[i]!] = transactionPushResult(r)));
        await this.write(tx, writes);
        const woken: string[] = [];
        for (const { opIndex, checked } of acks) {
          const applied = await this.applyAck(tx, checked);
          results[opIndex] = { acked: applied.acked };
          if (applied.woken) woken.push(...applied.woken);
        }
        for (const { ns, key, entry } of kv.writes.values()) {
          if (entry) await this.storeKv(tx, entry);
          else await tx.run('kv-delete', [ns, key]);
        }
        for (const [opIndex, result] of kv.results) results[opIndex] = structuredClone(result);
        return { result: { success: true, results } as TransactionResult, writes, woken };
      });
      this.wakeTouched(writes);
      if (woken.length > 0) this.wakeups.wake(woken);
      return result;
    } catch (e) {
      if (e instanceof RollbackWith) return e.result as TransactionResult;
      throw e;
    }
  }

  // ─── Kafka transactions ─────────────────────────────────────────────────────

  async addPartitionsToTxn(req: AddPartitionsToTxnRequest): Promise<AddPartitionsToTxnResult> {
    this.checkOpen();
    return this.kafkaTxns.addPartitions(req);
  }

  async addOffsetsToTxn(req: AddOffsetsToTxnRequest): Promise<void> {
    this.checkOpen();
    await this.kafkaTxns.addOffsets(req);
  }

  async txnOffsetCommit(req: TxnOffsetCommitRequest): Promise<void> {
    this.checkOpen();
    await this.kafkaTxns.txnOffsetCommit(req);
  }

  async endTxn(req: EndTxnRequest): Promise<{ producerId: number; producerEpoch: number }> {
    this.checkOpen();
    return this.kafkaTxns.endTxn(req);
  }

  async describeTransactions(req: { transactionalIds: string[] }): Promise<{ transactions: (TransactionDescription | null)[] }> {
    this.checkOpen();
    return { transactions: await this.kafkaTxns.describe(req?.transactionalIds) };
  }

  async listTransactions(req: ListTransactionsRequest): Promise<{ transactions: { transactionalId: string; producerId: number; state: KafkaTxnState }[] }> {
    this.checkOpen();
    return { transactions: await this.kafkaTxns.list(req) };
  }

  async unstableOffsets(req: { group: string; partitions: PartitionRef[] | null }): Promise<{ partitions: PartitionRef[] }> {
    this.checkOpen();
    const group = validateGroupName(req?.group);
    const partitions = req.partitions === null || req.partitions === undefined ? null : requirePartitionRefs(req.partitions);
    return { partitions: await this.kafkaTxns.unstableOffsets(group, partitions) };
  }

  /** Aborts the Kafka transactions open past their timeout (on a timer; tests call it after moving the clock). */
  async abortExpiredTransactions(): Promise<void> {
    if (!this.closed) await this.kafkaTxns.abortExpired();
  }

  // ─── Lifecycle and maintenance ─────────────────────────────────────────────

  /**
   * Retention and expiry: drops batches past retention, expired KV entries,
   * dedup entries outside their queue's window and old append-ledger entries.
   * Runs on a timer in one process at a time; tests call it after moving the clock.
   */
  async runMaintenance(): Promise<void> {
    if (this.closed) return;
    await this.abortExpiredTransactions();
    const now = this.clock();
    const ran = await this.db.transaction(async (tx) => {
      const lock = await tx.one<{ locked: boolean }>('try-lock-maintenance');
      if (!lock?.locked) return false;
      await tx.run('expire-dedup', [now]);
      await tx.run('expire-kv', [now]);
      await tx.run('txn-trim-aborted');
      await tx.run('trim-append-ledger', [this.options.appendLedgerSize]);
      return true;
    });
    if (!ran) return;
    const partitions = await this.db.statements.run<{ id: number; log_start_offset: number; config: QueueConfig }>('retention-partitions', [now]);
    for (const p of partitions) {
      // Each partition in its own short transaction: appends to it wait only for its own reaping.
      await this.db.transaction(async (tx) => {
        const locked = await tx.one<PartitionRow>('lock-partition', [p.id]);
        if (!locked) return;
        const batches = await tx.run<{ base_offset: number; next_offset: number; size: number; appended_at: number }>('partition-batch-sizes', [p.id]);
        const start = retentionStartOffset(
          batches.map((b) => ({ baseOffset: b.base_offset, nextOffset: b.next_offset, size: b.size, appendedAt: b.appended_at })),
          p.config,
          locked.log_start_offset,
          now,
        );
        if (start > locked.log_start_offset) await tx.run('truncate-log', [p.id, start]);
      });
    }
  }

  /**
   * One compactor round over every compacted queue's partitions
   * (./compaction.ts); a call while a round runs joins it. Runs on a timer;
   * tests and the benchmark call it.
   */
  runCompaction(): Promise<CompactionStats> {
    this.compacting ??= (async () => {
      const stats = emptyCompactionStats();
      if (this.closed) return stats;
      await compactPostgres(this.db, this.clock(), storedBatchLimit(this.options.appendLimits), stats, () => this.closed);
      return stats;
    })().finally(() => (this.compacting = null));
    return this.compacting;
  }

  // ─── ACLs and client quotas (./access.ts) ──────────────────────────────────

  private accessStore: PostgresAccess | null = null;
  private get access(): PostgresAccess {
    return (this.accessStore ??= new PostgresAccess(this.db));
  }

  createAcls: Core['createAcls'] = async (req) => (this.checkOpen(), this.access.createAcls(req));
  listAcls: Core['listAcls'] = async () => (this.checkOpen(), this.access.listAcls());
  deleteAcls: Core['deleteAcls'] = async (req) => (this.checkOpen(), this.access.deleteAcls(req));
  alterClientQuotas: Core['alterClientQuotas'] = async (req) => (this.checkOpen(), this.access.alterClientQuotas(req));
  listClientQuotas: Core['listClientQuotas'] = async () => (this.checkOpen(), this.access.listClientQuotas());
  // ─── SCRAM credentials (./scram-credentials.ts) ────────────────────────────

  private scramStore: PostgresScramCredentials | null = null;
  private get scram(): PostgresScramCredentials {
    return (this.scramStore ??= new PostgresScramCredentials(this.db));
  }

  async describeScramCredentials(req: { users?: string[] | null }): Promise<{ users: ScramUser[] }> {
    this.checkOpen();
    return this.scram.describe(req);
  }

  async alterScramCredentials(req: AlterScramCredentialsRequest): Promise<AlterScramCredentialsResult> {
    this.checkOpen();
    return this.scram.alter(req);
  }

  async scramCredential(req: ScramCredentialRef): Promise<ScramCredential | null> {
    this.checkOpen();
    return this.scram.get(req);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.maintenanceTimer) clearInterval(this.maintenanceTimer);
    if (this.transactionSweep) clearInterval(this.transactionSweep);
    if (this.compactionTimer) clearInterval(this.compactionTimer);
    await this.compacting?.catch(() => {});
    await this.coordination.releaseAll().catch(() => {});
    for (const finish of [...this.pending]) finish();
    await this.wakeups.close();
    await this.db.close();
  }

  // ─── Internals ─────────────────────────────────────────────────────────────

  private checkOpen(): void {
    if (this.closed) throw new CoreError('closed', 'The core is closed; open a new one.');
  }

  private info(row: QueueRow & { partitions: QueueInfo['partitions'] }): QueueInfo {
    // Settings added after a queue was stored read as their defaults.
    return { name: row.name, id: row.id, config: { ...DEFAULT_QUEUE_CONFIG, ...row.config }, partitions: row.partitions, createdAt: row.created_at };
  }

  private async lockQueue(tx: Statements, name: string): Promise<QueueRow> {
    const queue = await tx.one<QueueRow>('lock-queue', [name]);
    if (!queue) throw new CoreError('unknown_queue', `Queue "${name}" does not exist; create it first.`);
    return queue;
  }

  private async queue(name: unknown, tx: Statements = this.db.statements): Promise<QueueRow> {
    const checked = validateQueueName(name);
    const row = await tx.one<QueueRow>('describe-queues', [checked]);
    if (!row) throw new CoreError('unknown_queue', `Queue "${checked}" does not exist; create it first.`);
    return row;
  }

  /** A partition by reference, or a CoreError: for calls that fail whole. */
  private async partition(ref: PartitionRef): Promise<PartitionRow & { last_stable_offset: number }> {
    validateQueueName(ref?.queue);
    requireInteger(ref.partition, 'partition');
    const [row] = await this.findPartitions([ref]);
    return this.requireFound(ref, row!);
  }

  private requireFound(ref: PartitionRef, row: FoundPartitionRow): PartitionRow & { last_stable_offset: number } {
    if (row.queue_id === null) throw new CoreError('unknown_queue', `Queue "${ref.queue}" does not exist; create it first.`);
    if (row.id === null) {
      throw new CoreError('unknown_partition', `Queue "${ref.queue}" has partitions 0 to ${row.partition_count! - 1}; there is no partition ${ref.partition}.`);
    }
    return { id: row.id, idx: row.idx!, name: row.name!, next_offset: row.next_offset!, log_start_offset: row.log_start_offset!, last_stable_offset: row.open_txn_offset ?? row.next_offset! };
  }

  /**
   * A long-poll: answers at once when `compute(false)` is ready or there is no
   * wait; otherwise re-checks on every wake-up (one check at a time, the last
   * wake-up never lost) until ready, and at the deadline or on abort answers
   * `compute(true)`. close() answers `onClose()`.
   */
  private async longPoll<T>(keys: string[], waitMs: number, signal: AbortSignal | undefined, compute: (final: boolean) => Promise<T | null>, onClose: () => T): Promise<T> {
    if (waitMs <= 0 || signal?.aborted === true) return (await compute(true))!;
    // close() may have run while this call awaited its lookups.
    if (this.closed) return onClose();
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let checking = false;
      let again = false;
      // The first outcome wins; either way the timer, the wake-up and the listeners go.
      const finish = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unregister();
        signal?.removeEventListener('abort', onAbort);
        this.pending.delete(onCoreClose);
        outcome();
      };
      const settle = (value: T): void => finish(() => resolve(value));
      const fail = (e: unknown): void => finish(() => reject(e));
      const check = async (): Promise<void> => {
        if (this.closed) return settle(onClose());
        if (checking) {
          again = true;
          return;
        }
        checking = true;
        try {
          do {
            again = false;
            const value = await compute(false);
            if (value !== null) return settle(value);
          } while (again && !settled && !this.closed);
        } catch (e) {
          // A check cut off by close() is not an error: the poll answers as closed.
          if (this.closed) settle(onClose());
          else fail(e);
        } finally {
          checking = false;
        }
      };
      const finalAnswer = (): void => {
        if (settled) return;
        if (this.closed) return settle(onClose());
        compute(true).then(
          (v) => settle(v!),
          (e: unknown) => (this.closed ? settle(onClose()) : fail(e)),
        );
      };
      const onAbort = (): void => finalAnswer();
      const onCoreClose = (): void => settle(onClose());
      // Registered before the first check, so an append committed meanwhile still wakes it.
      const unregister = this.wakeups.register(keys, () => void check());
      const timer = setTimeout(finalAnswer, waitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.add(onCoreClose);
      void check();
    });
  }
}

import type {
  PartitionRef,
  QueueConfig,
  QueueInfo,
} from '../../core.js';
import { DEFAULT_QUEUE_CONFIG } from '../../core.js';
import { CoreError, unknownPartitionError, unknownQueueError } from '../../errors.js';
import { type AppendLimits } from '../../rules/batches.js';
import { Database, type Statements } from './database.js';
import { LogWrites } from './log-writes.js';
import { partitionKey, queueKey, Wakeups } from './wakeups.js';
import { PostgresTransactions } from './kafka-transactions.js';
import { PostgresCoordination } from './coordination.js';

/**
 * The PostgreSQL engine's shared parts and the lookups its domain files use
 * (queues.ts, log.ts, producers.ts, offsets.ts, kv.ts, native.ts,
 * maintenance.ts, ...): the database, the wake-ups, the options, the queue and
 * partition lookups, the log write every domain's appends go through, and
 * the long-poll. Each domain file holds the calls of one domain, each call in
 * one database transaction, and runs the SQL of the same name (sql/*.sql).
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

export interface PartitionRow {
  id: number;
  idx: number;
  name: string;
  next_offset: number;
  log_start_offset: number;
}

export interface LockedPartitionRow extends PartitionRow {
  queue_id: string;
  queue_name: string;
  config: QueueConfig;
}

export interface FoundPartitionRow {
  queue_id: string | null;
  config: QueueConfig | null;
  id: number | null;
  idx: number | null;
  name: string | null;
  next_offset: number | null;
  log_start_offset: number | null;
  /** The queue's partition count, given only when the partition is missing (for its error). */
  partition_count: number | null;
  /** The first offset of the partition's earliest open Kafka transaction (its last stable offset), null when none. */
  open_txn_offset: number | null;
}

export interface QueueRow {
  id: string;
  name: string;
  config: QueueConfig;
  created_at: number;
}

export function groupKeyOf(queue: string, partition: string): string {
  return `${queue}\u0000${partition}`;
}

export class PostgresStore {
  readonly clock: () => number;
  /** What close() answers the pending long-polls with. */
  readonly pending = new Set<() => void>();
  /** Kafka's transaction coordinator (./kafka-transactions.ts). */
  readonly kafkaTxns: PostgresTransactions;
  /** Coordinator leases and stored group membership, shared with the other cores on the database. */
  readonly coordination: PostgresCoordination;
  closed = false;

  constructor(
    readonly db: Database,
    readonly wakeups: Wakeups,
    readonly options: PostgresEngineOptions,
  ) {
    this.clock = options.clock;
    this.coordination = new PostgresCoordination(db, () => this.clock(), options.coordinatorLeaseMs);
    this.kafkaTxns = new PostgresTransactions(db, {
      holdLease: (tx, transactionalId) => this.coordination.holdInTransaction(tx, 'transaction', transactionalId),
      clock: () => this.clock(),
      writeLog: (tx, writes) => this.write(tx, writes),
      wake: (writes) => this.wakeTouched(writes),
    });
  }

  async write(tx: Statements, writes: LogWrites): Promise<void> {
    if (writes.isEmpty) return;
    const channel = this.options.notifyAppends && this.wakeups.notifyInTransaction ? this.wakeups.channel : '';
    writes.notified = channel !== '';
    await tx.run('append-write', writes.parameters(channel, channel ? this.wakeups.payloadFor([...writes.touched.values()]) : ''));
  }

  wakeTouched(writes: LogWrites): void {
    const keys: string[] = [];
    for (const { queue, index } of writes.touched.values()) keys.push(partitionKey(queue, index), queueKey(queue));
    if (keys.length > 0) this.wakeups.wake(keys);
    if (this.options.notifyAppends) this.wakeups.announce([...writes.touched.values()], writes.notified);
  }


  async findPartitions(refs: PartitionRef[]): Promise<FoundPartitionRow[]> {
    return this.db.statements.run<FoundPartitionRow>('find-partitions', [refs.map((r) => r.queue), refs.map((r) => r.partition)]);
  }


  checkOpen(): void {
    if (this.closed) throw new CoreError('closed', 'The core is closed; open a new one.');
  }

  info(row: QueueRow & { partitions: QueueInfo['partitions'] }): QueueInfo {
    // Settings added after a queue was stored read as their defaults.
    return { name: row.name, id: row.id, config: { ...DEFAULT_QUEUE_CONFIG, ...row.config }, partitions: row.partitions, createdAt: row.created_at };
  }

  async lockQueue(tx: Statements, name: string): Promise<QueueRow> {
    const queue = await tx.one<QueueRow>('lock-queue', [name]);
    if (!queue) throw unknownQueueError(name);
    return queue;
  }

  async queue(name: string, tx: Statements = this.db.statements): Promise<QueueRow> {
    const row = await tx.one<QueueRow>('describe-queues', [name]);
    if (!row) throw unknownQueueError(name);
    return row;
  }

  /** A partition by reference, or a CoreError: for calls that fail whole. */
  async partition(ref: PartitionRef): Promise<PartitionRow & { last_stable_offset: number }> {
    const [row] = await this.findPartitions([ref]);
    return this.requireFound(ref, row!);
  }

  requireFound(ref: PartitionRef, row: FoundPartitionRow): PartitionRow & { last_stable_offset: number } {
    if (row.queue_id === null) throw unknownQueueError(ref.queue);
    if (row.id === null) {
      throw unknownPartitionError(ref.queue, row.partition_count!, ref.partition);
    }
    return { id: row.id, idx: row.idx!, name: row.name!, next_offset: row.next_offset!, log_start_offset: row.log_start_offset!, last_stable_offset: row.open_txn_offset ?? row.next_offset! };
  }

  /**
   * Long because the poll's four flags (settled, checking, again, final) are
   * shared by the closures below, which must each see the others' changes.
   *
   * A long-poll: answers at once when `compute(false)` is ready or there is no
   * wait; otherwise re-checks on every wake-up (one check at a time, the last
   * wake-up never lost) until ready, and at the deadline or on abort answers
   * `compute(true)`. close() answers `onClose()`.
   */
  async longPoll<T>(keys: string[], waitMs: number, signal: AbortSignal | undefined, compute: (final: boolean) => Promise<T | null>, onClose: () => T): Promise<T> {
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
      // The final answer runs in the same one-at-a-time loop as the checks: computed beside a check, the
      // check's result (a pop's claimed lease) would be dropped when the final answer settled first.
      let final = false;
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
            const asFinal = final;
            const value = await compute(asFinal);
            if (value !== null || asFinal) return settle(value!);
          } while ((again || final) && !settled && !this.closed);
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
        final = true;
        void check();
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

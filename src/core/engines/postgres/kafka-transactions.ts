import type {
  AbortedTransaction,
  KafkaTxnState,
  ListTransactionsRequest,
  PartitionRef,
  TransactionDescription,
} from '../../core.js';
import type { EngineKafkaTransactions } from '../../engine.js';
import type { TxnDecision, TxnUnitRequest, TxnView, TxnWrites } from '../../kafka-transactions/unit.js';
import { transactionMarker, type AbortedRange, type StoredTransaction } from '../../rules/kafka-transactions.js';
import type { Database, Statements } from './database.js';
import { LogWrites } from './log-writes.js';
import { offsetColumns } from './offset-columns.js';

/**
 * The PostgreSQL engine's store of Kafka transactions (sql/kafka-transactions.sql);
 * the coordinator that decides is the core's
 * (../../kafka-transactions/coordinator.ts). Every unit is one database
 * transaction that first locks the transactional id's row, so calls on one
 * id from any core run one at a time. Ending a transaction then locks its
 * partitions in id order, as appends do, and writes the markers through the
 * log's one write path; an append that holds a partition's lock first lands
 * before the marker, inside the transaction, as it must. The timeout sweep
 * is safe with several cores: each expired id is ended under its own row
 * lock, after its state is read again there.
 */

interface TransactionRow {
  transactional_id: string;
  producer_id: number;
  producer_epoch: number;
  timeout_ms: number;
  state: KafkaTxnState;
  started_at: number;
  last_producer_epoch: number;
}

function storedOf(row: TransactionRow | null): StoredTransaction | null {
  return row
    ? {
        transactionalId: row.transactional_id,
        producerId: row.producer_id,
        producerEpoch: row.producer_epoch,
        timeoutMs: row.timeout_ms,
        state: row.state,
        startedAt: row.started_at,
        lastProducerEpoch: row.last_producer_epoch,
      }
    : null;
}

/** What this needs of the engine. */
export interface PostgresTxnHost {
  /** In the call's transaction, before anything else: this node takes or keeps the id's coordinator lease, or the call is refused (not_coordinator). */
  holdLease(tx: Statements, transactionalId: string): Promise<void>;
  clock(): number;
  /** Writes the gathered batches (markers) through the log's write path, in `tx`. */
  writeLog(tx: Statements, writes: LogWrites): Promise<void>;
  /** Wakes the readers of what `writes` touched, after commit. */
  wake(writes: LogWrites): void;
}

/** The transactions an append's transactional producers are in, read under the partitions' locks. */
export type AppendTransactions = Map<number, { transactionalId: string; producerEpoch: number; state: KafkaTxnState; partitionIds: Set<number> }>;

export class PostgresTransactions implements EngineKafkaTransactions {
  constructor(
    private readonly db: Database,
    private readonly host: PostgresTxnHost,
  ) {}

  // ─── The coordinator's unit ───────────────────────────────────────────────

  /**
   * One database transaction: the id's coordinator lease (for a coordinator
   * call), the advisory lock that serializes InitProducerId before the row
   * exists, the row lock, what the request names, the core's decision, and
   * its writes. The partitions are looked up before, outside the lock.
   */
  async transact<R>(req: TxnUnitRequest, decide: (view: TxnView) => TxnDecision<R>): Promise<{ answer: R; saved: StoredTransaction | null }> {
    const id = req.transactionalId;
    const refs = req.partitions ?? [];
    const found = refs.length === 0 ? [] : await this.db.statements.run<{ queue_id: string | null; id: number | null; partition_count: number | null }>('find-partitions', [refs.map((r) => r.queue), refs.map((r) => r.partition)]);
    const ids = found.map((f) => f.id).filter((i): i is number => i !== null);
    const writes = new LogWrites();
    const outcome = await this.db.transaction(async (tx) => {
      if (req.coordinator) await this.host.holdLease(tx, id);
      if (req.creates) await tx.run('lock-transactional-producer', [id]);
      const stored = storedOf(await tx.one<TransactionRow>('txn-lock', [id]));
      const held = new Set<number>();
      if (req.verify === true && stored && ids.length > 0) for (const r of await tx.run<{ partition_id: number }>('txn-has-partitions', [id, ids])) held.add(Number(r.partition_id));
      const holdsGroup = req.group !== undefined && stored !== null && Boolean(await tx.one('txn-has-group', [id, req.group]));
      const decided = decide({
        now: this.host.clock(),
        stored,
        partitions: found.map((f) =>
          f.queue_id === null ? { missing: 'unknown_queue' as const } : f.id === null ? { missing: 'unknown_partition' as const, partitionCount: f.partition_count ?? 0 } : { held: held.has(f.id) },
        ),
        holdsGroup,
      });
      return { answer: decided.answer, saved: await this.store(tx, req, ids, decided.writes, writes) };
    });
    this.host.wake(writes);
    return outcome;
  }

  /** The decided writes, in TxnWrites' order. */
  private async store(tx: Statements, req: TxnUnitRequest, partitionIds: number[], w: TxnWrites, log: LogWrites): Promise<StoredTransaction | null> {
    const id = req.transactionalId;
    if (w.end) await this.end(tx, id, w.end, log);
    if (w.clear) await tx.run('txn-clear', [id]);
    let saved: StoredTransaction | null = null;
    if (w.save) {
      saved = w.save;
      if (w.newProducer === true) {
        const row = (await tx.one<{ producer_id: number; producer_epoch: number }>('new-producer'))!;
        saved = { ...saved, producerId: row.producer_id, producerEpoch: row.producer_epoch };
      }
      await tx.run('txn-set', [id, saved.producerId, saved.producerEpoch, saved.timeoutMs, saved.state, saved.startedAt, saved.lastProducerEpoch]);
    }
    if (w.addPartitions) await tx.run('txn-add-partitions', [id, partitionIds]);
    if (w.addGroup) await tx.run('txn-add-group', [id, req.group]);
    if (w.putOffsets) await tx.run('txn-put-offsets', [id, req.group, ...offsetColumns(w.putOffsets)]);
    if (w.producerEpoch && saved) await tx.run('set-producer-epoch', [saved.producerId, saved.producerEpoch]);
    return saved;
  }

  async expired(): Promise<string[]> {
    const rows = await this.db.statements.run<{ transactional_id: string }>('txn-expired', [this.host.clock()]);
    return rows.map((r) => r.transactional_id);
  }

  async describe(ids: string[]): Promise<(TransactionDescription | null)[]> {
    const out: (TransactionDescription | null)[] = [];
    for (const id of ids) {
      const txn = storedOf(await this.db.statements.one<TransactionRow>('txn-get', [id]));
      if (!txn) {
        out.push(null);
        continue;
      }
      const partitions = txn.state === 'Ongoing' ? await this.db.statements.run<{ queue_name: string; idx: number }>('txn-describe-partitions', [id]) : [];
      const { transactionalId, state, producerId, producerEpoch, timeoutMs, startedAt } = txn;
      out.push({ transactionalId, state, producerId, producerEpoch, timeoutMs, startedAt, partitions: partitions.map((p) => ({ queue: p.queue_name, partition: p.idx })) });
    }
    return out;
  }

  async list(req: Pick<ListTransactionsRequest, 'states' | 'producerIds'>): Promise<{ now: number; transactions: StoredTransaction[] }> {
    const now = this.host.clock();
    const rows = await this.db.statements.run<TransactionRow>('txn-list', [req.states, req.producerIds]);
    return { now, transactions: rows.map((r) => storedOf(r)!) };
  }

  async pendingOffsets(group: string): Promise<PartitionRef[]> {
    const rows = await this.db.statements.run<{ queue_name: string; partition_idx: number }>('txn-unstable', [group]);
    return rows.map((r) => ({ queue: r.queue_name, partition: r.partition_idx }));
  }

  // ─── The log's side ───────────────────────────────────────────────────────

  /** The transactions of an append's transactional producers; call with the partitions locked. */
  async forAppend(tx: Statements, producerIds: number[], partitionIds: number[]): Promise<AppendTransactions> {
    const found: AppendTransactions = new Map();
    if (producerIds.length === 0) return found;
    const rows = await tx.run<{ transactional_id: string; producer_id: number; producer_epoch: number; state: KafkaTxnState; partition_ids: (number | string)[] }>('txn-by-producers', [producerIds, partitionIds]);
    for (const r of rows) {
      found.set(r.producer_id, { transactionalId: r.transactional_id, producerEpoch: r.producer_epoch, state: r.state, partitionIds: new Set(r.partition_ids.map(Number)) });
    }
    return found;
  }

  /** Where each transaction's first batch on a partition landed (the update keeps an earlier one). */
  async recordFirstOffsets(tx: Statements, firsts: readonly { transactionalId: string; partition: number; offset: number }[]): Promise<void> {
    if (firsts.length === 0) return;
    await tx.run('txn-first-offsets', [firsts.map((f) => f.transactionalId), firsts.map((f) => f.partition), firsts.map((f) => f.offset)]);
  }

  /** The aborted transactions each read range meets (a Fetch's partitions, in one statement), in the ranges' order. */
  async abortedIn(ranges: { partitionId: number; fetchOffset: number; upTo: number }[]): Promise<AbortedTransaction[][]> {
    const found = ranges.map((): AbortedTransaction[] => []);
    if (ranges.length === 0) return found;
    const rows = await this.db.statements.run<{ ord: number; producer_id: number; first_offset: number }>('txn-aborted-in-ranges', [
      ranges.map((r) => r.partitionId),
      ranges.map((r) => r.fetchOffset),
      ranges.map((r) => r.upTo),
    ]);
    for (const row of rows) found[row.ord - 1]!.push({ producerId: row.producer_id, firstOffset: row.first_offset });
    return found;
  }

  /** The aborted ranges a native reader from `position` may meet. */
  async abortedFrom(tx: Statements, partitionId: number, position: number): Promise<AbortedRange[]> {
    const rows = await tx.run<{ producer_id: number; first_offset: number; last_offset: number }>('txn-aborted-from', [partitionId, position]);
    return rows.map((r) => ({ producerId: r.producer_id, firstOffset: r.first_offset, lastOffset: r.last_offset }));
  }

  async openFirstOffsets(partitionId: number): Promise<Map<number, number>> {
    const rows = await this.db.statements.run<{ producer_id: number; first_offset: number }>('txn-producer-open-offsets', [partitionId]);
    return new Map(rows.map((r) => [r.producer_id, r.first_offset]));
  }

  // ─── Internals ────────────────────────────────────────────────────────────

  /**
   * Writes the markers (stamped `markerEpoch`) to every partition of the
   * transaction, under their locks, enters an abort's ranges in the aborted
   * index, applies a commit's offsets, and clears the transaction.
   */
  private async end(tx: Statements, transactionalId: string, end: NonNullable<TxnWrites['end']>, writes: LogWrites): Promise<void> {
    const { commit, producerId, markerEpoch } = end;
    const now = this.host.clock();
    const partitions = await tx.run<{ id: number; idx: number; next_offset: number; queue_name: string; first_offset: number | null }>('txn-partitions', [transactionalId]);
    const aborted: { partitionId: number; firstOffset: number; lastOffset: number }[] = [];
    for (const p of partitions) {
      const offset = p.next_offset;
      const bytes = transactionMarker(commit, producerId, markerEpoch, offset, now);
      writes.addBatch({ partitionId: p.id, baseOffset: offset, nextOffset: offset + 1, maxTimestamp: now, appendedAt: now, bytes }, { queue: p.queue_name, index: p.idx });
      if (!commit && p.first_offset !== null) aborted.push({ partitionId: p.id, firstOffset: p.first_offset, lastOffset: offset });
    }
    await this.host.writeLog(tx, writes);
    if (partitions.length > 0) await tx.run('txn-marker-windows', [partitions.map((p) => p.id), producerId, markerEpoch, now]);
    if (aborted.length > 0) {
      await tx.run('txn-record-aborted', [aborted.map((a) => a.partitionId), aborted.map(() => producerId), aborted.map((a) => a.firstOffset), aborted.map((a) => a.lastOffset)]);
    }
    if (commit) await tx.run('txn-commit-offsets', [transactionalId]);
    await tx.run('txn-clear', [transactionalId]);
  }
}

import type {
  AbortedTransaction,
  AddOffsetsToTxnRequest,
  AddPartitionsToTxnRequest,
  AddPartitionsToTxnResult,
  EndTxnRequest,
  InitProducerRequest,
  InitProducerResult,
  KafkaTxnState,
  ListTransactionsRequest,
  PartitionRef,
  TransactionDescription,
  TxnProducer,
  TxnOffsetCommitRequest,
} from '../../core.js';
import { CoreError } from '../../errors.js';
import {
  abortedInRange,
  checkTimeout,
  decideEnd,
  decideTransactionalInit,
  endedState,
  requireAddable,
  requireCurrentProducer,
  type AbortedRange,
  type StoredTransaction,
} from '../../rules/kafka-transactions.js';
import { transactionMarker } from '../../rules/kafka-transactions.js';
import type { Database, Statements } from './database.js';
import { LogWrites } from './log-writes.js';
import { offsetColumns } from './offset-columns.js';

/**
 * The PostgreSQL engine's transaction coordinator (rules in
 * ../../rules/kafka-transactions.ts): every call is one database transaction
 * that first locks the transactional id's row, so calls on one id from any
 * core run one at a time. Ending a transaction then locks its partitions in
 * id order, as appends do, and writes the markers through the log's one
 * write path; an append that holds a partition's lock first lands before the
 * marker, inside the transaction, as it must. The timeout sweep is safe with
 * several cores: each expired id is aborted under its own row lock, after
 * its state is read again there.
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

function stored(row: TransactionRow | null): StoredTransaction | null {
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

export class PostgresTransactions {
  constructor(
    private readonly db: Database,
    private readonly host: PostgresTxnHost,
  ) {}

  // ─── The coordinator ──────────────────────────────────────────────────────

  /**
   * The transactional id's row, locked, for a call only its coordinator
   * serves: the node first takes or keeps the id's lease in this transaction.
   * (TxnOffsetCommit is not one: clients send it to the group's coordinator,
   * and it only records offsets under the id's row lock.)
   */
  private async lockAsCoordinator(tx: Statements, who: { transactionalId: string; producerId: number; producerEpoch: number }): Promise<StoredTransaction> {
    await this.host.holdLease(tx, who.transactionalId);
    return requireCurrentProducer(stored(await tx.one<TransactionRow>('txn-lock', [who.transactionalId])), who);
  }

  async initTransactional(req: InitProducerRequest & { transactionalId: string }): Promise<InitProducerResult> {
    const timeoutMs = checkTimeout(req.transactionTimeoutMs);
    const writes = new LogWrites();
    const identity = await this.db.transaction(async (tx) => {
      await this.host.holdLease(tx, req.transactionalId);
      // The advisory lock serializes InitProducerId for one id even before its row exists.
      await tx.run('lock-transactional-producer', [req.transactionalId]);
      const existing = stored(await tx.one<TransactionRow>('txn-lock', [req.transactionalId]));
      const decision = decideTransactionalInit(existing, req);
      if (decision.kind === 'same') return { producerId: decision.producerId, producerEpoch: decision.producerEpoch };
      let identity: InitProducerResult;
      if (decision.kind === 'new') {
        const row = (await tx.one<{ producer_id: number; producer_epoch: number }>('new-producer'))!;
        identity = { producerId: row.producer_id, producerEpoch: row.producer_epoch };
      } else {
        identity = { producerId: decision.producerId, producerEpoch: decision.producerEpoch };
      }
      // The fenced instance's open transaction is aborted under the new epoch, as Kafka's coordinator does.
      if (existing && existing.state === 'Ongoing') await this.end(tx, existing, false, identity.producerEpoch, writes);
      await tx.run('txn-set', [req.transactionalId, identity.producerId, identity.producerEpoch, timeoutMs, 'Empty', -1, decision.kind === 'bump' ? decision.lastProducerEpoch : -1]);
      await tx.run('set-producer-epoch', [identity.producerId, identity.producerEpoch]);
      return identity;
    });
    this.host.wake(writes);
    return identity;
  }

  async addPartitions(req: AddPartitionsToTxnRequest): Promise<AddPartitionsToTxnResult> {
    const who: TxnProducer = req;
    const refs = req.partitions;
    const found = refs.length === 0 ? [] : await this.db.statements.run<{ queue_id: string | null; id: number | null }>('find-partitions', [refs.map((r) => r.queue), refs.map((r) => r.partition)]);
    const ids = found.map((f) => f.id);
    return this.db.transaction(async (tx) => {
      const txn = await this.lockAsCoordinator(tx, who);
      if (req.verifyOnly === true) {
        const held = new Set((await tx.run<{ partition_id: number }>('txn-has-partitions', [who.transactionalId, ids.filter((i) => i !== null)])).map((r) => r.partition_id));
        return { partitions: refs.map((r, i) => ({ queue: r.queue, partition: r.partition, error: txn.state === 'Ongoing' && ids[i] !== null && held.has(ids[i]!) ? null : 'invalid_txn_state' as const })) };
      }
      requireAddable(txn);
      const partitions = refs.map((r, i) => ({
        queue: r.queue,
        partition: r.partition,
        error: found[i]!.queue_id === null ? ('unknown_queue' as const) : found[i]!.id === null ? ('unknown_partition' as const) : null,
      }));
      if (partitions.some((p) => p.error !== null)) return { partitions };
      await this.open(tx, txn);
      await tx.run('txn-add-partitions', [who.transactionalId, ids]);
      return { partitions };
    });
  }

  async addOffsets(req: AddOffsetsToTxnRequest): Promise<void> {
    const who: TxnProducer = req;
    const { group } = req;
    await this.db.transaction(async (tx) => {
      const txn = await this.lockAsCoordinator(tx, who);
      requireAddable(txn);
      await this.open(tx, txn);
      await tx.run('txn-add-group', [who.transactionalId, group]);
    });
  }

  async txnOffsetCommit(req: TxnOffsetCommitRequest): Promise<void> {
    const who: TxnProducer = req;
    const { group } = req;
    const { offsets } = req;
    if (offsets.length > 0) {
      const found = await this.db.statements.run<{ queue_id: string | null; id: number | null; partition_count: number | null }>('find-partitions', [offsets.map((o) => o.queue), offsets.map((o) => o.partition)]);
      found.forEach((f, i) => {
        if (f.queue_id === null) throw new CoreError('unknown_queue', `Queue "${offsets[i]!.queue}" does not exist; create it first.`);
        if (f.id === null) throw new CoreError('unknown_partition', `Queue "${offsets[i]!.queue}" has partitions 0 to ${(f.partition_count ?? 0) - 1}; there is no partition ${offsets[i]!.partition}.`);
      });
    }
    await this.db.transaction(async (tx) => {
      const txn = requireCurrentProducer(stored(await tx.one<TransactionRow>('txn-lock', [who.transactionalId])), who);
      if (txn.state !== 'Ongoing' || !(await tx.one('txn-has-group', [who.transactionalId, group]))) {
        throw new CoreError('invalid_txn_state', `Group "${group}" is not in an open transaction of "${who.transactionalId}"; call AddOffsetsToTxn (sendOffsetsToTransaction) first.`);
      }
      if (offsets.length === 0) return;
      await tx.run('txn-put-offsets', [who.transactionalId, group, ...offsetColumns(offsets)]);
    });
  }

  async endTxn(req: EndTxnRequest): Promise<InitProducerResult> {
    const who: TxnProducer = req;
    const writes = new LogWrites();
    const result = await this.db.transaction(async (tx) => {
      const txn = await this.lockAsCoordinator(tx, who);
      if (decideEnd(txn, req.commit) === 'end') await this.end(tx, txn, req.commit, txn.producerEpoch, writes);
      return { producerId: txn.producerId, producerEpoch: txn.producerEpoch };
    });
    this.host.wake(writes);
    return result;
  }

  async describe(ids: string[]): Promise<(TransactionDescription | null)[]> {
    const wanted = ids;
    const out: (TransactionDescription | null)[] = [];
    for (const id of wanted) {
      const txn = stored(await this.db.statements.one<TransactionRow>('txn-get', [id]));
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

  async list(req: ListTransactionsRequest): Promise<{ transactionalId: string; producerId: number; state: KafkaTxnState }[]> {
    const { states, producerIds } = req;
    const minDuration = req.minDurationMs ?? -1;
    const now = this.host.clock();
    const rows = await this.db.statements.run<{ transactional_id: string; producer_id: number; state: KafkaTxnState; started_at: number }>('txn-list', [states, producerIds]);
    return rows
      .filter((r) => minDuration < 0 || (r.started_at >= 0 && now - r.started_at > minDuration))
      .map((r) => ({ transactionalId: r.transactional_id, producerId: r.producer_id, state: r.state }));
  }

  async unstableOffsets(group: string, partitions: PartitionRef[] | null): Promise<PartitionRef[]> {
    const rows = await this.db.statements.run<{ queue_name: string; partition_idx: number }>('txn-unstable', [group]);
    const pending = rows.map((r) => ({ queue: r.queue_name, partition: r.partition_idx }));
    if (partitions === null) return pending;
    return partitions.filter((p) => pending.some((q) => q.queue === p.queue && q.partition === p.partition)).map((p) => ({ queue: p.queue, partition: p.partition }));
  }

  /**
   * Aborts the transactions open past their timeout, each in its own
   * database transaction under its row lock (another core may have ended it
   * meanwhile: its state is read again there). Kafka bumps the epoch when it
   * aborts a timed-out transaction, so the abandoned producer is fenced.
   */
  async abortExpired(): Promise<number> {
    const now = this.host.clock();
    const expired = await this.db.statements.run<{ transactional_id: string }>('txn-expired', [now]);
    let aborted = 0;
    for (const { transactional_id: id } of expired) {
      const writes = new LogWrites();
      const done = await this.db.transaction(async (tx) => {
        const txn = stored(await tx.one<TransactionRow>('txn-lock', [id]));
        if (!txn || txn.state !== 'Ongoing' || now - txn.startedAt <= txn.timeoutMs) return false;
        const epoch = txn.producerEpoch + 1;
        await this.end(tx, txn, false, epoch, writes);
        await tx.run('txn-set', [id, txn.producerId, epoch, txn.timeoutMs, 'CompleteAbort', txn.startedAt, -1]);
        await tx.run('set-producer-epoch', [txn.producerId, epoch]);
        return true;
      });
      this.host.wake(writes);
      if (done) aborted++;
    }
    return aborted;
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

  async abortedIn(partitionId: number, fetchOffset: number, upTo: number): Promise<AbortedTransaction[]> {
    const rows = await this.db.statements.run<{ producer_id: number; first_offset: number; last_offset: number }>('txn-aborted-in-range', [partitionId, fetchOffset, upTo]);
    return abortedInRange(rows.map((r) => ({ producerId: r.producer_id, firstOffset: r.first_offset, lastOffset: r.last_offset })), fetchOffset, upTo);
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

  /** Opens a transaction when none is: a clean set of partitions, groups and offsets, and its start time. */
  private async open(tx: Statements, txn: StoredTransaction): Promise<void> {
    if (txn.state === 'Ongoing') return;
    await tx.run('txn-clear', [txn.transactionalId]);
    await tx.run('txn-set', [txn.transactionalId, txn.producerId, txn.producerEpoch, txn.timeoutMs, 'Ongoing', this.host.clock(), txn.lastProducerEpoch]);
  }

  /**
   * Writes the markers (stamped `markerEpoch`) to every partition of the
   * transaction, under their locks, enters an abort's ranges in the aborted
   * index, applies a commit's offsets, and leaves the transaction ended.
   */
  private async end(tx: Statements, txn: StoredTransaction, commit: boolean, markerEpoch: number, writes: LogWrites): Promise<void> {
    const now = this.host.clock();
    const partitions = await tx.run<{ id: number; idx: number; next_offset: number; queue_name: string; first_offset: number | null }>('txn-partitions', [txn.transactionalId]);
    const aborted: { partitionId: number; firstOffset: number; lastOffset: number }[] = [];
    for (const p of partitions) {
      const offset = p.next_offset;
      const bytes = transactionMarker(commit, txn.producerId, markerEpoch, offset, now);
      writes.addBatch({ partitionId: p.id, baseOffset: offset, nextOffset: offset + 1, maxTimestamp: now, appendedAt: now, bytes }, { queue: p.queue_name, index: p.idx });
      if (!commit && p.first_offset !== null) aborted.push({ partitionId: p.id, firstOffset: p.first_offset, lastOffset: offset });
    }
    await this.host.writeLog(tx, writes);
    if (partitions.length > 0) await tx.run('txn-marker-windows', [partitions.map((p) => p.id), txn.producerId, markerEpoch, now]);
    if (aborted.length > 0) {
      await tx.run('txn-record-aborted', [aborted.map((a) => a.partitionId), aborted.map(() => txn.producerId), aborted.map((a) => a.firstOffset), aborted.map((a) => a.lastOffset)]);
    }
    if (commit) await tx.run('txn-commit-offsets', [txn.transactionalId]);
    await tx.run('txn-clear', [txn.transactionalId]);
    // The start time stays: Kafka's DescribeTransactions shows the last transaction's in CompleteCommit and CompleteAbort.
    await tx.run('txn-set', [txn.transactionalId, txn.producerId, txn.producerEpoch, txn.timeoutMs, endedState(commit), txn.startedAt, txn.lastProducerEpoch]);
  }
}

import type {
  AbortedTransaction,
  AddOffsetsToTxnRequest,
  AddPartitionsToTxnRequest,
  AddPartitionsToTxnResult,
  CommittedOffset,
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
  hasExpired,
  isAbortedBatch,
  requireAddable,
  requireCurrentProducer,
  type AbortedRange,
  type ProducerTransaction,
  type StoredTransaction,
} from '../../rules/kafka-transactions.js';

/**
 * The memory engine's transaction coordinator (rules in
 * ../../rules/kafka-transactions.ts). Every call runs without yielding, so
 * each is atomic, as the PostgreSQL engine's database transactions are.
 * Partitions are the engine's own objects, held here by identity: a deleted
 * and re-created topic has new ones.
 */

/** What this needs of the engine. `P` is the engine's partition object. */
export interface MemoryTxnHost<P extends object> {
  clock(): number;
  findPartition(ref: PartitionRef): { partition: P } | { error: 'unknown_queue' | 'unknown_partition' };
  /** Whether the partition still belongs to a live queue. */
  isLive(partition: P): boolean;
  /** Appends a commit or abort marker for the producer and wakes the partition's readers; answers its offset. */
  appendMarker(partition: P, commit: boolean, producerId: number, producerEpoch: number): number;
  setGroupOffsets(group: string, offsets: CommittedOffset[]): void;
  /** Checks a committed offset's partition exists (throws a CoreError when not). */
  requirePartition(ref: PartitionRef): void;
  newProducer(): InitProducerResult;
  /** Records the producer id's epoch, as every InitProducerId does. */
  noteProducerEpoch(identity: InitProducerResult): void;
}

interface MemoryTransaction extends StoredTransaction {
  /** "queue\0partition" → the partition and the engine's object for it. */
  partitions: Map<string, { ref: PartitionRef; partition: object }>;
  groups: Set<string>;
  /** group → "queue\0partition" → offset pending until commit. */
  pendingOffsets: Map<string, Map<string, CommittedOffset>>;
  /** "group\0queue\0partition" of pending offsets a plain commit came after: the commit leaves them. */
  overtaken: Set<string>;
}

/** Per partition: open transactions' first offsets and the aborted-transactions index. */
interface PartitionTransactions {
  open: Map<number, number>;
  aborted: AbortedRange[];
}

function slotOf(ref: PartitionRef): string {
  return `${ref.queue}\u0000${ref.partition}`;
}

export class MemoryTransactions<P extends object> {
  private readonly transactions = new Map<string, MemoryTransaction>();
  private readonly byProducer = new Map<number, string>();
  private readonly partitionState = new WeakMap<P, PartitionTransactions>();

  constructor(private readonly host: MemoryTxnHost<P>) {}

  // ─── The coordinator ──────────────────────────────────────────────────────

  initTransactional(req: InitProducerRequest & { transactionalId: string }): InitProducerResult {
    const timeoutMs = checkTimeout(req.transactionTimeoutMs);
    const existing = this.transactions.get(req.transactionalId) ?? null;
    const decision = decideTransactionalInit(existing, req);
    if (decision.kind === 'same') return { producerId: decision.producerId, producerEpoch: decision.producerEpoch };
    const identity = decision.kind === 'new' ? this.host.newProducer() : { producerId: decision.producerId, producerEpoch: decision.producerEpoch };
    // The open transaction of the fenced instance is aborted under the new epoch, as Kafka's coordinator does.
    if (existing && existing.state === 'Ongoing') this.end(existing, false, identity.producerEpoch, existing.producerId);
    if (existing) this.byProducer.delete(existing.producerId);
    const txn: MemoryTransaction = {
      transactionalId: req.transactionalId,
      producerId: identity.producerId,
      producerEpoch: identity.producerEpoch,
      timeoutMs,
      state: 'Empty',
      startedAt: -1,
      lastProducerEpoch: decision.kind === 'bump' ? decision.lastProducerEpoch : -1,
      partitions: new Map(),
      groups: new Set(),
      pendingOffsets: new Map(),
      overtaken: new Set(),
    };
    this.transactions.set(req.transactionalId, txn);
    this.byProducer.set(identity.producerId, req.transactionalId);
    this.host.noteProducerEpoch(identity);
    return identity;
  }

  addPartitions(req: AddPartitionsToTxnRequest): AddPartitionsToTxnResult {
    const who: TxnProducer = req;
    const refs = req.partitions;
    const txn = requireCurrentProducer(this.transactions.get(who.transactionalId) ?? null, who) as MemoryTransaction;
    if (req.verifyOnly === true) {
      return { partitions: refs.map((r) => ({ queue: r.queue, partition: r.partition, error: txn.state === 'Ongoing' && txn.partitions.has(slotOf(r)) ? null : 'invalid_txn_state' })) };
    }
    requireAddable(txn);
    const found = refs.map((r) => ({ ref: r, found: this.host.findPartition(r) }));
    const results = found.map(({ ref, found: f }) => ({ queue: ref.queue, partition: ref.partition, error: 'error' in f ? f.error : null }));
    if (results.some((r) => r.error !== null)) return { partitions: results };
    this.open(txn);
    for (const { ref, found: f } of found) {
      if ('partition' in f) txn.partitions.set(slotOf(ref), { ref: { queue: ref.queue, partition: ref.partition }, partition: f.partition });
    }
    return { partitions: results };
  }

  addOffsets(req: AddOffsetsToTxnRequest): void {
    const who: TxnProducer = req;
    const { group } = req;
    const txn = requireCurrentProducer(this.transactions.get(who.transactionalId) ?? null, who) as MemoryTransaction;
    requireAddable(txn);
    this.open(txn);
    txn.groups.add(group);
  }

  txnOffsetCommit(req: TxnOffsetCommitRequest): void {
    const who: TxnProducer = req;
    const { group } = req;
    const { offsets } = req;
    for (const o of offsets) this.host.requirePartition(o);
    const txn = requireCurrentProducer(this.transactions.get(who.transactionalId) ?? null, who) as MemoryTransaction;
    if (txn.state !== 'Ongoing' || !txn.groups.has(group)) {
      throw new CoreError('invalid_txn_state', `Group "${group}" is not in an open transaction of "${who.transactionalId}"; call AddOffsetsToTxn (sendOffsetsToTransaction) first.`);
    }
    let pending = txn.pendingOffsets.get(group);
    if (!pending) txn.pendingOffsets.set(group, (pending = new Map()));
    for (const o of offsets) {
      pending.set(slotOf(o), o);
      txn.overtaken.delete(`${group}\0${slotOf(o)}`);
    }
  }

  /** A plain OffsetCommit of the group: the pending transactional offsets of its partitions are older now. */
  notePlainCommit(group: string, refs: readonly PartitionRef[]): void {
    for (const txn of this.transactions.values()) {
      const pending = txn.pendingOffsets.get(group);
      if (!pending) continue;
      for (const ref of refs) if (pending.has(slotOf(ref))) txn.overtaken.add(`${group}\0${slotOf(ref)}`);
    }
  }

  endTxn(req: EndTxnRequest): InitProducerResult {
    const who: TxnProducer = req;
    const txn = requireCurrentProducer(this.transactions.get(who.transactionalId) ?? null, who) as MemoryTransaction;
    if (decideEnd(txn, req.commit) === 'end') this.end(txn, req.commit, txn.producerEpoch, txn.producerId);
    return { producerId: txn.producerId, producerEpoch: txn.producerEpoch };
  }

  describe(ids: string[]): (TransactionDescription | null)[] {
    return ids.map((id) => {
      const txn = this.transactions.get(id);
      if (!txn) return null;
      return {
        transactionalId: txn.transactionalId,
        state: txn.state,
        producerId: txn.producerId,
        producerEpoch: txn.producerEpoch,
        timeoutMs: txn.timeoutMs,
        startedAt: txn.startedAt,
        partitions: [...txn.partitions.values()].map((p) => ({ ...p.ref })),
      };
    });
  }

  list(req: ListTransactionsRequest): { transactionalId: string; producerId: number; state: KafkaTxnState }[] {
    const { states, producerIds } = req;
    const minDuration = req.minDurationMs ?? -1;
    const now = this.host.clock();
    return [...this.transactions.values()]
      .filter((t) => (states.length === 0 || states.includes(t.state)) && (producerIds.length === 0 || producerIds.includes(t.producerId)))
      .filter((t) => minDuration < 0 || (t.startedAt >= 0 && now - t.startedAt > minDuration))
      .sort((a, b) => (a.transactionalId < b.transactionalId ? -1 : 1))
      .map((t) => ({ transactionalId: t.transactionalId, producerId: t.producerId, state: t.state }));
  }

  unstableOffsets(group: string, partitions: PartitionRef[] | null): PartitionRef[] {
    const pending = new Map<string, PartitionRef>();
    for (const txn of this.transactions.values()) {
      for (const o of txn.pendingOffsets.get(group)?.values() ?? []) pending.set(slotOf(o), { queue: o.queue, partition: o.partition });
    }
    if (partitions === null) return [...pending.values()];
    return partitions.filter((p) => pending.has(slotOf(p))).map((p) => ({ queue: p.queue, partition: p.partition }));
  }

  /** Aborts every transaction open past its timeout; answers how many. */
  abortExpired(): number {
    const now = this.host.clock();
    let aborted = 0;
    for (const txn of this.transactions.values()) {
      if (!hasExpired(txn, now)) continue;
      // Kafka bumps the epoch when it aborts a timed-out transaction, so the abandoned producer is fenced.
      this.end(txn, false, txn.producerEpoch + 1, txn.producerId);
      txn.producerEpoch += 1;
      txn.lastProducerEpoch = -1;
      this.host.noteProducerEpoch({ producerId: txn.producerId, producerEpoch: txn.producerEpoch });
      aborted++;
    }
    return aborted;
  }

  // ─── The log's side ───────────────────────────────────────────────────────

  /** A producer's transaction as the append check needs it on `partition` (the core decides: ../../log/append.ts). */
  producerTransaction(producerId: number, partition: { handle: P; queue: string; index: number }): ProducerTransaction | null {
    const id = this.byProducer.get(producerId);
    const txn = id === undefined ? undefined : this.transactions.get(id);
    if (!txn) return null;
    const held = txn.partitions.get(slotOf({ queue: partition.queue, partition: partition.index }));
    return { transactionalId: txn.transactionalId, producerEpoch: txn.producerEpoch, state: txn.state, hasPartition: held !== undefined && held.partition === partition.handle };
  }

  /** After an accepted append: a transaction's first batch on a partition starts its open range there. */
  noteTransactionStart(partition: P, producerId: number, offset: number): void {
    const state = this.stateOf(partition);
    if (!state.open.has(producerId)) state.open.set(producerId, offset);
  }

  /** The first offset of the earliest open transaction, else the high watermark. */
  lastStableOffset(partition: P, highWatermark: number): number {
    const open = this.partitionState.get(partition)?.open;
    if (!open || open.size === 0) return highWatermark;
    return Math.min(highWatermark, ...open.values());
  }

  /** The open transaction's first offset of a producer on the partition, -1 when none. */
  openFirstOffset(partition: P, producerId: number): number {
    return this.partitionState.get(partition)?.open.get(producerId) ?? -1;
  }

  abortedIn(partition: P, fetchOffset: number, upTo: number): AbortedTransaction[] {
    return abortedInRange(this.partitionState.get(partition)?.aborted ?? [], fetchOffset, upTo);
  }

  isAborted(partition: P, producerId: number, baseOffset: number): boolean {
    return isAbortedBatch(this.partitionState.get(partition)?.aborted ?? [], producerId, baseOffset);
  }

  /** Retention moved the log start: aborted ranges wholly before it are no longer needed. */
  trimAborted(partition: P, logStartOffset: number): void {
    const state = this.partitionState.get(partition);
    if (state) state.aborted = state.aborted.filter((a) => a.lastOffset >= logStartOffset);
  }

  // ─── Internals ────────────────────────────────────────────────────────────

  private stateOf(partition: P): PartitionTransactions {
    let state = this.partitionState.get(partition);
    if (!state) this.partitionState.set(partition, (state = { open: new Map(), aborted: [] }));
    return state;
  }

  private open(txn: MemoryTransaction): void {
    if (txn.state === 'Ongoing') return;
    txn.state = 'Ongoing';
    txn.startedAt = this.host.clock();
    txn.partitions.clear();
    txn.groups.clear();
    txn.pendingOffsets.clear();
    txn.overtaken.clear();
  }

  /**
   * Writes the markers (stamped with `markerEpoch`) to every partition of the
   * transaction, closes its open ranges (an abort enters them in the aborted
   * index), applies or drops its pending offsets.
   */
  private end(txn: MemoryTransaction, commit: boolean, markerEpoch: number, producerId: number): void {
    for (const { partition } of txn.partitions.values()) {
      const p = partition as P;
      if (!this.host.isLive(p)) continue;
      const state = this.stateOf(p);
      const firstOffset = state.open.get(producerId);
      const markerOffset = this.host.appendMarker(p, commit, producerId, markerEpoch);
      state.open.delete(producerId);
      if (!commit && firstOffset !== undefined) state.aborted.push({ producerId, firstOffset, lastOffset: markerOffset });
    }
    if (commit) {
      for (const [group, offsets] of txn.pendingOffsets) {
        // Kafka keeps the most recently written offset: a plain commit made after the pending one wins.
        this.host.setGroupOffsets(group, [...offsets.values()].filter((o) => !txn.overtaken.has(`${group}\0${slotOf(o)}`)));
      }
    }
    // The start time stays: Kafka's DescribeTransactions shows the last transaction's in CompleteCommit and CompleteAbort.
    txn.state = endedState(commit);
    txn.partitions.clear();
    txn.groups.clear();
    txn.pendingOffsets.clear();
    txn.overtaken.clear();
  }
}

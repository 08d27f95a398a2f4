import type {
  AbortedTransaction,
  CommittedOffset,
  InitProducerResult,
  ListTransactionsRequest,
  PartitionRef,
  TransactionDescription,
} from '../../core.js';
import type { EngineKafkaTransactions } from '../../engine.js';
import type { TxnDecision, TxnUnitRequest, TxnView, TxnWrites } from '../../kafka-transactions/unit.js';
import type { MissingPartition } from '../../log/append.js';
import type { CopiedTxnState } from '../../rules/copied-transactions.js';
import { abortedInRange, hasExpired, isAbortedBatch, type AbortedRange, type ProducerTransaction, type StoredTransaction } from '../../rules/kafka-transactions.js';

/**
 * The memory engine's store of Kafka transactions: their state, partitions,
 * groups and pending offsets, and per partition the open transactions' first
 * offsets and the aborted ranges. The coordinator that decides is the
 * core's (../../kafka-transactions/coordinator.ts); each `transact` runs
 * without yielding, so each call is atomic, as the PostgreSQL engine's
 * database transactions are. Partitions are the engine's own objects, held
 * here by identity: a deleted and re-created topic has new ones.
 */

/** What this needs of the engine. `P` is the engine's partition object. */
export interface MemoryTxnHost<P extends object> {
  clock(): number;
  findPartition(ref: PartitionRef): { partition: P } | MissingPartition;
  /** Whether the partition still belongs to a live queue. */
  isLive(partition: P): boolean;
  /** Appends a commit or abort marker for the producer and wakes the partition's readers; answers its offset. */
  appendMarker(partition: P, commit: boolean, producerId: number, producerEpoch: number): number;
  setGroupOffsets(group: string, offsets: CommittedOffset[]): void;
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

export class MemoryTransactions<P extends object> implements EngineKafkaTransactions {
  private readonly transactions = new Map<string, MemoryTransaction>();
  private readonly byProducer = new Map<number, string>();
  private readonly partitionState = new WeakMap<P, PartitionTransactions>();

  constructor(private readonly host: MemoryTxnHost<P>) {}

  // ─── The coordinator's unit ───────────────────────────────────────────────

  transact<R>(req: TxnUnitRequest, decide: (view: TxnView) => TxnDecision<R>): { answer: R; saved: StoredTransaction | null } {
    const txn = this.transactions.get(req.transactionalId) ?? null;
    const found = (req.partitions ?? []).map((ref) => ({ ref, found: this.host.findPartition(ref) }));
    const { answer, writes } = decide({
      now: this.host.clock(),
      stored: txn && storedOf(txn),
      partitions: found.map(({ ref, found: f }) => ('missing' in f ? f : { held: req.verify === true && txn?.partitions.get(slotOf(ref))?.partition === f.partition })),
      holdsGroup: req.group !== undefined && txn?.groups.has(req.group) === true,
    });
    if (writes.end) this.end(txn!, writes.end);
    if (writes.clear) clear(txn!);
    let saved: StoredTransaction | null = null;
    if (writes.save) saved = this.save(writes.newProducer === true ? { ...writes.save, ...this.host.newProducer() } : writes.save);
    const current = this.transactions.get(req.transactionalId);
    if (writes.addPartitions) {
      for (const { ref, found: f } of found) if ('partition' in f) current!.partitions.set(slotOf(ref), { ref: { queue: ref.queue, partition: ref.partition }, partition: f.partition });
    }
    if (writes.addGroup) current!.groups.add(req.group!);
    if (writes.putOffsets) {
      const group = req.group!;
      let pending = current!.pendingOffsets.get(group);
      if (!pending) current!.pendingOffsets.set(group, (pending = new Map()));
      for (const o of writes.putOffsets) {
        pending.set(slotOf(o), o);
        current!.overtaken.delete(`${group}\0${slotOf(o)}`);
      }
    }
    if (writes.producerEpoch && saved) this.host.noteProducerEpoch(saved);
    return { answer, saved };
  }

  /** A plain OffsetCommit of the group: the pending transactional offsets of its partitions are older now. */
  notePlainCommit(group: string, refs: readonly PartitionRef[]): void {
    for (const txn of this.transactions.values()) {
      const pending = txn.pendingOffsets.get(group);
      if (!pending) continue;
      for (const ref of refs) if (pending.has(slotOf(ref))) txn.overtaken.add(`${group}\0${slotOf(ref)}`);
    }
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

  list(req: Pick<ListTransactionsRequest, 'states' | 'producerIds'>): { now: number; transactions: StoredTransaction[] } {
    const { states, producerIds } = req;
    const transactions = [...this.transactions.values()]
      .filter((t) => (states.length === 0 || states.includes(t.state)) && (producerIds.length === 0 || producerIds.includes(t.producerId)))
      .sort((a, b) => (a.transactionalId < b.transactionalId ? -1 : 1))
      .map(storedOf);
    return { now: this.host.clock(), transactions };
  }

  pendingOffsets(group: string): PartitionRef[] {
    const pending = new Map<string, PartitionRef>();
    for (const txn of this.transactions.values()) {
      for (const o of txn.pendingOffsets.get(group)?.values() ?? []) pending.set(slotOf(o), { queue: o.queue, partition: o.partition });
    }
    return [...pending.values()];
  }

  expired(): string[] {
    const now = this.host.clock();
    return [...this.transactions.values()].filter((t) => hasExpired(t, now)).map((t) => t.transactionalId);
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

  /** A copy's transactions (appendAt): its producers' open copied transactions and new aborted ranges (decided by ../../rules/copied-transactions.ts). */
  applyCopied(partition: P, copied: CopiedTxnState): void {
    if (copied.open.size === 0 && copied.aborted.length === 0) return;
    const state = this.stateOf(partition);
    for (const [producerId, first] of copied.open) {
      if (first === null) state.open.delete(producerId);
      else state.open.set(producerId, first);
    }
    state.aborted.push(...copied.aborted);
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

  /** Stores the transaction's state; its partitions, groups and offsets stay. */
  private save(state: StoredTransaction): StoredTransaction {
    const existing = this.transactions.get(state.transactionalId);
    if (existing && existing.producerId !== state.producerId) this.byProducer.delete(existing.producerId);
    const txn: MemoryTransaction = existing ?? { ...state, partitions: new Map(), groups: new Set(), pendingOffsets: new Map(), overtaken: new Set() };
    Object.assign(txn, storedOf(state));
    this.transactions.set(state.transactionalId, txn);
    this.byProducer.set(state.producerId, state.transactionalId);
    return storedOf(txn);
  }

  /**
   * Writes the markers to every partition of the transaction, closes its open
   * ranges (an abort enters them in the aborted index), applies or drops its
   * pending offsets, and clears it.
   */
  private end(txn: MemoryTransaction, end: NonNullable<TxnWrites['end']>): void {
    const { commit, producerId, markerEpoch } = end;
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
    clear(txn);
  }
}

function storedOf(txn: StoredTransaction): StoredTransaction {
  const { transactionalId, producerId, producerEpoch, timeoutMs, state, startedAt, lastProducerEpoch } = txn;
  return { transactionalId, producerId, producerEpoch, timeoutMs, state, startedAt, lastProducerEpoch };
}

/** A transaction with no partitions, groups or pending offsets. */
function clear(txn: MemoryTransaction): void {
  txn.partitions.clear();
  txn.groups.clear();
  txn.pendingOffsets.clear();
  txn.overtaken.clear();
}

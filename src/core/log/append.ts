import { unknownPartitionError } from '../errors.js';
import type { AppendPartitionResult, AppendRequest, AppendResult, QueueConfig } from '../core.js';
import { appendRefusal, checkQueueRules, keepInPlace, parseAppend, prepareForStorage, type AppendLimits, type ParsedAppend } from '../rules/batches.js';
import { checkTransactionalBatches, transactionalProducers, type ProducerTransaction } from '../rules/kafka-transactions.js';
import { advanceWindows, checkPartitionSequences, isIdempotent, type ProducerWindow } from '../rules/producer-window.js';

/**
 * Kafka's append, decided once for every engine. The core parses and checks
 * the batches (rules/batches.ts) before any lock, and names what the engine
 * must read for them (`AppendReads`). The engine gathers calls into its
 * atomic unit (memory: one call, synchronously; PostgreSQL: a group commit's
 * database transaction holding the partitions' locks), reads that state and
 * hands it over as an `AppendState`; `decideAppends` decides every call in
 * arrival order, each seeing the offsets, windows and ledger entries the
 * earlier ones left, and answers the results with the `AppendWrites` the
 * engine then stores in the same atomic unit.
 *
 * Per partition, in this order: the queue and the partition exist, the
 * queue's rules hold, a transactional batch belongs to its producer's open
 * transaction, the producer's sequences continue its window (an exact resend
 * answers its first offsets and writes nothing), then offsets are assigned
 * (and LogAppendTime stamped) and the windows advance.
 */

/** An append call, checked and parsed by the core, as it reaches the engine. */
export interface AppendCall {
  partitions: AppendRequest['partitions'];
  requestId: string | undefined;
  /** The partitions' batches, checked before the call joins the engine's atomic unit. */
  parsed: ParsedAppend[];
  /** Whether the stored batches may be the caller's bytes, rewritten in place (rules/batches.ts keepInPlace). */
  inPlace: boolean;
  readonly reads: AppendReads;
}

/** What deciding a call needs the engine to read (the engine of a group reads the union of its calls'). */
export interface AppendReads {
  /** Each partition the call names, with the idempotent producers whose windows there are needed. */
  partitions: { queue: string; index: number; producerIds: number[] }[];
  /** The transactional producers among the batches: their transactions are needed. */
  transactionalProducers: number[];
}

/** A partition as the engine holds it under the append's lock; `P` is the engine's handle for it. */
export interface AppendPartition<P> {
  handle: P;
  queue: string;
  index: number;
  config: QueueConfig;
  nextOffset: number;
  logStartOffset: number;
}

export type MissingPartition = { missing: 'unknown_queue' } | { missing: 'unknown_partition'; partitionCount: number };

/** The state an engine read for a group of calls, as the core decides against it. */
export interface AppendState<P> {
  now: number;
  partition(queue: string, index: number): AppendPartition<P> | MissingPartition;
  /** The stored answer to an earlier call with this request id. */
  earlierResult(requestId: string): AppendResult | undefined;
  window(partition: P, producerId: number): ProducerWindow | null;
  /** The transactional id a producer holds, as the append check needs it on this partition. */
  transaction(producerId: number, partition: AppendPartition<P>): ProducerTransaction | null;
}

export interface StoredBatchWrite<P> {
  partition: P;
  queue: string;
  index: number;
  baseOffset: number;
  nextOffset: number;
  maxTimestamp: number;
  appendedAt: number;
  bytes: Buffer;
}

/** What a group of appends writes, in one atomic unit. */
export interface AppendWrites<P> {
  /** In offset order per partition; a partition's last one gives its new high watermark. */
  batches: StoredBatchWrite<P>[];
  /** The producer windows the appends advanced, as they now stand. */
  windows: { partition: P; window: ProducerWindow }[];
  /** The request-id ledger's new entries. */
  ledger: { requestId: string; result: AppendResult }[];
  /** Where a transaction's first batch on a partition landed (an earlier stored one stays). */
  transactionStarts: { transactionalId: string; producerId: number; partition: P; offset: number }[];
}

export type DecideAppends = <P>(calls: readonly AppendCall[], state: AppendState<P>) => { results: AppendResult[]; writes: AppendWrites<P> };

/** The core's half before the engine: parse and check the batches, and name what must be read. */
export function prepareAppend(req: AppendRequest, limits: AppendLimits): AppendCall {
  const parsed = parseAppend(req.partitions, limits);
  return {
    partitions: req.partitions,
    requestId: req.requestId,
    parsed,
    inPlace: keepInPlace(req),
    // Named when an engine asks: the memory engine reads as it goes and never does.
    get reads() {
      return appendReads(req.partitions, parsed);
    },
  };
}

function appendReads(partitions: AppendRequest['partitions'], parsed: ParsedAppend[]): AppendReads {
  const producers = new Set<number>();
  const reads = partitions.map((p, i) => {
    const result = parsed[i]!;
    if (!result.ok) return { queue: p.queue, index: p.partition, producerIds: [] };
    for (const id of transactionalProducers(result.batches)) producers.add(id);
    return { queue: p.queue, index: p.partition, producerIds: [...new Set(result.batches.filter(isIdempotent).map((b) => b.producerId))] };
  });
  return { partitions: reads, transactionalProducers: [...producers] };
}

/** Decides a group of calls in arrival order against `state`; see the head of this file. */
export const decideAppends: DecideAppends = <P>(calls: readonly AppendCall[], state: AppendState<P>) => {
  const group = new AppendGroup(state);
  const results = calls.map((call) => group.decide(call));
  return { results, writes: group.writes() };
};

/** One group's decisions: what the earlier calls left (offsets, windows, ledger, transaction starts). */
class AppendGroup<P> {
  private readonly batches: StoredBatchWrite<P>[] = [];
  private readonly nextOffsets = new Map<P, number>();
  // Made when first needed: most groups have no idempotent, ledgered or transactional call.
  private windows: Map<P, Map<number, ProducerWindow>> | null = null;
  private ledger: Map<string, AppendResult> | null = null;
  private starts: Map<P, Map<number, AppendWrites<P>['transactionStarts'][number]>> | null = null;

  constructor(private readonly state: AppendState<P>) {}

  decide(call: AppendCall): AppendResult {
    if (call.requestId !== undefined) {
      const earlier = this.ledger?.get(call.requestId) ?? this.state.earlierResult(call.requestId);
      if (earlier) return structuredClone(earlier);
    }
    const result: AppendResult = { partitions: call.partitions.map((p, i) => this.decidePartition(p, call.parsed[i]!, call.inPlace)) };
    if (call.requestId !== undefined) (this.ledger ??= new Map()).set(call.requestId, result);
    return result;
  }

  writes(): AppendWrites<P> {
    const windows: AppendWrites<P>['windows'] = [];
    for (const [partition, byProducer] of this.windows ?? []) for (const window of byProducer.values()) windows.push({ partition, window });
    const transactionStarts: AppendWrites<P>['transactionStarts'] = [];
    for (const byProducer of this.starts?.values() ?? []) transactionStarts.push(...byProducer.values());
    const ledger = this.ledger ? [...this.ledger].map(([requestId, result]) => ({ requestId, result })) : [];
    return { batches: this.batches, windows, ledger, transactionStarts };
  }

  private decidePartition(p: AppendRequest['partitions'][number], checked: ParsedAppend, inPlace: boolean): AppendPartitionResult {
    const base = { queue: p.queue, partition: p.partition, baseOffset: -1, logAppendTime: -1, logStartOffset: -1, duplicate: false };
    const found = this.state.partition(p.queue, p.partition);
    if ('missing' in found) {
      if (found.missing === 'unknown_queue') return { ...base, error: 'unknown_queue', errorMessage: `Queue "${p.queue}" does not exist.` };
      return { ...base, error: 'unknown_partition', errorMessage: unknownPartitionError(p.queue, found.partitionCount, p.partition).message };
    }
    const { handle, logStartOffset } = found;
    const now = this.state.now;
    const parsed = checkQueueRules(checked, found.config, now);
    if (!parsed.ok) return { ...base, logStartOffset, ...appendRefusal(parsed) };
    const txnRefusal = checkTransactionalBatches(parsed.batches, (producerId) => this.state.transaction(producerId, found));
    if (txnRefusal) return { ...base, logStartOffset, error: txnRefusal.error, errorMessage: txnRefusal.message };
    const plan = checkPartitionSequences(parsed.batches, (producerId) => this.windowOf(handle, producerId));
    if (plan.kind === 'duplicate') return { ...base, error: null, baseOffset: plan.baseOffset, logStartOffset, duplicate: true };
    if (plan.kind !== 'append') return { ...base, logStartOffset, error: plan.kind, errorMessage: plan.message };

    const logAppendTime = found.config.timestampType === 'LogAppendTime' ? now : null;
    const baseOffset = this.nextOffsets.get(handle) ?? found.nextOffset;
    let next = baseOffset;
    // Only an idempotent producer's batches move a window: the others are not copied for it.
    const sequenced: Parameters<typeof advanceWindows>[0] = [];
    for (const batch of parsed.batches) {
      const offset = next;
      const maxTimestamp = logAppendTime ?? batch.maxTimestamp;
      next = offset + batch.offsetCount;
      const bytes = prepareForStorage(p.records, batch, offset, logAppendTime, inPlace);
      this.batches.push({ partition: handle, queue: p.queue, index: p.partition, baseOffset: offset, nextOffset: next, maxTimestamp, appendedAt: now, bytes });
      if (batch.isTransactional) this.noteTransactionStart(found, batch.producerId, offset);
      if (isIdempotent(batch)) sequenced.push({ ...batch, baseOffset: offset, maxTimestamp });
    }
    this.nextOffsets.set(handle, next);
    if (sequenced.length > 0) this.advance(handle, sequenced);
    return { ...base, error: null, baseOffset, logAppendTime: logAppendTime ?? -1, logStartOffset };
  }

  /** The idempotent producers' windows on the partition, moved past the batches just appended. */
  private advance(handle: P, sequenced: Parameters<typeof advanceWindows>[0]): void {
    const changed = advanceWindows(sequenced, (producerId) => this.windowOf(handle, producerId));
    this.windows ??= new Map();
    let windows = this.windows.get(handle);
    if (!windows) this.windows.set(handle, (windows = new Map()));
    for (const [producerId, window] of changed) windows.set(producerId, window);
  }

  /** The producer's window on the partition as the earlier calls of the group left it. */
  private windowOf(partition: P, producerId: number): ProducerWindow | null {
    return this.windows?.get(partition)?.get(producerId) ?? this.state.window(partition, producerId);
  }

  /** A transaction's first batch on the partition in this group; the check above found its transaction. */
  private noteTransactionStart(partition: AppendPartition<P>, producerId: number, offset: number): void {
    this.starts ??= new Map();
    let byProducer = this.starts.get(partition.handle);
    if (!byProducer) this.starts.set(partition.handle, (byProducer = new Map()));
    if (byProducer.has(producerId)) return;
    const txn = this.state.transaction(producerId, partition)!;
    byProducer.set(producerId, { transactionalId: txn.transactionalId, producerId, partition: partition.handle, offset });
  }
}

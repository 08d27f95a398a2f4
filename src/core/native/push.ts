import { setBaseOffset } from '../../../protocol/records/batch-header.js';
import type { KvEntry, PartitionInfo, PushItemResult, PushRequest, QueueConfig } from '../core.js';
import { CoreError, unknownQueueError } from '../errors.js';
import { refuseNativePushToCompacted } from '../rules/compaction.js';
import { assemblePushResults, dedupCutoff, planPush, splitByHits, type DedupHit, type FirstOutcome, type PlannedPush, type PushPlan } from '../rules/dedup.js';
import { encodePushBatch } from '../rules/native-records.js';
import { queuesToRoute, routePushItems } from '../rules/push-routing.js';

/**
 * Queen's native push, decided once for every engine (seeds/dedup-and-once.txt).
 * The core routes the items into a Kafka topic's partitions and plans them
 * (rules/push-routing.ts, rules/dedup.ts) before the engine is asked for
 * anything but the topics' partitions; the engine opens its atomic unit
 * (memory: one synchronous call; PostgreSQL: one database transaction holding
 * the pushed-to partitions' locks) and loads what `reads` names, and
 * `decidePush` decides over it, in this order: every target queue exists,
 * takes native pushes and fits each payload (nothing is written when one
 * does not); then per partition, the ids it already stores inside the
 * queue's dedup window answer `duplicate`, and the rest are written as one
 * batch at the partition's next offset, with their dedup entries. The engine
 * stores the writes in the same unit and wakes the partitions' poppers.
 */

/** A queue as a push is checked against it. */
export interface PushQueue {
  name: string;
  config: QueueConfig;
}

/** A pushed-to partition under the engine's lock; `P` is the engine's handle for it. */
export interface PushPartition<P> {
  handle: P;
  index: number;
  nextOffset: number;
}

/** What deciding a push needs the engine to read: per partition, the ids to look up in its dedup index. */
export interface PushReads {
  queues: string[];
  partitions: { queue: string; partition: string; transactionIds: string[] }[];
}

/** What a call's dedup lookups need: the oldest store time (exclusive) an entry of a queue with this config may have and still match at the call's `now`; null: look nothing up. */
export type DedupSince = (config: QueueConfig, now: number) => number | null;

/** The core's DedupSince: the queue's dedup window back from `now` (rules/dedup.ts). */
export const dedupSinceOf: DedupSince = (config, now) => dedupCutoff(now, config.dedupWindowSeconds);

/** A push planned by the core, as it reaches the engine. */
export interface PushCall {
  now: number;
  plan: PushPlan;
  dedupSince: DedupSince;
  readonly reads: PushReads;
}

/** The state an engine loaded for a push (or a native transaction's pushes), inside its atomic unit. */
export interface PushState<P> {
  now: number;
  queue(name: string): PushQueue | null;
  /** The stored message with this id in the named partition, inside the window `call.dedupSince` gives; null when none (or no such partition). */
  hit(queue: string, partition: string, transactionId: string): DedupHit | null;
  /** The named partition of an existing queue, created (at the next free index) when the queue lacks it: asked only once every check passed. */
  partition(queue: string, name: string): PushPartition<P>;
  /** An engine with a size limit (memory) refuses here, before anything is created, when the bytes (and KV entries) written would not fit. */
  room?(pushBytes: number, kv: readonly KvWrite[]): void;
}

/** A KV entry a native transaction stores (null: deletes). */
export interface KvWrite {
  ns: string;
  key: string;
  entry: KvEntry | null;
}

export interface NativeBatchWrite<P> {
  partition: P;
  queue: string;
  index: number;
  baseOffset: number;
  nextOffset: number;
  /** Store time, record timestamps and append time alike. */
  time: number;
  bytes: Buffer;
}

export interface DedupWrite<P> {
  partition: P;
  transactionId: string;
  messageId: string;
  offset: number;
  storedAt: number;
}

/** What a push writes, in one atomic unit: one batch per partition written to, and the dedup entries of its messages. */
export interface PushWrites<P> {
  batches: NativeBatchWrite<P>[];
  dedup: DedupWrite<P>[];
}

export type DecidePush = <P>(call: PushCall, state: PushState<P>) => { items: PushItemResult[]; writes: PushWrites<P> };

/** The partitions a push into a Kafka topic is routed over (rules/push-routing.ts), read from the engine. */
export type FixedPartitions = (queues: string[]) => Promise<Map<string, readonly PartitionInfo[]>> | Map<string, readonly PartitionInfo[]>;

/**
 * Routes the items (or transaction operations) of a request into its topics'
 * partitions, then `then` plans them; at once when the engine answers at once.
 */
export function routePushes<T, R>(items: T, fixedPartitions: FixedPartitions, then: (routed: T) => R): R | Promise<R> {
  const names = queuesToRoute(items);
  if (names.length === 0) return then(items);
  const partitions = fixedPartitions(names);
  if (partitions instanceof Promise) return partitions.then((found) => routeThen(items, found, then));
  return routeThen(items, partitions, then);
}

function routeThen<T, R>(items: T, found: Map<string, readonly PartitionInfo[]>, then: (routed: T) => R): R {
  // No Kafka topic among the queues: nothing to route.
  return then(found.size === 0 ? items : routePushItems(items, (name) => found.get(name)));
}

/** The core's half before the engine: route and check the items, mint their ids, name what must be read. */
export function preparePush(req: PushRequest, now: number, fixedPartitions: FixedPartitions): PushCall | Promise<PushCall> {
  return routePushes(req?.items, fixedPartitions, (items) => pushCall(planPush(items, now), now));
}

export function pushCall(plan: PushPlan, now: number): PushCall {
  return new PlannedPushCall(plan, now);
}

/** A class, not an object of closures: one is made per push (and per native transaction). */
class PlannedPushCall implements PushCall {
  constructor(
    readonly plan: PushPlan,
    readonly now: number,
  ) {}

  readonly dedupSince = dedupSinceOf;

  /** Named when an engine asks: the memory engine reads as it goes and never does. */
  get reads(): PushReads {
    return pushReads(this.plan);
  }
}

function pushReads(plan: PushPlan): PushReads {
  return {
    queues: [...new Set(plan.items.map((i) => i.queue))],
    partitions: plan.partitions.map((p) => ({ queue: p.queue, partition: p.partition, transactionIds: p.firsts.map((i) => i.transactionId) })),
  };
}

/** Decides a push over `state`; see the head of this file. */
export const decidePush: DecidePush = <P>(call: PushCall, state: PushState<P>) => {
  const bytes = checkPushTargets(call.plan, state);
  if (bytes > 0) state.room?.(bytes, []);
  const writes: PushWrites<P> = { batches: [], dedup: [] };
  const items = decidePushWrites(call.plan, state, writes);
  return { items, writes };
};

/** Every target queue exists, takes native pushes and fits each payload; answers the payloads' bytes. */
export function checkPushTargets(plan: PushPlan, state: Pick<PushState<unknown>, 'queue'>): number {
  let total = 0;
  for (const item of plan.items) {
    const queue = state.queue(item.queue);
    if (!queue) throw unknownQueueError(item.queue);
    refuseNativePushToCompacted(queue.name, queue.config, item.index);
    const size = Buffer.byteLength(item.payloadJson, 'utf8');
    total += size;
    if (size > queue.config.maxMessageBytes) {
      throw new CoreError('invalid_argument', `Item ${item.index}'s payload is ${size} bytes as JSON; queue "${queue.name}" accepts at most ${queue.config.maxMessageBytes}.`);
    }
  }
  return total;
}

/** The stored message a first occurrence's id names, if any. */
export function storedHit(state: Pick<PushState<unknown>, 'hit'>, item: PlannedPush): DedupHit | null {
  return state.hit(item.queue, item.partition, item.transactionId);
}

/** Per partition: the ids already stored answer duplicate, the rest become one batch and their dedup entries. Answers every item's result. */
export function decidePushWrites<P>(plan: PushPlan, state: PushState<P>, writes: PushWrites<P>): PushItemResult[] {
  const outcomes = new Map<number, FirstOutcome>();
  for (const group of plan.partitions) {
    const hits = new Map<string, DedupHit>();
    for (const item of group.firsts) {
      const hit = storedHit(state, item);
      if (hit) hits.set(item.transactionId, hit);
    }
    const { toWrite, stored } = splitByHits(group, hits);
    const partition = state.partition(group.queue, group.partition);
    for (const [index, hit] of stored) outcomes.set(index, { status: 'duplicate', ...hit, partitionIndex: partition.index });
    if (toWrite.length === 0) continue;
    const baseOffset = partition.nextOffset;
    const bytes = encodePushBatch(toWrite, state.now);
    setBaseOffset(bytes, 0, baseOffset);
    partition.nextOffset = baseOffset + toWrite.length;
    writes.batches.push({ partition: partition.handle, queue: group.queue, index: partition.index, baseOffset, nextOffset: partition.nextOffset, time: state.now, bytes });
    const dedups = state.queue(group.queue)!.config.dedupWindowSeconds > 0;
    for (let i = 0; i < toWrite.length; i++) {
      const item = toWrite[i]!;
      const offset = baseOffset + i;
      outcomes.set(item.index, { status: 'queued', messageId: item.messageId, offset, partitionIndex: partition.index });
      if (dedups) writes.dedup.push({ partition: partition.handle, transactionId: item.transactionId, messageId: item.messageId, offset, storedAt: state.now });
    }
  }
  return assemblePushResults(plan, (index) => outcomes.get(index)!);
}

import type { KvEntry, TransactionRequest, TransactionResult } from '../core.js';
import { evaluateKvOperations, firstStoredDuplicate, firstUnheldAck, planTransaction, transactionPushResult, type TransactionPlan } from '../rules/transaction.js';
import { afterAck, ackHolds, applyAck, resolveAck, type AckTarget, type AckView, type AckWrite } from './ack.js';
import { checkPushTargets, decidePushWrites, dedupSinceOf, pushCall, routePushes, storedHit, type DedupSince, type FixedPartitions, type KvWrite, type PushReads, type PushState, type PushWrites } from './push.js';

/**
 * Queen's native transaction, decided once for every engine: pushes, acks
 * and KV operations, all or nothing, judged in the order rules/transaction.ts
 * sets out. The core plans the operations before the engine is asked for
 * anything but the topics' partitions; the engine opens its atomic unit and
 * loads what `reads` names (PostgreSQL takes the consumer locks, then the
 * partitions', then the KV rows', each in one global order so two
 * transactions cannot deadlock); `decideTransaction` decides over it and
 * answers the result with what to write, or a rollback with nothing; the
 * engine stores the writes in the same unit and wakes the poppers.
 */

export interface TransactionReads {
  push: PushReads;
  acks: { queue: string; partition: string; group: string }[];
  kv: { ns: string; key: string }[];
}

export interface TransactionCall {
  now: number;
  plan: TransactionPlan;
  dedupSince: DedupSince;
  readonly reads: TransactionReads;
}

export interface TransactionState<P> extends PushState<P> {
  /** The group's lease and position on the partition, held under the consumer lock. */
  ack(queue: string, partition: string, group: string): AckTarget<P>;
  /** The entry as stored (expired or not), held under its lock. */
  kv(ns: string, key: string): KvEntry | null;
}

/** What a committed transaction writes, in one atomic unit: its pushes, then its acks in operation order, then its KV entries. */
export interface TransactionWrites<P> extends PushWrites<P> {
  acks: AckWrite<P>[];
  kv: KvWrite[];
}

export type DecideTransaction = <P>(call: TransactionCall, state: TransactionState<P>) => { result: TransactionResult; writes: TransactionWrites<P> | null };

/** The core's half before the engine: route and check every operation, mint the pushes' ids, name what must be read. */
export function prepareTransaction(req: TransactionRequest, now: number, fixedPartitions: FixedPartitions): TransactionCall | Promise<TransactionCall> {
  return routePushes(req?.operations, fixedPartitions, (operations) => transactionCall(planTransaction({ ...req, operations }, now), now));
}

function transactionCall(plan: TransactionPlan, now: number): TransactionCall {
  return new PlannedTransaction(plan, now);
}

/** A class, not an object of closures: one is made per native transaction. */
class PlannedTransaction implements TransactionCall {
  readonly dedupSince: DedupSince = dedupSinceOf;

  constructor(
    readonly plan: TransactionPlan,
    readonly now: number,
  ) {}

  /** Named when an engine asks: the memory engine reads as it goes and never does. */
  get reads(): TransactionReads {
    const { plan } = this;
    return {
      push: pushCall(plan.push, this.now).reads,
      acks: plan.acks.map(({ ack }) => ({ queue: ack.queue, partition: ack.partition, group: ack.consumerGroup })),
      kv: plan.kv.map(({ op }) => ({ ns: op.ns, key: op.key })),
    };
  }
}

/** Decides a transaction over `state`; see the head of this file. Plain loops, no closures: it runs once per native transaction. */
export const decideTransaction: DecideTransaction = <P>(call: TransactionCall, state: TransactionState<P>) => {
  const { plan, now } = call;
  const pushBytes = checkPushTargets(plan.push, state);
  const views: AckView<P>[] = [];
  for (const { ack } of plan.acks) views.push(resolveAck(state.ack(ack.queue, ack.partition, ack.consumerGroup), ack, now));
  const judged = judge(plan, state, views, now);
  if ('result' in judged) return { result: judged.result, writes: null };
  const kvWrites = judged.kv === null ? [] : [...judged.kv.writes.values()];
  state.room?.(pushBytes, kvWrites);

  // Every check has passed: decide the writes.
  const results: unknown[] = new Array(plan.operationCount);
  const writes: TransactionWrites<P> = { batches: [], dedup: [], acks: [], kv: kvWrites };
  const pushed = decidePushWrites(plan.push, state, writes);
  for (let i = 0; i < pushed.length; i++) results[plan.opIndexOfItem[i]!] = transactionPushResult(pushed[i]!);
  applyAcks(plan, views, now, writes, results);
  if (judged.kv !== null) for (const [opIndex, result] of judged.kv.results) results[opIndex] = structuredClone(result);
  return { result: { success: true, results }, writes };
};

/** Steps 2 to 4 of rules/transaction.ts: the rollback, or the KV step's decision (null when the transaction has no KV operation). */
function judge<P>(plan: TransactionPlan, state: TransactionState<P>, views: AckView<P>[], now: number): { result: TransactionResult } | { kv: KvDecided | null } {
  const duplicate = firstStoredDuplicate(plan, (item) => storedHit(state, item));
  if (duplicate) return { result: duplicate };
  const kv = plan.kv.length === 0 ? null : evaluateKvOperations(plan.kv, (ns, key) => state.kv(ns, key), now);
  if (kv !== null && !kv.ok) return { result: kv.result };
  const unheld = firstUnheldAck(plan, (i) => ackHolds(views[i]!, plan.acks[i]!.ack, now));
  if (unheld) return { result: unheld };
  return { kv: kv as KvDecided | null };
}

type KvDecided = Extract<ReturnType<typeof evaluateKvOperations>, { ok: true }>;

/** Acks in operation order, each seeing what the earlier ones of the same group and partition did. */
function applyAcks<P>(plan: TransactionPlan, views: AckView<P>[], now: number, writes: TransactionWrites<P>, results: unknown[]): void {
  const current = plan.acks.length > 1 ? new Map<string, AckView<P>>() : null;
  for (let i = 0; i < plan.acks.length; i++) {
    const { opIndex, ack } = plan.acks[i]!;
    const key = current && JSON.stringify([ack.queue, ack.partition, ack.consumerGroup]);
    const view = (key && current!.get(key)) || views[i]!;
    const { acked, write } = applyAck(view, ack, now);
    if (key) current!.set(key, afterAck(view, write));
    if (write) writes.acks.push(write);
    results[opIndex] = { acked };
  }
}

import { CoreError } from '../errors.js';
import type { AckRequest, KvEntry, Lifetime, PushItem, PushItemResult, TransactionOperation, TransactionResult } from '../core.js';
import { requireArray, requireFiniteNumber, requireInteger, requireJsonValue } from './arguments.js';
import { planPush, type DedupHit, type PlannedPush, type PushPlan } from './dedup.js';
import { decideIncr, decidePut, liveOrNull, ONCE_MARKER_VALUE, validateExpectedVersion, validateLifetime, validateOptionalLifetime } from './kv.js';
import { validateGroupName, validateKvKey, validateKvNamespace, validatePartitionName, validateQueueName } from './names.js';

/**
 * A native transaction: pushes, acks and KV operations, all or nothing
 * (seeds/dedup-and-once.txt). Order of judgement:
 *
 *  1. every operation is validated first; a bad one fails the call (CoreError)
 *     and nothing is written;
 *  2. pushes are checked before KV operations: a push whose id its
 *     partition already stores (inside the window) rolls everything back with
 *     reason `duplicate`, unless it says ifStored: 'answer' (then it is
 *     answered duplicate: true); an id repeated within the same transaction
 *     is stored once, answered with duplicate: true, and the transaction
 *     commits;
 *  3. KV operations run in order, each seeing the ones before it; a required
 *     precondition that does not hold (put with expectedVersion, putIfAbsent,
 *     once = putIfAbsent with required: true) rolls back with reason
 *     `kv_precondition` and its index (so a lost once gate is what a repeated
 *     consume-transform-produce step learns, as the seed says);
 *  4. a required ack whose offset the group's lease does not hold rolls
 *     everything back with reason `not_acked`;
 *  5. then acks, pushes and KV writes are applied together.
 */

export type KvOperation = Extract<TransactionOperation, { op: `kv.${string}` } | { op: 'once' }>;

export interface TransactionPlan {
  /** The pushes as one push request; `opIndexOfItem[i]` is the operation index of item i. */
  push: PushPlan;
  opIndexOfItem: number[];
  /** Indexes of the push items whose stored id answers `duplicate` instead of rolling back (ifStored: 'answer'). */
  answerStored: Set<number>;
  /** `required` acks roll the transaction back unless they apply (notAcked). */
  acks: { opIndex: number; ack: AckRequest; required: boolean }[];
  kv: { opIndex: number; op: KvOperation }[];
  operationCount: number;
}

function validateAck(op: AckRequest, field: string): AckRequest {
  validateQueueName(op.queue);
  validatePartitionName(op.partition);
  validateGroupName(op.consumerGroup);
  requireInteger(op.offset, `${field}.offset`);
  if (op.status !== 'completed' && op.status !== 'failed') {
    throw new CoreError('invalid_argument', `${field}.status must be "completed" or "failed"; got ${JSON.stringify(op.status)}.`);
  }
  const ack: AckRequest = { queue: op.queue, partition: op.partition, consumerGroup: op.consumerGroup, offset: op.offset, status: op.status };
  if (op.leaseId !== undefined) ack.leaseId = op.leaseId;
  return ack;
}

function validateKvOperation(op: KvOperation, field: string): KvOperation {
  validateKvNamespace(op.ns);
  validateKvKey(op.key);
  switch (op.op) {
    case 'kv.put':
      requireJsonValue(op.value, `${field}.value`);
      validateOptionalLifetime(op.lifetime, `${field}.lifetime`);
      validateExpectedVersion(op.expectedVersion, `${field}.expectedVersion`);
      return op;
    case 'kv.putIfAbsent':
      requireJsonValue(op.value, `${field}.value`);
      validateOptionalLifetime(op.lifetime, `${field}.lifetime`);
      return op;
    case 'kv.delete':
      return op;
    case 'kv.incr':
      requireFiniteNumber(op.by, `${field}.by`);
      validateOptionalLifetime(op.lifetime, `${field}.lifetime`);
      return op;
    case 'once':
      validateLifetime(op.lifetime, `${field}.lifetime`);
      return op;
  }
}

export function planTransaction(req: { operations: unknown }, nowMs: number): TransactionPlan {
  const operations = requireArray<TransactionOperation>(req?.operations, 'operations');
  const pushItems: PushItem[] = [];
  const opIndexOfItem: number[] = [];
  const acks: TransactionPlan['acks'] = [];
  const answerStored = new Set<number>();
  const kv: TransactionPlan['kv'] = [];
  operations.forEach((op, opIndex) => {
    const field = `operations[${opIndex}]`;
    if (typeof op !== 'object' || op === null) throw new CoreError('invalid_argument', `${field} must be an operation object.`);
    switch (op.op) {
      case 'push': {
        const item: PushItem = { queue: op.queue, payload: op.payload };
        if (op.partition !== undefined) item.partition = op.partition;
        if (op.transactionId !== undefined) item.transactionId = op.transactionId;
        if (op.traceId !== undefined) item.traceId = op.traceId;
        if (op.ifStored !== undefined && op.ifStored !== 'rollback' && op.ifStored !== 'answer') {
          throw new CoreError('invalid_argument', `${field}.ifStored must be "rollback" or "answer"; got ${JSON.stringify(op.ifStored)}.`);
        }
        if (op.ifStored === 'answer') answerStored.add(pushItems.length);
        pushItems.push(item);
        opIndexOfItem.push(opIndex);
        break;
      }
      case 'ack':
        if (op.required !== undefined && typeof op.required !== 'boolean') {
          throw new CoreError('invalid_argument', `${field}.required must be true or false; got ${JSON.stringify(op.required)}.`);
        }
        acks.push({ opIndex, ack: validateAck(op, field), required: op.required === true });
        break;
      case 'kv.put':
      case 'kv.putIfAbsent':
      case 'kv.delete':
      case 'kv.incr':
      case 'once':
        kv.push({ opIndex, op: validateKvOperation(op, field) });
        break;
      default:
        throw new CoreError('invalid_argument', `${field}.op ${JSON.stringify((op as { op: unknown }).op)} is not one of push, ack, kv.put, kv.putIfAbsent, kv.delete, kv.incr, once.`);
    }
  });
  let push: PushPlan;
  try {
    push = planPush(pushItems, nowMs, 'pushes');
  } catch (e) {
    // Name the operation, not the internal push list.
    if (e instanceof CoreError) {
      const renamed = e.message.replace(/pushes\[(\d+)\]/g, (_, i: string) => `operations[${opIndexOfItem[Number(i)]}]`);
      throw new CoreError(e.code, renamed);
    }
    throw e;
  }
  return { push, opIndexOfItem, answerStored, acks, kv, operationCount: operations.length };
}

/**
 * Step 2: the first push (in operation order) whose id is already stored rolls
 * the transaction back. `hitOf(item)` answers the dedup lookup for a first
 * occurrence (the engine looks up inside the queue's window).
 */
export function firstStoredDuplicate(plan: TransactionPlan, hitOf: (item: PlannedPush) => DedupHit | null): TransactionResult | null {
  for (const item of plan.push.items) {
    if (item.repeatOf !== null || plan.answerStored.has(item.index)) continue;
    const hit = hitOf(item);
    if (hit) {
      const opIndex = plan.opIndexOfItem[item.index]!;
      return {
        success: false,
        reason: 'duplicate',
        failedIndex: opIndex,
        message: `Operation ${opIndex} pushes transactionId ${JSON.stringify(item.transactionId.slice(0, 200))}, which partition "${item.partition}" of queue "${item.queue}" already stores (message ${hit.messageId} at offset ${hit.offset}); nothing in the transaction was written.`,
      };
    }
  }
  return null;
}

/**
 * Step 4: the first required ack (in operation order) that does not
 * apply rolls the transaction back. `holds(ack)` answers whether the group's
 * lease holds the offset of plan.acks[ackIndex] as the transaction starts.
 */
export function firstUnheldAck(plan: TransactionPlan, holds: (ackIndex: number) => boolean): TransactionResult | null {
  for (const [i, { opIndex, ack, required }] of plan.acks.entries()) {
    if (!required || holds(i)) continue;
    return {
      success: false,
      reason: 'not_acked',
      failedIndex: opIndex,
      message: `Operation ${opIndex} acks offset ${ack.offset} of ${ack.queue}/${ack.partition}, which group "${ack.consumerGroup.slice(0, 200)}" does not hold under a live lease (never popped, expired, released or acked already); nothing in the transaction was written.`,
    };
  }
  return null;
}

/** What the KV step decided: entries to store (null = delete) and each operation's result. */
export type KvEvaluation =
  | { ok: true; writes: Map<string, { ns: string; key: string; entry: KvEntry | null }>; results: Map<number, unknown> }
  | { ok: false; result: TransactionResult };

export function kvSlot(ns: string, key: string): string {
  return `${ns}\u0000${key}`;
}

/**
 * Step 3: runs the KV operations in order over the entries as they stand
 * (`readEntry`, read by the engine under its lock), each seeing the writes of
 * the ones before it.
 */
export function evaluateKvOperations(
  ops: TransactionPlan['kv'],
  readEntry: (ns: string, key: string) => KvEntry | null,
  nowMs: number,
): KvEvaluation {
  const writes = new Map<string, { ns: string; key: string; entry: KvEntry | null }>();
  const results = new Map<number, unknown>();
  const current = (ns: string, key: string): KvEntry | null => {
    const slot = kvSlot(ns, key);
    return writes.has(slot) ? writes.get(slot)!.entry : liveOrNull(readEntry(ns, key), nowMs);
  };
  const fail = (opIndex: number, message: string): KvEvaluation => ({
    ok: false,
    result: { success: false, reason: 'kv_precondition', failedIndex: opIndex, message },
  });
  for (const { opIndex, op } of ops) {
    const entry = current(op.ns, op.key);
    const slot = kvSlot(op.ns, op.key);
    switch (op.op) {
      case 'kv.put':
      case 'kv.putIfAbsent':
      case 'once': {
        const expectedVersion = op.op === 'kv.put' ? op.expectedVersion : 0;
        const value = op.op === 'once' ? ONCE_MARKER_VALUE : op.value;
        const lifetime: Lifetime | undefined = op.lifetime;
        const decided = decidePut(entry, { ns: op.ns, key: op.key, value, lifetime, expectedVersion }, nowMs);
        const required = op.op === 'once' ? true : op.required === true;
        if (!decided.applied && required) {
          const what =
            op.op === 'once'
              ? `once(${op.ns}, ${op.key}) lost: the step already ran`
              : op.op === 'kv.putIfAbsent'
                ? `putIfAbsent(${op.ns}, ${op.key}) found the key present`
                : `put(${op.ns}, ${op.key}) expected version ${expectedVersion}, found ${entry?.version ?? 0}`;
          return fail(opIndex, `Operation ${opIndex}: ${what}; nothing in the transaction was written.`);
        }
        if (decided.applied) writes.set(slot, { ns: op.ns, key: op.key, entry: decided.entry });
        results.set(opIndex, op.op === 'once' ? { won: decided.applied } : decided);
        break;
      }
      case 'kv.delete':
        writes.set(slot, { ns: op.ns, key: op.key, entry: null });
        results.set(opIndex, { deleted: entry !== null });
        break;
      case 'kv.incr': {
        const next = decideIncr(entry, op, nowMs);
        writes.set(slot, { ns: op.ns, key: op.key, entry: next });
        results.set(opIndex, next);
        break;
      }
    }
  }
  return { ok: true, writes, results };
}

/** A push's answer inside a transaction: the push result plus `duplicate` for a repeat within it. */
export function transactionPushResult(result: PushItemResult): PushItemResult & { duplicate: boolean } {
  return { ...result, duplicate: result.status === 'duplicate' };
}

import { leaseOfPartition } from './shared-leases.js';
import type { Core, QueenMessage, QueueConfig, QueueInfo, TransactionOperation, TransactionResult } from '../core/core.js';
import { isCoreError } from '../core/errors.js';
import { DEAD_LETTERS_NAMESPACE, decodeStoredBatch, DEFAULT_APPEND_LIMITS, MAX_POP_BATCH, messageKey, storedBatchLimit, toQueenMessage, type DecodedRecord } from '../core/index.js';
import { DecodeError } from '../../protocol/primitives/decode-error.js';
import { iso } from './answers.js';
import { HttpError } from './errors.js';
import { parsePartitionId, partitionIdOf } from './partition-ids.js';

/** How far a stored batch may inflate when acks look messages up: what Produce allows by default. */
const STORED_BATCH_LIMIT = storedBatchLimit(DEFAULT_APPEND_LIMITS);

/**
 * Queen's acks, retries and dead-letter queue over the core.
 *
 * A Queen client acks a message by its transactionId and partitionId; the
 * core acks by offset. The offset is found by reading the partition from the
 * group's position (where every message the group holds under a lease lies)
 * until the transactionId turns up. A client may also ack by
 * { queue, partition, offset }, the core's own terms.
 *
 * Retries: a message acked `failed` is delivered again, up to the queue's
 * retryLimit times; the next failure (or an ack with status `dlq`) moves it
 * to the dead-letter queue and the group moves past it. The count and the
 * dead letters live in the core's KV store, written in the same core
 * transaction as the ack they belong to, so every gateway sees them and a
 * crash cannot split an ack from its count.
 */

/** Queen's group for consumers that give none: each message goes to one of them. */
export const QUEUE_MODE_GROUP = '__QUEUE_MODE__';

export const RETRIES_NAMESPACE = 'queen.retries';
export { DEAD_LETTERS_NAMESPACE, messageKey };
/** A retry count outlives any sensible lease and redelivery, then goes by itself. */
const RETRY_COUNT_TTL_MS = 7 * 24 * 3600 * 1000;

export type QueenAckStatus = 'completed' | 'success' | 'failed' | 'dlq' | 'retry';

/** What an ack names: Queen's (transactionId, partitionId) or the core's (queue, partition, offset). */
export interface AckTarget {
  transactionId?: string;
  partitionId?: string;
  queue?: string;
  partition?: string;
  offset?: number;
}

export interface LocatedMessage {
  queue: QueueInfo;
  message: QueenMessage;
}


function partitionOf(target: AckTarget, field: string): { queue: string; partition: string } {
  if (target.partitionId !== undefined) return parsePartitionId(target.partitionId, `${field}.partitionId`);
  if (target.queue !== undefined && target.partition !== undefined) return { queue: target.queue, partition: target.partition };
  throw new HttpError(400, 'invalid_request', `${field} must name its message by transactionId and partitionId (as popped), or by queue, partition and offset.`);
}

/**
 * Finds each acked message in its partition; null when it is not there (a
 * transactionId the group is not holding, an offset outside the log).
 */
export async function locateMessages(core: Core, group: string, targets: readonly AckTarget[], field = 'body'): Promise<(LocatedMessage | null)[]> {
  const found: (LocatedMessage | null)[] = targets.map(() => null);
  // One description per queue for the whole batch, however many of its partitions the acks name.
  const described = new Map<string, Promise<QueueInfo | null>>();
  const describe = (name: string) => described.get(name) ?? described.set(name, describeOrNull(core, name)).get(name)!;
  for (const slot of targetsByPartition(targets, field)) await locateInPartition(core, group, targets, slot, found, describe);
  return found;
}

/** The acked messages of one partition, as indexes into the targets. */
interface PartitionTargets {
  queue: string;
  partition: string;
  indexes: number[];
}

function targetsByPartition(targets: readonly AckTarget[], field: string): Iterable<PartitionTargets> {
  const byPartition = new Map<string, PartitionTargets>();
  targets.forEach((target, i) => {
    const where = partitionOf(target, targets.length === 1 ? field : `${field}[${i}]`);
    if (target.transactionId === undefined && target.offset === undefined) {
      throw new HttpError(400, 'invalid_request', `${targets.length === 1 ? field : `${field}[${i}]`} must give the message's transactionId (or its offset).`);
    }
    const key = JSON.stringify([where.queue, where.partition]);
    const slot = byPartition.get(key) ?? { ...where, indexes: [] };
    slot.indexes.push(i);
    byPartition.set(key, slot);
  });
  return byPartition.values();
}

/** Messages sought in one partition: target indexes by offset and by transactionId, each deleted once found. */
interface Sought {
  byOffset: Map<number, number[]>;
  byTransactionId: Map<string, number[]>;
}

/** Reads the partition from the lowest offset sought, or the group's position when a transactionId is sought. */
async function locateInPartition(
  core: Core,
  group: string,
  targets: readonly AckTarget[],
  slot: PartitionTargets,
  found: (LocatedMessage | null)[],
  describe: (name: string) => Promise<QueueInfo | null>,
): Promise<void> {
  const queue = await describe(slot.queue);
  const partition = queue?.partitions.find((p) => p.name === slot.partition);
  if (!queue || !partition) return;
  const sought: Sought = { byOffset: new Map(), byTransactionId: new Map() };
  for (const i of slot.indexes) {
    const t = targets[i]!;
    if (t.offset !== undefined) sought.byOffset.set(t.offset, [...(sought.byOffset.get(t.offset) ?? []), i]);
    else sought.byTransactionId.set(t.transactionId!, [...(sought.byTransactionId.get(t.transactionId!) ?? []), i]);
  }
  let from = Math.min(...sought.byOffset.keys());
  if (sought.byTransactionId.size > 0) {
    const { offsets } = await core.fetchOffsets({ group, partitions: [{ queue: slot.queue, partition: partition.index }] });
    from = Math.min(from, Math.max(0, offsets[0]?.offset ?? 0));
  }
  const where = { queue: slot.queue, queueId: queue.id, partition: slot.partition, partitionIndex: partition.index };
  await scanPartition(core, where, from, sought, (i, message) => (found[i] = { queue, message }));
}

/** Reads from `from` until every sought message turned up, the log ends, or MAX_POP_BATCH records were read. */
async function scanPartition(
  core: Core,
  where: Parameters<typeof toQueenMessage>[1],
  from: number,
  sought: Sought,
  found: (index: number, message: QueenMessage) => void,
): Promise<void> {
  const { byOffset, byTransactionId } = sought;
  let scanned = 0;
  while (scanned < MAX_POP_BATCH && (byOffset.size > 0 || byTransactionId.size > 0)) {
    const read = await core.read({
      partitions: [{ queue: where.queue, partition: where.partitionIndex, fetchOffset: from, maxBytes: 1 << 20 }],
      minBytes: 0,
      maxWaitMs: 0,
      maxBytes: 1 << 20,
      isolation: 'read_uncommitted',
    });
    const result = read.partitions[0]!;
    if (result.error === 'offset_out_of_range' && from < result.logStartOffset) {
      from = result.logStartOffset;
      continue;
    }
    if (result.error || result.batches.length === 0) return;
    for (const batch of result.batches) {
      for (const record of readableRecords(batch)) {
        if (record.offset < from) continue;
        scanned++;
        const message = toQueenMessage(record, where);
        for (const i of byOffset.get(record.offset) ?? []) found(i, message);
        byOffset.delete(record.offset);
        for (const i of byTransactionId.get(message.transactionId) ?? []) found(i, message);
        byTransactionId.delete(message.transactionId);
        from = record.offset + 1;
      }
    }
    if (from >= result.highWatermark) return;
  }
}

/** A stored batch's records; none when nobody can read it (it holds no message to ack, and pop passes over it too). */
function readableRecords(batch: Buffer): DecodedRecord[] {
  try {
    return decodeStoredBatch(batch, STORED_BATCH_LIMIT);
  } catch (e) {
    if (e instanceof DecodeError) return [];
    throw e;
  }
}

async function describeOrNull(core: Core, name: string): Promise<QueueInfo | null> {
  try {
    return await core.describeQueue({ name });
  } catch (e) {
    if (isCoreError(e) && e.code === 'invalid_name') return null;
    throw e;
  }
}

/** How many times each popped message has failed before, for the pop answer's retryCount. */
export async function retryCounts(core: Core, group: string, messages: readonly QueenMessage[]): Promise<number[]> {
  if (messages.length === 0) return [];
  const entries = await core.kvGetMany({ ns: RETRIES_NAMESPACE, keys: messages.map((m) => messageKey(m.queue, m.partitionIndex, m.offset, group)) });
  return entries.map((e) => (typeof e?.value === 'number' ? e.value : 0));
}

export interface AckPlan {
  /** The core operations, run as one transaction. */
  operations: TransactionOperation[];
  deadLetter: boolean;
}

/**
 * The core operations of one Queen ack. `completed` (or `success`) acks it;
 * `retry` hands it back without counting; `failed` hands it back and counts,
 * or, once the count has reached the queue's retryLimit, sends it to the
 * dead-letter queue; `dlq` sends it there at once.
 */
export async function planAck(
  core: Core,
  located: LocatedMessage,
  ack: { status: QueenAckStatus; consumerGroup: string; leaseId?: string; error?: string | null },
  now: number,
): Promise<AckPlan> {
  const { queue, message } = located;
  // required: an ack the group's lease does not hold rolls its count and dead letter back with it.
  const leaseId = ack.leaseId ? await leaseOfPartition(core, ack.leaseId, message.partition) : undefined;
  const base = { queue: queue.name, partition: message.partition, consumerGroup: ack.consumerGroup, offset: message.offset, required: true, ...(leaseId ? { leaseId } : {}) };
  const key = messageKey(queue.name, message.partitionIndex, message.offset, ack.consumerGroup);
  if (ack.status === 'completed' || ack.status === 'success') return { operations: [{ op: 'ack', ...base, status: 'completed' }], deadLetter: false };
  if (ack.status === 'retry') return { operations: [{ op: 'ack', ...base, status: 'failed' }], deadLetter: false };
  const count = ack.status === 'dlq' ? null : ((await core.kvGet({ ns: RETRIES_NAMESPACE, key }))?.value as number | undefined) ?? 0;
  if (count !== null && count < retryLimitOf(queue.config)) {
    return {
      operations: [
        { op: 'ack', ...base, status: 'failed' },
        { op: 'kv.incr', ns: RETRIES_NAMESPACE, key, by: 1, lifetime: { ttlMs: RETRY_COUNT_TTL_MS } },
      ],
      deadLetter: false,
    };
  }
  const errorMessage = ack.error ?? (ack.status === 'dlq' ? 'Sent to the dead-letter queue by its consumer' : 'Retries exhausted');
  const deadLetter = deadLetterEntry(located, ack.consumerGroup, errorMessage, count ?? 0, now);
  return {
    operations: [
      { op: 'ack', ...base, status: 'completed' },
      { op: 'kv.put', ns: DEAD_LETTERS_NAMESPACE, key, value: deadLetter, lifetime: { forever: true } },
      { op: 'kv.delete', ns: RETRIES_NAMESPACE, key },
    ],
    deadLetter: true,
  };
}

/** A message's entry in Queen's dead-letter queue (KV namespace queen.dlq), as GET /api/v1/dlq lists it. */
export function deadLetterEntry(located: LocatedMessage, consumerGroup: string, errorMessage: string, retryCount: number, now: number) {
  const { queue, message } = located;
  return {
    id: message.messageId,
    transactionId: message.transactionId,
    partitionId: partitionIdOf(queue.name, message.partition),
    queue: queue.name,
    partition: message.partition,
    partitionIndex: message.partitionIndex,
    offset: message.offset,
    consumerGroup,
    errorMessage,
    retryCount,
    data: message.payload,
    createdAt: iso(message.timestamp),
    failedAt: iso(now),
  };
}

const retryLimitOf = (config: QueueConfig) => config.retryLimit ?? 3;

/** Queen's answer for one ack. */
export interface AckAnswer {
  index: number;
  transactionId: string | null;
  success: boolean;
  error: string | null;
  queueName: string | null;
  partitionName: string | null;
  leaseReleased: boolean;
  dlq: boolean;
}

export const NOT_HELD =
  'The message is not held under a live lease of this group: it was never popped by it, its lease expired or was released (it will be delivered again), or it was acked already.';
export const NOT_FOUND = 'No such message: the partitionId and transactionId name no message this group can ack; send back the fields of the popped message.';

/**
 * Runs one ack's plan as one core transaction and answers it as Queen does.
 * `alongside(answer)` adds operations to that transaction, given the answer
 * the ack will have if it applies (a ledger entry recording it).
 */
export async function applyAck(
  core: Core,
  index: number,
  located: LocatedMessage | null,
  plan: AckPlan | null,
  transactionId: string | null,
  alongside: (answer: AckAnswer) => TransactionOperation[] = () => [],
): Promise<AckAnswer> {
  if (!located || !plan) {
    return { index, transactionId, success: false, error: NOT_FOUND, queueName: null, partitionName: null, leaseReleased: false, dlq: false };
  }
  const failed = (error: string): AckAnswer => ({ index, transactionId: located.message.transactionId, success: false, error, queueName: located.queue.name, partitionName: located.message.partition, leaseReleased: false, dlq: false });
  const answer = ackedAnswer(index, located, plan);
  let outcome: TransactionResult;
  try {
    outcome = await core.transaction({ operations: [...plan.operations, ...alongside(answer)] });
  } catch (e) {
    // A stale leaseId fails the whole core call, so nothing of the plan was written.
    if (!isCoreError(e) || e.code !== 'unknown_lease') throw e;
    return failed(e.message);
  }
  // The ack is required: a lease that does not hold it rolls the whole plan back.
  return outcome.success ? answer : failed(NOT_HELD);
}

/** The answer of an ack once its plan has applied: known before it runs, so it can be recorded with it. */
function ackedAnswer(index: number, located: LocatedMessage, plan: AckPlan): AckAnswer {
  const ackOp = plan.operations[0] as { status: string };
  return {
    index,
    transactionId: located.message.transactionId,
    success: true,
    error: null,
    queueName: located.queue.name,
    partitionName: located.message.partition,
    leaseReleased: ackOp.status === 'failed',
    dlq: plan.deadLetter,
  };
}

/**
 * A batch's acks as ONE core transaction (on PostgreSQL one database
 * transaction whose ack writes are one statement), answered as if each had
 * run alone. It is tried first, on the bet that every ack applies: its
 * answers are known beforehand (so `alongside` can record them). Null when
 * the bet failed: some ack was not held or named a stale lease; the whole
 * transaction rolled back, nothing was written, and the caller acks one by one.
 * The caller sends only acks of different messages where no ack ends a
 * lease that a later one of the batch acts under (routes/consume.ts
 * actIndependently): the core judges every ack against the leases as they
 * were before the transaction.
 */
export async function applyAcksTogether(
  core: Core,
  firstIndex: number,
  located: readonly LocatedMessage[],
  plans: readonly AckPlan[],
  alongside: (answers: AckAnswer[]) => TransactionOperation[],
): Promise<AckAnswer[] | null> {
  const answers = located.map((found, j) => ackedAnswer(firstIndex + j, found, plans[j]!));
  try {
    const outcome = await core.transaction({ operations: [...plans.flatMap((p) => p.operations), ...alongside(answers)] });
    if (!outcome.success) return null;
    // Each plan's ack is its first operation. The caller lets no ack of the batch end a lease a later one acts under, so each applied;
    // should one not have (an offset the lease passed over), it answers so.
    let opIndex = 0;
    return answers.map((answer, j) => {
      const result = outcome.results[opIndex] as { acked?: boolean } | undefined;
      opIndex += plans[j]!.operations.length;
      return result?.acked === false ? { ...answer, success: false, error: NOT_HELD, leaseReleased: false, dlq: false } : answer;
    });
  } catch (e) {
    if (!isCoreError(e) || e.code !== 'unknown_lease') throw e;
    return null;
  }
}

import { CoreError } from '../errors.js';
import type { PushItem, PushItemResult } from '../core.js';
import { requireArray, requireJsonValue } from './arguments.js';
import { DEFAULT_PARTITION_NAME, validatePartitionName, validateQueueName } from './names.js';
import { mintMessageId } from './uuidv7.js';

/**
 * The native-push dedup plan (seeds/dedup-and-once.txt). Every pushed item
 * has a transactionId; absent, it is the item's fresh message id, so it never
 * matches. The scope is one partition of one queue. Inside one request an id
 * repeated for the same queue and partition is stored once, whatever the
 * window, and the repeats answer duplicate. Against what is already stored,
 * the check looks back the queue's dedupWindowSeconds (0 = no check). The
 * engine looks the ids up and assigns offsets in the same atomic step, so the
 * answer is exact.
 */

export const MAX_TRANSACTION_ID_BYTES = 65_535;

export function validateTransactionId(id: unknown, field = 'transactionId'): string {
  if (typeof id !== 'string' || id.length === 0) {
    throw new CoreError('invalid_argument', `${field} must be a non-empty string when given; leave it out to have the message id used.`);
  }
  // Cheap bound first: a UTF-8 character takes at most 3 bytes per UTF-16 unit.
  if (id.length * 3 > MAX_TRANSACTION_ID_BYTES) {
    const bytes = Buffer.byteLength(id, 'utf8');
    if (bytes > MAX_TRANSACTION_ID_BYTES) {
      throw new CoreError('transaction_id_too_long', `${field} is ${bytes} bytes long; a transactionId is at most ${MAX_TRANSACTION_ID_BYTES} bytes.`);
    }
  }
  return id;
}

export interface PlannedPush {
  /** The item's index in the request. */
  index: number;
  queue: string;
  partition: string;
  transactionId: string;
  /** Minted for every item; used only by those that get written. */
  messageId: string;
  payload: unknown;
  /** The payload as JSON text: the stored record's value. */
  payloadJson: string;
  /** Index of the first item of this request with the same queue, partition and id; null for that first item. */
  repeatOf: number | null;
  traceId?: string;
}

/** The first occurrences of each id in one queue and partition, in request order. */
export interface PushPartitionPlan {
  queue: string;
  partition: string;
  firsts: PlannedPush[];
}

export interface PushPlan {
  items: PlannedPush[];
  partitions: PushPartitionPlan[];
}

/** Validates every item (nothing is written when one is bad) and groups them per queue and partition. */
export function planPush(rawItems: unknown, nowMs: number, field = 'items'): PushPlan {
  const list = requireArray<PushItem>(rawItems, field);
  const items: PlannedPush[] = [];
  const partitions = new Map<string, PushPartitionPlan>();
  const firstIndexOf = new Map<string, number>();
  list.forEach((item, index) => {
    if (typeof item !== 'object' || item === null) {
      throw new CoreError('invalid_argument', `${field}[${index}] must be an object with a queue and a payload.`);
    }
    const queue = validateQueueName(item.queue);
    const partition = item.partition === undefined ? DEFAULT_PARTITION_NAME : validatePartitionName(item.partition);
    const messageId = mintMessageId(nowMs);
    const transactionId = item.transactionId === undefined ? messageId : validateTransactionId(item.transactionId, `${field}[${index}].transactionId`);
    const payloadJson = requireJsonValue(item.payload, `${field}[${index}].payload`);
    const partitionKey = JSON.stringify([queue, partition]);
    const idKey = JSON.stringify([queue, partition, transactionId]);
    const first = firstIndexOf.get(idKey);
    if (item.traceId !== undefined && (typeof item.traceId !== 'string' || item.traceId.length > 255)) {
      throw new CoreError('invalid_argument', `${field}[${index}].traceId must be a string of at most 255 characters.`);
    }
    const planned: PlannedPush = { index, queue, partition, transactionId, messageId, payload: item.payload, payloadJson, repeatOf: first ?? null, ...(item.traceId === undefined ? {} : { traceId: item.traceId }) };
    items.push(planned);
    if (first !== undefined) return;
    firstIndexOf.set(idKey, index);
    let group = partitions.get(partitionKey);
    if (!group) {
      group = { queue, partition, firsts: [] };
      partitions.set(partitionKey, group);
    }
    group.firsts.push(planned);
  });
  return { items, partitions: [...partitions.values()] };
}

/**
 * The oldest store time (epoch ms, exclusive) a dedup-index entry may have and
 * still match, or null when the window is 0 and nothing is checked. Outside
 * the window the same id is a new message.
 */
export function dedupCutoff(nowMs: number, dedupWindowSeconds: number): number | null {
  return dedupWindowSeconds > 0 ? nowMs - dedupWindowSeconds * 1000 : null;
}

export function isInsideWindow(storedAtMs: number, nowMs: number, dedupWindowSeconds: number): boolean {
  const cutoff = dedupCutoff(nowMs, dedupWindowSeconds);
  return cutoff !== null && storedAtMs > cutoff;
}

/** An id the partition already stores, inside the window. */
export interface DedupHit {
  messageId: string;
  offset: number;
}

/** Splits a partition's first occurrences into those to write and those already stored. */
export function splitByHits(plan: PushPartitionPlan, hits: ReadonlyMap<string, DedupHit>): { toWrite: PlannedPush[]; stored: Map<number, DedupHit> } {
  const toWrite: PlannedPush[] = [];
  const stored = new Map<number, DedupHit>();
  for (const item of plan.firsts) {
    const hit = hits.get(item.transactionId);
    if (hit) stored.set(item.index, hit);
    else toWrite.push(item);
  }
  return { toWrite, stored };
}

/** How each first occurrence ended: written (queued) or found stored (duplicate). */
export interface FirstOutcome {
  status: 'queued' | 'duplicate';
  messageId: string;
  offset: number;
  partitionIndex: number;
}

/** Every item's answer, in request order; a repeat answers as duplicate of its first occurrence's message. */
export function assemblePushResults(plan: PushPlan, outcomeOf: (firstIndex: number) => FirstOutcome): PushItemResult[] {
  return plan.items.map((item) => {
    const outcome = outcomeOf(item.repeatOf ?? item.index);
    return {
      status: item.repeatOf === null ? outcome.status : 'duplicate',
      messageId: outcome.messageId,
      transactionId: item.transactionId,
      queue: item.queue,
      partition: item.partition,
      partitionIndex: outcome.partitionIndex,
      offset: outcome.offset,
    };
  });
}

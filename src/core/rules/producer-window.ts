/**
 * Kafka's broker rules for the idempotent producer, per producer and
 * partition. The window keeps the producer's epoch and its last five appended
 * batches; every append is checked against it and advances it in the same
 * atomic step as the write (the engine's job), so a retry after a timeout, a
 * reconnect or a gateway restart gets the same answer.
 *
 *  - the next sequence (last + 1, wrapping at int32 max) is accepted;
 *  - an exact resend of a retained batch answers success with the original
 *    base offset and writes nothing (never DUPLICATE_SEQUENCE_NUMBER: kafkajs
 *    treats that as fatal);
 *  - any other sequence is a gap: OUT_OF_ORDER_SEQUENCE_NUMBER, nothing
 *    written, and the client resends in order, which is how several in-flight
 *    batches that arrive out of order end up in the right order;
 *  - a lower epoch is INVALID_PRODUCER_EPOCH; a higher epoch starts at 0.
 *
 * Kafka itself accepts any first sequence from a producer it has no state for,
 * because retention may have deleted that state. The core never drops a
 * producer's window with the log, so a producer it has not seen on a partition
 * must start at sequence 0; that keeps an early batch that overtook sequence 0
 * from being written ahead of it.
 */

import type { ProducerState } from '../core.js';

/** producerId -1: a producer that is not idempotent; no check. */
export const NO_PRODUCER_ID = -1;
export const NO_SEQUENCE = -1;
export const RETAINED_BATCHES = 5;
export const MAX_SEQUENCE = 2_147_483_647;

export interface RetainedBatch {
  firstSeq: number;
  lastSeq: number;
  baseOffset: number;
}

export interface ProducerWindow {
  producerId: number;
  producerEpoch: number;
  /** Oldest first, at most RETAINED_BATCHES. */
  batches: RetainedBatch[];
  /** The max timestamp of the last batch appended: DescribeProducers reports it. */
  lastTimestamp: number;
}

/** What the check needs from a batch header. */
export interface SequencedBatch {
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
  lastOffsetDelta: number;
}

export type SequenceVerdict =
  | { kind: 'accept' }
  | { kind: 'duplicate'; baseOffset: number }
  | { kind: 'out_of_order_sequence'; message: string }
  | { kind: 'invalid_producer_epoch'; message: string };

/** The sequence of a batch's last record; sequences wrap to 0 after int32 max. */
export function lastSequenceOf(batch: Pick<SequencedBatch, 'baseSequence' | 'lastOffsetDelta'>): number {
  const last = batch.baseSequence + batch.lastOffsetDelta;
  return last > MAX_SEQUENCE ? last - MAX_SEQUENCE - 1 : last;
}

export function nextSequenceAfter(lastSeq: number): number {
  return lastSeq === MAX_SEQUENCE ? 0 : lastSeq + 1;
}

export function lastSequenceInWindow(window: ProducerWindow | null): number {
  const newest = window?.batches[window.batches.length - 1];
  return newest ? newest.lastSeq : NO_SEQUENCE;
}

export function isIdempotent(batch: Pick<SequencedBatch, 'producerId'>): boolean {
  return batch.producerId !== NO_PRODUCER_ID;
}

export function checkSequence(window: ProducerWindow | null, batch: SequencedBatch): SequenceVerdict {
  if (!isIdempotent(batch)) return { kind: 'accept' };
  if (batch.baseSequence < 0) {
    return { kind: 'out_of_order_sequence', message: `Producer ${batch.producerId} sent base sequence ${batch.baseSequence}; an idempotent batch needs a sequence of 0 or more.` };
  }
  if (window && batch.producerEpoch < window.producerEpoch) {
    return {
      kind: 'invalid_producer_epoch',
      message: `Producer ${batch.producerId} sent epoch ${batch.producerEpoch}, older than epoch ${window.producerEpoch} already seen on this partition; a newer instance of this producer has taken over.`,
    };
  }
  const lastSeq = lastSequenceOf(batch);
  if (window && batch.producerEpoch === window.producerEpoch) {
    const retained = window.batches.find((b) => b.firstSeq === batch.baseSequence && b.lastSeq === lastSeq);
    if (retained) return { kind: 'duplicate', baseOffset: retained.baseOffset };
    const expected = nextSequenceAfter(lastSequenceInWindow(window));
    if (batch.baseSequence !== expected) {
      return {
        kind: 'out_of_order_sequence',
        message: `Producer ${batch.producerId} epoch ${batch.producerEpoch} sent sequence ${batch.baseSequence}, expected ${expected}; resend the batches in order.`,
      };
    }
    return { kind: 'accept' };
  }
  // No window yet, or a newer epoch: the producer starts over at 0.
  if (batch.baseSequence !== 0) {
    return {
      kind: 'out_of_order_sequence',
      message: `Producer ${batch.producerId} epoch ${batch.producerEpoch} is new on this partition and sent sequence ${batch.baseSequence}; a new epoch starts at sequence 0.`,
    };
  }
  return { kind: 'accept' };
}

/**
 * The window of a producer whose only write to a partition is a transaction
 * marker (it added the partition to a transaction and produced nothing
 * there). Kafka's broker keeps a producer entry for the marker, so
 * DescribeProducers lists it with no sequence yet; its next batch starts at 0.
 */
export function markerOnlyWindow(producerId: number, producerEpoch: number, timestamp: number): ProducerWindow {
  return { producerId, producerEpoch, batches: [], lastTimestamp: timestamp };
}

/** The window after appending an accepted batch at `baseOffset`. Does not mutate `window`. */
export function advance(window: ProducerWindow | null, batch: SequencedBatch, baseOffset: number, maxTimestamp: number): ProducerWindow {
  const sameEpoch = window !== null && window.producerEpoch === batch.producerEpoch;
  const kept = sameEpoch ? window.batches.slice(-(RETAINED_BATCHES - 1)) : [];
  kept.push({ firstSeq: batch.baseSequence, lastSeq: lastSequenceOf(batch), baseOffset });
  return { producerId: batch.producerId, producerEpoch: batch.producerEpoch, batches: kept, lastTimestamp: maxTimestamp };
}

export type PartitionSequencePlan =
  | { kind: 'append' }
  | { kind: 'duplicate'; baseOffset: number }
  | { kind: 'out_of_order_sequence'; message: string }
  | { kind: 'invalid_producer_epoch'; message: string };

/**
 * Checks the batches of one partition's append in order, each against the
 * window as the earlier ones in the same call leave it. All accepted: the
 * append goes ahead, and the engine then calls `advanceWindows` with the
 * offsets it assigned. All exact resends: the call answers the first one's
 * original offset and writes nothing. Anything else fails the partition and
 * writes nothing: a resend mixed with new batches cannot be answered with one
 * offset.
 *
 * `windowOf` gives the stored window for a producer id (null when none).
 */
export function checkPartitionSequences(
  batches: SequencedBatch[],
  windowOf: (producerId: number) => ProducerWindow | null,
): PartitionSequencePlan {
  const windows = new Map<number, ProducerWindow | null>();
  let duplicates = 0;
  let firstDuplicateOffset = -1;
  for (const batch of batches) {
    if (!isIdempotent(batch)) continue;
    const window = windows.has(batch.producerId) ? windows.get(batch.producerId)! : windowOf(batch.producerId);
    const verdict = checkSequence(window, batch);
    switch (verdict.kind) {
      case 'accept':
        // The offset is a placeholder: only the sequences matter for the next check.
        windows.set(batch.producerId, advance(window, batch, -1, -1));
        break;
      case 'duplicate':
        if (duplicates === 0) firstDuplicateOffset = verdict.baseOffset;
        duplicates++;
        windows.set(batch.producerId, window);
        break;
      default:
        return verdict;
    }
  }
  if (duplicates > 0) {
    if (duplicates === batches.length) return { kind: 'duplicate', baseOffset: firstDuplicateOffset };
    return { kind: 'out_of_order_sequence', message: 'The append mixes resent batches with new ones; send each batch on its own.' };
  }
  return { kind: 'append' };
}

/**
 * The windows after an accepted append: each idempotent batch advances its
 * producer's window with the base offset the engine assigned. Returns only the
 * windows that changed, keyed by producer id, for the engine to store.
 */
export function advanceWindows(
  appended: (SequencedBatch & { baseOffset: number; maxTimestamp: number })[],
  windowOf: (producerId: number) => ProducerWindow | null,
): Map<number, ProducerWindow> {
  const changed = new Map<number, ProducerWindow>();
  for (const batch of appended) {
    if (!isIdempotent(batch)) continue;
    const window = changed.get(batch.producerId) ?? windowOf(batch.producerId);
    changed.set(batch.producerId, advance(window, batch, batch.baseOffset, batch.maxTimestamp));
  }
  return changed;
}

/**
 * DescribeProducers' answer for a partition: its producers' windows, each
 * with the first offset of the producer's open transaction there (-1: none).
 * There is one transaction coordinator, so no coordinator epoch (-1).
 */
export function describeProducerWindows(windows: readonly ProducerWindow[], transactionStartOf: (producerId: number) => number): ProducerState[] {
  return windows.map((w) => ({
    producerId: w.producerId,
    producerEpoch: w.producerEpoch,
    lastSequence: lastSequenceInWindow(w),
    lastTimestamp: w.lastTimestamp,
    coordinatorEpoch: -1,
    currentTxnStartOffset: transactionStartOf(w.producerId),
  }));
}

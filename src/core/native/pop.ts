import { randomUUID } from 'node:crypto';
import type { QueueConfig } from '../core.js';
import { deliveredWithGaps, inWindowBuffer, isLeaseLive, popVisibleUntil } from '../rules/leases.js';
import { PopCollector, type RecordLocation } from '../rules/native-records.js';
import type { StoredLease } from './ack.js';

/**
 * Queen's native pop, the decisions each engine's pop makes as it walks a
 * queue's partitions (the walk reads as it goes, so each engine keeps it:
 * the memory engine's in one synchronous pass, PostgreSQL's in one database
 * transaction under the (partition, group) consumer lock). Per partition: a
 * live lease of the group passes it over, and an expired one is dropped
 * (`popPosition`); the group reads from its committed position, or the log
 * start; nothing at or past the last stable offset (an open Kafka
 * transaction) is handed out, nor anything from a partition still inside its
 * window buffer (`popReady`); the records from the position are collected
 * (`popCollector`: delayed processing, the read limit, unreadable batches
 * passed over), and the messages go out under a new lease (`popLease`).
 */

export interface PopStart {
  /** The group's lease ran out: the engine drops it. */
  dropExpired: boolean;
  /** Where the group reads; null: pass the partition over. */
  position: number | null;
}

/** Where the group reads a partition, or null when its lease is live or nothing is past its position. */
export function popPosition(lease: Pick<StoredLease, 'deadline'> | null | undefined, committed: number | null, logStartOffset: number, highWatermark: number, now: number): PopStart {
  if (lease && isLeaseLive(lease, now)) return { dropExpired: false, position: null };
  const position = Math.max(committed ?? 0, logStartOffset);
  return { dropExpired: !!lease, position: position >= highWatermark ? null : position };
}

/** Whether a pop needs the partition's newest append time (its queue has a window buffer). */
export function needsNewestAppend(config: QueueConfig): boolean {
  return (config.windowBufferMs ?? 0) > 0;
}

/** Whether the partition hands anything out from `position` now. */
export function popReady(position: number, lastStableOffset: number, config: QueueConfig, newestAppendAt: number | null, now: number): boolean {
  return position < lastStableOffset && !inWindowBuffer(config.windowBufferMs ?? 0, newestAppendAt, now);
}

/**
 * Whether a pop asks where every other group is (`consumedByAll` of
 * popCollector): the group has no position yet and the queue keeps consumed
 * records only for a while.
 */
export function needsConsumedByAll(config: QueueConfig, committed: number | null): boolean {
  return committed === null && (config.completedRetentionMs ?? 0) > 0;
}

/**
 * Records a pop passes over without delivering them: those that waited
 * longer than the queue's maxWaitMs (Queen evicts them), and those older than
 * its completedRetentionMs that every other group has consumed (below
 * `consumedByAll`, the lowest position of the partition's other groups; Queen
 * deletes them).
 */
export function popExpired(config: QueueConfig, now: number, consumedByAll: number | null): (offset: number, timestamp: number) => boolean {
  const waitedBefore = (config.maxWaitMs ?? 0) > 0 ? now - config.maxWaitMs : Number.NEGATIVE_INFINITY;
  const completedBefore = consumedByAll !== null && (config.completedRetentionMs ?? 0) > 0 ? now - config.completedRetentionMs : Number.NEGATIVE_INFINITY;
  return (offset, timestamp) => timestamp < waitedBefore || (offset < (consumedByAll ?? 0) && timestamp < completedBefore);
}

export function popCollector(where: RecordLocation, position: number, batch: number, readLimit: number, config: QueueConfig, now: number, consumedByAll: number | null = null): PopCollector {
  return new PopCollector(position, batch, where, readLimit, popVisibleUntil(config.delayedProcessingMs ?? 0, now), popExpired(config, now, consumedByAll));
}

/** The lease the collected messages go out under. */
export function popLease(collected: PopCollector, owner: string, leaseMs: number | undefined, config: QueueConfig, now: number): StoredLease & { id: string } {
  const { messages } = collected;
  return {
    id: randomUUID(),
    owner,
    deadline: now + (leaseMs ?? config.leaseMs),
    fromOffset: collected.position,
    toOffset: messages[messages.length - 1]!.offset + 1,
    acked: [],
    delivered: deliveredWithGaps(messages.map((m) => m.offset)),
  };
}

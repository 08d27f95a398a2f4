import { randomUUID } from 'node:crypto';
import type { Lease, PopResult, QueueConfig, UnreadableRange } from '../core.js';
import type { CheckedPop } from '../engine.js';
import { deliveredWithGaps, inWindowBuffer, isLeaseLive, popVisibleUntil } from '../rules/leases.js';
import { PopCollector } from '../rules/native-records.js';
import type { StoredLease } from './ack.js';

/**
 * Queen's native pop, decided once for every engine: the walk over a queue's
 * partitions (`PopWalk`). The engine opens its atomic unit (memory: one
 * synchronous pass; PostgreSQL: one database transaction), hands the walk
 * its candidates in the order it keeps them, each loaded for the group (its
 * lease, its committed position, the log's bounds; PostgreSQL under the
 * (partition, group) consumer lock, a partition another popper holds being
 * left out), and does what each step answers. Per partition: a live lease of
 * the group passes it over, and an expired one is dropped; the group reads
 * from its committed position, or the log start; a partition with nothing
 * past that position and no live lease is `idle` (an engine that keeps a set
 * of the partitions with work leaves it out until an append, or the group's
 * position moving back, puts it in again); nothing at or past the last stable
 * offset (an open Kafka transaction) is handed out, nor anything from a
 * partition still inside its window buffer; the records from the position
 * are collected (delayed processing, the read limit, unreadable batches and
 * expired records passed over, the group's position moved past them), and
 * the first partition that yields messages ends the walk: they go out under
 * a new lease.
 */

/** A partition as the walk visits it, loaded by the engine for the group; `P` is the engine's handle. */
export interface PopCandidate<P> {
  handle: P;
  name: string;
  index: number;
  logStartOffset: number;
  highWatermark: number;
  /** The group's lease on the partition, if any (live or not). */
  lease: Pick<StoredLease, 'deadline'> | null;
  /** The group's committed position; null when none. */
  committed: number | null;
}

/** The walk's first answer for a partition. */
export interface PopStart {
  /** The group's lease ran out: the engine drops it. */
  dropExpired: boolean;
  /** Nothing past the group's position and no live lease: no work here until an append or the position moves back. */
  idle: boolean;
  /** Where the group reads; null: pass the partition over. */
  position: number | null;
}

/** What the walk answers once a partition's records are collected. */
export interface PopFinish {
  /** The group's new position (past unreadable batches or expired records); null: unchanged. */
  position: number | null;
  /** The lease the messages go out under; null: no messages here, go on to the next partition. */
  lease: (StoredLease & { id: string }) | null;
}

/** Where the group reads a partition, or null when its lease is live or nothing is past its position. */
export function popPosition(lease: Pick<StoredLease, 'deadline'> | null | undefined, committed: number | null, logStartOffset: number, highWatermark: number, now: number): PopStart {
  if (lease && isLeaseLive(lease, now)) return { dropExpired: false, idle: false, position: null };
  const position = Math.max(committed ?? 0, logStartOffset);
  const idle = position >= highWatermark;
  return { dropExpired: !!lease, idle, position: idle ? null : position };
}

/** Whether the partition hands anything out from `position` now. */
export function popReady(position: number, lastStableOffset: number, config: QueueConfig, newestAppendAt: number | null, now: number): boolean {
  return position < lastStableOffset && !inWindowBuffer(config.windowBufferMs ?? 0, newestAppendAt, now);
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

/** The queue a walk pops from. */
export interface PopQueue {
  name: string;
  id: string;
  config: QueueConfig;
}

/** One pop's walk; see the head of this file. The engine calls start, then (when it answers a position) ready and collector, then finish, per candidate. */
export class PopWalk {
  private readonly unreadable: UnreadableRange[] = [];

  constructor(
    readonly queue: PopQueue,
    private readonly req: Pick<CheckedPop, 'group' | 'owner' | 'batch' | 'leaseMs'>,
    readonly now: number,
    /** The most bytes a stored batch may inflate to (rules/batches.ts storedBatchLimit). */
    private readonly readLimit: number,
  ) {}

  start(candidate: PopCandidate<unknown>): PopStart {
    return popPosition(candidate.lease, candidate.committed, candidate.logStartOffset, candidate.highWatermark, this.now);
  }

  /** Whether `ready` needs the partition's newest append time (the queue has a window buffer). */
  get needsNewestAppend(): boolean {
    return (this.queue.config.windowBufferMs ?? 0) > 0;
  }

  ready(position: number, lastStableOffset: number, newestAppendAt: number | null): boolean {
    return popReady(position, lastStableOffset, this.queue.config, newestAppendAt, this.now);
  }

  /** Whether `collector` needs where every other group is: the group has no position yet and the queue keeps consumed records only for a while. */
  needsConsumedByAll(candidate: PopCandidate<unknown>): boolean {
    return candidate.committed === null && (this.queue.config.completedRetentionMs ?? 0) > 0;
  }

  /** What the engine feeds the partition's stored batches from `position` to (before the last stable offset), until it answers false. */
  collector(candidate: PopCandidate<unknown>, position: number, consumedByAll: number | null): PopCollector {
    const { queue, now } = this;
    const where = { queue: queue.name, queueId: queue.id, partition: candidate.name, partitionIndex: candidate.index };
    return new PopCollector(position, this.req.batch, where, this.readLimit, popVisibleUntil(queue.config.delayedProcessingMs ?? 0, now), popExpired(queue.config, now, consumedByAll));
  }

  finish(collected: PopCollector): PopFinish {
    const moved = collected.unreadable.length > 0 || collected.evicted > 0;
    if (collected.unreadable.length > 0) this.unreadable.push(...collected.unreadable);
    const { messages } = collected;
    if (messages.length === 0) return { position: moved ? collected.position : null, lease: null };
    const lease = {
      id: randomUUID(),
      owner: this.req.owner,
      deadline: this.now + (this.req.leaseMs ?? this.queue.config.leaseMs),
      fromOffset: collected.position,
      toOffset: messages[messages.length - 1]!.offset + 1,
      acked: [],
      delivered: deliveredWithGaps(messages.map((m) => m.offset)),
    };
    return { position: moved ? collected.position : null, lease };
  }

  /** The pop's answer once a partition yielded messages: them, under the lease `finish` made. */
  answer(candidate: PopCandidate<unknown>, collected: PopCollector, lease: StoredLease & { id: string }): PopResult {
    const held: Lease = { id: lease.id, queue: this.queue.name, partition: candidate.name, consumerGroup: this.req.group, owner: lease.owner, deadline: lease.deadline };
    return { messages: collected.messages, lease: held, ...(this.unreadable.length > 0 ? { unreadable: this.unreadable } : {}) };
  }

  /** The pop's answer when no partition yielded messages: null (wait on), unless batches were passed over as unreadable. */
  nothing(): PopResult | null {
    return this.unreadable.length > 0 ? { messages: [], lease: null, unreadable: this.unreadable } : null;
  }
}

import type { AckRequest } from '../core.js';
import { unknownPartitionNameError, unknownQueueError } from '../errors.js';
import { leaseHoldsOffset, positionAfterAcks, requireCurrentLease, type LeaseState } from '../rules/leases.js';

/**
 * Queen's native ack, decided once for every engine (and for every ack of a
 * native transaction). The engine loads the group's lease on the partition
 * and its committed position under the (partition, group) consumer lock; the
 * core decides. Completed: the offset is done; the group's position moves
 * over every done offset at its front, and the lease ends when all it handed
 * out is done. Failed: the lease ends and the position stays, so the message
 * and those after it are delivered again. An ack the lease does not hold (it
 * expired, was released, or never handed the offset out) changes nothing and
 * answers acked: false; one that names a lease other than the current, live
 * one fails the call.
 */

/** A consumer group's lease on a partition, as the engine stores it. */
export interface StoredLease extends LeaseState {
  /** Offsets acked at or past the group's position (read, never changed, by the core: the memory engine lends its own set). */
  acked: Iterable<number>;
  /** The offsets handed out when there are gaps between them (rules/leases.ts positionAfterAcks), else null. */
  delivered: readonly number[] | null;
}

/** What an ack needs, loaded by the engine under the consumer lock; `P` is the engine's handle for the partition. */
export type AckTarget<P> =
  | { missing: 'unknown_queue' }
  | { missing: 'unknown_partition' }
  | AckView<P>;

export interface AckView<P> {
  partition: P;
  queue: string;
  index: number;
  lease: StoredLease | null;
  /** The group's committed position on the partition; null when none. */
  committed: number | null;
}

/** What an applied ack writes. */
export interface AckWrite<P> {
  partition: P;
  queue: string;
  index: number;
  group: string;
  /** The group's new position; null: unchanged. */
  position: number | null;
  /** 'drop': the lease ends (wake the partition's poppers); else the acked offsets it keeps. */
  lease: 'drop' | number[];
}

export interface AckState<P> {
  now: number;
  target(queue: string, partition: string, group: string): AckTarget<P>;
}

export type DecideAck = <P>(req: AckRequest, state: AckState<P>) => { acked: boolean; write: AckWrite<P> | null };

/** The partition an ack names, or the call's error; a stale leaseId fails the call. */
export function resolveAck<P>(target: AckTarget<P>, req: AckRequest, now: number): AckView<P> {
  if ('missing' in target) throw target.missing === 'unknown_queue' ? unknownQueueError(req.queue) : unknownPartitionNameError(req.queue, req.partition);
  if (req.leaseId !== undefined) requireCurrentLease(target.lease, req.leaseId, now, `group "${req.consumerGroup}" on ${req.queue}/${req.partition}`);
  return target;
}

/** Whether the ack applies: the group's lease is live and handed the offset out. */
export function ackHolds(view: AckView<unknown>, req: AckRequest, now: number): boolean {
  return leaseHoldsOffset(view.lease, req.offset, now);
}

/** An ack of a resolved partition: acked or not, and what it writes. */
export function applyAck<P>(view: AckView<P>, req: AckRequest, now: number): { acked: boolean; write: AckWrite<P> | null } {
  const lease = view.lease;
  if (!leaseHoldsOffset(lease, req.offset, now)) return { acked: false, write: null };
  const where = { partition: view.partition, queue: view.queue, index: view.index, group: req.consumerGroup };
  if (req.status === 'failed') return { acked: true, write: { ...where, position: null, lease: 'drop' } };
  const acked = new Set(lease.acked);
  acked.add(req.offset);
  const position = positionAfterAcks(Math.max(view.committed ?? 0, lease.fromOffset), acked, lease.delivered, lease.toOffset);
  if (position >= lease.toOffset) return { acked: true, write: { ...where, position, lease: 'drop' } };
  return { acked: true, write: { ...where, position, lease: [...acked].filter((o) => o >= position) } };
}

/** The view as a later ack of the same call sees it, once `write` is applied. */
export function afterAck<P>(view: AckView<P>, write: AckWrite<P> | null): AckView<P> {
  if (!write) return view;
  return {
    ...view,
    committed: write.position ?? view.committed,
    lease: write.lease === 'drop' || !view.lease ? null : { ...view.lease, acked: write.lease },
  };
}

/** Decides one ack; see the head of this file. */
export const decideAck: DecideAck = <P>(req: AckRequest, state: AckState<P>) => {
  const view = resolveAck(state.target(req.queue, req.partition, req.consumerGroup), req, state.now);
  return applyAck(view, req, state.now);
};

import { CoreError } from '../errors.js';

/**
 * Native consume leases: one per partition and consumer group, with an owner
 * and a deadline. A live lease keeps other workers off the partition; a lease
 * whose deadline has passed frees it, so a worker that died holding it stops
 * blocking the partition and its unacknowledged messages are delivered again.
 */

export interface LeaseState {
  id: string;
  owner: string;
  deadline: number;
  /** The offsets handed out under this lease: [fromOffset, toOffset). */
  fromOffset: number;
  toOffset: number;
}

/**
 * Where a group's position moves once `acked` are done: over every done
 * offset at its front. `delivered` lists the offsets the lease handed out
 * when they have gaps between them (a compacted queue), null when they run
 * on without one; an offset in a gap was never delivered and holds nothing
 * up.
 */
export function positionAfterAcks(position: number, acked: ReadonlySet<number>, delivered: readonly number[] | null, toOffset: number): number {
  if (delivered === null) {
    while (acked.has(position)) position++;
    return position;
  }
  for (const offset of delivered) if (offset >= position && !acked.has(offset)) return offset;
  return toOffset;
}

/** The offsets of popped messages when there are gaps between them (see positionAfterAcks), else null. */
export function deliveredWithGaps(offsets: readonly number[]): number[] | null {
  return offsets.every((o, i) => i === 0 || o === offsets[i - 1]! + 1) ? null : [...offsets];
}

export function isLeaseLive(lease: Pick<LeaseState, 'deadline'> | null | undefined, nowMs: number): boolean {
  return !!lease && lease.deadline > nowMs;
}

/** Whether an ack of `offset` applies: the lease is live and handed the offset out. */
export function leaseHoldsOffset<L extends Pick<LeaseState, 'deadline' | 'fromOffset' | 'toOffset'>>(lease: L | null | undefined, offset: number, nowMs: number): lease is L {
  return isLeaseLive(lease, nowMs) && offset >= lease!.fromOffset && offset < lease!.toOffset;
}

/** The pop batch size limit, so one pop cannot pin a whole partition in memory. */
export const MAX_POP_BATCH = 10_000;

/**
 * An ack that names its lease must name the current, live one: a stale lease
 * fails the call, since its messages are already on their way to another worker.
 */
export function requireCurrentLease(lease: Pick<LeaseState, 'id' | 'deadline'> | null | undefined, leaseId: string, nowMs: number, where: string): void {
  if (!lease || lease.id !== leaseId || !isLeaseLive(lease, nowMs)) {
    throw new CoreError('unknown_lease', `Lease ${leaseId} is not the current lease of ${where}; it expired or was released, and its messages will be delivered again.`);
  }
}

/** A lease renewal of a lease that is not held. */
export function unknownLeaseError(leaseId: unknown): CoreError {
  return new CoreError('unknown_lease', `Lease ${String(leaseId)} is not held: it expired, was released or never existed. Pop again to get a new lease.`);
}

/** Queen's window buffer: a partition that received records within the window is left alone for now. */
export function inWindowBuffer(windowBufferMs: number, newestAppendMs: number | null, nowMs: number): boolean {
  return windowBufferMs > 0 && newestAppendMs !== null && newestAppendMs > nowMs - windowBufferMs;
}

/**
 * The newest record timestamp a pop may hand out now (Queen's delayed
 * processing): a record younger than the queue's delay, and every record
 * after it, waits, so the partition's order holds.
 */
export function popVisibleUntil(delayedProcessingMs: number, nowMs: number): number {
  return delayedProcessingMs > 0 ? nowMs - delayedProcessingMs : Number.POSITIVE_INFINITY;
}

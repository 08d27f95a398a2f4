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

export function isLeaseLive(lease: Pick<LeaseState, 'deadline'> | null | undefined, nowMs: number): boolean {
  return !!lease && lease.deadline > nowMs;
}

/** The pop batch size limit, so one pop cannot pin a whole partition in memory. */
export const MAX_POP_BATCH = 10_000;

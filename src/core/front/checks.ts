import type { CommittedOffset, PartitionRef } from '../core.js';
import { CoreError } from '../errors.js';
import { requireArray, requireCommittedOffset, requireInteger } from '../rules/arguments.js';
import { validateKvKey, validateKvNamespace, validateQueueName } from '../rules/names.js';

/** The front's checks of request fields that several of its calls share (the rest are in ../rules). */

/** A commit's fence: the lease (owner, epoch) its group coordinator decided under. */
export function checkFence(fence: unknown): { owner: string; epoch: number } {
  const f = fence as { owner?: unknown; epoch?: unknown } | null;
  if (typeof f !== 'object' || f === null || typeof f.owner !== 'string' || f.owner === '') {
    throw new CoreError('invalid_argument', 'fence must be an object with the lease owner (a non-empty string) and its epoch.');
  }
  return { owner: f.owner, epoch: requireInteger(f.epoch, 'fence.epoch', 0) };
}

/** A (queue, partition) reference for a call that fails whole. */
export function requirePartitionRef(ref: PartitionRef): void {
  validateQueueName(ref?.queue);
  requireInteger(ref.partition, 'partition');
}

/**
 * Committed offsets, every field checked and filled (leaderEpoch -1 and
 * metadata null when absent): OffsetCommit's and TxnOffsetCommit's alike.
 * Everything is checked before anything is written.
 */
export function checkCommittedOffsets(value: unknown): CommittedOffset[] {
  return requireArray<CommittedOffset>(value, 'offsets').map((o, i) => {
    const queue = validateQueueName(o?.queue);
    const partition = requireInteger(o.partition, `offsets[${i}].partition`);
    const offset = requireCommittedOffset(o.offset, `offsets[${i}].offset`);
    const leaderEpoch = o.leaderEpoch === undefined ? -1 : requireInteger(o.leaderEpoch, `offsets[${i}].leaderEpoch`, -1);
    if (o.metadata !== null && o.metadata !== undefined && typeof o.metadata !== 'string') {
      throw new CoreError('invalid_argument', `offsets[${i}].metadata must be a string or null.`);
    }
    return { queue, partition, offset, leaderEpoch, metadata: o.metadata ?? null };
  });
}

export function kvRef(req: { ns: string; key: string }): { ns: string; key: string } {
  return { ns: validateKvNamespace(req?.ns), key: validateKvKey(req.key) };
}

import type { CommittedOffset } from '../../core.js';

/** Committed offsets as the statements take them: one array per column (commit-offsets, txn-put-offsets). */
export function offsetColumns(offsets: readonly CommittedOffset[]): unknown[][] {
  return [offsets.map((o) => o.queue), offsets.map((o) => o.partition), offsets.map((o) => o.offset), offsets.map((o) => o.leaderEpoch), offsets.map((o) => o.metadata)];
}

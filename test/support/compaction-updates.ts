/**
 * The compaction scenario's updates (./compaction-scenario.ts writes and
 * checks them with real clients; the benchmark appends them to the core).
 */

export interface Update {
  key: string;
  /** Null: a tombstone. */
  value: string | null;
}

/** Keys `key-<n>`; every `tombstoneEvery`-th update deletes its key. Deterministic (a fixed LCG), so every engine and Kafka get the same log. */
export function planUpdates(count: number, keys: number, tombstoneEvery = 50): Update[] {
  const updates: Update[] = [];
  let state = 0x2545f491;
  for (let i = 0; i < count; i++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    const key = `key-${state % keys}`;
    updates.push({ key, value: i % tombstoneEvery === tombstoneEvery - 1 ? null : `v${i}-${'x'.repeat(i % 17)}` });
  }
  return updates;
}

/** The marker written last, after the tail's time is up, so everything before it may be compacted. */
export const MARKER: Update = { key: 'marker', value: 'end' };

/** The latest update's index per key: where a reader of the compacted log finds each key. */
export function latestIndexByKey(updates: readonly Update[]): Map<string, number> {
  const latest = new Map<string, number>();
  updates.forEach((u, i) => latest.set(u.key, i));
  return latest;
}


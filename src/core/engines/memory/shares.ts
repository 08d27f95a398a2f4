/**
 * The memory engine's share-partition states (../../engine.ts EngineShares):
 * a map by group, queue and partition, each state with a version that every
 * store raises. A call runs to completion without yielding, so a store is
 * atomic; loads and stores copy, so the caller's changes are its own until
 * stored.
 */
import type { LoadedSharePartition, ShareWrite } from '../../engine.js';
import type { SharePartitionKey, SharePartitionState } from '../../groups/share/partition-state.js';

function keyOf(k: SharePartitionKey): string {
  return JSON.stringify([k.group, k.queue, k.partition]);
}

interface Held extends SharePartitionKey, SharePartitionState {
  version: number;
}

export class MemoryShares {
  private readonly states = new Map<string, Held>();
  /** Versions rise across deletes too, so a state deleted and made again is never taken for the one loaded before. */
  private nextVersion = 1;

  constructor(private readonly clock: () => number) {}

  load(keys: SharePartitionKey[]): { now: number; partitions: LoadedSharePartition[] } {
    const partitions = keys.map((key): LoadedSharePartition => {
      const held = this.states.get(keyOf(key));
      if (held === undefined) return { state: null, version: 0 };
      return { state: structuredClone({ startOffset: held.startOffset, records: held.records }), version: held.version };
    });
    return { now: this.clock(), partitions };
  }

  store(writes: ShareWrite[]): boolean[] {
    return writes.map(({ key, expected, state }) => {
      const held = this.states.get(keyOf(key));
      if ((held?.version ?? 0) !== expected) return false;
      if (state === null) this.states.delete(keyOf(key));
      else this.states.set(keyOf(key), { ...key, startOffset: state.startOffset, records: structuredClone(state.records), version: this.nextVersion++ });
      return true;
    });
  }

  list(group: string | null): (SharePartitionKey & SharePartitionState)[] {
    return [...this.states.values()]
      .filter((s) => group === null || s.group === group)
      .map((s) => structuredClone({ group: s.group, queue: s.queue, partition: s.partition, startOffset: s.startOffset, records: s.records }));
  }
}

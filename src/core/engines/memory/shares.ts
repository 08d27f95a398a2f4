/**
 * The memory engine's share-partition states (../../engine.ts EngineShares):
 * a map by group, queue and partition. A call runs to completion without
 * yielding, so each update is atomic; `decide` works on a copy, so a
 * decision that throws leaves the stored state as it was.
 */
import type { ShareDecision } from '../../engine.js';
import type { SharePartitionKey, SharePartitionState } from '../../groups/share/partition-state.js';

function keyOf(k: SharePartitionKey): string {
  return JSON.stringify([k.group, k.queue, k.partition]);
}

export class MemoryShares {
  private readonly states = new Map<string, SharePartitionKey & SharePartitionState>();

  constructor(private readonly clock: () => number) {}

  update<R>(key: SharePartitionKey, decide: (state: SharePartitionState | null, now: number) => ShareDecision<R>): R {
    const stored = this.states.get(keyOf(key));
    const decision = decide(stored === undefined ? null : structuredClone({ startOffset: stored.startOffset, records: stored.records }), this.clock());
    if (decision.state === null) this.states.delete(keyOf(key));
    else if (decision.state !== undefined) {
      this.states.set(keyOf(key), { group: key.group, queue: key.queue, partition: key.partition, startOffset: decision.state.startOffset, records: structuredClone(decision.state.records) });
    }
    return decision.answer;
  }

  list(group: string | null): (SharePartitionKey & SharePartitionState)[] {
    return [...this.states.values()].filter((s) => group === null || s.group === group).map((s) => structuredClone(s));
  }
}

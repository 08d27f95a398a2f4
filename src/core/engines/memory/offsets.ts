import type {
  CommittedOffset,
  DeleteOffsetsRequest,
  FetchOffsetsRequest,
  FetchOffsetsResult,
  GroupSummary,
} from '../../core.js';
import { partitionKey } from './wakeups.js';
import type { MemoryStore } from './store.js';

/** Consumer groups' committed offsets. */
export class MemoryOffsets {
  constructor(private readonly store: MemoryStore) {}

  async commit({ group, offsets }: { group: string; offsets: CommittedOffset[] }): Promise<void> {
    // Every partition must exist before anything is written.
    for (const o of offsets) this.store.partition(o);
    for (const o of offsets) this.store.setGroupOffset(group, o);
    this.store.kafkaTxns.notePlainCommit(group, offsets);
  }


  async fetch(req: FetchOffsetsRequest): Promise<FetchOffsetsResult> {
    const { group, partitions: parts } = req;
    if (parts === null) {
      return { offsets: [...(this.store.groupOffsets.get(group)?.values() ?? [])].map((o) => ({ ...o })) };
    }
    return {
      offsets: parts.map((p) => {
        const found = this.store.groupOffset(group, p.queue, p.partition);
        return found ? { ...found } : { queue: p.queue, partition: p.partition, offset: -1, leaderEpoch: -1, metadata: null };
      }),
    };
  }

  async delete(req: DeleteOffsetsRequest): Promise<void> {
    const { group, partitions: parts } = req;
    const offsets = this.store.groupOffsets.get(group);
    if (!offsets) return;
    for (const p of parts) offsets.delete(partitionKey(p.queue, p.partition));
    this.store.popWork.forget(group);
    if (offsets.size === 0) this.store.groupOffsets.delete(group);
  }

  async listGroups(): Promise<{ groups: GroupSummary[] }> {
    const names = new Set(this.store.groupOffsets.keys());
    for (const queue of this.store.queues.values()) for (const p of queue.partitions) for (const g of p.leases.keys()) names.add(g);
    return { groups: [...names].sort().map((group) => ({ group, protocolType: 'consumer' })) };
  }
}

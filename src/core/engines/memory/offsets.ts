import type {
  CommitOffsetsRequest,
  CommittedOffset,
  DeleteOffsetsRequest,
  FetchOffsetsRequest,
  FetchOffsetsResult,
  GroupSummary,
} from '../../core.js';
import { CoreError } from '../../errors.js';
import { requireArray, requireCommittedOffset, requireInteger } from '../../rules/arguments.js';
import { requirePartitionRefs } from '../../rules/requests.js';
import { validateGroupName } from '../../rules/names.js';
import { partitionKey } from './wakeups.js';
import type { MemoryStore } from './store.js';

/** Consumer groups' committed offsets. */
export class MemoryOffsets {
  constructor(private readonly store: MemoryStore) {}

  async commit(req: CommitOffsetsRequest): Promise<void> {
    this.store.checkOpen();
    const group = validateGroupName(req?.group);
    const offsets = requireArray<CommittedOffset>(req.offsets, 'offsets');
    // Everything is checked before anything is written.
    const checked = offsets.map((o, i) => {
      const { queue } = this.store.partition(o);
      requireCommittedOffset(o.offset, `offsets[${i}].offset`);
      const leaderEpoch = o.leaderEpoch === undefined ? -1 : requireInteger(o.leaderEpoch, `offsets[${i}].leaderEpoch`, -1);
      if (o.metadata !== null && o.metadata !== undefined && typeof o.metadata !== 'string') {
        throw new CoreError('invalid_argument', `offsets[${i}].metadata must be a string or null.`);
      }
      return { queue: queue.name, partition: o.partition, offset: o.offset, leaderEpoch, metadata: o.metadata ?? null };
    });
    for (const o of checked) this.store.setGroupOffset(group, o);
    this.store.kafkaTxns.notePlainCommit(group, checked);
  }


  async fetch(req: FetchOffsetsRequest): Promise<FetchOffsetsResult> {
    this.store.checkOpen();
    const group = validateGroupName(req?.group);
    if (req.partitions === null || req.partitions === undefined) {
      return { offsets: [...(this.store.groupOffsets.get(group)?.values() ?? [])].map((o) => ({ ...o })) };
    }
    const parts = requirePartitionRefs(req.partitions);
    return {
      offsets: parts.map((p) => {
        const found = this.store.groupOffset(group, p.queue, p.partition);
        return found ? { ...found } : { queue: p.queue, partition: p.partition, offset: -1, leaderEpoch: -1, metadata: null };
      }),
    };
  }

  async delete(req: DeleteOffsetsRequest): Promise<void> {
    this.store.checkOpen();
    const group = validateGroupName(req?.group);
    const parts = requirePartitionRefs(req.partitions);
    const offsets = this.store.groupOffsets.get(group);
    if (!offsets) return;
    for (const p of parts) offsets.delete(partitionKey(p.queue, p.partition));
    if (offsets.size === 0) this.store.groupOffsets.delete(group);
  }

  async listGroups(): Promise<{ groups: GroupSummary[] }> {
    this.store.checkOpen();
    const names = new Set(this.store.groupOffsets.keys());
    for (const queue of this.store.queues.values()) for (const p of queue.partitions) for (const g of p.leases.keys()) names.add(g);
    return { groups: [...names].sort().map((group) => ({ group, protocolType: 'consumer' })) };
  }
}

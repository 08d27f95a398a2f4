import type { QueueConfig } from '../../core.js';
import type { DedupHit } from '../../rules/dedup.js';
import { kvSlot } from '../../rules/transaction.js';
import type { AckState, AckTarget } from '../../native/ack.js';
import type { DedupSince, KvWrite, PushPartition, PushQueue } from '../../native/push.js';
import type { TransactionState } from '../../native/transaction.js';
import type { MemoryStore, PartitionState } from './store.js';

/**
 * The memory store as the core's native decisions (../../native/) read it:
 * read as asked, synchronously, so the decision and the writes that follow it
 * are one atomic step; a missing partition is added when the core asks for it,
 * which it does only once every check passed.
 */
export class MemoryNativeState implements TransactionState<PartitionState>, AckState<PartitionState> {
  constructor(
    private readonly store: MemoryStore,
    readonly now: number,
    private readonly dedupSince: DedupSince | null,
  ) {}

  queue(name: string): PushQueue | null {
    return this.store.queues.get(name) ?? null;
  }

  hit(queue: string, partition: string, transactionId: string): DedupHit | null {
    const q = this.store.queues.get(queue)!;
    const found = q.byName.get(partition)?.dedup.get(transactionId);
    if (!found) return null;
    const since = this.dedupSince!(q.config as QueueConfig, this.now);
    return since !== null && found.storedAt > since ? { messageId: found.messageId, offset: found.offset } : null;
  }

  partition(queue: string, name: string): PushPartition<PartitionState> {
    const q = this.store.queues.get(queue)!;
    const handle = q.byName.get(name) ?? this.store.addPartition(q, name);
    return { handle, index: handle.index, nextOffset: handle.log.highWatermark };
  }

  room(pushBytes: number, kv: readonly KvWrite[]): void {
    const growth = pushBytes + (kv.length === 0 ? 0 : Math.max(0, this.store.kvGrowth(kv.map(({ ns, key, entry }) => ({ slot: kvSlot(ns, key), entry })))));
    if (growth > 0) this.store.checkRoom(growth);
  }

  target(queueName: string, name: string, group: string): AckTarget<PartitionState> {
    const queue = this.store.queues.get(queueName);
    if (!queue) return { missing: 'unknown_queue' };
    const partition = queue.byName.get(name);
    if (!partition) return { missing: 'unknown_partition' };
    const lease = partition.leases.get(group);
    const committed = this.store.groupOffset(group, queue.name, partition.index)?.offset ?? null;
    return { partition, queue: queue.name, index: partition.index, committed, lease: lease ?? null };
  }

  ack(queue: string, partition: string, group: string): AckTarget<PartitionState> {
    return this.target(queue, partition, group);
  }

  kv(ns: string, key: string) {
    return this.store.kv.get(kvSlot(ns, key)) ?? null;
  }
}

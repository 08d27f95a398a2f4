import type { AckRequest, CallOptions, Lease, PartitionInfo, PopResult, PushResult, RenewLeaseRequest, TransactionResult } from '../../core.js';
import { unknownPartitionNameError } from '../../errors.js';
import { storedBatchLimit } from '../../rules/batches.js';
import { isLeaseLive, unknownLeaseError, type LeaseState } from '../../rules/leases.js';
import { PopWalk } from '../../native/pop.js';
import { kvSlot } from '../../rules/transaction.js';
import type { AckWrite, DecideAck } from '../../native/ack.js';
import type { DecidePush, PushCall, PushWrites } from '../../native/push.js';
import type { DecideTransaction, TransactionCall } from '../../native/transaction.js';
import { MemoryNativeState } from './native-state.js';
import { partitionKey, queueKey } from './wakeups.js';
import type { CheckedPop } from '../../engine.js';
import type { MemoryStore, PartitionState, QueueState } from './store.js';

/**
 * Queen's native messaging over the memory store: the state push, ack and the
 * native transaction are decided over (../../native/), loaded and stored
 * synchronously, so each call is atomic without a lock; pop under a lease and
 * lease renewal.
 */
export class MemoryNative {
  constructor(private readonly store: MemoryStore) {}

  now(): number {
    return this.store.clock();
  }

  fixedPartitions(queues: string[]): Map<string, readonly PartitionInfo[]> {
    const found = new Map<string, readonly PartitionInfo[]>();
    for (const name of queues) {
      const partitions = this.store.partitionsOf(name);
      if (partitions) found.set(name, partitions);
    }
    return found;
  }

  push(call: PushCall, decide: DecidePush): PushResult {
    const { items, writes } = decide(call, new MemoryNativeState(this.store, call.now, call.dedupSince));
    this.writePush(writes);
    return { items };
  }

  private writePush(writes: PushWrites<PartitionState>): void {
    for (const b of writes.batches) {
      b.partition.log.append(b.bytes, b.nextOffset - b.baseOffset, b.time, b.time);
      this.store.wakePartition(this.store.queues.get(b.queue)!, b.partition);
    }
    for (const d of writes.dedup) d.partition.dedup.set(d.transactionId, { messageId: d.messageId, offset: d.offset, storedAt: d.storedAt });
  }

  // ─── Native consume ────────────────────────────────────────────────────────

  async pop(req: CheckedPop, options?: CallOptions): Promise<PopResult> {
    const queue = this.store.queue(req.queue);
    const { partitionName, waitMs } = req;
    if (partitionName !== undefined && !queue.byName.has(partitionName)) {
      throw unknownPartitionNameError(queue.name, partitionName);
    }
    const compute = (final: boolean): PopResult | null => {
      const current = this.store.queues.get(queue.name);
      const popped = current ? this.tryPop(current, req) : null;
      return popped ?? (final ? { messages: [], lease: null } : null);
    };
    const keys = partitionName === undefined ? [queueKey(queue.name)] : [partitionKey(queue.name, queue.byName.get(partitionName)!.index)];
    return this.store.longPoll(keys, waitMs, options?.signal, compute, () => ({ messages: [], lease: null }));
  }

  /** One synchronous pass of the core's walk (../../native/pop.ts) over the group's partitions with work. */
  private tryPop(queue: QueueState, req: CheckedPop): PopResult | null {
    const { partitionName, group } = req;
    const walk = new PopWalk(queue, req, this.store.clock(), storedBatchLimit(this.store.appendLimits));
    const work = partitionName === undefined ? this.store.popWork.of(queue, group) : null;
    for (const partition of work ?? [queue.byName.get(partitionName!)!]) {
      const { log } = partition;
      const candidate = { handle: partition, name: partition.name, index: partition.index, logStartOffset: log.logStartOffset, highWatermark: log.highWatermark, lease: partition.leases.get(group) ?? null, committed: this.store.groupOffset(group, queue.name, partition.index)?.offset ?? null };
      const { dropExpired, idle, position } = walk.start(candidate);
      if (dropExpired) this.dropLease(partition, group);
      if (idle) work?.delete(partition);
      if (position === null) continue;
      const lastStable = this.store.kafkaTxns.lastStableOffset(partition, log.highWatermark);
      if (!walk.ready(position, lastStable, log.batches.at(-1)?.appendedAt ?? null)) continue;
      const collected = walk.collector(candidate, position, walk.needsConsumedByAll(candidate) ? this.consumedByAll(group, queue.name, partition.index) : null);
      for (const stored of log.batchesFrom(position)) {
        if (stored.baseOffset >= lastStable) break;
        if (!collected.take(stored, (producerId) => this.store.kafkaTxns.isAborted(partition, producerId, stored.baseOffset))) break;
      }
      const finished = walk.finish(collected);
      if (finished.position !== null) this.store.setGroupOffset(group, { queue: queue.name, partition: partition.index, offset: finished.position, leaderEpoch: -1, metadata: null });
      const { lease } = finished;
      if (!lease) continue;
      partition.leases.set(group, { ...lease, acked: new Set(), delivered: lease.delivered && [...lease.delivered] });
      this.store.leaseIndex.set(lease.id, { queue: queue.name, partition: partition.index, group });
      return walk.answer(candidate, collected, lease);
    }
    return walk.nothing();
  }

  /** The lowest position of the other groups on the partition; null when none has one. */
  private consumedByAll(group: string, queue: string, partition: number): number | null {
    let lowest: number | null = null;
    for (const [other, offsets] of this.store.groupOffsets) {
      const committed = other === group ? undefined : offsets.get(partitionKey(queue, partition))?.offset;
      if (committed !== undefined) lowest = Math.min(lowest ?? committed, committed);
    }
    return lowest;
  }

  private leaseOf(queue: QueueState, partition: PartitionState, group: string, lease: LeaseState): Lease {
    return { id: lease.id, queue: queue.name, partition: partition.name, consumerGroup: group, owner: lease.owner, deadline: lease.deadline };
  }

  private dropLease(partition: PartitionState, group: string): void {
    const lease = partition.leases.get(group);
    if (!lease) return;
    partition.leases.delete(group);
    this.store.leaseIndex.delete(lease.id);
  }

  ack(req: AckRequest, decide: DecideAck): { acked: boolean } {
    const { acked, write } = decide(req, new MemoryNativeState(this.store, this.store.clock(), null));
    if (write) this.writeAck(write);
    return { acked };
  }

  private writeAck(write: AckWrite<PartitionState>): void {
    const { partition, group } = write;
    if (write.position !== null) this.store.setGroupOffset(group, { queue: write.queue, partition: write.index, offset: write.position, leaderEpoch: -1, metadata: null });
    if (write.lease === 'drop') {
      this.dropLease(partition, group);
      this.store.wakePartition(this.store.queues.get(write.queue)!, partition);
    } else {
      partition.leases.get(group)!.acked = new Set(write.lease);
    }
  }

  async renewLease(req: RenewLeaseRequest): Promise<Lease> {
    const { extendMs } = req;
    const where = typeof req.leaseId === 'string' ? this.store.leaseIndex.get(req.leaseId) : undefined;
    const queue = where && this.store.queues.get(where.queue);
    const partition = queue?.partitions[where!.partition];
    const lease = partition?.leases.get(where!.group);
    const now = this.store.clock();
    if (!queue || !partition || !lease || lease.id !== req.leaseId || !isLeaseLive(lease, now)) {
      throw unknownLeaseError(req.leaseId);
    }
    lease.deadline = now + extendMs;
    return this.leaseOf(queue, partition, where!.group, lease);
  }

  // ─── Native transaction ────────────────────────────────────────────────────

  transaction(call: TransactionCall, decide: DecideTransaction): TransactionResult {
    const { result, writes } = decide(call, new MemoryNativeState(this.store, call.now, call.dedupSince));
    if (!writes) return result;
    // Decided whole: apply it all, with no await in between.
    this.writePush(writes);
    for (const write of writes.acks) this.writeAck(write);
    for (const { ns, key, entry } of writes.kv) this.store.writeKv(kvSlot(ns, key), entry);
    return result;
  }
}

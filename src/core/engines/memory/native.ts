import { randomUUID } from 'node:crypto';
import type {
  AckRequest,
  CallOptions,
  Lease,
  PopResult,
  PushRequest,
  PushResult,
  RenewLeaseRequest,
  TransactionRequest,
  TransactionResult,
  UnreadableRange,
} from '../../core.js';
import { setBaseOffset } from '../../../../protocol/records/batch-header.js';
import { CoreError } from '../../errors.js';
import { storedBatchLimit } from '../../rules/batches.js';
import { assemblePushResults, isInsideWindow, planPush, splitByHits, type DedupHit, type FirstOutcome, type PlannedPush, type PushPlan } from '../../rules/dedup.js';
import { deliveredWithGaps, inWindowBuffer, isLeaseLive, leaseHoldsOffset, popVisibleUntil, positionAfterAcks, requireCurrentLease, type LeaseState } from '../../rules/leases.js';
import { encodePushBatch, PopCollector } from '../../rules/native-records.js';
import { evaluateKvOperations, firstStoredDuplicate, firstUnheldAck, kvSlot, planTransaction, transactionPushResult } from '../../rules/transaction.js';
import { routePushItems } from '../../rules/push-routing.js';
import { partitionKey, queueKey } from './wakeups.js';
import { refuseNativePushToCompacted } from '../../rules/compaction.js';
import type { CheckedPop } from '../../engine.js';
import type { MemoryStore, PartitionState, QueueState } from './store.js';

/** Queen's native messaging: push with dedup, pop under a lease, ack, lease renewal, and the native transaction. */
export class MemoryNative {
  constructor(private readonly store: MemoryStore) {}

  async push(req: PushRequest): Promise<PushResult> {
    const now = this.store.clock();
    const plan = planPush(routePushItems(req?.items, this.store.partitionsOf), now);
    const bytes = this.checkPushTargets(plan);
    if (bytes > 0) this.store.checkRoom(bytes);
    return { items: this.writePush(plan, now) };
  }


  /** Queues must exist and each payload must fit, before anything is written; answers the payloads' bytes. */
  private checkPushTargets(plan: PushPlan): number {
    let total = 0;
    for (const item of plan.items) {
      const queue = this.store.queue(item.queue);
      refuseNativePushToCompacted(queue.name, queue.config, item.index);
      const size = Buffer.byteLength(item.payloadJson, 'utf8');
      total += size;
      if (size > queue.config.maxMessageBytes) {
        throw new CoreError('invalid_argument', `Item ${item.index}'s payload is ${size} bytes as JSON; queue "${queue.name}" accepts at most ${queue.config.maxMessageBytes}.`);
      }
    }
    return total;
  }

  private dedupHit(item: PlannedPush, now: number): DedupHit | null {
    const queue = this.store.queues.get(item.queue)!;
    const found = queue.byName.get(item.partition)?.dedup.get(item.transactionId);
    return found && isInsideWindow(found.storedAt, now, queue.config.dedupWindowSeconds) ? { messageId: found.messageId, offset: found.offset } : null;
  }

  private writePush(plan: PushPlan, now: number): PushResult['items'] {
    const outcomes = new Map<number, FirstOutcome>();
    for (const group of plan.partitions) {
      const queue = this.store.queues.get(group.queue)!;
      const hits = new Map<string, DedupHit>();
      for (const item of group.firsts) {
        const hit = this.dedupHit(item, now);
        if (hit) hits.set(item.transactionId, hit);
      }
      const { toWrite, stored } = splitByHits(group, hits);
      const partition = queue.byName.get(group.partition) ?? (toWrite.length > 0 ? this.store.addPartition(queue, group.partition) : null);
      for (const [index, hit] of stored) outcomes.set(index, { status: 'duplicate', ...hit, partitionIndex: partition?.index ?? -1 });
      if (!partition || toWrite.length === 0) continue;
      const baseOffset = partition.log.highWatermark;
      const batch = encodePushBatch(toWrite, now);
      setBaseOffset(batch, 0, baseOffset);
      partition.log.append(batch, toWrite.length, now, now);
      toWrite.forEach((item, i) => {
        const offset = baseOffset + i;
        outcomes.set(item.index, { status: 'queued', messageId: item.messageId, offset, partitionIndex: partition.index });
        if (queue.config.dedupWindowSeconds > 0) partition.dedup.set(item.transactionId, { messageId: item.messageId, offset, storedAt: now });
      });
      this.store.wakePartition(queue, partition);
    }
    return assemblePushResults(plan, (index) => outcomes.get(index)!);
  }

  // ─── Native consume ────────────────────────────────────────────────────────

  async pop(req: CheckedPop, options?: CallOptions): Promise<PopResult> {
    const queue = this.store.queue(req.queue);
    const { partitionName, group, batch, waitMs, leaseMs } = req;
    if (partitionName !== undefined && !queue.byName.has(partitionName)) {
      throw new CoreError('unknown_partition', `Queue "${queue.name}" has no partition named "${partitionName}".`);
    }
    const compute = (final: boolean): PopResult | null => {
      const current = this.store.queues.get(queue.name);
      const popped = current ? this.tryPop(current, partitionName, group, req.owner, batch, leaseMs) : null;
      return popped ?? (final ? { messages: [], lease: null } : null);
    };
    const keys = partitionName === undefined ? [queueKey(queue.name)] : [partitionKey(queue.name, queue.byName.get(partitionName)!.index)];
    return this.store.longPoll(keys, waitMs, options?.signal, compute, () => ({ messages: [], lease: null }));
  }

  private tryPop(queue: QueueState, partitionName: string | undefined, group: string, owner: string, batch: number, leaseMs: number | undefined): PopResult | null {
    const now = this.store.clock();
    const candidates = partitionName === undefined ? queue.partitions : [queue.byName.get(partitionName)!];
    const unreadable: UnreadableRange[] = [];
    for (const partition of candidates) {
      const held = partition.leases.get(group);
      if (held && isLeaseLive(held, now)) continue;
      if (held) this.dropLease(partition, group);
      const log = partition.log;
      const position = Math.max(this.store.groupOffset(group, queue.name, partition.index)?.offset ?? 0, log.logStartOffset);
      const lastStable = this.store.kafkaTxns.lastStableOffset(partition, log.highWatermark);
      if (position >= lastStable) continue;
      if (inWindowBuffer(queue.config.windowBufferMs, log.batches.at(-1)?.appendedAt ?? null, now)) continue;
      const where = { queue: queue.name, queueId: queue.id, partition: partition.name, partitionIndex: partition.index };
      const collected = new PopCollector(position, batch, where, storedBatchLimit(this.store.appendLimits), popVisibleUntil(queue.config.delayedProcessingMs, now));
      for (const stored of log.batchesFrom(position)) {
        if (stored.baseOffset >= lastStable) break;
        if (!collected.take(stored, (producerId) => this.store.kafkaTxns.isAborted(partition, producerId, stored.baseOffset))) break;
      }
      if (collected.unreadable.length > 0) {
        unreadable.push(...collected.unreadable);
        this.store.setGroupOffset(group, { queue: queue.name, partition: partition.index, offset: collected.position, leaderEpoch: -1, metadata: null });
      }
      const { messages } = collected;
      if (messages.length === 0) continue;
      const lease: LeaseState & { acked: Set<number>; delivered: number[] | null } = {
        id: randomUUID(),
        owner,
        deadline: now + (leaseMs ?? queue.config.leaseMs),
        fromOffset: collected.position,
        toOffset: messages[messages.length - 1]!.offset + 1,
        acked: new Set(),
        delivered: deliveredWithGaps(messages.map((m) => m.offset)),
      };
      partition.leases.set(group, lease);
      this.store.leaseIndex.set(lease.id, { queue: queue.name, partition: partition.index, group });
      return { messages, lease: this.leaseOf(queue, partition, group, lease), ...(unreadable.length > 0 ? { unreadable } : {}) };
    }
    return unreadable.length > 0 ? { messages: [], lease: null, unreadable } : null;
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

  async ack(req: AckRequest): Promise<{ acked: boolean }> {
    const ack = this.checkAck(req);
    return { acked: this.applyAck(ack) };
  }

  /** Resolves an ack's partition (the front or the transaction's plan checked its fields); a stale leaseId fails the call. */
  private checkAck(req: AckRequest): { queue: QueueState; partition: PartitionState; req: AckRequest } {
    const queue = this.store.queue(req.queue);
    const { partition: name, consumerGroup: group } = req;
    const partition = queue.byName.get(name);
    if (!partition) throw new CoreError('unknown_partition', `Queue "${queue.name}" has no partition named "${name}".`);
    if (req.leaseId !== undefined) {
      const lease = partition.leases.get(group);
      requireCurrentLease(lease, req.leaseId, this.store.clock(), `group "${group}" on ${queue.name}/${name}`);
    }
    return { queue, partition, req };
  }

  /**
   * Completed: the offset is done; the group's position moves over every done
   * offset at its front, and the lease ends when all it handed out is done.
   * Failed: the lease ends and the group's position stays, so the message and
   * those after it are delivered again.
   */
  private applyAck({ queue, partition, req }: { queue: QueueState; partition: PartitionState; req: AckRequest }): boolean {
    const lease = partition.leases.get(req.consumerGroup);
    if (!leaseHoldsOffset(lease, req.offset, this.store.clock())) return false;
    if (req.status === 'failed') {
      this.dropLease(partition, req.consumerGroup);
      this.store.wakePartition(queue, partition);
      return true;
    }
    lease.acked.add(req.offset);
    const from = Math.max(this.store.groupOffset(req.consumerGroup, queue.name, partition.index)?.offset ?? 0, lease.fromOffset);
    const position = positionAfterAcks(from, lease.acked, lease.delivered, lease.toOffset);
    this.store.setGroupOffset(req.consumerGroup, { queue: queue.name, partition: partition.index, offset: position, leaderEpoch: -1, metadata: null });
    if (position >= lease.toOffset) {
      this.dropLease(partition, req.consumerGroup);
      this.store.wakePartition(queue, partition);
    }
    return true;
  }

  async renewLease(req: RenewLeaseRequest): Promise<Lease> {
    const { extendMs } = req;
    const where = typeof req.leaseId === 'string' ? this.store.leaseIndex.get(req.leaseId) : undefined;
    const queue = where && this.store.queues.get(where.queue);
    const partition = queue?.partitions[where!.partition];
    const lease = partition?.leases.get(where!.group);
    const now = this.store.clock();
    if (!queue || !partition || !lease || lease.id !== req.leaseId || !isLeaseLive(lease, now)) {
      throw new CoreError('unknown_lease', `Lease ${String(req.leaseId)} is not held: it expired, was released or never existed. Pop again to get a new lease.`);
    }
    lease.deadline = now + extendMs;
    return this.leaseOf(queue, partition, where!.group, lease);
  }

  // ─── Native transaction ────────────────────────────────────────────────────

  async transaction(req: TransactionRequest): Promise<TransactionResult> {
    const now = this.store.clock();
    const plan = planTransaction({ ...req, operations: routePushItems(req?.operations, this.store.partitionsOf) }, now);
    const pushBytes = this.checkPushTargets(plan.push);
    const acks = plan.acks.map(({ opIndex, ack }) => ({ opIndex, checked: this.checkAck(ack) }));
    const duplicate = firstStoredDuplicate(plan, (item) => this.dedupHit(item, now));
    if (duplicate) return duplicate;
    const kv = evaluateKvOperations(plan.kv, (ns, key) => this.store.kv.get(kvSlot(ns, key)) ?? null, now);
    if (!kv.ok) return kv.result;
    const unheld = firstUnheldAck(plan, (i) => leaseHoldsOffset(acks[i]!.checked.partition.leases.get(acks[i]!.checked.req.consumerGroup), acks[i]!.checked.req.offset, now));
    if (unheld) return unheld;
    const kvWrites = [...kv.writes.values()].map(({ ns, key, entry }) => ({ slot: kvSlot(ns, key), entry }));
    const growth = pushBytes + Math.max(0, this.store.kvGrowth(kvWrites));
    if (growth > 0) this.store.checkRoom(growth);
    // Every check has passed: apply it all, with no await in between.
    const results: unknown[] = new Array(plan.operationCount);
    this.writePush(plan.push, now).forEach((r, i) => (results[plan.opIndexOfItem[i]!] = transactionPushResult(r)));
    for (const { opIndex, checked } of acks) results[opIndex] = { acked: this.applyAck(checked) };
    for (const { slot, entry } of kvWrites) this.store.writeKv(slot, entry);
    for (const [opIndex, result] of kv.results) results[opIndex] = structuredClone(result);
    return { success: true, results };
  }
}

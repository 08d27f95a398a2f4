import { randomUUID } from 'node:crypto';
import type {
  AckRequest,
  CallOptions,
  KvEntry,
  Lease,
  PopResult,
  PushRequest,
  PushResult,
  QueueConfig,
  QueueInfo,
  RenewLeaseRequest,
  TransactionRequest,
  TransactionResult,
  UnreadableRange,
} from '../../core.js';
import { setBaseOffset } from '../../../../protocol/records/batch-header.js';
import { CoreError, unknownQueueError } from '../../errors.js';
import { storedBatchLimit } from '../../rules/batches.js';
import { assemblePushResults, dedupCutoff, planPush, splitByHits, type DedupHit, type FirstOutcome, type PlannedPush, type PushPlan } from '../../rules/dedup.js';
import { deliveredWithGaps, inWindowBuffer, isLeaseLive, leaseHoldsOffset, popVisibleUntil, positionAfterAcks, requireCurrentLease } from '../../rules/leases.js';
import { queuesToRoute, routePushItems } from '../../rules/push-routing.js';
import { encodePushBatch, PopCollector } from '../../rules/native-records.js';
import { evaluateKvOperations, firstStoredDuplicate, firstUnheldAck, kvSlot, planTransaction, transactionPushResult } from '../../rules/transaction.js';
import type { Statements } from './database.js';
import { LogWrites, transactionIdHash } from './log-writes.js';
import { partitionKey, queueKey } from './wakeups.js';
import { isAbortedBatch } from '../../rules/kafka-transactions.js';
import { refuseNativePushToCompacted } from '../../rules/compaction.js';
import type { CheckedPop } from '../../engine.js';
import { groupKeyOf, type PartitionRow, type PostgresStore, type QueueRow } from './store.js';
import { lockKv, storeKv } from './kv.js';

interface LeaseRow {
  id: string;
  owner: string;
  deadline: number;
  from_offset: number;
  to_offset: number;
  acked: number[];
  /** The offsets handed out, when there are gaps between them (rules/leases.ts positionAfterAcks). */
  delivered: number[] | null;
}

interface PushTargets {
  queues: Map<string, QueueRow>;
}

interface PreparedPush {
  /** "queue\0partition" → the partition, locked. */
  partitions: Map<string, PartitionRow & { queueName: string; config: QueueConfig }>;
  hits: Map<string, Map<string, DedupHit>>;
}

interface CheckedAck {
  queue: QueueRow;
  partition: PartitionRow;
  req: AckRequest;
}

/** Thrown inside a transaction to roll it back and still answer. */
class RollbackWith<T> {
  constructor(readonly result: T) {}
}

/** Batches a pop decodes per round trip. */
const POP_BATCH_ROWS = 64;

/** Queen's native messaging (sql/native.sql): push with dedup, pop under a lease, ack, lease renewal, and the native transaction. */
export class PostgresNative {
  constructor(private readonly store: PostgresStore) {}

  async push(req: PushRequest): Promise<PushResult> {
    const now = this.store.clock();
    const plan = planPush(await this.routePushes(req?.items), now);
    const { items, writes } = await this.store.db.transaction(async (tx) => {
      const targets = await this.checkPushTargets(tx, plan);
      const prepared = await this.preparePush(tx, plan, targets, now);
      const writes = new LogWrites();
      const items = this.planPushWrites(plan, prepared, writes, now);
      await this.store.write(tx, writes);
      return { items, writes };
    });
    this.store.wakeTouched(writes);
    return { items };
  }

  /** Pushes into Kafka topics get their partition (../../rules/push-routing.ts). */
  private async routePushes<T>(items: T): Promise<T> {
    const partitions = new Map<string, QueueInfo['partitions']>();
    for (const name of queuesToRoute(items)) {
      const row = await this.store.db.statements.one<QueueRow & { partitions: QueueInfo['partitions'] }>('describe-queues', [name]);
      if (row?.config.fixedPartitionCount) partitions.set(name, row.partitions);
    }
    return routePushItems(items, (name) => partitions.get(name));
  }

  /** Queues must exist and each payload must fit, before anything is written. */
  private async checkPushTargets(tx: Statements, plan: PushPlan): Promise<PushTargets> {
    const queues = new Map<string, QueueRow>();
    for (const item of plan.items) {
      let queue = queues.get(item.queue);
      if (!queue) {
        const rows = await tx.run<QueueRow & { partitions: unknown }>('describe-queues', [item.queue]);
        if (rows.length === 0) throw unknownQueueError(item.queue);
        queue = rows[0]!;
        queues.set(item.queue, queue);
      }
      refuseNativePushToCompacted(queue.name, queue.config, item.index);
      const size = Buffer.byteLength(item.payloadJson, 'utf8');
      if (size > queue.config.maxMessageBytes) {
        throw new CoreError('invalid_argument', `Item ${item.index}'s payload is ${size} bytes as JSON; queue "${queue.name}" accepts at most ${queue.config.maxMessageBytes}.`);
      }
    }
    return { queues };
  }

  /**
   * Resolves the pushed-to partitions (a new name gets the next free index,
   * under the queue's row lock), locks them in id order, and looks their ids
   * up in the dedup index under that lock, so the answer is exact.
   */
  private async preparePush(tx: Statements, plan: PushPlan, targets: PushTargets, now: number): Promise<PreparedPush> {
    const partitions: PreparedPush['partitions'] = new Map();
    for (const group of plan.partitions) {
      const queue = targets.queues.get(group.queue)!;
      let row = await tx.one<PartitionRow>('partition-by-name', [queue.id, group.partition]);
      if (!row) {
        await tx.run('lock-queue', [queue.name]);
        row = (await tx.one<PartitionRow>('partition-by-name', [queue.id, group.partition])) ?? (await tx.one<PartitionRow>('create-named-partition', [queue.id, group.partition]))!;
      }
      partitions.set(groupKeyOf(group.queue, group.partition), { ...row, queueName: queue.name, config: queue.config });
    }
    const ids = [...new Set([...partitions.values()].map((p) => p.id))];
    if (ids.length === 0) return { partitions, hits: new Map() };
    const locked = new Map((await tx.run<PartitionRow>('lock-partitions-by-id', [ids])).map((r) => [r.id, r]));
    for (const p of partitions.values()) {
      const fresh = locked.get(p.id)!;
      p.next_offset = fresh.next_offset;
      p.log_start_offset = fresh.log_start_offset;
    }
    const hits = new Map<string, Map<string, DedupHit>>();
    for (const group of plan.partitions) {
      const key = groupKeyOf(group.queue, group.partition);
      const partition = partitions.get(key)!;
      const cutoff = dedupCutoff(now, partition.config.dedupWindowSeconds);
      const found = new Map<string, DedupHit>();
      hits.set(key, found);
      if (cutoff === null) continue;
      const byHash = new Map(group.firsts.map((item) => [transactionIdHash(item.transactionId).toString('hex'), item.transactionId]));
      const rows = await tx.run<{ id_hash: Buffer; message_id: string; message_offset: number }>('dedup-hits', [partition.id, [...byHash.keys()].map((h) => Buffer.from(h, 'hex')), cutoff]);
      for (const r of rows) found.set(byHash.get(r.id_hash.toString('hex'))!, { messageId: r.message_id, offset: r.message_offset });
    }
    return { partitions, hits };
  }

  private hitOf(prepared: PreparedPush, item: PlannedPush): DedupHit | null {
    return prepared.hits.get(groupKeyOf(item.queue, item.partition))?.get(item.transactionId) ?? null;
  }

  /** What a push writes: one batch per partition for the ids not already stored, and their dedup rows. */
  private planPushWrites(plan: PushPlan, prepared: PreparedPush, writes: LogWrites, now: number): PushResult['items'] {
    const outcomes = new Map<number, FirstOutcome>();
    for (const group of plan.partitions) {
      const key = groupKeyOf(group.queue, group.partition);
      const partition = prepared.partitions.get(key)!;
      const { toWrite, stored } = splitByHits(group, prepared.hits.get(key)!);
      for (const [index, hit] of stored) outcomes.set(index, { status: 'duplicate', ...hit, partitionIndex: partition.idx });
      if (toWrite.length === 0) continue;
      const baseOffset = partition.next_offset;
      const bytes = encodePushBatch(toWrite, now);
      setBaseOffset(bytes, 0, baseOffset);
      partition.next_offset = baseOffset + toWrite.length;
      writes.addBatch({ partitionId: partition.id, baseOffset, nextOffset: partition.next_offset, maxTimestamp: now, appendedAt: now, bytes }, { queue: partition.queueName, index: partition.idx });
      toWrite.forEach((item, i) => {
        const offset = baseOffset + i;
        outcomes.set(item.index, { status: 'queued', messageId: item.messageId, offset, partitionIndex: partition.idx });
        if (partition.config.dedupWindowSeconds > 0) {
          writes.dedup.push({ partitionId: partition.id, transactionId: item.transactionId, messageId: item.messageId, offset, storedAt: now });
        }
      });
    }
    return assemblePushResults(plan, (index) => outcomes.get(index)!);
  }

  // ─── Native consume ────────────────────────────────────────────────────────

  async pop(req: CheckedPop, options?: CallOptions): Promise<PopResult> {
    const queue = await this.store.queue(req.queue);
    const { partitionName, group, batch, waitMs, leaseMs } = req;
    let keys = [queueKey(queue.name)];
    if (partitionName !== undefined) {
      const row = await this.store.db.statements.one<PartitionRow>('partition-by-name', [queue.id, partitionName]);
      if (!row) throw new CoreError('unknown_partition', `Queue "${queue.name}" has no partition named "${partitionName}".`);
      keys = [partitionKey(queue.name, row.idx)];
    }
    const compute = async (final: boolean): Promise<PopResult | null> => {
      const popped = await this.tryPop(queue.name, partitionName, group, req.owner, batch, leaseMs);
      return popped ?? (final ? { messages: [], lease: null } : null);
    };
    return this.store.longPoll(keys, waitMs, options?.signal, compute, () => ({ messages: [], lease: null }));
  }

  private async tryPop(queueName: string, partitionName: string | undefined, group: string, owner: string, batch: number, leaseMs: number | undefined): Promise<PopResult | null> {
    return this.store.db.transaction(async (tx) => {
      // The queue may have been deleted while this pop waited: then there is nothing to pop.
      const queue = await tx.one<QueueRow>('describe-queues', [queueName]);
      if (!queue) return null;
      const now = this.store.clock();
      const all = await tx.run<PartitionRow>('queue-partitions', [queue.id]);
      const candidates = partitionName === undefined ? all : all.filter((p) => p.name === partitionName);
      const unreadable: UnreadableRange[] = [];
      for (const partition of candidates) {
        // Another popper on this partition and group: leave it to them.
        const lock = await tx.one<{ locked: boolean }>('try-lock-consumer', [partition.id, group]);
        if (!lock?.locked) continue;
        const held = await tx.one<LeaseRow>('lease-for-update', [partition.id, group]);
        if (held && isLeaseLive(held, now)) continue;
        if (held) await tx.run('delete-lease', [partition.id, group]);
        const committed = await tx.one<{ committed: number }>('group-position', [group, queue.name, partition.idx]);
        const position = Math.max(committed?.committed ?? 0, partition.log_start_offset);
        if (position >= partition.next_offset) continue;
        // Records of an open Kafka transaction are not delivered: the pop stops at the last stable offset.
        const lastStable = (await tx.one<{ first_offset: number | null }>('txn-open-offsets', [[partition.id]]))?.first_offset ?? partition.next_offset;
        if (position >= lastStable) continue;
        if ((queue.config.windowBufferMs ?? 0) > 0) {
          const newest = await tx.one<{ appended_at: number }>('newest-append', [partition.id]);
          if (inWindowBuffer(queue.config.windowBufferMs, newest ? Number(newest.appended_at) : null, now)) continue;
        }
        const collected = await this.readMessages(tx, queue, partition, position, lastStable, batch, popVisibleUntil(queue.config.delayedProcessingMs ?? 0, now));
        if (collected.unreadable.length > 0) {
          unreadable.push(...collected.unreadable);
          await tx.run('set-group-position', [group, queue.name, partition.idx, collected.position]);
        }
        const { messages } = collected;
        if (messages.length === 0) continue;
        const lease: Lease = { id: randomUUID(), queue: queue.name, partition: partition.name, consumerGroup: group, owner, deadline: now + (leaseMs ?? queue.config.leaseMs) };
        await tx.run('insert-lease', [lease.id, partition.id, group, owner, lease.deadline, collected.position, messages[messages.length - 1]!.offset + 1, deliveredWithGaps(messages.map((m) => m.offset))]);
        return { messages, lease, ...(unreadable.length > 0 ? { unreadable } : {}) };
      }
      return unreadable.length > 0 ? { messages: [], lease: null, unreadable } : null;
    });
  }

  private async readMessages(tx: Statements, queue: QueueRow, partition: PartitionRow, position: number, lastStable: number, batch: number, visibleUntil: number): Promise<PopCollector> {
    const where = { queue: queue.name, queueId: queue.id, partition: partition.name, partitionIndex: partition.idx };
    const collected = new PopCollector(position, batch, where, storedBatchLimit(this.store.options.appendLimits), visibleUntil);
    const aborted = await this.store.kafkaTxns.abortedFrom(tx, partition.id, position);
    let from = position;
    for (;;) {
      const rows = await tx.run<{ base_offset: number; next_offset: number; bytes: Buffer }>('native-batches', [partition.id, from, POP_BATCH_ROWS]);
      for (const row of rows) {
        if (row.base_offset >= lastStable) return collected;
        if (!collected.take({ nextOffset: row.next_offset, bytes: row.bytes }, (producerId) => isAbortedBatch(aborted, producerId, row.base_offset))) return collected;
      }
      if (rows.length < POP_BATCH_ROWS) return collected;
      from = rows[rows.length - 1]!.next_offset;
    }
  }

  async ack(req: AckRequest): Promise<{ acked: boolean }> {
    const { acked, woken } = await this.store.db.transaction(async (tx) => {
      const checked = await this.checkAck(tx, req);
      return this.applyAck(tx, checked);
    });
    if (woken) this.store.wakeups.wake(woken);
    return { acked };
  }

  /** Resolves an ack's partition (the front or the transaction's plan checked its fields); a stale leaseId fails the call. */
  private async checkAck(tx: Statements, req: AckRequest): Promise<CheckedAck> {
    const queue = await this.store.queue(req.queue, tx);
    const { partition: name, consumerGroup: group } = req;
    const partition = await tx.one<PartitionRow>('partition-by-name', [queue.id, name]);
    if (!partition) throw new CoreError('unknown_partition', `Queue "${queue.name}" has no partition named "${name}".`);
    await tx.run('lock-consumer', [partition.id, group]);
    if (req.leaseId !== undefined) {
      const lease = await tx.one<LeaseRow>('lease-for-update', [partition.id, group]);
      requireCurrentLease(lease, req.leaseId, this.store.clock(), `group "${group}" on ${queue.name}/${name}`);
    }
    return { queue, partition, req };
  }

  /**
   * Completed: the offset is done; the group's position moves over every done
   * offset at its front, and the lease ends when all it handed out is done.
   * Failed: the lease ends and the group's position stays, so the message and
   * those after it are delivered again. Returns the wake-up keys for poppers
   * when the lease ended.
   */
  private async leaseOfAck(tx: Statements, { partition, req }: CheckedAck): Promise<LeaseRow | null> {
    const lease = await tx.one<LeaseRow>('lease-for-update', [partition.id, req.consumerGroup]);
    const range = lease && { deadline: lease.deadline, fromOffset: lease.from_offset, toOffset: lease.to_offset };
    return leaseHoldsOffset(range, req.offset, this.store.clock()) ? lease : null;
  }

  private async ackHolds(tx: Statements, checked: CheckedAck): Promise<boolean> {
    return (await this.leaseOfAck(tx, checked)) !== null;
  }

  private async applyAck(tx: Statements, checked: CheckedAck): Promise<{ acked: boolean; woken: string[] | null }> {
    const { queue, partition, req } = checked;
    const lease = await this.leaseOfAck(tx, checked);
    if (!lease) return { acked: false, woken: null };
    const woken = [partitionKey(queue.name, partition.idx), queueKey(queue.name)];
    if (req.status === 'failed') {
      await tx.run('delete-lease', [partition.id, req.consumerGroup]);
      return { acked: true, woken };
    }
    const acked = new Set(lease.acked);
    acked.add(req.offset);
    const committed = await tx.one<{ committed: number }>('group-position', [req.consumerGroup, queue.name, partition.idx]);
    const from = Math.max(committed?.committed ?? 0, lease.from_offset);
    const position = positionAfterAcks(from, acked, lease.delivered, lease.to_offset);
    await tx.run('set-group-position', [req.consumerGroup, queue.name, partition.idx, position]);
    if (position >= lease.to_offset) {
      await tx.run('delete-lease', [partition.id, req.consumerGroup]);
      return { acked: true, woken };
    }
    await tx.run('set-lease-acked', [partition.id, req.consumerGroup, [...acked].filter((o) => o >= position)]);
    return { acked: true, woken: null };
  }

  async renewLease(req: RenewLeaseRequest): Promise<Lease> {
    const { extendMs } = req;
    const leaseId = typeof req.leaseId === 'string' && /^[0-9a-f-]{36}$/i.test(req.leaseId) ? req.leaseId : null;
    return this.store.db.transaction(async (tx) => {
      const now = this.store.clock();
      const row = leaseId
        ? await tx.one<{ id: string; group_name: string; owner: string; deadline: number; partition_name: string; queue_name: string }>('lease-by-id', [leaseId])
        : null;
      if (!row || !isLeaseLive(row, now)) {
        throw new CoreError('unknown_lease', `Lease ${String(req.leaseId)} is not held: it expired, was released or never existed. Pop again to get a new lease.`);
      }
      const deadline = now + extendMs;
      await tx.run('extend-lease', [row.id, deadline]);
      return { id: row.id, queue: row.queue_name, partition: row.partition_name, consumerGroup: row.group_name, owner: row.owner, deadline };
    });
  }

  // ─── Native transaction ────────────────────────────────────────────────────

  async transaction(req: TransactionRequest): Promise<TransactionResult> {
    const now = this.store.clock();
    const plan = planTransaction({ ...req, operations: await this.routePushes(req?.operations) }, now);
    try {
      const { result, writes, woken } = await this.store.db.transaction(async (tx) => {
        const targets = await this.checkPushTargets(tx, plan.push);
        const acks: { opIndex: number; checked: CheckedAck }[] = [];
        // Consumer locks in one global order, so two transactions acking the same partitions cannot deadlock.
        const lockOrder = [...plan.acks].sort((a, b) => kvSlot(`${a.ack.queue}\u0000${a.ack.partition}`, a.ack.consumerGroup).localeCompare(kvSlot(`${b.ack.queue}\u0000${b.ack.partition}`, b.ack.consumerGroup)));
        for (const { opIndex, ack } of lockOrder) acks.push({ opIndex, checked: await this.checkAck(tx, ack) });
        // Applied in the order the caller gave.
        acks.sort((a, b) => a.opIndex - b.opIndex);
        const prepared = await this.preparePush(tx, plan.push, targets, now);
        const duplicate = firstStoredDuplicate(plan, (item) => this.hitOf(prepared, item));
        if (duplicate) throw new RollbackWith(duplicate);
        const current = new Map<string, KvEntry | null>();
        for (const { op } of [...plan.kv].sort((a, b) => kvSlot(a.op.ns, a.op.key).localeCompare(kvSlot(b.op.ns, b.op.key)))) {
          const slot = kvSlot(op.ns, op.key);
          if (!current.has(slot)) current.set(slot, await lockKv(tx, op.ns, op.key));
        }
        const kv = evaluateKvOperations(plan.kv, (ns, key) => current.get(kvSlot(ns, key)) ?? null, now);
        if (!kv.ok) throw new RollbackWith(kv.result);
        const holding: boolean[] = [];
        for (const [i, { checked }] of acks.entries()) holding.push(!plan.acks[i]!.required || (await this.ackHolds(tx, checked)));
        const unheld = firstUnheldAck(plan, (i) => holding[i]!);
        if (unheld) throw new RollbackWith(unheld);
        // Every check has passed: write it all in this transaction.
        const results: unknown[] = new Array(plan.operationCount);
        const writes = new LogWrites();
        this.planPushWrites(plan.push, prepared, writes, now).forEach((r, i) => (results[plan.opIndexOfItem[i]!] = transactionPushResult(r)));
        await this.store.write(tx, writes);
        const woken: string[] = [];
        for (const { opIndex, checked } of acks) {
          const applied = await this.applyAck(tx, checked);
          results[opIndex] = { acked: applied.acked };
          if (applied.woken) woken.push(...applied.woken);
        }
        for (const { ns, key, entry } of kv.writes.values()) {
          if (entry) await storeKv(tx, entry);
          else await tx.run('kv-delete', [ns, key]);
        }
        for (const [opIndex, result] of kv.results) results[opIndex] = structuredClone(result);
        return { result: { success: true, results } as TransactionResult, writes, woken };
      });
      this.store.wakeTouched(writes);
      if (woken.length > 0) this.store.wakeups.wake(woken);
      return result;
    } catch (e) {
      if (e instanceof RollbackWith) return e.result as TransactionResult;
      throw e;
    }
  }
}

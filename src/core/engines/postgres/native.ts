import type { AckRequest, CallOptions, KvEntry, Lease, PartitionInfo, PopResult, PushResult, QueueInfo, RenewLeaseRequest, TransactionResult, UnreadableRange } from '../../core.js';
import { unknownPartitionNameError, unknownQueueError } from '../../errors.js';
import { storedBatchLimit } from '../../rules/batches.js';
import type { DedupHit } from '../../rules/dedup.js';
import { isLeaseLive, unknownLeaseError } from '../../rules/leases.js';
import type { PopCollector } from '../../rules/native-records.js';
import { PopWalk, type PopCandidate } from '../../native/pop.js';
import { kvSlot } from '../../rules/transaction.js';
import type { AckTarget, AckWrite, DecideAck } from '../../native/ack.js';
import type { DecidePush, DedupSince, PushCall, PushPartition, PushReads, PushState, PushWrites } from '../../native/push.js';
import type { DecideTransaction, TransactionCall, TransactionReads, TransactionState } from '../../native/transaction.js';
import type { Statements } from './database.js';
import { LogWrites, transactionIdHash } from './log-writes.js';
import { partitionKey, queueKey } from './wakeups.js';
import { isAbortedBatch } from '../../rules/kafka-transactions.js';
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

/** Thrown inside a database transaction to roll it back and still answer. */
class Rollback {
  constructor(readonly result: TransactionResult) {}
}

/** Batches a pop decodes per round trip. */
const POP_BATCH_ROWS = 64;

/**
 * Queen's native messaging (sql/native.sql): the state push, ack and the
 * native transaction are decided over (../../native/), loaded and stored in
 * one database transaction each; pop under a lease and lease renewal.
 */
export class PostgresNative {
  constructor(private readonly store: PostgresStore) {}

  now(): number {
    return this.store.clock();
  }

  async fixedPartitions(queues: string[]): Promise<Map<string, readonly PartitionInfo[]>> {
    const found = new Map<string, readonly PartitionInfo[]>();
    for (const name of queues) {
      const queue = await this.store.db.statements.one<QueueRow>('queue-row', [name]);
      if (!queue?.config.fixedPartitionCount) continue;
      const row = await this.store.db.statements.one<QueueRow & { partitions: QueueInfo['partitions'] }>('describe-queues', [name]);
      if (row) found.set(name, row.partitions);
    }
    return found;
  }

  async push(call: PushCall, decide: DecidePush): Promise<PushResult> {
    const { items, writes } = await this.store.db.transaction(async (tx) => {
      const decided = decide(call, await this.loadPush(tx, call.reads, call.now, call.dedupSince));
      const writes = this.logWrites(decided.writes);
      await this.store.write(tx, writes);
      return { items: decided.items, writes };
    });
    this.store.wakeTouched(writes);
    return { items };
  }

  /**
   * The queues pushed to; their partitions (a new name gets the next free
   * index, under the queue's row lock: the transaction rolls it back if the
   * push is refused), locked in id order; and the ids looked up in their dedup
   * index under that lock, so the answer is exact.
   */
  private async loadPush(tx: Statements, reads: PushReads, now: number, dedupSince: DedupSince): Promise<PushState<number>> {
    const queues = new Map<string, QueueRow>();
    for (const name of reads.queues) {
      const row = await tx.one<QueueRow>('queue-row', [name]);
      if (row) queues.set(name, row);
    }
    const partitions = new Map<string, PushPartition<number>>();
    for (const { queue: name, partition: partitionName } of reads.partitions) {
      const queue = queues.get(name);
      if (!queue) continue;
      let row = await tx.one<PartitionRow>('partition-by-name', [queue.id, partitionName]);
      if (!row) {
        await tx.run('lock-queue', [queue.name]);
        row = (await tx.one<PartitionRow>('partition-by-name', [queue.id, partitionName])) ?? (await tx.one<PartitionRow>('create-named-partition', [queue.id, partitionName]))!;
      }
      partitions.set(groupKeyOf(name, partitionName), { handle: row.id, index: row.idx, nextOffset: row.next_offset });
    }
    const hits = new Map<string, Map<string, DedupHit>>();
    if (partitions.size > 0) {
      const locked = new Map((await tx.run<PartitionRow>('lock-partitions-by-id', [[...new Set([...partitions.values()].map((p) => p.handle))]])).map((r) => [r.id, r]));
      for (const p of partitions.values()) p.nextOffset = locked.get(p.handle)!.next_offset;
      for (const { queue, partition, transactionIds } of reads.partitions) {
        const found = partitions.get(groupKeyOf(queue, partition));
        const since = found && dedupSince(queues.get(queue)!.config, now);
        if (!found || since === null || since === undefined) continue;
        hits.set(groupKeyOf(queue, partition), await this.dedupHits(tx, found.handle, transactionIds, since));
      }
    }
    return {
      now,
      queue: (name) => queues.get(name) ?? null,
      hit: (queue, partition, transactionId) => hits.get(groupKeyOf(queue, partition))?.get(transactionId) ?? null,
      partition: (queue, name) => partitions.get(groupKeyOf(queue, name))!,
    };
  }

  private async dedupHits(tx: Statements, partitionId: number, transactionIds: string[], since: number): Promise<Map<string, DedupHit>> {
    const byHash = new Map(transactionIds.map((id) => [transactionIdHash(id).toString('hex'), id]));
    const rows = await tx.run<{ id_hash: Buffer; message_id: string; message_offset: number }>('dedup-hits', [partitionId, [...byHash.keys()].map((h) => Buffer.from(h, 'hex')), since]);
    return new Map(rows.map((r) => [byHash.get(r.id_hash.toString('hex'))!, { messageId: r.message_id, offset: r.message_offset }]));
  }

  /** A push's writes as the log's one write statement takes them. */
  private logWrites(decided: PushWrites<number>): LogWrites {
    const writes = new LogWrites();
    for (const b of decided.batches) {
      writes.addBatch({ partitionId: b.partition, baseOffset: b.baseOffset, nextOffset: b.nextOffset, maxTimestamp: b.time, appendedAt: b.time, bytes: b.bytes }, { queue: b.queue, index: b.index });
    }
    for (const d of decided.dedup) writes.dedup.push({ partitionId: d.partition, transactionId: d.transactionId, messageId: d.messageId, offset: d.offset, storedAt: d.storedAt });
    return writes;
  }

  // ─── Native consume ────────────────────────────────────────────────────────

  async pop(req: CheckedPop, options?: CallOptions): Promise<PopResult> {
    const queue = await this.store.db.statements.one<QueueRow>('queue-row', [req.queue]);
    if (!queue) throw unknownQueueError(req.queue);
    const { partitionName, waitMs } = req;
    let keys = [queueKey(queue.name)];
    if (partitionName !== undefined) {
      const row = await this.store.db.statements.one<PartitionRow>('partition-by-name', [queue.id, partitionName]);
      if (!row) throw unknownPartitionNameError(queue.name, partitionName);
      keys = [partitionKey(queue.name, row.idx)];
    }
    const compute = async (final: boolean): Promise<PopResult | null> => {
      const popped = await this.tryPop({ ...req, queue: queue.name });
      return popped ?? (final ? { messages: [], lease: null } : null);
    };
    return this.store.longPoll(keys, waitMs, options?.signal, compute, () => ({ messages: [], lease: null }));
  }

  /**
   * The core's walk (../../native/pop.ts) in one database transaction over
   * the partitions that may have records for the group: each claimed, with
   * its (partition, group) consumer lock, by one statement
   * (sql/native.sql claim-pop-candidate), never a look at every partition.
   */
  private async tryPop(req: CheckedPop): Promise<PopResult | null> {
    const { partitionName, group } = req;
    return this.store.db.transaction(async (tx) => {
      // The queue may have been deleted while this pop waited: then there is nothing to pop.
      const queue = await tx.one<QueueRow>('queue-row', [req.queue]);
      if (!queue) return null;
      const walk = new PopWalk(queue, req, this.store.clock(), storedBatchLimit(this.store.options.appendLimits));
      for (let after = -1; ; ) {
        const partition = await tx.one<PartitionRow>('claim-pop-candidate', [queue.id, group, queue.name, walk.now, after, partitionName ?? null]);
        if (!partition) break;
        after = partition.idx;
        const candidate = await this.popCandidate(tx, queue, partition, group, walk.now);
        const { dropExpired, position } = walk.start(candidate);
        if (dropExpired) await tx.run('delete-lease', [partition.id, group]);
        if (position === null) continue;
        // Records of an open Kafka transaction are not delivered: the pop stops at the last stable offset.
        const lastStable = (await tx.one<{ first_offset: number | null }>('txn-open-offsets', [[partition.id]]))?.first_offset ?? partition.next_offset;
        const newest = walk.needsNewestAppend ? await tx.one<{ appended_at: number }>('newest-append', [partition.id]) : null;
        if (!walk.ready(position, lastStable, newest ? Number(newest.appended_at) : null)) continue;
        const consumedByAll = walk.needsConsumedByAll(candidate) ? ((await tx.one<{ lowest: number | null }>('others-lowest-position', [group, queue.name, partition.idx]))?.lowest ?? null) : null;
        const collected = await this.readMessages(tx, partition, walk.collector(candidate, position, consumedByAll), lastStable);
        const finished = walk.finish(collected);
        if (finished.position !== null) await tx.run('set-group-position', [group, queue.name, partition.idx, finished.position]);
        const { lease } = finished;
        if (!lease) continue;
        await tx.run('insert-lease', [lease.id, partition.id, group, lease.owner, lease.deadline, lease.fromOffset, lease.toOffset, lease.delivered]);
        return walk.answer(candidate, collected, lease);
      }
      return walk.nothing();
    });
  }

  /** The partition as the walk sees it for the group, its consumer lock held (claim-pop-candidate). */
  private async popCandidate(tx: Statements, queue: QueueRow, partition: PartitionRow, group: string, now: number): Promise<PopCandidate<number>> {
    const held = await tx.one<LeaseRow>('lease-for-update', [partition.id, group]);
    // A live lease passes the partition over: its position is not needed.
    const committed = held && isLeaseLive(held, now) ? null : await tx.one<{ committed: number }>('group-position', [group, queue.name, partition.idx]);
    return { handle: partition.id, name: partition.name, index: partition.idx, logStartOffset: partition.log_start_offset, highWatermark: partition.next_offset, lease: held, committed: committed?.committed ?? null };
  }

  private async readMessages(tx: Statements, partition: PartitionRow, collected: PopCollector, lastStable: number): Promise<PopCollector> {
    const position = collected.position;
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

  async ack(req: AckRequest, decide: DecideAck): Promise<{ acked: boolean }> {
    const { acked, woken } = await this.store.db.transaction(async (tx) => {
      const target = await this.loadAck(tx, req.queue, req.partition, req.consumerGroup);
      const { acked, write } = decide(req, { now: this.store.clock(), target: () => target });
      return { acked, woken: write ? await this.writeAcks(tx, [write]) : [] };
    });
    if (woken.length > 0) this.store.wakeups.wake(woken);
    return { acked };
  }

  /** The group's lease and position on the partition, under the (partition, group) consumer lock. */
  private async loadAck(tx: Statements, queueName: string, name: string, group: string): Promise<AckTarget<number>> {
    const queue = await tx.one<QueueRow>('queue-row', [queueName]);
    if (!queue) return { missing: 'unknown_queue' };
    const partition = await tx.one<PartitionRow>('partition-by-name', [queue.id, name]);
    if (!partition) return { missing: 'unknown_partition' };
    await tx.run('lock-consumer', [partition.id, group]);
    const lease = await tx.one<LeaseRow>('lease-for-update', [partition.id, group]);
    const committed = await tx.one<{ committed: number }>('group-position', [group, queue.name, partition.idx]);
    return {
      partition: partition.id,
      queue: queue.name,
      index: partition.idx,
      committed: committed?.committed ?? null,
      lease: lease && { id: lease.id, owner: lease.owner, deadline: lease.deadline, fromOffset: lease.from_offset, toOffset: lease.to_offset, acked: lease.acked, delivered: lease.delivered },
    };
  }

  /**
   * Stores acks' writes in one statement (sql/native.sql write-acks): the
   * last write of each (partition, group) holds its final position and lease.
   * Answers the wake-up keys for poppers of the partitions whose lease ended.
   */
  private async writeAcks(tx: Statements, writes: readonly AckWrite<number>[]): Promise<string[]> {
    if (writes.length === 0) return [];
    const last = new Map<string, AckWrite<number>>();
    for (const write of writes) {
      const key = `${write.partition}\u0000${write.group}`;
      const before = last.get(key);
      last.set(key, before && write.position === null ? { ...write, position: before.position } : write);
    }
    const rows = [...last.values()];
    await tx.run('write-acks', [
      rows.map((w) => w.partition),
      rows.map((w) => w.group),
      rows.map((w) => w.queue),
      rows.map((w) => w.index),
      rows.map((w) => w.position),
      rows.map((w) => w.lease === 'drop'),
      rows.map((w) => (w.lease === 'drop' ? null : `{${w.lease.join(',')}}`)),
    ]);
    return [...new Set(rows.filter((w) => w.lease === 'drop').flatMap((w) => [partitionKey(w.queue, w.index), queueKey(w.queue)]))];
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
        throw unknownLeaseError(req.leaseId);
      }
      const deadline = now + extendMs;
      await tx.run('extend-lease', [row.id, deadline]);
      return { id: row.id, queue: row.queue_name, partition: row.partition_name, consumerGroup: row.group_name, owner: row.owner, deadline };
    });
  }

  // ─── Native transaction ────────────────────────────────────────────────────

  async transaction(call: TransactionCall, decide: DecideTransaction): Promise<TransactionResult> {
    const done = await this.store.db.transaction(async (tx) => {
      const decided = decide(call, await this.loadTransaction(tx, call));
      if (!decided.writes) {
        // Rolled back whole, with whatever the load created (a new partition).
        throw new Rollback(decided.result);
      }
      const writes = this.logWrites(decided.writes);
      await this.store.write(tx, writes);
      const woken = await this.writeAcks(tx, decided.writes.acks);
      for (const { ns, key, entry } of decided.writes.kv) {
        if (entry) await storeKv(tx, entry);
        else await tx.run('kv-delete', [ns, key]);
      }
      return { result: decided.result, writes, woken };
    }).catch((e: unknown) => {
      if (e instanceof Rollback) return e;
      throw e;
    });
    if (done instanceof Rollback) return done.result;
    this.store.wakeTouched(done.writes);
    if (done.woken.length > 0) this.store.wakeups.wake(done.woken);
    return done.result;
  }

  /** Every lock and row the transaction's reads name: consumers, then partitions, then KV entries, each in one global order so two transactions cannot deadlock. */
  private async loadTransaction(tx: Statements, call: TransactionCall): Promise<TransactionState<number>> {
    const reads: TransactionReads = call.reads;
    const acks = new Map<string, AckTarget<number>>();
    const ackKey = (queue: string, partition: string, group: string) => kvSlot(`${queue}\u0000${partition}`, group);
    for (const a of [...reads.acks].sort((x, y) => ackKey(x.queue, x.partition, x.group).localeCompare(ackKey(y.queue, y.partition, y.group)))) {
      const key = ackKey(a.queue, a.partition, a.group);
      if (!acks.has(key)) acks.set(key, await this.loadAck(tx, a.queue, a.partition, a.group));
    }
    const push = await this.loadPush(tx, reads.push, call.now, call.dedupSince);
    const kv = new Map<string, KvEntry | null>();
    for (const { ns, key } of [...reads.kv].sort((x, y) => kvSlot(x.ns, x.key).localeCompare(kvSlot(y.ns, y.key)))) {
      const slot = kvSlot(ns, key);
      if (!kv.has(slot)) kv.set(slot, await lockKv(tx, ns, key));
    }
    return { ...push, ack: (q, p, g) => acks.get(ackKey(q, p, g))!, kv: (ns, key) => kv.get(kvSlot(ns, key)) ?? null };
  }
}

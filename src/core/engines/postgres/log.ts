import type { AppendResult, CallOptions, DeleteRecordsRequest, DeleteRecordsResult, OffsetForTimestampRequest, OffsetForTimestampResult, PartitionOffsets, PartitionRef, PartitionSize, ReadError, ReadPartitionResult, ReadRequest, ReadResult } from '../../core.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP } from '../../core.js';
import { BatchPos } from '../../../../protocol/records/batch-header.js';
import { pastHighWatermarkError } from '../../errors.js';
import { recordAtOrAfter } from '../../rules/timestamps.js';
import { emptyPartitionRead, emptyRead, readIsReady } from '../../log/read.js';
import type { AppendCall, AppendPartition, AppendState, DecideAppends } from '../../log/append.js';
import { storedBatchLimit, type AppendLimits } from '../../rules/batches.js';
import type { ProducerWindow, RetainedBatch } from '../../rules/producer-window.js';
import type { Statements } from './database.js';
import { GroupCommit } from './group-commit.js';
import { LogWrites } from './log-writes.js';
import { partitionKey } from './wakeups.js';
import { groupKeyOf, type LockedPartitionRow, type PartitionRow, type PostgresStore } from './store.js';

/** The log (sql/log.sql): appends, group-committed with the requestId ledger and producer windows (decided by the core, ../../log/append.ts); reads, offsets, deletions. */
export class PostgresLog {
  private readonly appends: GroupCommit<{ call: AppendCall; decide: DecideAppends }, AppendResult>;

  constructor(private readonly store: PostgresStore) {
    this.appends = new GroupCommit((calls) => this.commitAppends(calls), store.options.maxGroupSize, store.options.groupCommit);
  }

  get appendLimits(): AppendLimits {
    return this.store.options.appendLimits;
  }

  async append(call: AppendCall, decide: DecideAppends): Promise<AppendResult> {
    return this.appends.submit({ call, decide });
  }

  /**
   * One transaction for a group of append calls: lock every partition they
   * touch (in id order), read the ledger, the producer windows and the
   * transactions, let the core decide every call in arrival order, then
   * write it all in one statement.
   */
  private async commitAppends(group: { call: AppendCall; decide: DecideAppends }[]): Promise<AppendResult[]> {
    const now = this.store.clock();
    const calls = group.map((g) => g.call);
    const { results, writes } = await this.store.db.transaction(async (tx) => {
      const state = await this.readAppendState(tx, calls, now);
      const decided = group[0]!.decide(calls, state);
      const writes = new LogWrites();
      for (const b of decided.writes.batches) {
        writes.addBatch({ partitionId: b.partition, baseOffset: b.baseOffset, nextOffset: b.nextOffset, maxTimestamp: b.maxTimestamp, appendedAt: b.appendedAt, bytes: b.bytes }, { queue: b.queue, index: b.index });
      }
      for (const { partition, window } of decided.writes.windows) writes.setWindow(partition, window);
      for (const { requestId, result } of decided.writes.ledger) writes.ledger.push({ requestId, result, createdAt: now });
      await this.store.write(tx, writes);
      await this.store.kafkaTxns.recordFirstOffsets(tx, decided.writes.transactionStarts);
      return { results: decided.results, writes };
    });
    this.store.wakeTouched(writes);
    return results;
  }

  /** What the calls' reads name, read under the partitions' locks, in the statements of sql/log.sql and sql/kafka-transactions.sql. */
  private async readAppendState(tx: Statements, calls: AppendCall[], now: number): Promise<AppendState<number>> {
    const { wanted, requestIds, txnProducers } = unionOfReads(calls);
    const refs = [...wanted.values()];
    const locked = await tx.run<LockedPartitionRow>('lock-partitions', [refs.map((r) => r.queue), refs.map((r) => r.index)]);
    const partitions = new Map<string, AppendPartition<number>>();
    for (const row of locked) {
      partitions.set(groupKeyOf(row.queue_name, String(row.idx)), { handle: row.id, queue: row.queue_name, index: row.idx, config: row.config, nextOffset: row.next_offset, logStartOffset: row.log_start_offset });
    }

    let queueSizes = new Map<string, number>();
    if (partitions.size < wanted.size) {
      const missing = [...new Set(refs.filter((r) => !partitions.has(groupKeyOf(r.queue, String(r.index)))).map((r) => r.queue))];
      const rows = await tx.run<{ name: string; partition_count: number }>('existing-queues', [missing]);
      queueSizes = new Map(rows.map((r) => [r.name, r.partition_count]));
    }

    const ledger = new Map<string, AppendResult>();
    if (requestIds.size > 0) {
      for (const row of await tx.run<{ request_id: string; result: AppendResult }>('append-ledger', [[...requestIds]])) ledger.set(row.request_id, row.result);
    }

    const windowKeys: [number, number][] = [];
    for (const [key, r] of wanted) {
      const partition = partitions.get(key);
      if (partition) for (const producerId of r.producerIds) windowKeys.push([partition.handle, producerId]);
    }
    const windows = new Map<string, ProducerWindow>();
    if (windowKeys.length > 0) {
      const rows = await tx.run<{ partition_id: number; producer_id: number; producer_epoch: number; retained: RetainedBatch[]; last_timestamp: number }>(
        'producer-windows',
        [windowKeys.map((k) => k[0]), windowKeys.map((k) => k[1])],
      );
      for (const r of rows) {
        windows.set(`${r.partition_id}:${r.producer_id}`, { producerId: r.producer_id, producerEpoch: r.producer_epoch, batches: r.retained, lastTimestamp: r.last_timestamp });
      }
    }

    const transactions = await this.store.kafkaTxns.forAppend(tx, [...txnProducers], [...partitions.values()].map((p) => p.handle));
    return {
      now,
      partition: (queue, index) => {
        const found = partitions.get(groupKeyOf(queue, String(index)));
        if (found) return found;
        const count = queueSizes.get(queue);
        return count === undefined ? { missing: 'unknown_queue' } : { missing: 'unknown_partition', partitionCount: count };
      },
      earlierResult: (requestId) => ledger.get(requestId),
      window: (partitionId, producerId) => windows.get(`${partitionId}:${producerId}`) ?? null,
      transaction: (producerId, partition) => {
        const txn = transactions.get(producerId);
        return txn ? { transactionalId: txn.transactionalId, producerEpoch: txn.producerEpoch, state: txn.state, hasPartition: txn.partitionIds.has(partition.handle) } : null;
      },
    };
  }

  async read(req: ReadRequest, options?: CallOptions): Promise<ReadResult> {
    const { partitions: parts, maxWaitMs } = req;
    const compute = async (final: boolean): Promise<ReadResult | null> => {
      const result = await this.collectRead(parts, req.maxBytes, req.isolation);
      return readIsReady(result, req, final) ? result : null;
    };
    const keys = parts.map((p) => partitionKey(p.queue, p.partition));
    return this.store.longPoll(keys, maxWaitMs, options?.signal, compute, () => emptyRead(parts));
  }


  /** A Fetch's answer: the partitions' bounds in one statement, their batches in one more (two when some are read from a standby, none when there is nothing to read). */
  private async collectRead(parts: ReadRequest['partitions'], maxBytes: number, isolation: ReadRequest['isolation']): Promise<ReadResult> {
    const rows = await this.store.findPartitions(parts);
    const answers: ReadPartitionResult[] = [];
    const wanted: WantedRead[] = [];
    for (const [i, p] of parts.entries()) {
      const row = rows[i]!;
      if (row.queue_id === null || row.id === null) {
        answers.push({ ...emptyPartitionRead(p), error: row.queue_id === null ? 'unknown_queue' : 'unknown_partition' });
        continue;
      }
      const highWatermark = row.next_offset!;
      const lastStableOffset = row.open_txn_offset ?? highWatermark;
      const offsets = { highWatermark, lastStableOffset, logStartOffset: row.log_start_offset! };
      const outOfRange = p.fetchOffset < offsets.logStartOffset || p.fetchOffset > highWatermark;
      answers.push({ queue: p.queue, partition: p.partition, error: outOfRange ? 'offset_out_of_range' : null, ...offsets, batches: [], abortedTransactions: [] });
      const readable = isolation === 'read_committed' ? lastStableOffset : highWatermark;
      // Nothing to read at or past the readable end (no batch straddles it): a consumer long-polling at the end costs one statement a check.
      if (outOfRange || p.fetchOffset >= readable) continue;
      wanted.push({ answer: i, id: row.id, fetchOffset: p.fetchOffset, readable, budget: Math.min(p.maxBytes, maxBytes), behind: highWatermark - p.fetchOffset });
    }
    const found = await this.readBatches(wanted);
    // The answer's limit, in partition order: the first batch of the answer always goes, so a consumer passes a batch over its limit.
    let total = 0;
    const abortedRanges: { answer: ReadPartitionResult; partitionId: number; fetchOffset: number; upTo: number }[] = [];
    for (const w of wanted) {
      const p = parts[w.answer]!;
      const answer = answers[w.answer]!;
      const remaining = maxBytes - total;
      const budget = Math.min(p.maxBytes, remaining);
      let taken = 0;
      for (const batch of found.get(w.answer) ?? []) {
        const fits = taken === 0 ? total === 0 || batch.length <= remaining : taken + batch.length <= budget;
        if (!fits) break;
        answer.batches.push(batch);
        taken += batch.length;
      }
      total += taken;
      const last = answer.batches.at(-1);
      if (isolation === 'read_committed' && last) {
        abortedRanges.push({ answer, partitionId: w.id, fetchOffset: p.fetchOffset, upTo: Number(last.readBigInt64BE(0)) + last.readInt32BE(BatchPos.LastOffsetDelta) + 1 });
      }
    }
    const aborted = await this.store.kafkaTxns.abortedIn(abortedRanges);
    abortedRanges.forEach((r, i) => (r.answer.abortedTransactions = aborted[i]!));
    return { partitions: answers };
  }

  /**
   * Each wanted partition's candidate batches (those within its budget, and
   * its first whatever its size), by its place in the answer. A partition far
   * enough behind reads from a standby when one is configured; one the
   * standby has nothing for yet reads from the primary.
   */
  private async readBatches(wanted: WantedRead[]): Promise<Map<number, Buffer[]>> {
    const found = new Map<number, Buffer[]>();
    if (wanted.length === 0) return found;
    const collect = (set: WantedRead[], rows: (Buffer | null)[][]): void => {
      for (const [ord, , bytes] of rows) {
        const w = set[Number(ord!.readBigInt64BE(0)) - 1]!;
        let list = found.get(w.answer);
        if (!list) found.set(w.answer, (list = []));
        list.push(bytes!);
      }
    };
    const args = (set: WantedRead[]): number[][] => [set.map((w) => w.id), set.map((w) => w.fetchOffset), set.map((w) => w.readable), set.map((w) => w.budget)];
    const lag = this.store.db.standbyReadLag;
    const behind = lag === null ? [] : wanted.filter((w) => w.behind >= lag);
    let fromPrimary = wanted;
    if (behind.length > 0) {
      const rows = await this.store.db.copyRowsOnStandby('read-batches', args(behind));
      if (rows !== null) collect(behind, rows);
      fromPrimary = wanted.filter((w) => !found.has(w.answer));
    }
    if (fromPrimary.length > 0) collect(fromPrimary, await this.store.db.copyRows('read-batches', args(fromPrimary)));
    return found;
  }

  async sizes(req: { partitions: PartitionRef[] }): Promise<{ partitions: PartitionSize[] }> {
    const parts = req.partitions;
    if (parts.length === 0) return { partitions: [] };
    const rows = await this.store.db.statements.run<{ queue_id: string | null; id: number | null; bytes: number | null }>('partition-sizes', [parts.map((p) => p.queue), parts.map((p) => p.partition)]);
    return {
      partitions: parts.map((p, i) => {
        const row = rows[i]!;
        if (row.queue_id === null || row.id === null) return { queue: p.queue, partition: p.partition, error: row.queue_id === null ? 'unknown_queue' : 'unknown_partition', bytes: -1 };
        return { queue: p.queue, partition: p.partition, error: null, bytes: Number(row.bytes ?? 0) };
      }),
    };
  }

  async offsets(req: { partitions: PartitionRef[] }): Promise<{ partitions: (PartitionOffsets & { error: ReadError | null })[] }> {
    const parts = req.partitions;
    const rows = parts.length > 0 ? await this.store.findPartitions(parts) : [];
    return {
      partitions: parts.map((p, i) => {
        const row = rows[i]!;
        if (row.queue_id === null || row.id === null) {
          return { queue: p.queue, partition: p.partition, error: row.queue_id === null ? 'unknown_queue' : 'unknown_partition', logStartOffset: -1, highWatermark: -1, lastStableOffset: -1 };
        }
        return { queue: p.queue, partition: p.partition, error: null, logStartOffset: row.log_start_offset!, highWatermark: row.next_offset!, lastStableOffset: row.open_txn_offset ?? row.next_offset! };
      }),
    };
  }

  async offsetForTimestamp(req: OffsetForTimestampRequest): Promise<OffsetForTimestampResult> {
    const row = await this.store.partition(req);
    const { timestamp } = req;
    const answer = (offset: number, ts: number): OffsetForTimestampResult => ({ queue: req.queue, partition: req.partition, offset, timestamp: ts });
    const read = { where: `${req.queue}/${req.partition}`, maxBytes: storedBatchLimit(this.store.options.appendLimits) };
    const readable = req.isolation === 'read_committed' ? row.last_stable_offset : row.next_offset;
    if (timestamp === LATEST_TIMESTAMP) return answer(readable, -1);
    if (timestamp === EARLIEST_TIMESTAMP) return answer(row.log_start_offset, -1);
    if (timestamp === MAX_TIMESTAMP) {
      const best = await this.store.db.statements.one<{ max_timestamp: number; bytes: Buffer }>('max-timestamp-batch', [row.id]);
      const found = best && recordAtOrAfter(best.bytes, best.max_timestamp, row.log_start_offset, read);
      return found ? answer(found.offset, found.timestamp) : answer(-1, -1);
    }
    // Batches are found by their max timestamp; only the one holding the answer is decoded.
    let from = row.log_start_offset;
    for (;;) {
      const batch = await this.store.db.statements.one<{ next_offset: number; bytes: Buffer }>('batch-at-timestamp', [row.id, from, readable, timestamp]);
      if (!batch) return answer(-1, -1);
      const found = recordAtOrAfter(batch.bytes, timestamp, row.log_start_offset, read);
      if (found) return answer(found.offset, found.timestamp);
      from = batch.next_offset;
    }
  }

  async deleteRecords(req: DeleteRecordsRequest): Promise<DeleteRecordsResult> {
    const row = await this.store.partition(req);
    const before = req.beforeOffset;
    const lowWatermark = await this.store.db.transaction(async (tx) => {
      const locked = (await tx.one<PartitionRow>('lock-partition', [row.id]))!;
      const target = before === -1 ? locked.next_offset : before;
      if (target > locked.next_offset) {
        throw pastHighWatermarkError(target, locked.next_offset, req.queue, req.partition);
      }
      if (target <= locked.log_start_offset) return locked.log_start_offset;
      await tx.run('truncate-log', [row.id, target]);
      return target;
    });
    return { queue: req.queue, partition: req.partition, lowWatermark };
  }
}

/** A partition a Fetch reads batches of: where its answer goes, and the bounds of the read. */
interface WantedRead {
  answer: number;
  id: number;
  fetchOffset: number;
  readable: number;
  budget: number;
  /** Records between the fetch offset and the high watermark. */
  behind: number;
}

/** What a group's calls name to read, each partition once (keyed "queue\0index"). */
function unionOfReads(calls: AppendCall[]): { wanted: Map<string, { queue: string; index: number; producerIds: Set<number> }>; requestIds: Set<string>; txnProducers: Set<number> } {
  const wanted = new Map<string, { queue: string; index: number; producerIds: Set<number> }>();
  const requestIds = new Set<string>();
  const txnProducers = new Set<number>();
  for (const call of calls) {
    if (call.requestId !== undefined) requestIds.add(call.requestId);
    const reads = call.reads;
    for (const id of reads.transactionalProducers) txnProducers.add(id);
    for (const p of reads.partitions) {
      const key = groupKeyOf(p.queue, String(p.index));
      let entry = wanted.get(key);
      if (!entry) wanted.set(key, (entry = { queue: p.queue, index: p.index, producerIds: new Set() }));
      for (const id of p.producerIds) entry.producerIds.add(id);
    }
  }
  return { wanted, requestIds, txnProducers };
}

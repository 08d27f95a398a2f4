import type {
  AppendPartitionResult,
  AppendRequest,
  AppendResult,
  CallOptions,
  DeleteRecordsRequest,
  DeleteRecordsResult,
  OffsetForTimestampRequest,
  OffsetForTimestampResult,
  PartitionOffsets,
  PartitionSize,
  PartitionRef,
  ReadError,
  ReadPartitionResult,
  ReadRequest,
  ReadResult,
} from '../../core.js';
import { EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, MAX_TIMESTAMP } from '../../core.js';
import { BatchPos } from '../../../../protocol/records/batch-header.js';
import { CoreError } from '../../errors.js';
import { recordAtOrAfter } from '../../rules/timestamps.js';
import { appendRefusal, checkQueueRules, keepInPlace, parseAppend, prepareForStorage, storedBatchLimit, type ParsedAppend } from '../../rules/batches.js';
import { advanceWindows, checkPartitionSequences, isIdempotent, type ProducerWindow, type RetainedBatch } from '../../rules/producer-window.js';
import { GroupCommit } from './group-commit.js';
import { LogWrites } from './log-writes.js';
import { partitionKey } from './wakeups.js';
import { PostgresTransactions, type AppendTransactions } from './kafka-transactions.js';
import { transactionalProducers } from '../../rules/kafka-transactions.js';
import { groupKeyOf, type LockedPartitionRow, type PartitionRow, type PostgresStore } from './store.js';

interface AppendCall {
  partitions: AppendRequest['partitions'];
  requestId: string | undefined;
  /** The partitions' batches, checked before the call joins a transaction (parseAppend). */
  parsed: ParsedAppend[];
}

/** The log (sql/log.sql): appends, group-committed with the requestId ledger and producer windows; reads, offsets, deletions. */
export class PostgresLog {
  private readonly appends: GroupCommit<AppendCall, AppendResult>;

  constructor(private readonly store: PostgresStore) {
    this.appends = new GroupCommit((calls) => this.commitAppends(calls), store.options.maxGroupSize, store.options.groupCommit);
  }

  async append(req: AppendRequest): Promise<AppendResult> {
    const parts = req.partitions;
    // Records are checked (and inflated) here, outside the transaction, so no partition lock waits on them.
    return this.appends.submit({ partitions: parts, requestId: req.requestId, parsed: parseAppend(parts, this.store.options.appendLimits) });
  }

  /**
   * One transaction for a group of append calls: lock every partition they
   * touch (in id order), read the ledger and the producer windows, let the
   * rules decide each call in arrival order (each seeing the windows and
   * offsets the earlier ones left), then write it all in one statement.
   */
  private async commitAppends(calls: AppendCall[]): Promise<AppendResult[]> {
    const now = this.store.clock();
    const { results, writes } = await this.store.db.transaction(async (tx) => {
      const refs = new Map<string, { queue: string; index: number }>();
      for (const call of calls) for (const p of call.partitions) refs.set(groupKeyOf(p.queue, String(p.partition)), { queue: p.queue, index: p.partition });
      const wanted = [...refs.values()];
      const locked = await tx.run<LockedPartitionRow>('lock-partitions', [wanted.map((r) => r.queue), wanted.map((r) => r.index)]);
      const partitions = new Map<string, LockedPartitionRow>();
      for (const row of locked) partitions.set(groupKeyOf(row.queue_name, String(row.idx)), row);

      let queueSizes = new Map<string, number>();
      if (partitions.size < refs.size) {
        const missing = [...new Set(wanted.filter((r) => !partitions.has(groupKeyOf(r.queue, String(r.index)))).map((r) => r.queue))];
        const rows = await tx.run<{ name: string; partition_count: number }>('existing-queues', [missing]);
        queueSizes = new Map(rows.map((r) => [r.name, r.partition_count]));
      }

      const requestIds = [...new Set(calls.map((c) => c.requestId).filter((id): id is string => id !== undefined))];
      const ledger = new Map<string, AppendResult>();
      if (requestIds.length > 0) {
        for (const row of await tx.run<{ request_id: string; result: AppendResult }>('append-ledger', [requestIds])) ledger.set(row.request_id, row.result);
      }

      // The windows to read are those of the producers in the batches.
      const parsed = calls.map((call) =>
        call.partitions.map((p, i): ParsedAppend | null => {
          const row = partitions.get(groupKeyOf(p.queue, String(p.partition)));
          return row ? checkQueueRules(call.parsed[i]!, row.config, now) : null;
        }),
      );
      const windowKeys = new Map<string, [number, number]>();
      calls.forEach((call, c) =>
        call.partitions.forEach((p, i) => {
          const result = parsed[c]![i];
          if (!result?.ok) return;
          const partitionId = partitions.get(groupKeyOf(p.queue, String(p.partition)))!.id;
          for (const b of result.batches) if (isIdempotent(b)) windowKeys.set(`${partitionId}:${b.producerId}`, [partitionId, b.producerId]);
        }),
      );
      const windows = new Map<string, ProducerWindow>();
      if (windowKeys.size > 0) {
        const keys = [...windowKeys.values()];
        const rows = await tx.run<{ partition_id: number; producer_id: number; producer_epoch: number; retained: RetainedBatch[]; last_timestamp: number }>(
          'producer-windows',
          [keys.map((k) => k[0]), keys.map((k) => k[1])],
        );
        for (const r of rows) {
          windows.set(`${r.partition_id}:${r.producer_id}`, { producerId: r.producer_id, producerEpoch: r.producer_epoch, batches: r.retained, lastTimestamp: r.last_timestamp });
        }
      }

      // The transactions of the transactional producers among the batches, read under the partitions' locks.
      const txnProducers = new Set<number>();
      for (const callParsed of parsed) for (const result of callParsed) if (result?.ok) for (const id of transactionalProducers(result.batches)) txnProducers.add(id);
      const transactions = await this.store.kafkaTxns.forAppend(tx, [...txnProducers], [...partitions.values()].map((r) => r.id));
      const txnFirsts = new Map<string, { transactionalId: string; partitionId: number; offset: number }>();

      const writes = new LogWrites();
      const results = calls.map((call, c): AppendResult => {
        if (call.requestId !== undefined) {
          const earlier = ledger.get(call.requestId);
          if (earlier) return structuredClone(earlier);
        }
        const inPlace = keepInPlace(call);
        const result: AppendResult = {
          partitions: call.partitions.map((p, i) => {
            const row = partitions.get(groupKeyOf(p.queue, String(p.partition)));
            return this.appendPartition(p, row, queueSizes, parsed[c]![i] ?? null, windows, writes, now, inPlace, transactions, txnFirsts);
          }),
        };
        if (call.requestId !== undefined) {
          ledger.set(call.requestId, result);
          writes.ledger.push({ requestId: call.requestId, result, createdAt: now });
        }
        return result;
      });
      await this.store.write(tx, writes);
      await this.store.kafkaTxns.recordFirstOffsets(tx, txnFirsts);
      return { results, writes };
    });
    this.store.wakeTouched(writes);
    return results.map((r) => structuredClone(r));
  }

  private appendPartition(
    p: AppendRequest['partitions'][number],
    row: LockedPartitionRow | undefined,
    queueSizes: Map<string, number>,
    parsed: ParsedAppend | null,
    windows: Map<string, ProducerWindow>,
    writes: LogWrites,
    now: number,
    inPlace: boolean,
    transactions: AppendTransactions,
    txnFirsts: Map<string, { transactionalId: string; partitionId: number; offset: number }>,
  ): AppendPartitionResult {
    const base = { queue: p.queue, partition: p.partition, baseOffset: -1, logAppendTime: -1, logStartOffset: -1, duplicate: false };
    if (!row || !parsed) {
      const count = queueSizes.get(p.queue);
      if (count === undefined) return { ...base, error: 'unknown_queue', errorMessage: `Queue "${p.queue}" does not exist.` };
      return { ...base, error: 'unknown_partition', errorMessage: `Queue "${p.queue}" has partitions 0 to ${count - 1}; there is no partition ${p.partition}.` };
    }
    if (!parsed.ok) return { ...base, logStartOffset: row.log_start_offset, ...appendRefusal(parsed) };
    const txnRefusal = PostgresTransactions.checkAppend(transactions, row.id, parsed.batches);
    if (txnRefusal) return { ...base, logStartOffset: row.log_start_offset, error: txnRefusal.error, errorMessage: txnRefusal.message };
    const windowOf = (producerId: number): ProducerWindow | null => windows.get(`${row.id}:${producerId}`) ?? null;
    const plan = checkPartitionSequences(parsed.batches, windowOf);
    if (plan.kind === 'duplicate') {
      return { ...base, error: null, baseOffset: plan.baseOffset, logStartOffset: row.log_start_offset, duplicate: true };
    }
    if (plan.kind !== 'append') return { ...base, logStartOffset: row.log_start_offset, error: plan.kind, errorMessage: plan.message };
    const logAppendTime = row.config.timestampType === 'LogAppendTime' ? now : null;
    const baseOffset = row.next_offset;
    const appended = parsed.batches.map((batch) => {
      const offset = row.next_offset;
      const maxTimestamp = logAppendTime ?? batch.maxTimestamp;
      const bytes = prepareForStorage(p.records, batch, offset, logAppendTime, inPlace);
      row.next_offset = offset + batch.offsetCount;
      writes.addBatch({ partitionId: row.id, baseOffset: offset, nextOffset: row.next_offset, maxTimestamp, appendedAt: now, bytes }, { queue: row.queue_name, index: row.idx });
      const txn = batch.isTransactional ? transactions.get(batch.producerId) : undefined;
      const firstKey = txn ? `${txn.transactionalId}\u0000${row.id}` : '';
      if (txn && !txnFirsts.has(firstKey)) txnFirsts.set(firstKey, { transactionalId: txn.transactionalId, partitionId: row.id, offset });
      return { ...batch, baseOffset: offset, maxTimestamp };
    });
    for (const [producerId, window] of advanceWindows(appended, windowOf)) {
      windows.set(`${row.id}:${producerId}`, window);
      writes.setWindow(row.id, window);
    }
    return { ...base, error: null, baseOffset, logAppendTime: logAppendTime ?? -1, logStartOffset: row.log_start_offset };
  }


  async read(req: ReadRequest, options?: CallOptions): Promise<ReadResult> {
    const { partitions: parts, minBytes, maxWaitMs, maxBytes } = req;
    const compute = async (final: boolean): Promise<ReadResult | null> => {
      const result = await this.collectRead(parts, maxBytes, req.isolation);
      const bytes = result.partitions.reduce((n, p) => n + p.batches.reduce((m, b) => m + b.length, 0), 0);
      const anyError = result.partitions.some((p) => p.error !== null);
      return final || anyError || bytes >= minBytes || (bytes > 0 && bytes >= maxBytes) ? result : null;
    };
    const keys = parts.map((p) => partitionKey(p.queue, p.partition));
    return this.store.longPoll(keys, maxWaitMs, options?.signal, compute, () => this.emptyRead(parts));
  }


  private async collectRead(parts: ReadRequest['partitions'], maxBytes: number, isolation: ReadRequest['isolation']): Promise<ReadResult> {
    const rows = await this.store.findPartitions(parts);
    let total = 0;
    let first = true;
    const partitions: ReadPartitionResult[] = [];
    for (const [i, p] of parts.entries()) {
      const row = rows[i]!;
      if (row.queue_id === null || row.id === null) {
        partitions.push({ ...this.emptyPartitionRead(p), error: row.queue_id === null ? 'unknown_queue' : 'unknown_partition' });
        continue;
      }
      const highWatermark = row.next_offset!;
      const lastStableOffset = row.open_txn_offset ?? highWatermark;
      const offsets = { highWatermark, lastStableOffset, logStartOffset: row.log_start_offset! };
      if (p.fetchOffset < offsets.logStartOffset || p.fetchOffset > highWatermark) {
        partitions.push({ queue: p.queue, partition: p.partition, error: 'offset_out_of_range', ...offsets, batches: [], abortedTransactions: [] });
        continue;
      }
      const budget = Math.min(p.maxBytes, maxBytes - total);
      const readable = isolation === 'read_committed' ? lastStableOffset : highWatermark;
      const found = await this.store.db.statements.run<{ base_offset: number; bytes: Buffer }>('read-batches', [row.id, p.fetchOffset, readable, budget, first, maxBytes - total]);
      const batches = found.map((b) => b.bytes);
      for (const b of batches) total += b.length;
      if (batches.length > 0) first = false;
      const last = found.at(-1);
      const abortedTransactions =
        isolation === 'read_committed' && last ? await this.store.kafkaTxns.abortedIn(row.id, p.fetchOffset, last.base_offset + last.bytes.readInt32BE(BatchPos.LastOffsetDelta) + 1) : [];
      partitions.push({ queue: p.queue, partition: p.partition, error: null, ...offsets, batches, abortedTransactions });
    }
    return { partitions };
  }

  private emptyPartitionRead(p: PartitionRef): ReadPartitionResult {
    return { queue: p.queue, partition: p.partition, error: null, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, batches: [], abortedTransactions: [] };
  }

  private emptyRead(parts: PartitionRef[]): ReadResult {
    return { partitions: parts.map((p) => this.emptyPartitionRead(p)) };
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
        throw new CoreError('invalid_argument', `beforeOffset ${target} is past the high watermark ${locked.next_offset} of ${req.queue}/${req.partition}.`);
      }
      if (target <= locked.log_start_offset) return locked.log_start_offset;
      await tx.run('truncate-log', [row.id, target]);
      return target;
    });
    return { queue: req.queue, partition: req.partition, lowWatermark };
  }
}

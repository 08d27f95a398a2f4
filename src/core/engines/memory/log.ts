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
import { CoreError } from '../../errors.js';
import { appendRefusal, checkQueueRules, keepInPlace, parseAppend, prepareForStorage, storedBatchLimit, type ParsedAppend } from '../../rules/batches.js';
import { advanceWindows, checkPartitionSequences, type ProducerWindow } from '../../rules/producer-window.js';
import { partitionKey } from './wakeups.js';
import type { MemoryStore, PartitionState, QueueState } from './store.js';

/** The log: appends (with the requestId ledger and producer windows), reads, offsets, deletions. */
export class MemoryLog {
  constructor(private readonly store: MemoryStore) {}

  async append(req: AppendRequest): Promise<AppendResult> {
    const parts = req.partitions;
    if (req.requestId !== undefined) {
      const earlier = this.store.appendLedger.get(req.requestId);
      if (earlier) return structuredClone(earlier);
    }
    this.store.checkRoom(parts.reduce((n, p) => n + p.records.length, 0));
    const now = this.store.clock();
    // Long-polls wake once the whole append is in, so a Fetch answers with
    // every partition this request wrote, not only the first.
    const touched: [QueueState, PartitionState][] = [];
    const inPlace = keepInPlace(req);
    const parsed = parseAppend(parts, this.store.appendLimits);
    const results: AppendPartitionResult[] = parts.map((p, i) => this.appendPartition(p.queue, p.partition, p.records, parsed[i]!, now, touched, inPlace));
    for (const [queue, partition] of touched) this.store.wakePartition(queue, partition);
    const result: AppendResult = { partitions: results };
    if (req.requestId !== undefined) {
      this.store.appendLedger.set(req.requestId, structuredClone(result));
      if (this.store.appendLedger.size > this.store.appendLedgerSize) this.store.appendLedger.delete(this.store.appendLedger.keys().next().value!);
    }
    return result;
  }

  private appendPartition(
    queueName: string,
    index: number,
    records: Buffer,
    checked: ParsedAppend,
    now: number,
    touched: [QueueState, PartitionState][],
    inPlace: boolean,
  ): AppendPartitionResult {
    const base = { queue: queueName, partition: index, baseOffset: -1, logAppendTime: -1, logStartOffset: -1, duplicate: false };
    const queue = this.store.queues.get(queueName);
    if (!queue) return { ...base, error: 'unknown_queue', errorMessage: `Queue "${queueName}" does not exist.` };
    const partition = queue.partitions[index];
    if (!partition) {
      return { ...base, error: 'unknown_partition', errorMessage: `Queue "${queueName}" has partitions 0 to ${queue.partitions.length - 1}; there is no partition ${index}.` };
    }
    const log = partition.log;
    const parsed = checkQueueRules(checked, queue.config, now);
    if (!parsed.ok) return { ...base, logStartOffset: log.logStartOffset, ...appendRefusal(parsed) };
    const txnRefusal = this.store.kafkaTxns.checkAppend(partition, { queue: queueName, partition: index }, parsed.batches);
    if (txnRefusal) return { ...base, logStartOffset: log.logStartOffset, error: txnRefusal.error, errorMessage: txnRefusal.message };
    const windowOf = (producerId: number): ProducerWindow | null => partition.producers.get(producerId) ?? null;
    const plan = checkPartitionSequences(parsed.batches, windowOf);
    if (plan.kind === 'duplicate') {
      return { ...base, error: null, baseOffset: plan.baseOffset, logStartOffset: log.logStartOffset, duplicate: true };
    }
    if (plan.kind !== 'append') return { ...base, logStartOffset: log.logStartOffset, error: plan.kind, errorMessage: plan.message };
    const logAppendTime = queue.config.timestampType === 'LogAppendTime' ? now : null;
    const baseOffset = log.highWatermark;
    const appended = parsed.batches.map((batch) => {
      const offset = log.highWatermark;
      const stored = prepareForStorage(records, batch, offset, logAppendTime, inPlace);
      log.append(stored, batch.offsetCount, logAppendTime ?? batch.maxTimestamp, now);
      return { ...batch, baseOffset: offset, maxTimestamp: logAppendTime ?? batch.maxTimestamp };
    });
    for (const [producerId, window] of advanceWindows(appended, windowOf)) partition.producers.set(producerId, window);
    this.store.kafkaTxns.noteAppended(partition, appended);
    touched.push([queue, partition]);
    return { ...base, error: null, baseOffset, logAppendTime: logAppendTime ?? -1, logStartOffset: log.logStartOffset };
  }

  async read(req: ReadRequest, options?: CallOptions): Promise<ReadResult> {
    const { partitions: parts, minBytes, maxWaitMs, maxBytes } = req;
    const compute = (final: boolean): ReadResult | null => {
      const result = this.collectRead(parts, maxBytes, req.isolation);
      const bytes = result.partitions.reduce((n, p) => n + p.batches.reduce((m, b) => m + b.length, 0), 0);
      const anyError = result.partitions.some((p) => p.error !== null);
      return final || anyError || bytes >= minBytes || bytes > 0 && bytes >= maxBytes ? result : null;
    };
    const keys = parts.map((p) => partitionKey(p.queue, p.partition));
    return this.store.longPoll(keys, maxWaitMs, options?.signal, compute, () => this.emptyRead(parts));
  }

  private collectRead(parts: ReadRequest['partitions'], maxBytes: number, isolation: ReadRequest['isolation']): ReadResult {
    let total = 0;
    let first = true;
    return {
      partitions: parts.map((p): ReadPartitionResult => {
        const found = this.store.lookupPartition(p);
        if ('error' in found) return { ...this.emptyPartitionRead(p), error: found.error };
        const log = found.partition.log;
        const lastStable = this.store.kafkaTxns.lastStableOffset(found.partition, log.highWatermark);
        const readable = isolation === 'read_committed' ? lastStable : log.highWatermark;
        const offsets = { highWatermark: log.highWatermark, lastStableOffset: lastStable, logStartOffset: log.logStartOffset };
        if (p.fetchOffset < log.logStartOffset || p.fetchOffset > log.highWatermark) {
          return { queue: p.queue, partition: p.partition, error: 'offset_out_of_range', ...offsets, batches: [], abortedTransactions: [] };
        }
        const batches = log
          .collect(p.fetchOffset, p.maxBytes, (size) => first || total + size <= maxBytes)
          .filter((b) => b.baseOffset < readable);
        const kept: Buffer[] = [];
        let upTo = p.fetchOffset;
        for (const batch of batches) {
          if (!first && total + batch.size > maxBytes) break;
          kept.push(batch.bytes);
          upTo = batch.nextOffset;
          total += batch.size;
          first = false;
        }
        const abortedTransactions = isolation === 'read_committed' ? this.store.kafkaTxns.abortedIn(found.partition, p.fetchOffset, upTo) : [];
        return { queue: p.queue, partition: p.partition, error: null, ...offsets, batches: kept, abortedTransactions };
      }),
    };
  }

  private emptyPartitionRead(p: PartitionRef): ReadPartitionResult {
    return { queue: p.queue, partition: p.partition, error: null, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, batches: [], abortedTransactions: [] };
  }

  private emptyRead(parts: PartitionRef[]): ReadResult {
    return { partitions: parts.map((p) => this.emptyPartitionRead(p)) };
  }

  async offsets(req: { partitions: PartitionRef[] }): Promise<{ partitions: (PartitionOffsets & { error: ReadError | null })[] }> {
    const parts = req.partitions;
    return {
      partitions: parts.map((p) => {
        const found = this.store.lookupPartition(p);
        if ('error' in found) return { queue: p.queue, partition: p.partition, error: found.error, logStartOffset: -1, highWatermark: -1, lastStableOffset: -1 };
        const log = found.partition.log;
        const lastStableOffset = this.store.kafkaTxns.lastStableOffset(found.partition, log.highWatermark);
        return { queue: p.queue, partition: p.partition, error: null, logStartOffset: log.logStartOffset, highWatermark: log.highWatermark, lastStableOffset };
      }),
    };
  }

  async sizes(req: { partitions: PartitionRef[] }): Promise<{ partitions: PartitionSize[] }> {
    return {
      partitions: req.partitions.map((p) => {
        const found = this.store.lookupPartition(p);
        if ('error' in found) return { queue: p.queue, partition: p.partition, error: found.error, bytes: -1 };
        return { queue: p.queue, partition: p.partition, error: null, bytes: found.partition.log.bytes };
      }),
    };
  }

  async offsetForTimestamp(req: OffsetForTimestampRequest): Promise<OffsetForTimestampResult> {
    const { partition } = this.store.partition(req);
    const read = { where: `${req.queue}/${req.partition}`, maxBytes: storedBatchLimit(this.store.appendLimits) };
    const readable = req.isolation === 'read_committed' ? this.store.kafkaTxns.lastStableOffset(partition, partition.log.highWatermark) : partition.log.highWatermark;
    const found = partition.log.offsetForTimestamp(req.timestamp, readable, read);
    return { queue: req.queue, partition: req.partition, ...found };
  }

  async deleteRecords(req: DeleteRecordsRequest): Promise<DeleteRecordsResult> {
    const { partition } = this.store.partition(req);
    const log = partition.log;
    const before = req.beforeOffset;
    const target = before === -1 ? log.highWatermark : before;
    if (target > log.highWatermark) {
      throw new CoreError('invalid_argument', `beforeOffset ${target} is past the high watermark ${log.highWatermark} of ${req.queue}/${req.partition}.`);
    }
    log.truncateBefore(target);
    return { queue: req.queue, partition: req.partition, lowWatermark: log.logStartOffset };
  }
}

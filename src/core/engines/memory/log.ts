import type { AppendResult, CallOptions, DeleteRecordsRequest, DeleteRecordsResult, OffsetForTimestampRequest, OffsetForTimestampResult, PartitionOffsets, PartitionRef, PartitionSize, ReadError, ReadPartitionResult, ReadRequest, ReadResult } from '../../core.js';
import { pastHighWatermarkError } from '../../errors.js';
import { emptyPartitionRead, emptyRead, readIsReady } from '../../log/read.js';
import type { AppendCall, AppendPartition, AppendState, AppendWrites, DecideAppends, MissingPartition } from '../../log/append.js';
import type { ProducerTransaction } from '../../rules/kafka-transactions.js';
import type { ProducerWindow } from '../../rules/producer-window.js';
import { storedBatchLimit, type AppendLimits } from '../../rules/batches.js';
import { partitionKey } from './wakeups.js';
import type { MemoryStore, PartitionState } from './store.js';

/** The log: appends (decided by the core, ../../log/append.ts), reads, offsets, deletions. */
export class MemoryLog {
  /** One state serves every call: each runs to its end before the next reads it. */
  private readonly state: MemoryAppendState;

  constructor(private readonly store: MemoryStore) {
    this.state = new MemoryAppendState(store);
  }

  get appendLimits(): AppendLimits {
    return this.store.appendLimits;
  }

  /** One call is the atomic unit: read, decided and written without yielding. */
  append(call: AppendCall, decide: DecideAppends): AppendResult {
    const store = this.store;
    // An answer the ledger holds is given even while full; anything else must fit.
    if (call.requestId === undefined || !store.appendLedger.has(call.requestId)) store.checkRoom(call.partitions.reduce((n, p) => n + p.records.length, 0));
    this.state.now = store.clock();
    const { results, writes } = decide([call], this.state);
    this.write(writes);
    return results[0]!;
  }

  private write(writes: AppendWrites<PartitionState>): void {
    const store = this.store;
    const touched = new Map<PartitionState, string>();
    for (const b of writes.batches) {
      b.partition.log.append(b.bytes, b.nextOffset - b.baseOffset, b.maxTimestamp, b.appendedAt, b.baseOffset);
      touched.set(b.partition, b.queue);
    }
    for (const { partition, window } of writes.windows) partition.producers.set(window.producerId, window);
    for (const start of writes.transactionStarts) store.kafkaTxns.noteTransactionStart(start.partition, start.producerId, start.offset);
    for (const { requestId, result } of writes.ledger) {
      store.appendLedger.set(requestId, structuredClone(result));
      if (store.appendLedger.size > store.appendLedgerSize) store.appendLedger.delete(store.appendLedger.keys().next().value!);
    }
    // Long-polls wake once the whole append is in, so a Fetch answers with every partition this request wrote, not only the first.
    for (const [partition, queue] of touched) store.wakePartition(store.queues.get(queue)!, partition);
  }

  async read(req: ReadRequest, options?: CallOptions): Promise<ReadResult> {
    const { partitions: parts, maxWaitMs } = req;
    const compute = (final: boolean): ReadResult | null => {
      const result = this.collectRead(parts, req.maxBytes, req.isolation);
      return readIsReady(result, req, final) ? result : null;
    };
    const keys = parts.map((p) => partitionKey(p.queue, p.partition));
    return this.store.longPoll(keys, maxWaitMs, options?.signal, compute, () => emptyRead(parts));
  }

  private collectRead(parts: ReadRequest['partitions'], maxBytes: number, isolation: ReadRequest['isolation']): ReadResult {
    let total = 0;
    let first = true;
    return {
      partitions: parts.map((p): ReadPartitionResult => {
        const found = this.store.lookupPartition(p);
        if ('error' in found) return { ...emptyPartitionRead(p), error: found.error };
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

  async sizes(req: { partitions: PartitionRef[] }): Promise<{ partitions: PartitionSize[] }> {
    return {
      partitions: req.partitions.map((p) => {
        const found = this.store.lookupPartition(p);
        if ('error' in found) return { queue: p.queue, partition: p.partition, error: found.error, bytes: -1 };
        return { queue: p.queue, partition: p.partition, error: null, bytes: found.partition.log.bytes };
      }),
    };
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
      throw pastHighWatermarkError(target, log.highWatermark, req.queue, req.partition);
    }
    log.truncateBefore(target);
    return { queue: req.queue, partition: req.partition, lowWatermark: log.logStartOffset };
  }
}

/** What the core decides an append against: the store itself, read as the decision asks. */
class MemoryAppendState implements AppendState<PartitionState> {
  now = 0;

  constructor(private readonly store: MemoryStore) {}

  partition(queueName: string, index: number): AppendPartition<PartitionState> | MissingPartition {
    const queue = this.store.queues.get(queueName);
    if (!queue) return { missing: 'unknown_queue' };
    const partition = queue.partitions[index];
    if (!partition) return { missing: 'unknown_partition', partitionCount: queue.partitions.length };
    return { handle: partition, queue: queueName, index, config: queue.config, nextOffset: partition.log.highWatermark, logStartOffset: partition.log.logStartOffset };
  }

  earlierResult(requestId: string): AppendResult | undefined {
    return this.store.appendLedger.get(requestId);
  }

  window(partition: PartitionState, producerId: number): ProducerWindow | null {
    return partition.producers.get(producerId) ?? null;
  }

  transaction(producerId: number, partition: AppendPartition<PartitionState>): ProducerTransaction | null {
    return this.store.kafkaTxns.producerTransaction(producerId, partition);
  }
}

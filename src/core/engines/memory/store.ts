import type { Logger } from 'pino';
import type { AppendResult, CommittedOffset, KvEntry, PartitionRef, QueueConfig, QueueInfo, ReadError } from '../../core.js';
import { CoreError, unknownPartitionError, unknownQueueError } from '../../errors.js';
import type { AppendLimits } from '../../rules/batches.js';
import type { DedupHit } from '../../rules/dedup.js';
import { transactionMarker } from '../../rules/kafka-transactions.js';
import { kvValueToJson } from '../../rules/kv.js';
import type { LeaseState } from '../../rules/leases.js';
import { PopWork } from './pop-work.js';
import { markerOnlyWindow, type ProducerWindow } from '../../rules/producer-window.js';
import { MemoryTransactions } from './kafka-transactions.js';
import { PartitionLog, type StorageUsage } from './partition-log.js';
import { partitionKey, queueKey, Wakeups } from './wakeups.js';

/**
 * The memory engine's state and the lookups its domain files share (queues.ts,
 * log.ts, producers.ts, offsets.ts, kv.ts, native.ts, maintenance.ts, ...):
 * the queues and their partitions, committed offsets, KV entries, the size
 * limit's count, wake-ups for long-polls. Each domain file holds the calls of
 * one domain and reads and writes this.
 */

export interface MemoryStoreOptions {
  clock: () => number;
  appendLedgerSize: number;
  appendLimits: AppendLimits;
  maxStoredBytes: number;
  log: Logger | null;
}

/** Map slot, entry object and its fields, roughly: what an entry costs beyond its names and value. */
const KV_ENTRY_OVERHEAD = 128;

/** What a KV entry counts against the size limit: its names and its value as JSON, plus the overhead. */
function kvEntryBytes(entry: KvEntry | null | undefined): number {
  if (!entry) return 0;
  return KV_ENTRY_OVERHEAD + Buffer.byteLength(entry.ns) + Buffer.byteLength(entry.key) + Buffer.byteLength(kvValueToJson(entry.value));
}

export interface PartitionState {
  index: number;
  name: string;
  log: PartitionLog;
  producers: Map<number, ProducerWindow>;
  /** transactionId → where it was stored, for native-push dedup. */
  dedup: Map<string, DedupHit & { storedAt: number }>;
  /** consumer group → its native-consume lease. */
  leases: Map<string, LeaseState & { acked: Set<number>; delivered: number[] | null }>;
}

export interface QueueState {
  name: string;
  id: string;
  config: QueueConfig;
  createdAt: number;
  partitions: PartitionState[];
  byName: Map<string, PartitionState>;
}

export interface ProducerIdentity {
  producerId: number;
  producerEpoch: number;
}

export class MemoryStore {
  readonly clock: () => number;
  readonly queues = new Map<string, QueueState>();
  readonly wakeups = new Wakeups();
  /** group → "queue\0partition" → committed offset. */
  readonly groupOffsets = new Map<string, Map<string, CommittedOffset>>();
  readonly kv = new Map<string, KvEntry>();
  readonly appendLedger = new Map<string, AppendResult>();
  readonly appendLedgerSize: number;
  readonly appendLimits: AppendLimits;
  readonly leaseIndex = new Map<string, { queue: string; partition: number; group: string }>();
  /** Per queue and group, the partitions a native pop visits (./pop-work.ts). */
  readonly popWork = new PopWork<QueueState, PartitionState>();
  readonly producerEpochs = new Map<number, number>();
  private nextProducerId = 1;
  /** What close() answers the pending long-polls with. */
  readonly pending = new Set<() => void>();
  /** Kafka's transaction coordinator (./kafka-transactions.ts). */
  readonly kafkaTxns: MemoryTransactions<PartitionState> = new MemoryTransactions<PartitionState>({
    clock: () => this.clock(),
    findPartition: (ref) => {
      const queue = this.queues.get(ref.queue);
      if (!queue) return { missing: 'unknown_queue' };
      const partition = queue.partitions[ref.partition];
      return partition ? { partition } : { missing: 'unknown_partition', partitionCount: queue.partitions.length };
    },
    isLive: (partition) => this.queueOf(partition) !== null,
    appendMarker: (partition, commit, producerId, producerEpoch) => {
      const now = this.clock();
      const offset = partition.log.highWatermark;
      partition.log.append(transactionMarker(commit, producerId, producerEpoch, offset, now), 1, now, now);
      if (!partition.producers.has(producerId)) partition.producers.set(producerId, markerOnlyWindow(producerId, producerEpoch, now));
      this.wakePartition(this.queueOf(partition)!, partition);
      return offset;
    },
    setGroupOffsets: (group, offsets) => {
      for (const o of offsets) this.setGroupOffset(group, o);
    },
    newProducer: () => this.newProducer(),
    noteProducerEpoch: (identity) => void this.producerEpochs.set(identity.producerId, identity.producerEpoch),
  });
  closed = false;

  private readonly usage: StorageUsage = { bytes: 0 };
  private readonly maxStoredBytes: number;
  private readonly log: Logger | null;
  /** Whether the limit has refused a write since there was last room (logged once per episode). */
  private full = false;

  constructor(options: MemoryStoreOptions) {
    this.clock = options.clock;
    this.appendLedgerSize = options.appendLedgerSize;
    this.appendLimits = options.appendLimits;
    this.maxStoredBytes = options.maxStoredBytes;
    this.log = options.log;
  }

  newProducer(): ProducerIdentity {
    return { producerId: this.nextProducerId++, producerEpoch: 0 };
  }

  /** A producer id seen in copied batches (the migration bridge): its epoch is recorded, and ids handed out later stay above it. */
  noteCopiedProducer(producerId: number, producerEpoch: number): void {
    this.producerEpochs.set(producerId, Math.max(this.producerEpochs.get(producerId) ?? -1, producerEpoch));
    this.nextProducerId = Math.max(this.nextProducerId, producerId + 1);
  }

  setGroupOffset(group: string, offset: CommittedOffset): void {
    let offsets = this.groupOffsets.get(group);
    if (!offsets) {
      offsets = new Map();
      this.groupOffsets.set(group, offsets);
    }
    const slot = partitionKey(offset.queue, offset.partition);
    const before = offsets.get(slot)?.offset;
    offsets.set(slot, offset);
    if (before === undefined || offset.offset < before) this.popWork.moved(this.queues.get(offset.queue), group, offset.partition);
  }

  groupOffset(group: string, queue: string, partition: number): CommittedOffset | undefined {
    return this.groupOffsets.get(group)?.get(partitionKey(queue, partition));
  }

  /** Stores or (null) removes an entry, keeping the size limit's count. */
  writeKv(slot: string, entry: KvEntry | null): void {
    this.usage.bytes -= kvEntryBytes(this.kv.get(slot));
    if (entry) {
      this.kv.set(slot, entry);
      this.usage.bytes += kvEntryBytes(entry);
    } else {
      this.kv.delete(slot);
    }
  }

  /** How many more bytes the entries would count than the ones they replace. */
  kvGrowth(writes: Iterable<{ slot: string; entry: KvEntry | null }>): number {
    let growth = 0;
    for (const { slot, entry } of writes) growth += kvEntryBytes(entry) - kvEntryBytes(this.kv.get(slot));
    return growth;
  }

  checkKvRoom(slot: string, entry: KvEntry): void {
    const growth = this.kvGrowth([{ slot, entry }]);
    if (growth > 0) this.checkRoom(growth);
  }

  /**
   * Refuses a write of `bytes` that would take the stored total past the
   * limit. An idempotent producer's exact resend is refused too while full;
   * it is answered once there is room, as it would have been.
   */
  checkRoom(bytes: number): void {
    if (this.maxStoredBytes === 0) return;
    const used = this.usage.bytes;
    if (used + bytes <= this.maxStoredBytes) {
      if (this.full) {
        this.full = false;
        this.log?.info({ storedBytes: used, maxStoredBytes: this.maxStoredBytes }, 'memory engine has room again; writes are accepted');
      }
      return;
    }
    if (!this.full) {
      this.full = true;
      this.log?.warn(
        { storedBytes: used, maxStoredBytes: this.maxStoredBytes },
        'memory engine is at its size limit; writes are refused until retention or deleted topics make room (raise --memory-max-bytes, or use --engine postgres)',
      );
    }
    throw new CoreError(
      'storage_full',
      `The memory engine holds ${used} bytes of records and KV entries and its limit is ${this.maxStoredBytes}; this write of ${bytes} bytes is refused. Delete topics or records, shorten retention, or restart with a higher --memory-max-bytes.`,
    );
  }


  /** The live queue a partition belongs to, or null once its queue was deleted. */
  queueOf(partition: PartitionState): QueueState | null {
    for (const queue of this.queues.values()) if (queue.partitions[partition.index] === partition) return queue;
    return null;
  }

  readonly partitionsOf = (name: string) => {
    const queue = this.queues.get(name);
    return queue?.config.fixedPartitionCount ? queue.partitions : undefined;
  };

  checkOpen(): void {
    if (this.closed) throw new CoreError('closed', 'The core is closed; open a new one.');
  }

  info(queue: QueueState): QueueInfo {
    return {
      name: queue.name,
      id: queue.id,
      config: { ...queue.config },
      partitions: queue.partitions.map((p) => ({ index: p.index, name: p.name })),
      createdAt: queue.createdAt,
    };
  }

  addPartition(queue: QueueState, name: string): PartitionState {
    const partition: PartitionState = { index: queue.partitions.length, name, log: new PartitionLog(this.usage), producers: new Map(), dedup: new Map(), leases: new Map() };
    queue.partitions.push(partition);
    queue.byName.set(name, partition);
    return partition;
  }

  queue(name: string): QueueState {
    const queue = this.queues.get(name);
    if (!queue) throw unknownQueueError(name);
    return queue;
  }

  /** A partition by reference, or a CoreError: for calls that fail whole. */
  partition(ref: PartitionRef): { queue: QueueState; partition: PartitionState } {
    const queue = this.queue(ref.queue);
    const partition = queue.partitions[ref.partition];
    if (!partition) {
      throw unknownPartitionError(queue.name, queue.partitions.length, ref.partition);
    }
    return { queue, partition };
  }

  /** A partition by reference, or a per-partition error: for calls that answer per partition. */
  lookupPartition(ref: PartitionRef): { partition: PartitionState } | { error: ReadError } {
    const queue = this.queues.get(ref.queue);
    if (!queue) return { error: 'unknown_queue' };
    const partition = queue.partitions[ref.partition];
    return partition ? { partition } : { error: 'unknown_partition' };
  }

  wakePartition(queue: QueueState, partition: PartitionState): void {
    this.popWork.appended(queue, partition);
    this.wakeups.wake(partitionKey(queue.name, partition.index));
    this.wakeups.wake(queueKey(queue.name));
  }

  /**
   * A long-poll: answers at once when `compute(false)` is ready or there is no
   * wait; otherwise re-checks on every wake-up until ready, and at the deadline
   * or on abort answers `compute(true)`. close() answers `onClose()`.
   */
  longPoll<T>(keys: string[], waitMs: number, signal: AbortSignal | undefined, compute: (final: boolean) => T | null, onClose: () => T): Promise<T> {
    const ready = compute(waitMs <= 0 || signal?.aborted === true);
    if (ready !== null) return Promise.resolve(ready);
    return new Promise<T>((resolve) => {
      let settled = false;
      const settle = (value: T): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unregister();
        signal?.removeEventListener('abort', onAbort);
        this.pending.delete(onCoreClose);
        resolve(value);
      };
      const finalAnswer = (): void => settle(this.closed ? onClose() : compute(true)!);
      const onAbort = (): void => finalAnswer();
      const onCoreClose = (): void => settle(onClose());
      const unregister = this.wakeups.register(keys, () => {
        const value = this.closed ? null : compute(false);
        if (value !== null) settle(value);
      });
      const timer = setTimeout(finalAnswer, waitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.add(onCoreClose);
    });
  }
}

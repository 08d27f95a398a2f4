import type {
  AddPartitionsRequest,
  AlterQueueRequest,
  QueueInfo,
} from '../../core.js';
import { CoreError, queueExistsError } from '../../errors.js';
import { mergeQueueConfig } from '../../rules/config.js';
import { mintQueueId } from '../../rules/uuidv7.js';
import { partitionKey, queueKey } from './wakeups.js';
import type { NewQueue } from '../../engine.js';
import type { MemoryStore, QueueState } from './store.js';

/** Queues and their partitions (sql/queues.sql in the PostgreSQL engine). */
export class MemoryQueues {
  constructor(private readonly store: MemoryStore) {}

  async create({ name, partitionNames, config, ifNotExists }: NewQueue): Promise<QueueInfo> {
    const existing = this.store.queues.get(name);
    if (existing) {
      if (ifNotExists) return this.store.info(existing);
      throw queueExistsError(name);
    }
    const queue: QueueState = { name, id: mintQueueId(), config, createdAt: this.store.clock(), partitions: [], byName: new Map() };
    for (const partitionName of partitionNames) this.store.addPartition(queue, partitionName);
    this.store.queues.set(name, queue);
    return this.store.info(queue);
  }

  async list(): Promise<QueueInfo[]> {
    return [...this.store.queues.values()].sort((a, b) => (a.name < b.name ? -1 : 1)).map((q) => this.store.info(q));
  }

  async describe(req: { name: string }): Promise<QueueInfo | null> {
    const queue = this.store.queues.get(req.name);
    return queue ? this.store.info(queue) : null;
  }

  async delete(req: { name: string }): Promise<void> {
    const queue = this.store.queue(req.name);
    this.store.queues.delete(queue.name);
    this.store.popWork.drop(queue.name);
    for (const offsets of this.store.groupOffsets.values()) {
      for (const slot of [...offsets.keys()]) if (offsets.get(slot)!.queue === queue.name) offsets.delete(slot);
    }
    for (const [group, offsets] of this.store.groupOffsets) if (offsets.size === 0) this.store.groupOffsets.delete(group);
    for (const partition of queue.partitions) {
      partition.log.discard();
      for (const lease of partition.leases.values()) this.store.leaseIndex.delete(lease.id);
      this.store.wakeups.wake(partitionKey(queue.name, partition.index));
    }
    this.store.wakeups.wake(queueKey(queue.name));
  }

  async addPartitions(req: AddPartitionsRequest): Promise<QueueInfo> {
    const queue = this.store.queue(req.name);
    const total = req.totalCount;
    if (total <= queue.partitions.length) {
      throw new CoreError('invalid_argument', `Queue "${queue.name}" already has ${queue.partitions.length} partitions; totalCount must exceed that, got ${total}.`);
    }
    // Names must be free before any partition is added, so a clash changes nothing.
    for (let i = queue.partitions.length; i < total; i++) {
      if (queue.byName.has(String(i))) {
        throw new CoreError('invalid_argument', `Queue "${queue.name}" already has a partition named "${i}" at another index; cannot add partition ${i}.`);
      }
    }
    for (let i = queue.partitions.length; i < total; i++) this.store.addPartition(queue, String(i));
    return this.store.info(queue);
  }

  async alter(req: AlterQueueRequest): Promise<QueueInfo> {
    const queue = this.store.queue(req.name);
    queue.config = mergeQueueConfig(queue.config, req.config);
    return this.store.info(queue);
  }
}

import type {
  AddPartitionsRequest,
  AlterQueueRequest,
  QueueInfo,
} from '../../core.js';
import { CoreError, queueExistsError } from '../../errors.js';
import { mergeQueueConfig } from '../../rules/config.js';
import { mintQueueId } from '../../rules/uuidv7.js';
import { partitionKey, queueKey } from './wakeups.js';
import type { PostgresStore, QueueRow } from './store.js';
import type { NewQueue } from '../../engine.js';

/** Queues and their partitions (sql/queues.sql). */
export class PostgresQueues {
  constructor(private readonly store: PostgresStore) {}

  async create({ name, partitionNames, config, ifNotExists }: NewQueue): Promise<QueueInfo> {
    const created = await this.store.db.transaction(async (tx) => {
      const inserted = await tx.one('insert-queue', [mintQueueId(), name, config, this.store.clock()]);
      if (!inserted) return false;
      await tx.run('insert-partitions', [inserted['id'], partitionNames.map((_, i) => i), partitionNames]);
      return true;
    });
    if (!created && !ifNotExists) {
      throw queueExistsError(name);
    }
    return (await this.describe({ name }))!;
  }

  async list(): Promise<QueueInfo[]> {
    return (await this.store.db.statements.run<QueueRow & { partitions: QueueInfo['partitions'] }>('describe-queues', [null])).map((r) => this.store.info(r));
  }

  async describe(req: { name: string }): Promise<QueueInfo | null> {
    const { name } = req;
    const row = await this.store.db.statements.one<QueueRow & { partitions: QueueInfo['partitions'] }>('describe-queues', [name]);
    return row ? this.store.info(row) : null;
  }

  async delete(req: { name: string }): Promise<void> {
    const { name } = req;
    const partitionCount = await this.store.db.transaction(async (tx) => {
      const queue = await this.store.lockQueue(tx, name);
      const count = await tx.one<{ count: number }>('partition-count-and-names', [queue.id, 0]);
      await tx.run('delete-queue', [queue.id, name]);
      return count?.count ?? 0;
    });
    const keys = [queueKey(name)];
    for (let i = 0; i < partitionCount; i++) keys.push(partitionKey(name, i));
    this.store.wakeups.wake(keys);
  }

  async addPartitions(req: AddPartitionsRequest): Promise<QueueInfo> {
    const { name } = req;
    await this.store.db.transaction(async (tx) => {
      const queue = await this.store.lockQueue(tx, name);
      const total = req.totalCount;
      const { count } = (await tx.one<{ count: number }>('partition-count-and-names', [queue.id, 0]))!;
      if (total <= count) {
        throw new CoreError('invalid_argument', `Queue "${name}" already has ${count} partitions; totalCount must exceed that, got ${total}.`);
      }
      const indexes = Array.from({ length: total - count }, (_, i) => count + i);
      const taken = await tx.one<{ name: string }>('partition-name-taken', [queue.id, indexes.map(String)]);
      if (taken) {
        throw new CoreError('invalid_argument', `Queue "${name}" already has a partition named "${taken.name}" at another index; cannot add partition ${taken.name}.`);
      }
      await tx.run('insert-partitions', [queue.id, indexes, indexes.map(String)]);
    });
    return (await this.describe({ name }))!;
  }

  async alter(req: AlterQueueRequest): Promise<QueueInfo> {
    const { name } = req;
    await this.store.db.transaction(async (tx) => {
      const queue = await this.store.lockQueue(tx, name);
      await tx.run('update-queue-config', [queue.id, mergeQueueConfig(queue.config, req.config)]);
    });
    return (await this.describe({ name }))!;
  }
}

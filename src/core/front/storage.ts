import type { CallOptions, Core, PartitionRef } from '../core.js';
import type { Engine } from '../engine.js';
import type { KafkaTransactionCoordinator } from '../kafka-transactions/coordinator.js';
import { decideAppends, prepareAppend } from '../log/append.js';
import { requireInteger, requirePartitionCount } from '../rules/arguments.js';
import { checkAppendAtRequest } from '../rules/copied-batches.js';
import { resolveQueueConfig } from '../rules/config.js';
import { checkInitProducer, decideIdempotentInit } from '../rules/init-producer.js';
import { newQueuePartitionNames, validateGroupName, validateQueueName } from '../rules/names.js';
import { describeProducerWindows } from '../rules/producer-window.js';
import { checkAppendRequest, checkReadRequest, requirePartitionRefs } from '../rules/requests.js';
import { checkCommittedOffsets, checkFence, requirePartitionRef } from './checks.js';

/**
 * The front's storage calls: queues, the Kafka log, copies, producers and
 * consumer-group offsets. Each request is checked here (../rules) before the
 * engine's domain object sees it; the append is decided by the core
 * (../log/append.ts) inside the engine's atomic unit.
 */
export class StorageCalls<E extends Engine> {
  constructor(
    /** The engine, while the core is open (it throws once closed). */
    private readonly open: () => E,
    private readonly transactions: KafkaTransactionCoordinator,
    /** Called once a queue is deleted, so share groups forget it. */
    private readonly queueDeleted: (name: string) => Promise<void>,
  ) {}

  // ─── Queues ────────────────────────────────────────────────────────────────

  async createQueue(req: Parameters<Core['createQueue']>[0]) {
    const engine = this.open();
    const name = validateQueueName(req?.name);
    return engine.queues.create({ name, partitionNames: newQueuePartitionNames(req), config: resolveQueueConfig(req.config), ifNotExists: req.ifNotExists === true });
  }

  async listQueues() {
    return this.open().queues.list();
  }

  async describeQueue(req: { name: string }) {
    const engine = this.open();
    return engine.queues.describe({ name: validateQueueName(req?.name) });
  }

  async deleteQueue(req: { name: string }) {
    const engine = this.open();
    const name = validateQueueName(req?.name);
    await engine.queues.delete({ name });
    // Share groups forget the queue, so a queue created again under its name starts afresh.
    await this.queueDeleted(name);
  }

  async addPartitions(req: Parameters<Core['addPartitions']>[0]) {
    const engine = this.open();
    const name = validateQueueName(req?.name);
    return engine.queues.addPartitions({ name, totalCount: requirePartitionCount(req.totalCount, 'totalCount') });
  }

  async alterQueue(req: Parameters<Core['alterQueue']>[0]) {
    const engine = this.open();
    validateQueueName(req?.name);
    return engine.queues.alter(req);
  }

  // ─── The log ───────────────────────────────────────────────────────────────

  async append(req: Parameters<Core['append']>[0]) {
    const engine = this.open();
    checkAppendRequest(req);
    return engine.log.append(prepareAppend(req, engine.log.appendLimits), decideAppends);
  }

  async read(req: Parameters<Core['read']>[0], options?: CallOptions) {
    const engine = this.open();
    checkReadRequest(req);
    return engine.log.read(req, options);
  }

  async offsets(req: { partitions: PartitionRef[] }) {
    const engine = this.open();
    return engine.log.offsets({ partitions: requirePartitionRefs(req?.partitions) });
  }

  async partitionSizes(req: { partitions: PartitionRef[] }) {
    const engine = this.open();
    return engine.log.sizes({ partitions: requirePartitionRefs(req?.partitions) });
  }

  async offsetForTimestamp(req: Parameters<Core['offsetForTimestamp']>[0]) {
    const engine = this.open();
    requirePartitionRef(req);
    requireInteger(req.timestamp, 'timestamp', -3);
    return engine.log.offsetForTimestamp(req);
  }

  async deleteRecords(req: Parameters<Core['deleteRecords']>[0]) {
    const engine = this.open();
    requirePartitionRef(req);
    requireInteger(req.beforeOffset, 'beforeOffset', -1);
    return engine.log.deleteRecords(req);
  }

  async appendAt(req: Parameters<Core['appendAt']>[0]) {
    const engine = this.open();
    return engine.copies.appendAt({ partitions: checkAppendAtRequest(req) });
  }

  // ─── Producers ─────────────────────────────────────────────────────────────

  async initProducer(req: Parameters<Core['initProducer']>[0]) {
    const engine = this.open();
    const checked = checkInitProducer(req);
    if (checked.transactionalId !== null) return this.transactions.initTransactional({ ...checked, transactionalId: checked.transactionalId });
    return engine.producers.init(checked.producerId, (recordedEpoch) => decideIdempotentInit(checked, recordedEpoch));
  }

  async describeProducers(req: PartitionRef) {
    const engine = this.open();
    requirePartitionRef(req);
    const { windows, transactionStartOf } = await engine.producers.describe(req);
    return { producers: describeProducerWindows(windows, transactionStartOf) };
  }

  // ─── Consumer-group offsets ────────────────────────────────────────────────

  async commitOffsets(req: Parameters<Core['commitOffsets']>[0]) {
    const engine = this.open();
    const group = validateGroupName(req?.group);
    const offsets = checkCommittedOffsets(req.offsets);
    return engine.offsets.commit(req.fence === undefined ? { group, offsets } : { group, offsets, fence: checkFence(req.fence) });
  }

  async fetchOffsets(req: Parameters<Core['fetchOffsets']>[0]) {
    const engine = this.open();
    const group = validateGroupName(req?.group);
    return engine.offsets.fetch({ group, partitions: req.partitions === null || req.partitions === undefined ? null : requirePartitionRefs(req.partitions) });
  }

  async deleteOffsets(req: Parameters<Core['deleteOffsets']>[0]) {
    const engine = this.open();
    const group = validateGroupName(req?.group);
    return engine.offsets.delete({ group, partitions: requirePartitionRefs(req.partitions) });
  }

  async listGroups() {
    return this.open().offsets.listGroups();
  }

  /** The groups with committed offsets. */
  async groupsWithOffsets(): Promise<Set<string>> {
    return new Set((await this.listGroups()).groups.map((g) => g.group));
  }
}

import type { Core, PartitionRef } from '../core.js';
import { CoreError } from '../errors.js';
import type { Engine } from '../engine.js';
import type { KafkaTransactionCoordinator } from '../kafka-transactions/coordinator.js';
import { requireArray } from '../rules/arguments.js';
import { checkTransactionStates, checkTxnGroup, checkTxnProducer } from '../rules/kafka-transactions.js';
import { validateGroupName } from '../rules/names.js';
import { requirePartitionRefs } from '../rules/requests.js';
import { checkCommittedOffsets } from './checks.js';

/** The front's Kafka transaction calls: checked here, decided by the transaction coordinator (../kafka-transactions/coordinator.ts). */
export class KafkaTransactionCalls<E extends Engine> {
  constructor(
    private readonly open: () => E,
    private readonly transactions: KafkaTransactionCoordinator,
  ) {}

  async addPartitionsToTxn(req: Parameters<Core['addPartitionsToTxn']>[0]) {
    this.open();
    const partitions = requirePartitionRefs(req?.partitions);
    return this.transactions.addPartitions({ ...checkTxnProducer(req), partitions, ...(req.verifyOnly === true ? { verifyOnly: true } : {}) });
  }

  async addOffsetsToTxn(req: Parameters<Core['addOffsetsToTxn']>[0]) {
    this.open();
    return this.transactions.addOffsets({ ...checkTxnProducer(req), group: checkTxnGroup(req.group) });
  }

  async txnOffsetCommit(req: Parameters<Core['txnOffsetCommit']>[0]) {
    this.open();
    const who = checkTxnProducer(req);
    return this.transactions.txnOffsetCommit({ ...who, group: checkTxnGroup(req.group), offsets: checkCommittedOffsets(req.offsets), addsGroup: req.addsGroup === true });
  }

  async endTxn(req: Parameters<Core['endTxn']>[0]) {
    this.open();
    const who = checkTxnProducer(req);
    if (typeof req.commit !== 'boolean') throw new CoreError('invalid_argument', 'commit must be true or false.');
    return this.transactions.endTxn({ ...who, commit: req.commit, bumpsEpoch: req.bumpsEpoch === true });
  }

  async describeTransactions(req: { transactionalIds: string[] }) {
    const engine = this.open();
    return { transactions: await engine.kafkaTransactions.describe(requireArray<string>(req?.transactionalIds, 'transactionalIds')) };
  }

  async listTransactions(req: Parameters<Core['listTransactions']>[0]) {
    this.open();
    const states = checkTransactionStates(req?.states);
    const producerIds = requireArray<number>(req.producerIds ?? [], 'producerIds');
    return { transactions: await this.transactions.list({ states, producerIds, ...(req.minDurationMs === undefined ? {} : { minDurationMs: req.minDurationMs }) }) };
  }

  async unstableOffsets(req: { group: string; partitions: PartitionRef[] | null }) {
    this.open();
    const group = validateGroupName(req?.group);
    const partitions = req.partitions === null || req.partitions === undefined ? null : requirePartitionRefs(req.partitions);
    return { partitions: await this.transactions.unstableOffsets(group, partitions) };
  }
}

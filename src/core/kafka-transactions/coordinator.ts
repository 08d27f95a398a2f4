import type {
  AddOffsetsToTxnRequest,
  AddPartitionsToTxnRequest,
  AddPartitionsToTxnResult,
  EndTxnRequest,
  InitProducerRequest,
  InitProducerResult,
  KafkaTxnState,
  ListTransactionsRequest,
  PartitionRef,
  TxnOffsetCommitRequest,
} from '../core.js';
import type { EngineKafkaTransactions } from '../engine.js';
import { CoreError, unknownPartitionError, unknownQueueError } from '../errors.js';
import type { TxnView, TxnWrites } from './unit.js';
import {
  checkTimeout,
  decideBumpingEnd,
  decideEnd,
  decideTransactionalInit,
  endedState,
  hasExpired,
  requireAddable,
  requireCurrentProducer,
  type StoredTransaction,
} from '../rules/kafka-transactions.js';

/**
 * Kafka's transaction coordinator, run once for every engine (the rules it
 * applies are ../rules/kafka-transactions.ts). Each call is one atomic unit
 * of the engine's (`EngineKafkaTransactions.transact`, its terms in
 * ./unit.ts): the engine holds the transactional id (PostgreSQL: its
 * coordinator lease and row lock; memory: by not yielding), loads what the
 * call asked for into a `TxnView`, this decides synchronously, and the
 * engine stores the `TxnWrites` in the same unit: the transaction's state,
 * its partitions, groups and pending offsets, and at its end the markers, an
 * abort's ranges and a commit's offsets.
 */

/** The epoch a newly allocated producer id starts at. */
export const NEW_PRODUCER_EPOCH = 0;

/** Placeholder producer id in a saved transaction whose producer id the engine allocates (`newProducer`). */
const TO_ALLOCATE = -1;

export class KafkaTransactionCoordinator {
  constructor(private readonly engine: EngineKafkaTransactions) {}

  async initTransactional(req: InitProducerRequest & { transactionalId: string }): Promise<InitProducerResult> {
    const timeoutMs = checkTimeout(req.transactionTimeoutMs);
    const { answer, saved } = await this.engine.transact({ transactionalId: req.transactionalId, coordinator: true, creates: true }, ({ stored: existing }) => {
      const decision = decideTransactionalInit(existing, req);
      if (decision.kind === 'same') return { answer: { producerId: decision.producerId, producerEpoch: decision.producerEpoch }, writes: {} };
      const identity = decision.kind === 'new' ? { producerId: TO_ALLOCATE, producerEpoch: NEW_PRODUCER_EPOCH } : { producerId: decision.producerId, producerEpoch: decision.producerEpoch };
      const writes: TxnWrites = {
        newProducer: decision.kind === 'new',
        save: {
          transactionalId: req.transactionalId,
          ...identity,
          timeoutMs,
          state: 'Empty',
          startedAt: -1,
          lastProducerEpoch: decision.kind === 'bump' ? decision.lastProducerEpoch : -1,
        },
        producerEpoch: true,
      };
      // The fenced instance's open transaction is aborted under the new epoch, as Kafka's coordinator does.
      if (existing && existing.state === 'Ongoing') writes.end = { commit: false, producerId: existing.producerId, markerEpoch: identity.producerEpoch };
      return { answer: null, writes };
    });
    return answer ?? { producerId: saved!.producerId, producerEpoch: saved!.producerEpoch };
  }

  async addPartitions(req: AddPartitionsToTxnRequest): Promise<AddPartitionsToTxnResult> {
    const refs = req.partitions;
    const unit = { transactionalId: req.transactionalId, coordinator: true, partitions: refs, verify: req.verifyOnly === true };
    const { answer } = await this.engine.transact<AddPartitionsToTxnResult>(unit, (view) => {
      const txn = requireCurrentProducer(view.stored, req);
      if (req.verifyOnly === true) {
        const held = (found: TxnView['partitions'][number]) => txn.state === 'Ongoing' && 'held' in found && found.held;
        return { answer: { partitions: refs.map((r, i) => ({ queue: r.queue, partition: r.partition, error: held(view.partitions[i]!) ? null : ('invalid_txn_state' as const) })) }, writes: {} };
      }
      requireAddable(txn);
      const partitions = refs.map((r, i) => {
        const found = view.partitions[i]!;
        return { queue: r.queue, partition: r.partition, error: 'missing' in found ? found.missing : null };
      });
      if (partitions.some((p) => p.error !== null)) return { answer: { partitions }, writes: {} };
      return { answer: { partitions }, writes: { ...this.open(txn, view.now), addPartitions: true } };
    });
    return answer;
  }

  async addOffsets(req: AddOffsetsToTxnRequest): Promise<void> {
    await this.engine.transact({ transactionalId: req.transactionalId, coordinator: true, group: req.group }, (view) => {
      const txn = requireCurrentProducer(view.stored, req);
      requireAddable(txn);
      return { answer: undefined, writes: { ...this.open(txn, view.now), addGroup: true } };
    });
  }

  /** Not a coordinator call: clients send it to the group's coordinator, and it only records offsets under the id's lock. */
  async txnOffsetCommit(req: TxnOffsetCommitRequest): Promise<void> {
    const { group, offsets } = req;
    await this.engine.transact({ transactionalId: req.transactionalId, coordinator: false, partitions: offsets, group }, (view) => {
      view.partitions.forEach((found, i) => {
        if (!('missing' in found)) return;
        const o = offsets[i]!;
        throw found.missing === 'unknown_queue' ? unknownQueueError(o.queue) : unknownPartitionError(o.queue, found.partitionCount, o.partition);
      });
      const txn = requireCurrentProducer(view.stored, req);
      const joined = txn.state === 'Ongoing' && view.holdsGroup;
      const puts: TxnWrites = offsets.length === 0 ? {} : { putOffsets: offsets };
      if (joined) return { answer: undefined, writes: puts };
      if (req.addsGroup === true) {
        // KIP-890 part 2: the offsets themselves add the group (and open the transaction), without AddOffsetsToTxn.
        requireAddable(txn);
        return { answer: undefined, writes: { ...this.open(txn, view.now), addGroup: true, ...puts } };
      }
      throw new CoreError('invalid_txn_state', `Group "${group}" is not in an open transaction of "${req.transactionalId}"; call AddOffsetsToTxn (sendOffsetsToTransaction) first.`);
    });
  }

  async endTxn(req: EndTxnRequest): Promise<InitProducerResult> {
    if (req.bumpsEpoch === true) return this.endBumpingEpoch(req);
    const { answer } = await this.engine.transact({ transactionalId: req.transactionalId, coordinator: true }, (view) => {
      const txn = requireCurrentProducer(view.stored, req);
      const answer = { producerId: txn.producerId, producerEpoch: txn.producerEpoch };
      if (decideEnd(txn, req.commit) === 'retry') return { answer, writes: {} };
      // The start time stays: Kafka's DescribeTransactions shows the last transaction's in CompleteCommit and CompleteAbort.
      return { answer, writes: { end: { commit: req.commit, producerId: txn.producerId, markerEpoch: txn.producerEpoch }, save: { ...txn, state: endedState(req.commit) } } };
    });
    return answer;
  }

  /** EndTxn v5+ (transaction.version 2): the end moves the producer to its next epoch (../rules/kafka-transactions.ts decideBumpingEnd). */
  private async endBumpingEpoch(req: EndTxnRequest): Promise<InitProducerResult> {
    const { answer, saved } = await this.engine.transact<InitProducerResult | null>({ transactionalId: req.transactionalId, coordinator: true }, ({ stored }) => {
      const decision = decideBumpingEnd(stored, req);
      const txn = stored!;
      if (decision.kind === 'retry') return { answer: { producerId: txn.producerId, producerEpoch: txn.producerEpoch }, writes: {} };
      const newProducer = decision.nextEpoch === 'new_producer';
      const producerEpoch = newProducer ? NEW_PRODUCER_EPOCH : (decision.nextEpoch as number);
      const writes: TxnWrites = {
        newProducer,
        save: { ...txn, producerId: newProducer ? TO_ALLOCATE : txn.producerId, producerEpoch, state: endedState(req.commit), lastProducerEpoch: newProducer ? -1 : txn.producerEpoch },
        producerEpoch: true,
      };
      // The markers carry the epoch after the bump, so the ended transaction's late batches are fenced.
      if (decision.markers) writes.end = { commit: req.commit, producerId: txn.producerId, markerEpoch: txn.producerEpoch + 1 };
      return { answer: null, writes };
    });
    return answer ?? { producerId: saved!.producerId, producerEpoch: saved!.producerEpoch };
  }

  async list(req: ListTransactionsRequest): Promise<{ transactionalId: string; producerId: number; state: KafkaTxnState }[]> {
    const minDuration = req.minDurationMs ?? -1;
    const { now, transactions } = await this.engine.list(req);
    return transactions
      .filter((t) => minDuration < 0 || (t.startedAt >= 0 && now - t.startedAt > minDuration))
      .map((t) => ({ transactionalId: t.transactionalId, producerId: t.producerId, state: t.state }));
  }

  async unstableOffsets(group: string, partitions: PartitionRef[] | null): Promise<PartitionRef[]> {
    const pending = await this.engine.pendingOffsets(group);
    if (partitions === null) return pending;
    return partitions.filter((p) => pending.some((q) => q.queue === p.queue && q.partition === p.partition)).map((p) => ({ queue: p.queue, partition: p.partition }));
  }

  abortExpired(): Promise<number> {
    return abortExpiredTransactions(this.engine);
  }

  /** A transaction opens when none is: a clean set of partitions, groups and offsets, and its start time. */
  private open(txn: StoredTransaction, now: number): TxnWrites {
    if (txn.state === 'Ongoing') return {};
    return { clear: true, save: { ...txn, state: 'Ongoing', startedAt: now } };
  }
}

/**
 * Aborts the transactions open past their timeout, each in its own atomic
 * unit (another core may have ended it meanwhile: its state is looked at
 * again there). Kafka bumps the epoch when it aborts a timed-out
 * transaction, so the abandoned producer is fenced (a transaction version
 * 2 producer's abort with its old epoch is answered the new one, as Kafka
 * does, so it goes on). Answers how many. The
 * engines run it on their maintenance timers.
 */
export async function abortExpiredTransactions(engine: EngineKafkaTransactions): Promise<number> {
  let aborted = 0;
  for (const transactionalId of await engine.expired()) {
    const { answer } = await engine.transact({ transactionalId, coordinator: false }, ({ stored: txn, now }) => {
      if (!txn || !hasExpired(txn, now)) return { answer: false, writes: {} };
      const epoch = txn.producerEpoch + 1;
      return {
        answer: true,
        // The epoch before the bump is kept: the producer's own abort with it (EndTxn v5) is then a retry of this one, as Kafka answers it.
        writes: { end: { commit: false, producerId: txn.producerId, markerEpoch: epoch }, save: { ...txn, producerEpoch: epoch, state: 'CompleteAbort', lastProducerEpoch: txn.producerEpoch }, producerEpoch: true },
      };
    });
    if (answer) aborted++;
  }
  return aborted;
}

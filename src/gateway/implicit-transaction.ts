import { ErrorCode } from '../../protocol/error-codes.js';
import { BatchAttr, BatchPos } from '../../protocol/records/batch-header.js';
import type { AppendPartition } from '../core/index.js';
import type { HandlerContext } from './handler.js';
import { coreErrorCode, COORDINATOR_TRANSIENT, kafkaErrorOf } from './kafka-errors.js';

/**
 * Transaction version 2 (KIP-890 part 2): a producer that speaks Produce v12
 * sends no AddPartitionsToTxn; the partitions its transactional batches go to
 * join its transaction here, before the append, as Kafka's broker adds them
 * through its transaction coordinator. The core's append then finds them in
 * the transaction as it would after AddPartitionsToTxn.
 *
 * Refusals, as Kafka's broker answers them to Produce: a fenced producer
 * INVALID_PRODUCER_EPOCH, an unknown producer id INVALID_PRODUCER_ID_MAPPING,
 * a transaction ending INVALID_TXN_STATE, an unknown partition its own code;
 * a coordinator that cannot answer now TRANSACTION_ABORTABLE (v11+ clients
 * abort the transaction and go on, where an older code would have them retry
 * into a transaction the coordinator may no longer hold).
 */

export interface ProduceRefusal {
  errorCode: number;
  errorMessage: string;
}

/** The producer id and epoch of a transactional batch, or null for any other records. */
function transactionalProducer(records: Buffer): { producerId: number; producerEpoch: number } | null {
  if (records.length < BatchPos.ProducerEpoch + 2 || records.readInt8(BatchPos.Magic) !== 2) return null;
  if ((records.readInt16BE(BatchPos.Attributes) & BatchAttr.Transactional) === 0) return null;
  return { producerId: Number(records.readBigInt64BE(BatchPos.ProducerId)), producerEpoch: records.readInt16BE(BatchPos.ProducerEpoch) };
}

/**
 * Adds the partitions of `appends` that carry transactional batches to the
 * transaction of `transactionalId`. Answers, per append, the refusal that
 * replaces its append, or null to go on and append it. Batches of another
 * producer than the first transactional one are left to the append's own
 * check, which refuses them.
 */
export async function addProducedPartitions(ctx: HandlerContext, transactionalId: string, appends: readonly AppendPartition[]): Promise<(ProduceRefusal | null)[]> {
  const refusals: (ProduceRefusal | null)[] = appends.map(() => null);
  const producers = appends.map((a) => transactionalProducer(a.records));
  const first = producers.find((p) => p !== null);
  if (!first) return refusals;
  let pending = appends.flatMap((a, i) => (producers[i]?.producerId === first.producerId && producers[i]?.producerEpoch === first.producerEpoch ? [i] : []));
  // At most two rounds: partitions the core does not know are refused, and the others added without them.
  for (let round = 0; round < 2 && pending.length > 0; round++) {
    const partitions = pending.map((i) => ({ queue: appends[i]!.queue, partition: appends[i]!.partition }));
    try {
      const result = await ctx.core.addPartitionsToTxn({ transactionalId, ...first, partitions });
      const missing = pending.filter((_, k) => result.partitions[k]!.error !== null);
      if (missing.length === 0) return refusals;
      missing.forEach((i) => {
        const error = result.partitions[pending.indexOf(i)]!.error!;
        refusals[i] = { errorCode: coreErrorCode(error), errorMessage: `Partition ${appends[i]!.queue}-${appends[i]!.partition} cannot join transaction "${transactionalId}": ${error.replace(/_/g, ' ')}.` };
      });
      pending = pending.filter((i) => refusals[i] === null);
    } catch (e) {
      const refusal = refusalOf(e, ctx.header.apiVersion);
      for (const i of pending) refusals[i] = refusal;
      return refusals;
    }
  }
  for (const i of pending) refusals[i] ??= { errorCode: ErrorCode.INVALID_TXN_STATE, errorMessage: `The partitions could not join transaction "${transactionalId}"; retry the transaction.` };
  return refusals;
}

function refusalOf(e: unknown, version: number): ProduceRefusal {
  const { errorCode, errorMessage } = kafkaErrorOf(e, COORDINATOR_TRANSIENT);
  if (errorCode === ErrorCode.PRODUCER_FENCED) return { errorCode: ErrorCode.INVALID_PRODUCER_EPOCH, errorMessage };
  if (errorCode === ErrorCode.COORDINATOR_NOT_AVAILABLE || errorCode === ErrorCode.NOT_COORDINATOR) {
    return { errorCode: version >= 11 ? ErrorCode.TRANSACTION_ABORTABLE : ErrorCode.NOT_ENOUGH_REPLICAS, errorMessage: `${errorMessage} Abort the transaction and begin it again.` };
  }
  return { errorCode, errorMessage };
}

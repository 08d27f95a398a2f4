import type {
  InitProducerRequest,
  InitProducerResult,
  PartitionRef,
  ProducerState,
} from '../../core.js';
import { MAX_PRODUCER_EPOCH } from '../../rules/init-producer.js';
import { lastSequenceInWindow, type RetainedBatch } from '../../rules/producer-window.js';
import { type PostgresStore } from './store.js';

/** Producer ids and epochs, and what each partition keeps of its producers (sql/producers.sql). */
export class PostgresProducers {
  constructor(private readonly store: PostgresStore) {}

  async init(req: InitProducerRequest): Promise<InitProducerResult> {
    const { producerId, producerEpoch } = req;
    return this.store.db.transaction(async (tx) => {
      const fresh = async (): Promise<InitProducerResult> => {
        const row = (await tx.one<{ producer_id: number; producer_epoch: number }>('new-producer'))!;
        return { producerId: row.producer_id, producerEpoch: row.producer_epoch };
      };
      const bump = async (identity: InitProducerResult): Promise<InitProducerResult> =>
        identity.producerEpoch + 1 >= MAX_PRODUCER_EPOCH ? fresh() : { producerId: identity.producerId, producerEpoch: identity.producerEpoch + 1 };
      let identity: InitProducerResult;
      const current = producerId >= 0 ? await tx.one<{ producer_epoch: number }>('producer-epoch', [producerId]) : null;
      // KIP-360: a producer bumping its own epoch after a sequence error keeps its id.
      identity = current && current.producer_epoch === producerEpoch ? await bump({ producerId, producerEpoch }) : await fresh();
      await tx.run('set-producer-epoch', [identity.producerId, identity.producerEpoch]);
      return identity;
    });
  }

  async describe(req: PartitionRef): Promise<{ producers: ProducerState[] }> {
    const row = await this.store.partition(req);
    const rows = await this.store.db.statements.run<{ producer_id: number; producer_epoch: number; retained: RetainedBatch[]; last_timestamp: number }>('partition-producers', [row.id]);
    const openTransactions = await this.store.kafkaTxns.openFirstOffsets(row.id);
    return {
      producers: rows.map((r) => ({
        producerId: r.producer_id,
        producerEpoch: r.producer_epoch,
        lastSequence: lastSequenceInWindow({ producerId: r.producer_id, producerEpoch: r.producer_epoch, batches: r.retained, lastTimestamp: r.last_timestamp }),
        lastTimestamp: r.last_timestamp,
        coordinatorEpoch: -1,
        currentTxnStartOffset: openTransactions.get(r.producer_id) ?? -1,
      })),
    };
  }
}

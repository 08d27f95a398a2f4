import type { InitProducerResult, PartitionRef } from '../../core.js';
import type { EngineProducers } from '../../engine.js';
import type { IdempotentInit } from '../../rules/init-producer.js';
import type { ProducerWindow, RetainedBatch } from '../../rules/producer-window.js';
import { type PostgresStore } from './store.js';

/** Producer ids and epochs, and what each partition keeps of its producers (sql/producers.sql; the core decides: ../../rules/init-producer.ts). */
export class PostgresProducers implements EngineProducers {
  constructor(private readonly store: PostgresStore) {}

  /** One transaction: the named id's epoch, locked; then a new id, or the bumped epoch recorded. */
  async init(producerId: number, decide: (recordedEpoch: number | null) => IdempotentInit): Promise<InitProducerResult> {
    return this.store.db.transaction(async (tx) => {
      const recorded = producerId >= 0 ? await tx.one<{ producer_epoch: number }>('producer-epoch', [producerId]) : null;
      const decision = decide(recorded ? recorded.producer_epoch : null);
      if (decision.kind === 'new') {
        const row = (await tx.one<{ producer_id: number; producer_epoch: number }>('new-producer'))!;
        return { producerId: row.producer_id, producerEpoch: row.producer_epoch };
      }
      await tx.run('set-producer-epoch', [decision.producerId, decision.producerEpoch]);
      return { producerId: decision.producerId, producerEpoch: decision.producerEpoch };
    });
  }

  async describe(req: PartitionRef): Promise<{ windows: ProducerWindow[]; transactionStartOf: (producerId: number) => number }> {
    const row = await this.store.partition(req);
    const rows = await this.store.db.statements.run<{ producer_id: number; producer_epoch: number; retained: RetainedBatch[]; last_timestamp: number }>('partition-producers', [row.id]);
    const openTransactions = await this.store.kafkaTxns.openFirstOffsets(row.id);
    return {
      windows: rows.map((r) => ({ producerId: r.producer_id, producerEpoch: r.producer_epoch, batches: r.retained, lastTimestamp: r.last_timestamp })),
      transactionStartOf: (producerId) => openTransactions.get(producerId) ?? -1,
    };
  }
}

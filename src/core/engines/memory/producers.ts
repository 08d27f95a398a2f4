import type { InitProducerResult, PartitionRef } from '../../core.js';
import type { EngineProducers } from '../../engine.js';
import type { IdempotentInit } from '../../rules/init-producer.js';
import type { ProducerWindow } from '../../rules/producer-window.js';
import type { MemoryStore } from './store.js';

/** Producer ids and epochs, and what each partition keeps of its producers (the core decides: ../../rules/init-producer.ts). */
export class MemoryProducers implements EngineProducers {
  constructor(private readonly store: MemoryStore) {}

  init(producerId: number, decide: (recordedEpoch: number | null) => IdempotentInit): InitProducerResult {
    const decision = decide(producerId >= 0 ? this.store.producerEpochs.get(producerId) ?? null : null);
    const identity = decision.kind === 'new' ? this.store.newProducer() : { producerId: decision.producerId, producerEpoch: decision.producerEpoch };
    this.store.producerEpochs.set(identity.producerId, identity.producerEpoch);
    return identity;
  }

  describe(req: PartitionRef): { windows: ProducerWindow[]; transactionStartOf: (producerId: number) => number } {
    const { partition } = this.store.partition(req);
    return { windows: [...partition.producers.values()], transactionStartOf: (producerId) => this.store.kafkaTxns.openFirstOffset(partition, producerId) };
  }
}

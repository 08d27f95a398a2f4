import type {
  InitProducerRequest,
  InitProducerResult,
  PartitionRef,
  ProducerState,
} from '../../core.js';
import { MAX_PRODUCER_EPOCH } from '../../rules/init-producer.js';
import { lastSequenceInWindow } from '../../rules/producer-window.js';
import type { MemoryStore, ProducerIdentity } from './store.js';

/** Producer ids and epochs, and what each partition keeps of its producers. */
export class MemoryProducers {
  constructor(private readonly store: MemoryStore) {}

  async init(req: InitProducerRequest): Promise<InitProducerResult> {
    const { producerId, producerEpoch } = req;
    const bump = (identity: ProducerIdentity): ProducerIdentity =>
      identity.producerEpoch + 1 >= MAX_PRODUCER_EPOCH ? this.store.newProducer() : { producerId: identity.producerId, producerEpoch: identity.producerEpoch + 1 };
    let identity: ProducerIdentity;
    if (producerId >= 0 && this.store.producerEpochs.get(producerId) === producerEpoch) {
      // KIP-360: a producer bumping its own epoch after a sequence error keeps its id.
      identity = bump({ producerId, producerEpoch });
    } else {
      identity = this.store.newProducer();
    }
    this.store.producerEpochs.set(identity.producerId, identity.producerEpoch);
    return identity;
  }


  async describe(req: PartitionRef): Promise<{ producers: ProducerState[] }> {
    const { partition } = this.store.partition(req);
    return {
      producers: [...partition.producers.values()].map((w) => ({
        producerId: w.producerId,
        producerEpoch: w.producerEpoch,
        lastSequence: lastSequenceInWindow(w),
        lastTimestamp: w.lastTimestamp,
        coordinatorEpoch: -1,
        currentTxnStartOffset: this.store.kafkaTxns.openFirstOffset(partition, w.producerId),
      })),
    };
  }
}

/**
 * The APIs whose effects a client orders by sending them in turn on one
 * connection, without waiting for each answer: librdkafka sends EndTxn right
 * behind an AddPartitionsToTxn still in flight, and async OffsetCommits one
 * behind another. Kafka handles a connection's requests one at a time; run
 * side by side here, the core could take the EndTxn first (answering
 * INVALID_TXN_STATE to an abort, seen in the fault campaign) or store the
 * older commit last. Everything else still runs concurrently.
 */
import { ApiKey } from '../../protocol/api-keys.js';

const ORDERED_APIS: ReadonlySet<number> = new Set([ApiKey.OffsetCommit, ApiKey.InitProducerId, ApiKey.AddPartitionsToTxn, ApiKey.AddOffsetsToTxn, ApiKey.EndTxn, ApiKey.TxnOffsetCommit]);

/** One connection's ordered requests: each starts when every earlier one has finished, successfully or not. */
export class OrderedRequests {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(apiKey: number, handle: () => Promise<T>): Promise<T> {
    if (!ORDERED_APIS.has(apiKey)) return handle();
    const run = this.tail.then(handle);
    this.tail = run.catch(() => {});
    return run;
  }
}

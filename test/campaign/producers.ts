/**
 * The campaign's writers over Kafka, each recording in the history what its
 * client was told about every record:
 *
 * - librdkafka idempotent producers (acks=all): chunks of keyed records, a
 *   delivery report without error is an acknowledgement; after a chunk with
 *   errors the producer is replaced (a new stream: Kafka orders a key per
 *   producer, not across producers);
 * - the Java client's idempotent producer (test/java-client's driver, one
 *   JVM per chunk, each chunk a stream of its own);
 * - a librdkafka transactional producer: transactions of a few keyed records
 *   over the partitions, every fifth aborted on purpose; a transaction is
 *   committed when commitTransaction returned, aborted when abortTransaction
 *   did, and uncertain otherwise (the producer is then replaced; its
 *   InitProducerId aborts what was left open).
 *
 * A key always goes to partition `key index % partitions`.
 */
import type { Producer } from '@confluentinc/kafka-javascript';
import { sleep, within } from '../support/eventually.js';
import { javaProduce } from '../support/java-client.js';
import { connectProducer, disconnect, produceAll } from '../support/rdkafka.js';
import { campaignValue, type CampaignHistory } from './history.js';

export interface WriterOptions {
  bootstrap: string;
  topic: string;
  partitions: number;
  /** Records this writer sends in all. */
  records: number;
  chunk: number;
  /** Keys it spreads them over. */
  keys: number;
  /** Checked between chunks: true ends the writer early (the campaign's time is up). */
  stopped(): boolean;
  history: CampaignHistory;
  onError(line: string): void;
  /** Keeps a client's own log (librdkafka's) for the post-mortem of a failure. */
  keepClientLog?(name: string, text: string): void;
}

/** Numbered keyed values for one stream: the next `count`, keys in turn. */
class KeyedSequence {
  private readonly next = new Map<string, number>();
  private turn = 0;
  constructor(
    private readonly prefix: string,
    private readonly keys: number,
    private readonly partitions: number,
  ) {}

  take(stream: string, count: number): { key: string; partition: number; value: string }[] {
    const out = [];
    for (let i = 0; i < count; i++) {
      const index = this.turn++ % this.keys;
      const key = `${this.prefix}${index}`;
      const seq = this.next.get(key) ?? 0;
      this.next.set(key, seq + 1);
      out.push({ key, partition: index % this.partitions, value: campaignValue(stream, key, seq) });
    }
    return out;
  }
}

const PRODUCER_SETTINGS = {
  'enable.idempotence': true,
  'acks': 'all',
  'linger.ms': 5,
  'message.timeout.ms': 60_000,
  'metadata.max.age.ms': 2_000,
  'topic.metadata.refresh.interval.ms': 1_000,
};

export async function runRdkafkaIdempotent(o: WriterOptions): Promise<void> {
  let instance = 0;
  let producer: Producer | null = null;
  let sent = 0;
  while (sent < o.records && !o.stopped()) {
    const stream = `rd${instance}`;
    // Each producer instance is its own stream, with sequence numbers of its own per key.
    const sequence = new KeyedSequence('k', o.keys, o.partitions);
    try {
      producer = await within(connectProducer(o.bootstrap, PRODUCER_SETTINGS, o.topic), 60_000, 'the idempotent producer to connect');
      o.history.orderedStreams.push(stream);
      while (sent < o.records && !o.stopped()) {
        const batch = sequence.take(stream, Math.min(o.chunk, o.records - sent));
        const records = batch.map((r) => ({ partition: r.partition, key: r.key, value: r.value, headers: [], timestamp: Date.now() }));
        sent += batch.length;
        let failed = false;
        try {
          const deliveries = await produceAll(producer, o.topic, records, { timeoutMs: 90_000 });
          for (const d of deliveries) o.history.writes.push({ topic: o.topic, value: d.record.value, outcome: d.error ? 'uncertain' : 'acknowledged' });
          failed = deliveries.some((d) => d.error);
          if (failed) o.onError(`${stream}: ${deliveries.filter((d) => d.error).length} delivery errors, e.g. ${deliveries.find((d) => d.error)!.error!.message}`);
        } catch (e) {
          for (const r of batch) o.history.writes.push({ topic: o.topic, value: r.value, outcome: 'uncertain' });
          o.onError(`${stream}: ${(e as Error).message}`);
          failed = true;
        }
        if (failed) break;
      }
    } catch (e) {
      o.onError(`${stream}: ${(e as Error).message}`);
      await sleep(1_000);
    } finally {
      if (producer) await within(disconnect(producer), 30_000, 'the idempotent producer to disconnect').catch(() => {});
      producer = null;
      instance += 1;
    }
  }
}

export async function runJavaIdempotent(o: WriterOptions): Promise<void> {
  let sent = 0;
  for (let chunk = 0; sent < o.records && !o.stopped(); chunk++) {
    const stream = `java${chunk}`;
    const batch = new KeyedSequence('j', o.keys, o.partitions).take(stream, Math.min(o.chunk, o.records - sent));
    sent += batch.length;
    o.history.orderedStreams.push(stream);
    const outcomes = new Map<number, 'acknowledged' | 'uncertain'>();
    try {
      const result = await javaProduce(o.bootstrap, o.topic, batch, {
        'acks': 'all',
        'enable.idempotence': true,
        'delivery.timeout.ms': 90_000,
        'request.timeout.ms': 10_000,
        'metadata.max.age.ms': 2_000,
        'reconnect.backoff.max.ms': 500,
      });
      for (const s of result.sent) outcomes.set(s.index, 'acknowledged');
      if (result.failed.length > 0) o.onError(`${stream}: ${result.failed.length} failed, e.g. ${result.failed[0]!.error.type}: ${result.failed[0]!.error.message}`);
    } catch (e) {
      o.onError(`${stream}: ${(e as Error).message.split('\n')[0]}`);
    }
    batch.forEach((r, i) => o.history.writes.push({ topic: o.topic, value: r.value, outcome: outcomes.get(i) ?? 'uncertain' }));
  }
}

function promised(call: (cb: (err: { message: string } | null | undefined) => void) => void, what: string): Promise<void> {
  return within(
    new Promise((resolve, reject) => call((err) => (err ? reject(new Error(`${what}: ${err.message}`)) : resolve()))),
    60_000,
    `${what} to call back`,
  );
}

/** Transactions of `chunk` records; every fifth aborted on purpose. */
export async function runTransactional(o: WriterOptions & { transactionalId: string }): Promise<void> {
  let sent = 0;
  let number = 0;
  for (let instance = 0; sent < o.records && !o.stopped(); instance++) {
    const stream = `tx${instance}`;
    const sequence = new KeyedSequence('t', o.keys, o.partitions);
    let producer: Producer | null = null;
    // librdkafka's transaction log (debug=eos), the last lines kept for the report of a failed transaction.
    const eosLog: string[] = [];
    let failed = false;
    try {
      producer = await within(
        connectProducer(o.bootstrap, { 'transactional.id': o.transactionalId, 'transaction.timeout.ms': 60_000, 'linger.ms': 5, 'message.timeout.ms': 30_000, 'debug': 'eos', 'log_level': 7 }, o.topic),
        60_000,
        'the transactional producer to connect',
      );
      producer.on('event.log', (line: { message: string }) => {
        eosLog.push(`${new Date().toISOString().slice(11, 23)} ${line.message}`);
        if (eosLog.length > 300) eosLog.splice(0, 100);
      });
      await promised((cb) => producer!.initTransactions(30_000, cb), 'initTransactions');
      o.history.orderedStreams.push(stream);
      while (sent < o.records && !o.stopped()) {
        const id = `${stream}:${number++}`;
        const abort = number % 5 === 0;
        const batch = sequence.take(stream, Math.min(o.chunk, o.records - sent));
        const transaction = { id, topic: o.topic, values: batch.map((r) => r.value), outcome: 'uncertain' as 'committed' | 'aborted' | 'uncertain' };
        o.history.transactions.push(transaction);
        if (!abort) sent += batch.length;
        await promised((cb) => producer!.beginTransaction(cb), 'beginTransaction');
        for (const r of batch) producer.produce(o.topic, r.partition, Buffer.from(r.value), Buffer.from(r.key), Date.now());
        if (abort) {
          await promised((cb) => producer!.abortTransaction(30_000, cb), 'abortTransaction');
          transaction.outcome = 'aborted';
        } else {
          await promised((cb) => producer!.commitTransaction(30_000, cb), 'commitTransaction');
          transaction.outcome = 'committed';
        }
      }
    } catch (e) {
      o.onError(`${stream}: ${(e as Error).message}`);
      failed = true;
      await sleep(500);
    } finally {
      if (producer) await within(new Promise<void>((resolve) => producer!.disconnect(0, () => resolve())), 20_000, 'the transactional producer to disconnect').catch(() => {});
      // Kept after the disconnect: librdkafka's log events trail its callbacks, and the line naming the failure comes last.
      if (failed) o.keepClientLog?.(`${stream}-eos.log`, eosLog.join('\n'));
    }
  }
}

/**
 * A consume-transform-produce processor as exactly-once applications write
 * it with librdkafka: a read_committed consumer on the input topic, a
 * transactional producer, and per transaction the transformed records of up
 * to `commitEvery` input records plus the consumer's next offsets
 * (sendOffsetsToTransaction), committed together.
 *
 * An instance starts the way a restarted application does: InitProducerId
 * for its transactional id first (fencing any previous instance and aborting
 * its open transaction), then the group's committed offsets (asked with
 * require_stable, so a commit still being finished is waited for), then the
 * partitions assigned from there. Any error ends the instance; `run` starts a
 * new one until the input is consumed to its end. `abandon()` makes the
 * current instance stop where it is, leaving its transaction open, as a
 * crashed process would: the next instance's InitProducerId aborts it.
 *
 * An instance also ends, as a supervised application's would, when a client
 * call has not called back within 45 s (every call is given 30 s) or when it
 * has read nothing for 20 s short of the input's end. librdkafka (2.15.1
 * here) stalls that way when a group coordinator dies:
 * sendOffsetsToTransaction never checks its timeout (librdkafka issue 5456)
 * and waits for ever on a coordinator that left Metadata (issue 5511). Seen
 * against Apache Kafka's brokers (test/differential/cluster.test.ts) as
 * against the gateways; a fresh instance carries on from the committed
 * offsets. Each such ending is kept in `endings` with the phase it stalled
 * in, so a caller reports it.
 */
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type { KafkaConsumer, LibrdKafkaError, Message, Producer, TopicPartitionOffset } from '@confluentinc/kafka-javascript';
import { sleep, within } from './eventually.js';
import { connectConsumer, connectProducer } from './rdkafka.js';

const { CODES } = KafkaJavascript;
const OFFSET_BEGINNING = -2;

export interface ProcessorOptions {
  bootstrap: string;
  input: string;
  output: string;
  partitions: number[];
  group: string;
  transactionalId: string;
  /** Input records per transaction, at most. */
  commitEvery: number;
  /** The output value for an input value (same partition, same key). */
  transform(value: string): string;
  /** Where the input ends, per partition: the processor is done when the group's offsets reach it. */
  inputEnd: Map<number, number>;
  /** Called after every committed transaction with the records committed so far (all instances). */
  onCommitted?(total: number): void;
}

export interface ProcessorRun {
  /** Instances started (1 + restarts). */
  instances: number;
  /** Transactions committed, over all instances. */
  transactions: number;
  /** Why each earlier instance ended. */
  endings: string[];
}

function promised(call: (cb: (err: LibrdKafkaError | null | undefined) => void) => void, what: string): Promise<void> {
  return new Promise((resolve, reject) => call((err) => (err ? reject(new Error(`${what}: ${err.message} (code ${err.code})`)) : resolve())));
}

export class TransactionalProcessor {
  private committedRecords = 0;
  private transactions = 0;
  private instances = 0;
  private readonly endings: string[] = [];
  private current: { abandoned: boolean } | null = null;
  private readonly zombies: Promise<void>[] = [];
  /** When run() gives up, and whether stop() was called: an instance checks both between batches. */
  private deadline = Infinity;
  private stopped = false;
  /** What the current instance is doing, and since when: failure messages say where it stopped. */
  private phase = 'not started';
  private phaseSince = Date.now();

  constructor(private readonly options: ProcessorOptions) {}

  /** Leaves the running instance where it is (its transaction open) and starts a new one. */
  abandon(): void {
    if (this.current) this.current.abandoned = true;
  }

  /** "instance 2 in commitTransaction for 3.1 s; 1200 records committed in 24 transactions; ended before: ..." */
  describe(): string {
    const endings = this.endings.length ? `; ended before: ${this.endings.slice(-3).join(' | ')}` : '';
    return `processor instance ${this.instances} in ${this.phase} for ${((Date.now() - this.phaseSince) / 1000).toFixed(1)} s; ${this.committedRecords} records committed in ${this.transactions} transactions${endings}`;
  }

  /** Ends the run where it is (the caller gave up on it): the current instance stops at its next batch. */
  stop(): void {
    this.stopped = true;
  }

  /** Runs instances until the input is processed to its end, or `deadline` passes, or stop() is called. */
  async run(deadlineMs: number): Promise<ProcessorRun> {
    this.deadline = Date.now() + deadlineMs;
    for (;;) {
      if (this.stopped || Date.now() > this.deadline) {
        throw new Error(`the processor had not processed its input after ${deadlineMs} ms${this.stopped ? ' (stopped)' : ''} (${this.committedRecords} records committed by ${this.instances} instances; endings: ${this.endings.join(' | ')})`);
      }
      const state = { abandoned: false };
      this.current = state;
      this.instances += 1;
      const done = await this.instance(state).catch((e: Error) => {
        this.endings.push(e.message);
        return false;
      });
      if (done) break;
      if (!state.abandoned) await sleep(200);
    }
    await Promise.all(this.zombies);
    return { instances: this.instances, transactions: this.transactions, endings: this.endings };
  }

  /** One instance's life: true once the input is consumed to its end. */
  private async instance(state: { abandoned: boolean }): Promise<boolean> {
    const o = this.options;
    let producer: Producer | null = null;
    let consumer: KafkaConsumer | null = null;
    const close = async () => {
      await Promise.allSettled([producer && disconnectQuickly(producer), consumer && disconnectQuickly(consumer)]);
    };
    // One client call, with the phase noted; a call that never calls back ends the instance.
    const step = <T>(phase: string, call: () => Promise<T>): Promise<T> => {
      this.phase = phase;
      this.phaseSince = Date.now();
      return within(call(), 45_000, `${phase} did not call back`);
    };
    try {
      producer = await step('connecting the producer', () => connectProducer(o.bootstrap, {
        'transactional.id': o.transactionalId,
        'transaction.timeout.ms': 60_000,
        'linger.ms': 5,
        'message.timeout.ms': 30_000,
        'queue.buffering.max.messages': Math.max(100_000, o.commitEvery * 2),
      }, o.output));
      await step('initTransactions', () => promised((cb) => producer!.initTransactions(30_000, cb), 'initTransactions'));
      consumer = await step('connecting the consumer', () => connectConsumer(o.bootstrap, {
        'group.id': o.group,
        'isolation.level': 'read_committed',
        'enable.auto.commit': false,
        'enable.partition.eof': false,
        'auto.offset.reset': 'earliest',
      }, o.input));
      const positions = await step('reading committed offsets', () => committedOffsets(consumer!, o.input, o.partitions));
      if (reached(positions, o.inputEnd)) return true;
      consumer.assign(o.partitions.map((partition) => ({ topic: o.input, partition, offset: positions.get(partition) ?? OFFSET_BEGINNING })));
      let lastRead = Date.now();

      for (;;) {
        // An instance waiting for input that never comes (the producer failed) must not outlive the run.
        if (this.stopped || Date.now() > this.deadline) throw new Error('the run ended');
        if (state.abandoned) {
          // A crash: the clients go without a word and the open transaction stays for the next instance to abort.
          this.zombies.push(close());
          producer = null;
          consumer = null;
          throw new Error('abandoned mid-stream');
        }
        const messages = await step('consuming', () => consume(consumer!, o.commitEvery));
        if (messages.length === 0) {
          if (Date.now() - lastRead > 20_000) {
            throw new Error(`read nothing for 20 s at positions ${o.partitions.map((p) => `${p}:${positions.get(p) ?? 'start'}`).join(' ')}`);
          }
          continue;
        }
        lastRead = Date.now();
        await step('beginTransaction', () => promised((cb) => producer!.beginTransaction(cb), 'beginTransaction'));
        const next = new Map<number, number>();
        for (const m of messages) {
          producer.produce(o.output, m.partition, Buffer.from(o.transform(m.value!.toString())), m.key ?? null, m.timestamp);
          next.set(m.partition, m.offset + 1);
        }
        const offsets: TopicPartitionOffset[] = [...next].map(([partition, offset]) => ({ topic: o.input, partition, offset }));
        if (state.abandoned) continue;
        await step('sendOffsetsToTransaction', () => promised((cb) => producer!.sendOffsetsToTransaction(offsets, consumer!, 30_000, cb), 'sendOffsetsToTransaction'));
        if (state.abandoned) continue;
        await step('commitTransaction', () => promised((cb) => producer!.commitTransaction(30_000, cb), 'commitTransaction'));
        this.transactions += 1;
        this.committedRecords += messages.length;
        for (const [p, offset] of next) positions.set(p, offset);
        o.onCommitted?.(this.committedRecords);
        if (reached(positions, o.inputEnd)) return true;
      }
    } finally {
      await close();
    }
  }
}

function reached(positions: Map<number, number>, end: Map<number, number>): boolean {
  return [...end].every(([p, offset]) => (positions.get(p) ?? 0) >= offset);
}

/** The group's committed offset per partition (absent where none is committed). */
export function committedOffsets(consumer: KafkaConsumer, topic: string, partitions: number[]): Promise<Map<number, number>> {
  return new Promise((resolve, reject) =>
    consumer.committed(
      partitions.map((partition) => ({ topic, partition })),
      30_000,
      (err, found) => {
        if (err) return reject(new Error(`committed offsets of ${topic}: ${err.message} (code ${err.code})`));
        resolve(new Map(found.filter((t) => t.offset >= 0).map((t) => [t.partition, t.offset])));
      },
    ),
  );
}

/** Up to `max` records, whatever has arrived within a second. */
function consume(consumer: KafkaConsumer, max: number): Promise<Message[]> {
  return new Promise((resolve, reject) =>
    consumer.consume(max, (err, messages) => {
      if (err && err.code !== CODES.ERRORS.ERR__PARTITION_EOF && err.code !== CODES.ERRORS.ERR__TIMED_OUT) return reject(new Error(`consume: ${err.message} (code ${err.code})`));
      resolve(messages ?? []);
    }),
  );
}

/** Disconnects without waiting for a flush: an instance that ends keeps nothing worth sending. */
function disconnectQuickly(client: Producer | KafkaConsumer): Promise<void> {
  return new Promise((resolve) => {
    if (!client.isConnected()) return resolve();
    const timer = setTimeout(resolve, 15_000);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    if ('flush' in client) (client as Producer).disconnect(0, done);
    else client.disconnect(done);
  });
}

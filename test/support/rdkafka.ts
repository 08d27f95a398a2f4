/**
 * librdkafka (through @confluentinc/kafka-javascript's node-rdkafka-style API)
 * as the suites drive it: a producer that sends a list of records and waits
 * for every delivery report, a reader that assigns partitions (no consumer
 * group: that comes with a later issue) and reads until it has what the test
 * expects, and the AdminClient.
 */
import KafkaJavascript from '@confluentinc/kafka-javascript';
import type {
  DeliveryReport,
  IAdminClient,
  KafkaConsumer as KafkaConsumerType,
  LibrdKafkaError,
  Message,
  MessageHeader,
  Producer as ProducerType,
  ProducerGlobalConfig,
  ConsumerGlobalConfig,
  ConsumerTopicConfig,
} from '@confluentinc/kafka-javascript';
import type { Header, ReadRecord, SentRecord } from './records.js';
import { sleep, waitFor } from './eventually.js';

const { Producer, KafkaConsumer, AdminClient, CODES } = KafkaJavascript;

/** librdkafka's "local queue full": wait for deliveries, then produce again. */
const QUEUE_FULL = CODES.ERRORS.ERR__QUEUE_FULL;

export interface Delivery {
  record: SentRecord;
  error: LibrdKafkaError | null;
  partition: number;
  offset: number;
}

export type ProducerConfig = Partial<ProducerGlobalConfig> & Record<string, unknown>;

function baseConfig(bootstrap: string): Record<string, unknown> {
  return {
    'bootstrap.servers': bootstrap,
    'client.id': 'queen-e2e',
    // Only the gateway's advertised address is ever dialled; keep reconnects quick.
    'reconnect.backoff.ms': 50,
    'reconnect.backoff.max.ms': 500,
    'log_level': 3,
  };
}

function toHeaders(headers: Header[]): MessageHeader[] {
  return headers.map(([name, value]) => ({ [name]: Buffer.from(value) }));
}

export function fromHeaders(headers: MessageHeader[] | undefined): Header[] {
  const out: Header[] = [];
  for (const h of headers ?? []) {
    for (const [name, value] of Object.entries(h)) out.push([name, Buffer.isBuffer(value) ? value.toString() : String(value)]);
  }
  return out;
}

/**
 * What `connect` asks Metadata for: the topic the test works on, or every
 * topic (the binding's default; its own test in librdkafka.test.ts covers it,
 * so the other suites do not all fail on one Metadata problem).
 */
export type ConnectScope = string | { allTopics: true };

function metadataOptions(scope: ConnectScope) {
  return typeof scope === 'string' ? { topic: scope, allTopics: false, timeout: 20_000 } : { allTopics: true, timeout: 20_000 };
}

export async function connectProducer(bootstrap: string, config: ProducerConfig = {}, scope: ConnectScope = { allTopics: true }): Promise<ProducerType> {
  const producer = new Producer({ ...baseConfig(bootstrap), dr_cb: true, ...config } as ProducerGlobalConfig);
  await new Promise<void>((resolve, reject) => {
    producer.connect(metadataOptions(scope), (err) => (err ? reject(new Error(`librdkafka producer could not connect to ${bootstrap}: ${err.message}`)) : resolve()));
  });
  producer.setPollInterval(10);
  return producer;
}

export function disconnect(client: ProducerType | KafkaConsumerType): Promise<void> {
  return new Promise((resolve) => {
    if (!client.isConnected()) return resolve();
    // A producer flushes first (for up to the timeout); a consumer takes only the callback.
    if (client instanceof Producer) client.disconnect(10_000, () => resolve());
    else client.disconnect(() => resolve());
  });
}

export interface ProduceOptions {
  /** Called after each delivery report, e.g. for a test to act mid-stream. */
  onDelivery?: (delivered: number) => void;
  timeoutMs?: number;
}

/**
 * Sends every record (to its own partition, with its key, headers and
 * timestamp) on a connected producer and resolves with one delivery report
 * per record, in the order sent. Fails if any report is missing by the deadline.
 */
export async function produceAll(producer: ProducerType, topic: string, records: readonly SentRecord[], options: ProduceOptions = {}): Promise<Delivery[]> {
  const deliveries: (Delivery | undefined)[] = new Array(records.length);
  let reported = 0;
  const onReport = (err: LibrdKafkaError, report: DeliveryReport) => {
    const index = report.opaque as number;
    if (typeof index !== 'number' || deliveries[index]) return;
    deliveries[index] = { record: records[index]!, error: err ?? null, partition: report.partition, offset: report.offset };
    reported += 1;
    options.onDelivery?.(reported);
  };
  producer.on('delivery-report', onReport);
  try {
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      for (;;) {
        try {
          producer.produce(topic, r.partition, Buffer.from(r.value), r.key === null ? null : Buffer.from(r.key), r.timestamp, i, toHeaders(r.headers));
          break;
        } catch (e) {
          if ((e as { code?: number }).code !== QUEUE_FULL) throw e;
          producer.poll();
          await sleep(5);
        }
      }
    }
    await waitFor(() => reported === records.length, {
      what: `delivery reports for all ${records.length} records sent to ${topic}`,
      timeoutMs: options.timeoutMs ?? 60_000,
      describe: () => `${reported} reported`,
    });
    return deliveries as Delivery[];
  } finally {
    producer.removeListener('delivery-report', onReport);
  }
}

/** Fails with the first few delivery errors, if any. */
export function expectDelivered(deliveries: readonly Delivery[]): void {
  const failed = deliveries.filter((d) => d.error);
  if (failed.length > 0) {
    const sample = failed.slice(0, 5).map((d) => `partition ${d.record.partition}: ${d.error!.message} (code ${d.error!.code})`);
    throw new Error(`${failed.length} of ${deliveries.length} records were not delivered:\n  ${sample.join('\n  ')}`);
  }
}

export type ConsumerConfig = Partial<ConsumerGlobalConfig> & Record<string, unknown>;

const TOPIC_LEVEL = new Set(['auto.offset.reset', 'consume.callback.max.messages']);

export async function connectConsumer(bootstrap: string, config: ConsumerConfig = {}, scope: ConnectScope = { allTopics: true }): Promise<KafkaConsumerType> {
  // The binding insists on a group.id; partitions are still assigned by hand and no offset is committed.
  const global: Record<string, unknown> = {
    ...baseConfig(bootstrap),
    'group.id': `queen-e2e-reader-${process.pid}-${Math.random().toString(36).slice(2, 8)}`,
    'enable.auto.commit': false,
    'enable.partition.eof': true,
    'fetch.wait.max.ms': 100,
  };
  // The binding always hands librdkafka a topic configuration of its own, which replaces the
  // default one: topic-level settings such as auto.offset.reset only count when given there.
  const topicConfig: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(config)) {
    if (TOPIC_LEVEL.has(key)) topicConfig[key] = value;
    else global[key] = value;
  }
  const consumer = new KafkaConsumer(global as ConsumerGlobalConfig, topicConfig as ConsumerTopicConfig);
  await new Promise<void>((resolve, reject) => {
    consumer.connect(metadataOptions(scope), (err) => (err ? reject(new Error(`librdkafka consumer could not connect to ${bootstrap}: ${err.message}`)) : resolve()));
  });
  return consumer;
}

export interface ReadOptions {
  partitions: number[];
  /** Where to start: an offset per partition, or librdkafka's -2 (beginning) for all. Default beginning. */
  from?: Map<number, number> | number;
  /** Stop once this many records have been read in total. */
  count: number;
  timeoutMs?: number;
  /** Consumer configuration on top of the defaults. */
  config?: ConsumerConfig;
  /** Collects consumer errors (e.g. offset-out-of-range reports) while reading. */
  errors?: LibrdKafkaError[];
}

/** librdkafka's logical offset for "the partition's start". */
export const OFFSET_BEGINNING = -2;

export function toReadRecord(m: Message): ReadRecord {
  return {
    partition: m.partition,
    offset: m.offset,
    key: m.key === null || m.key === undefined ? null : m.key.toString(),
    value: m.value === null ? '' : m.value.toString(),
    headers: fromHeaders(m.headers),
    timestamp: m.timestamp ?? -1,
  };
}

/**
 * Assigns the partitions of `topic` and reads until `count` records have
 * arrived; fails, saying how many arrived per partition, if they do not.
 */
export async function readRecords(bootstrap: string, topic: string, options: ReadOptions): Promise<ReadRecord[]> {
  const consumer = await connectConsumer(bootstrap, options.config, topic);
  const errors = options.errors ?? [];
  const onError = (err: LibrdKafkaError) => errors.push(err);
  consumer.on('event.error', onError);
  try {
    const from = options.from ?? OFFSET_BEGINNING;
    consumer.assign(
      options.partitions.map((partition) => ({
        topic,
        partition,
        offset: typeof from === 'number' ? from : (from.get(partition) ?? OFFSET_BEGINNING),
      })),
    );
    const records: ReadRecord[] = [];
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    while (records.length < options.count) {
      if (Date.now() > deadline) {
        const perPartition = [...countByPartition(records)].map(([p, n]) => `p${p}: ${n}`).join(', ') || 'none';
        const errorText = errors.length > 0 ? `; consumer errors: ${errors.slice(0, 5).map((e) => e.message).join(' | ')}` : '';
        throw new Error(`read ${records.length} of ${options.count} records from ${topic} before giving up (${perPartition})${errorText}`);
      }
      const batch = await new Promise<Message[]>((resolve, reject) => {
        consumer.consume(1000, (err, messages) => {
          if (err && err.code !== CODES.ERRORS.ERR__PARTITION_EOF) {
            errors.push(err);
            if (err.code === CODES.ERRORS.ERR__TIMED_OUT) return resolve([]);
            return reject(new Error(`librdkafka consume failed on ${topic}: ${err.message} (code ${err.code})`));
          }
          resolve(messages ?? []);
        });
      }).catch((e: Error) => {
        // Offset-out-of-range and transport errors surface here; the test decides.
        errors.push(e as unknown as LibrdKafkaError);
        return [] as Message[];
      });
      for (const m of batch) records.push(toReadRecord(m));
      if (batch.length === 0) await sleep(20);
    }
    return records;
  } finally {
    consumer.removeListener('event.error', onError);
    await disconnect(consumer);
  }
}

function countByPartition(records: readonly ReadRecord[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const r of records) counts.set(r.partition, (counts.get(r.partition) ?? 0) + 1);
  return counts;
}

export function createAdmin(bootstrap: string): IAdminClient {
  return AdminClient.create({ ...baseConfig(bootstrap) } as never);
}

/** Promisifies an AdminClient call that ends in a (err, result) callback. */
export function adminCall<T>(call: (cb: (err: LibrdKafkaError, result: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => {
    call((err, result) => (err ? reject(Object.assign(new Error(`librdkafka admin: ${err.message} (code ${err.code})`), { code: err.code })) : resolve(result)));
  });
}

/**
 * Creates a topic through librdkafka's AdminClient (CreateTopics), for suites
 * whose client has no admin (kcat). The replication factor is the broker's
 * default (-1): one on the gateway and a single Kafka broker, three on the
 * cluster of Kafka brokers the cluster load is compared with.
 */
export async function createTopic(bootstrap: string, topic: string, partitions: number): Promise<void> {
  const admin = createAdmin(bootstrap);
  try {
    await adminCall<void>((cb) => admin.createTopic({ topic, num_partitions: partitions, replication_factor: -1 }, 15_000, cb));
  } finally {
    admin.disconnect();
  }
}

/**
 * Every acknowledged delivery report's offset must hold the record it
 * reported: the offsets a producer is told are the offsets readers see.
 */
export function expectDeliveryOffsetsMatch(deliveries: readonly Delivery[], read: readonly ReadRecord[]): void {
  const at = new Map(read.map((r) => [`${r.partition}@${r.offset}`, r]));
  const wrong: string[] = [];
  for (const d of deliveries) {
    const found = at.get(`${d.partition}@${d.offset}`);
    if (!found || found.value !== d.record.value) {
      wrong.push(`partition ${d.partition} offset ${d.offset} was reported for ${JSON.stringify(d.record.value)} but holds ${found ? JSON.stringify(found.value) : 'nothing'}`);
    }
  }
  if (wrong.length > 0) throw new Error(`${wrong.length} delivery reports name the wrong offset:\n  ${wrong.slice(0, 5).join('\n  ')}`);
}

/** Records a partition holds now (high watermark minus low), per partition, through a fresh consumer. */
export async function recordCounts(bootstrap: string, topic: string, partitions: number[]): Promise<Map<number, number>> {
  const consumer = await connectConsumer(bootstrap, {}, topic);
  try {
    const counts = new Map<number, number>();
    const query = (partition: number) =>
      new Promise<{ highOffset: number; lowOffset: number }>((resolve, reject) =>
        consumer.queryWatermarkOffsets(topic, partition, 10_000, (err, offsets) =>
          err ? reject(new Error(`watermarks of ${topic}[${partition}]: ${err.message}`)) : resolve(offsets),
        ),
      );
    for (const partition of partitions) {
      // In a cluster whose membership just changed (a gateway killed or back), librdkafka drops the handle of a
      // broker that left Metadata under a query in flight ("Broker handle destroyed"); asked again, it goes to the leader now listed.
      let offsets: { highOffset: number; lowOffset: number } | null = null;
      for (let attempt = 1; offsets === null; attempt++) {
        try {
          offsets = await query(partition);
        } catch (e) {
          if (attempt === 5) throw e;
          await new Promise((resolve) => setTimeout(resolve, 500));
        }
      }
      counts.set(partition, offsets.highOffset - offsets.lowOffset);
    }
    return counts;
  } finally {
    await disconnect(consumer);
  }
}

/** Fails unless the topic's partitions hold exactly `total` records between them: nothing extra was stored. */
export async function expectStoredCount(bootstrap: string, topic: string, partitions: number[], total: number): Promise<void> {
  const counts = await recordCounts(bootstrap, topic, partitions);
  const stored = [...counts.values()].reduce((a, b) => a + b, 0);
  if (stored !== total) {
    const detail = [...counts].map(([p, n]) => `p${p}: ${n}`).join(', ');
    throw new Error(`${topic} holds ${stored} records (${detail}), expected exactly ${total}`);
  }
}

/**
 * The bridge in reverse, for a rollback: the source is a gateway (any
 * Kafka-protocol cluster, read by bridge.ts as in the forward direction) and
 * the target an Apache Kafka cluster, written with librdkafka.
 *
 * Kafka cannot append at a chosen offset, so offsets are not preserved; they
 * are recorded. Every write is one Kafka transaction (a transactional
 * producer with a fixed transactional.id) holding the copied records and, on
 * the bridge's own topic OFFSET_MAP_TOPIC, one mapping record per partition
 * written: the runs of source offsets copied and the Kafka offsets they got.
 * Both commit or neither does, so the mapping topic is the ledger: a
 * (re)started bridge first calls initTransactions (which fences an earlier
 * bridge and aborts the transaction a SIGKILL left open), then reads the
 * mapping read_committed and resumes each partition where it ends. Records of
 * an aborted transaction stay in Kafka's log as aborted records, which
 * read_committed consumers skip: consumers of the copy must read
 * read_committed for exactly once (librdkafka's default; the Java client's is
 * read_uncommitted).
 *
 * Why a transaction and not an idempotent producer resuming from Kafka's high
 * watermark (which would keep offsets equal for a source without gaps): a
 * produce request a SIGKILLed bridge had sent can still be appended after
 * its successor read the watermark, and nothing fences it; and a gateway's
 * logs have gaps (transaction markers, aborted records, compaction) that Kafka
 * cannot reproduce. The price: each transaction's commit marker takes one
 * Kafka offset in every partition it wrote, so the copy's offsets drift from
 * the source's by one per transaction (plus any aborted records).
 *
 * Group offsets are translated through the mapping: a source offset S becomes
 * the Kafka offset of the first copied record at or after S (or the end of
 * what is copied), committed with the metadata "queen-bridge source=S". A
 * group has moved, and is left alone from then on, when Kafka refuses the
 * commit (it has members there) or when an offset on Kafka carries metadata
 * that is not the bridge's.
 */
import type { Logger } from 'pino';
import type { DeliveryReport, IAdminClient, KafkaConsumer, LibrdKafkaError, Message, Producer } from '@confluentinc/kafka-javascript';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { connectNamingErrors, loadLibrdkafka, LOG_EVENTS, type Librdkafka } from './librdkafka.js';
import { recordsOf, type SourceRecord } from './copy-batches.js';
import { COMMIT_METADATA, type BridgeTarget, type GroupCopied, type PartitionWrite, type PartitionWritten, type SourceGroupOffset } from './target.js';

/** The bridge's topic on Kafka: the offset mapping, written in the same transactions as the records. */
export const OFFSET_MAP_TOPIC = '__queen_bridge_offsets';
/** One reverse bridge per Kafka cluster: a second one started fences the first (it stops, saying so). */
export const TRANSACTIONAL_ID = 'queen-bridge-reverse';
/** librdkafka settings the reverse bridge's exactly-once copy rests on; a --target-option may not change them. */
export const RESERVED_TARGET_OPTIONS = ['bootstrap.servers', 'transactional.id', 'enable.idempotence', 'acks', 'isolation.level', 'group.id', 'enable.auto.commit', 'dr_cb', 'dr_msg_cb'];

const CODEC_NAMES: Record<CompressionCodec, string> = {
  [CompressionCodec.None]: 'none',
  [CompressionCodec.Gzip]: 'gzip',
  [CompressionCodec.Snappy]: 'snappy',
  [CompressionCodec.Lz4]: 'lz4',
  [CompressionCodec.Zstd]: 'zstd',
};

const TIMEOUT_MS = 60_000;
/** What a failed connect to Kafka tells the user to check. */
const KAFKA_FIX = 'Check --to-kafka and the --target-option security settings.';
/** Kafka's error codes the reverse bridge acts on. */
const TOPIC_ALREADY_EXISTS = 36;
const INVALID_CONFIG = 40;
/** A commit from outside a group Kafka has members in (classic: unknown member, illegal generation, rebalancing; consumer protocol: member epochs). */
const GROUP_HAS_MEMBERS = new Set([22, 25, 27, 110, 113]);

export interface KafkaTargetOptions {
  /** Kafka's bootstrap servers, "host:port,host:port". */
  bootstrap: string;
  /** librdkafka settings for Kafka (security.protocol, sasl.*, ssl.*, ...). */
  options: Readonly<Record<string, string>>;
  compression: CompressionCodec;
  log: Logger;
}

/** Source offsets [source, source + count) copied to Kafka offsets [target, target + count). */
type Run = [source: number, target: number, count: number];

interface PartitionMap {
  runs: Run[];
  /** The source offset below which everything is copied. */
  next: number;
  /** The Kafka offset after the last copied record. */
  targetEnd: number;
}

/** A mapping record's value: what one transaction copied of one partition. */
interface MapEntry {
  topic: string;
  partition: number;
  runs: Run[];
  next: number;
  targetEnd: number;
}

/** A failure of the Kafka target; `fatal` ones end the copy (another bridge took over, or Kafka refused for good). */
class KafkaTargetError extends Error {
  constructor(
    message: string,
    readonly fatal: boolean,
  ) {
    super(message);
  }
}

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

export class KafkaTarget implements BridgeTarget {
  readonly name: string;
  private readonly maps = new Map<string, PartitionMap>();
  private readonly committers = new Map<string, KafkaConsumer>();
  /** One transaction at a time: writes (the copy loop) and follows (the refresh timer) take turns. */
  private turn: Promise<unknown> = Promise.resolve();
  private deliveries: ((err: LibrdKafkaError | null, report: DeliveryReport) => void) | null = null;

  private constructor(
    private readonly rdkafka: Librdkafka,
    private readonly options: KafkaTargetOptions,
    private readonly producer: Producer,
    private readonly admin: IAdminClient,
  ) {
    this.name = `Kafka at ${options.bootstrap}`;
    producer.on('delivery-report', (err, report) => this.deliveries?.(err ?? null, report));
  }

  /** Connects, fences any earlier bridge (aborting its open transaction), and reads the offset mapping. */
  static async start(options: KafkaTargetOptions): Promise<KafkaTarget> {
    const rdkafka = await loadLibrdkafka();
    const producer = new rdkafka.Producer({
      'bootstrap.servers': options.bootstrap,
      'client.id': 'queen-bridge',
      'compression.codec': CODEC_NAMES[options.compression],
      'linger.ms': 5,
      ...LOG_EVENTS,
      ...options.options,
      'transactional.id': TRANSACTIONAL_ID,
      'enable.idempotence': true,
      acks: 'all',
      dr_cb: true,
    } as never);
    await connectNamingErrors(producer, `Kafka at ${options.bootstrap}`, KAFKA_FIX, options.log);
    producer.setPollInterval(5);
    const target = new KafkaTarget(rdkafka, options, producer, rdkafka.AdminClient.createFrom(producer));
    await target.createTopic(OFFSET_MAP_TOPIC, 1, { 'cleanup.policy': 'delete', 'retention.ms': '-1', 'retention.bytes': '-1' });
    await call(`initTransactions on Kafka at ${options.bootstrap}`, (cb) => producer.initTransactions(TIMEOUT_MS, cb));
    await target.readMap();
    return target;
  }

  private async readMap(): Promise<void> {
    const consumer = await this.consumer({ 'group.id': 'queen-bridge-map', 'isolation.level': 'read_committed', 'enable.partition.eof': true }, { 'auto.offset.reset': 'earliest' });
    try {
      let ended = false;
      consumer.on('partition.eof', () => (ended = true));
      consumer.assign([{ topic: OFFSET_MAP_TOPIC, partition: 0, offset: 0 }]);
      const deadline = Date.now() + 10 * TIMEOUT_MS;
      let entries = 0;
      while (!ended) {
        if (Date.now() > deadline) throw new Error(`Reading the bridge's offset mapping (${OFFSET_MAP_TOPIC}) from Kafka took over ${10 * TIMEOUT_MS / 1000} s; is Kafka at ${this.options.bootstrap} serving it?`);
        const batch = await new Promise<Message[]>((resolve, reject) => consumer.consume(5_000, (err, messages) => (err ? reject(new Error(`Reading ${OFFSET_MAP_TOPIC} from Kafka failed: ${err.message}`)) : resolve(messages))));
        for (const m of batch) {
          this.remember(JSON.parse(m.value!.toString()) as MapEntry);
          entries++;
        }
      }
      this.options.log.info({ entries, partitions: this.maps.size }, `read the offset mapping from Kafka: ${this.maps.size} partitions copied before`);
    } finally {
      await new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
    }
  }

  private remember(entry: MapEntry): void {
    const k = key(entry.topic, entry.partition);
    const map = this.maps.get(k) ?? { runs: [], next: 0, targetEnd: 0 };
    map.runs.push(...entry.runs);
    map.next = entry.next;
    map.targetEnd = entry.targetEnd;
    this.maps.set(k, map);
  }

  /** Runs `work` when no other transaction is open. */
  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const run = this.turn.then(work, work);
    this.turn = run.catch(() => {});
    return run;
  }

  // ─── Topics ──────────────────────────────────────────────────────────────

  async follow(topic: string, count: number, known: number, sourceConfigs: () => Promise<Record<string, string> | null>): Promise<number[]> {
    const { log } = this.options;
    const existing = await this.partitionCount(topic);
    if (existing === null) {
      await this.createTopic(topic, count, this.kafkaConfigs(topic, (await sourceConfigs()) ?? {}));
      log.info({ topic, partitions: count }, `created ${topic} on Kafka with ${count} partitions`);
    } else if (existing < count) {
      await call(`Adding partitions to ${topic} on Kafka`, (cb) => this.admin.createPartitions(topic, count, TIMEOUT_MS, cb));
      log.info({ topic, partitions: count }, `${topic} has ${count} partitions on the source now; added the new ones on Kafka`);
    }
    const unmapped: number[] = [];
    for (let partition = known; partition < count; partition++) if (!this.maps.has(key(topic, partition))) unmapped.push(partition);
    // Partitions created just now are empty; only ones that were there before need looking at.
    if (unmapped.length > 0) await this.claim(topic, unmapped, existing ?? 0);
    return Array.from({ length: count - known }, (_, i) => this.maps.get(key(topic, known + i))!.next);
  }

  /**
   * Partitions the mapping does not know yet: the bridge copies only into
   * empty ones (its offsets could not be translated past records someone
   * else wrote), and records them as its own with an empty mapping entry.
   */
  private async claim(topic: string, partitions: number[], existed: number): Promise<void> {
    for (const partition of partitions.filter((p) => p < existed)) {
      const { highOffset } = await promised<{ highOffset: number }>(`Reading the end of ${topic}/${partition} on Kafka`, (cb) => this.producer.queryWatermarkOffsets(topic, partition, TIMEOUT_MS, cb));
      if (highOffset > 0) {
        throw new KafkaTargetError(
          `${topic}/${partition} already holds ${highOffset} offsets on Kafka that the bridge did not write (its mapping topic ${OFFSET_MAP_TOPIC} knows nothing of them); the reverse bridge copies into new or empty topics only. Delete the topic on Kafka, or leave it out of --topics.`,
          true,
        );
      }
    }
    await this.inTurn(() => this.transaction(async () => {
      const entries = partitions.map((partition) => ({ topic, partition, runs: [], next: 0, targetEnd: 0 }));
      await this.produceAll(entries.map((e) => this.mapRecord(e)));
      return entries;
    }));
  }

  /** The source's topic configs as Kafka takes them; LogAppendTime would restamp every record, so the copy is CreateTime with the source's times. */
  private kafkaConfigs(topic: string, configs: Record<string, string>): Record<string, string> {
    const out = { ...configs };
    if (out['message.timestamp.type'] === 'LogAppendTime') {
      delete out['message.timestamp.type'];
      this.options.log.warn({ topic }, `${topic} stamps LogAppendTime on the source; on Kafka it is created CreateTime, so the records keep the source's times (Kafka would restamp them with its own)`);
    }
    return out;
  }

  private async partitionCount(topic: string): Promise<number | null> {
    // All topics: asking for one by name can make Kafka create it with its defaults (auto.create.topics.enable).
    const metadata = await promised<{ topics: { name: string; partitions: unknown[] }[] }>(`Reading Kafka's topics`, (cb) => this.producer.getMetadata({ allTopics: true, timeout: TIMEOUT_MS }, cb));
    const found = metadata.topics.find((t) => t.name === topic);
    return found && found.partitions.length > 0 ? found.partitions.length : null;
  }

  private async createTopic(topic: string, partitions: number, config: Record<string, string>): Promise<void> {
    const create = (with_: Record<string, string>) =>
      new Promise<LibrdKafkaError | null>((resolve) => this.admin.createTopic({ topic, num_partitions: partitions, replication_factor: -1, config: with_ } as never, TIMEOUT_MS, (err) => resolve(err ?? null)));
    let err = await create(config);
    if (err?.code === INVALID_CONFIG && Object.keys(config).length > 0) {
      this.options.log.warn({ topic, config }, `Kafka does not take ${topic}'s configs from the source (${err.message}); it is created with Kafka's defaults (set them on Kafka by hand)`);
      err = await create({});
    }
    if (err && err.code !== TOPIC_ALREADY_EXISTS) throw new KafkaTargetError(`Creating ${topic} on Kafka failed: ${err.message}.`, false);
  }

  // ─── Records ─────────────────────────────────────────────────────────────

  write(writes: PartitionWrite[]): Promise<PartitionWritten[]> {
    return this.inTurn(async () => {
      const records = writes.map((w) => recordsOf(w.batches));
      const entries = await this.transaction(async () => {
        const placed = await this.produceAll(writes.flatMap((w, i) => records[i]!.map((r) => ({ topic: w.topic, partition: w.partition, key: r.key, value: r.value, headers: r.headers, timestamp: r.timestamp }))));
        let at = 0;
        const entries = writes.map((w, i) => {
          const offsets = placed.slice(at, at + records[i]!.length);
          at += records[i]!.length;
          return this.entryFor(w, records[i]!, offsets);
        });
        await this.produceAll(entries.map((e) => this.mapRecord(e)));
        return entries;
      });
      return entries.map((e) => ({ next: e.next }));
    });
  }

  /** The mapping entry of one partition's write, from the Kafka offsets its records got. */
  private entryFor(w: PartitionWrite, records: readonly SourceRecord[], offsets: number[]): MapEntry {
    const map = this.maps.get(key(w.topic, w.partition));
    const runs: Run[] = [];
    records.forEach((r, i) => {
      const t = offsets[i]!;
      if (i > 0 && t !== offsets[i - 1]! + 1) {
        // The bridge's records of one partition in one transaction are contiguous unless something else writes there.
        throw new KafkaTargetError(`${w.topic}/${w.partition} on Kafka got offsets ${offsets[i - 1]} and ${t} for consecutive copied records: something other than the bridge writes to it, so its offsets cannot be mapped. Stop that writer (or leave the topic out of --topics), delete the topic on Kafka and start the bridge again.`, true);
      }
      const last = runs.at(-1);
      if (last && r.offset === last[0] + last[2]) last[2]++;
      else runs.push([r.offset, t, 1]);
    });
    return {
      topic: w.topic,
      partition: w.partition,
      runs,
      next: Math.max(w.next, w.batches.at(-1)?.nextOffset ?? 0, w.endOffset ?? 0),
      targetEnd: offsets.length > 0 ? offsets.at(-1)! + 1 : (map?.targetEnd ?? 0),
    };
  }

  private mapRecord(e: MapEntry): OutgoingRecord {
    return { topic: OFFSET_MAP_TOPIC, partition: 0, key: Buffer.from(`${e.topic}/${e.partition}`), value: Buffer.from(JSON.stringify(e)), headers: [], timestamp: Date.now() };
  }

  /**
   * One Kafka transaction around `work`, whose mapping entries are remembered
   * once it commits. A failure aborts it (what it wrote is skipped by
   * read_committed readers) and leaves the records to be written again; a
   * fatal one (another bridge fenced this one) ends the copy.
   */
  private async transaction(work: () => Promise<MapEntry[]>): Promise<MapEntry[]> {
    const { producer } = this;
    try {
      await call('beginTransaction', (cb) => producer.beginTransaction(cb));
      const entries = await work();
      await this.commit();
      for (const e of entries) this.remember(e);
      return entries;
    } catch (e) {
      const err = e as LibrdKafkaError & Error;
      if (e instanceof KafkaTargetError && e.fatal) {
        await call('abortTransaction', (cb) => producer.abortTransaction(TIMEOUT_MS, cb)).catch(() => {});
        throw e;
      }
      if (err.isFatal) throw new KafkaTargetError(`Kafka's transaction failed for good (${err.message}); another reverse bridge with the transactional id ${TRANSACTIONAL_ID} may have started. The bridge stops; start it again once only one runs (it resumes from the mapping on Kafka).`, true);
      await call('abortTransaction', (cb) => producer.abortTransaction(TIMEOUT_MS, cb)).catch((abortError: Error) => {
        throw new KafkaTargetError(`A Kafka transaction failed (${err.message}) and could not be aborted (${abortError.message}). The bridge stops; start it again (it resumes from the mapping on Kafka).`, true);
      });
      throw new KafkaTargetError(`A Kafka transaction failed and was aborted (${err.message})`, false);
    }
  }

  /** commitTransaction, again while librdkafka says the outcome is not known yet (a retriable error). */
  private async commit(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call('commitTransaction', (cb) => this.producer.commitTransaction(TIMEOUT_MS, cb));
      } catch (e) {
        if (!(e as LibrdKafkaError).isRetriable || attempt >= 5) throw e;
      }
    }
  }

  /** Produces the records (in order) and answers the Kafka offset each got, once all are delivered. */
  private produceAll(records: OutgoingRecord[]): Promise<number[]> {
    if (records.length === 0) return Promise.resolve([]);
    const offsets = new Array<number>(records.length);
    let pending = records.length;
    return new Promise<number[]>((resolve, reject) => {
      let failed: Error | null = null;
      this.deliveries = (err, report) => {
        if (err && !failed) failed = Object.assign(new Error(`Kafka did not take a record of ${report.topic}/${report.partition}: ${err.message}`), { isFatal: err.isFatal, isRetriable: err.isRetriable });
        offsets[report.opaque as number] = report.offset;
        if (--pending === 0) {
          this.deliveries = null;
          if (failed) reject(failed);
          else resolve(offsets);
        }
      };
      void (async () => {
        for (let i = 0; i < records.length; i++) {
          const r = records[i]!;
          const headers = r.headers.map((h) => ({ [h.key]: h.value ?? Buffer.alloc(0) }));
          for (;;) {
            try {
              this.producer.produce(r.topic, r.partition, r.value, r.key, r.timestamp >= 0 ? r.timestamp : null, i, headers);
              break;
            } catch (e) {
              if ((e as LibrdKafkaError).code !== this.rdkafka.CODES.ERRORS.ERR__QUEUE_FULL) throw e;
              await new Promise((r) => setTimeout(r, 20));
            }
          }
        }
        this.producer.flush(TIMEOUT_MS, () => {});
      })().catch((e: Error) => {
        this.deliveries = null;
        reject(e);
      });
    });
  }

  /** Anything short of a fatal failure: the records are written again later, in a new transaction. */
  passing(e: unknown): boolean {
    return !(e instanceof KafkaTargetError && e.fatal);
  }

  // ─── Groups ──────────────────────────────────────────────────────────────

  async copyGroup(group: string, source: SourceGroupOffset[], copiedTo: (topic: string, partition: number) => number | undefined): Promise<GroupCopied> {
    const onKafka = await promised<{ partitions: { topic: string; partition: number; offset: number; metadata?: string | null }[] }[]>(`Reading group ${group}'s offsets on Kafka`, (cb) =>
      this.admin.listConsumerGroupOffsets([{ groupId: group }], { timeout: TIMEOUT_MS }, cb),
    );
    const committed = onKafka[0]?.partitions ?? [];
    const foreign = committed.find((o) => o.offset >= 0 && !(o.metadata ?? '').startsWith(COMMIT_METADATA));
    if (foreign) return { moved: `it committed offset ${foreign.offset} of ${foreign.topic}/${foreign.partition} on Kafka itself` };
    const metadataOnKafka = new Map(committed.map((o) => [key(o.topic, o.partition), o.metadata ?? '']));
    const offsets = source
      .filter((s) => s.offset >= 0)
      .filter((s) => {
        const copied = copiedTo(s.topic, s.partition);
        // Copied up to the committed offset, and not committed there already.
        return copied !== undefined && copied >= s.offset && metadataOnKafka.get(key(s.topic, s.partition)) !== commitMetadata(s.offset);
      })
      .map((s) => ({ topic: s.topic, partition: s.partition, offset: this.translate(s.topic, s.partition, s.offset), metadata: commitMetadata(s.offset) }));
    if (offsets.length === 0) return { commits: 0 };
    const committer = await this.committer(group);
    try {
      // Synchronous: librdkafka serves a commit's answer only in a poll of a consumer that never consumes here.
      committer.commitSync(offsets);
    } catch (e) {
      const err = e as LibrdKafkaError;
      if (GROUP_HAS_MEMBERS.has(err.code)) return { moved: `it has members on Kafka (the commit was answered ${err.message})` };
      throw new Error(`Committing group ${group}'s offsets on Kafka failed: ${err.message}`);
    }
    return { commits: offsets.length };
  }

  /** The Kafka offset a consumer at source offset `offset` goes on from: the first copied record at or after it, else the end of what is copied. */
  translate(topic: string, partition: number, offset: number): number {
    const map = this.maps.get(key(topic, partition));
    if (!map) return 0;
    const { runs } = map;
    // The first run that ends past `offset` (runs ascend in source and Kafka offsets).
    let low = 0;
    let high = runs.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const [s, , n] = runs[mid]!;
      if (s + n <= offset) low = mid + 1;
      else high = mid;
    }
    const run = runs[low];
    if (!run) return map.targetEnd;
    const [s, t] = run;
    return offset <= s ? t : t + (offset - s);
  }

  /** A consumer that only commits for `group` (it never joins it). */
  private async committer(group: string): Promise<KafkaConsumer> {
    let consumer = this.committers.get(group);
    if (!consumer) {
      consumer = await this.consumer({ 'group.id': group, 'enable.auto.commit': false }, {});
      this.committers.set(group, consumer);
    }
    return consumer;
  }

  private async consumer(config: Record<string, unknown>, topicConfig: Record<string, unknown>): Promise<KafkaConsumer> {
    const consumer = new this.rdkafka.KafkaConsumer({ 'bootstrap.servers': this.options.bootstrap, 'client.id': 'queen-bridge', ...LOG_EVENTS, ...this.options.options, ...config } as never, topicConfig as never);
    await connectNamingErrors(consumer, `Kafka at ${this.options.bootstrap}`, KAFKA_FIX, this.options.log);
    return consumer;
  }

  async close(): Promise<void> {
    await this.turn;
    for (const consumer of this.committers.values()) await new Promise<void>((resolve) => consumer.disconnect(() => resolve()));
    await new Promise<void>((resolve) => this.producer.disconnect(() => resolve()));
  }
}

interface OutgoingRecord {
  topic: string;
  partition: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  timestamp: number;
}

function commitMetadata(sourceOffset: number): string {
  return `${COMMIT_METADATA} source=${sourceOffset}`;
}

function call(what: string, f: (cb: (err: LibrdKafkaError) => void) => void): Promise<void> {
  return new Promise((resolve, reject) => f((err) => (err ? reject(Object.assign(new Error(`${what} failed: ${err.message}`), { code: err.code, isFatal: err.isFatal, isRetriable: err.isRetriable })) : resolve())));
}

function promised<T>(what: string, f: (cb: (err: LibrdKafkaError, value: T) => void) => void): Promise<T> {
  return new Promise((resolve, reject) => f((err, value) => (err ? reject(new Error(`${what} failed: ${err.message}`)) : resolve(value))));
}

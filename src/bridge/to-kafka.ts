/**
 * The bridge in reverse, for a rollback: the source is a gateway (any
 * Kafka-protocol cluster, read by bridge.ts as in the forward direction) and
 * the target an Apache Kafka cluster, written with the project's own client
 * (src/kafka-client: its transactional producer sends the source's stored
 * batches with only the producer fields stamped).
 *
 * Kafka cannot append at a chosen offset, so offsets are not preserved; they
 * are recorded. Every write is one Kafka transaction (a fixed
 * transactional id) holding the copied batches and, on the bridge's own topic
 * OFFSET_MAP_TOPIC, one mapping record per partition written: the runs of
 * source offsets copied and the Kafka offsets they got (kafka-map.ts). Both
 * commit or neither does, so the mapping topic is the ledger: a (re)started
 * bridge first takes the transactional id (which fences an earlier bridge and
 * aborts the transaction a SIGKILL left open), then reads the mapping
 * read_committed and resumes each partition where it ends. Records of an
 * aborted transaction stay in Kafka's log as aborted records, which
 * read_committed consumers skip: consumers of the copy must read
 * read_committed for exactly once.
 *
 * Why a transaction and not an idempotent producer resuming from Kafka's high
 * watermark: a produce request a SIGKILLed bridge had sent can still be
 * appended after its successor read the watermark, and nothing fences it; and
 * a gateway's logs have gaps (transaction markers, aborted records,
 * compaction) that Kafka cannot reproduce.
 *
 * Group offsets are translated through the mapping: a source offset S becomes
 * the Kafka offset of the first copied record at or after S (or the end of
 * what is copied), committed with the metadata "queen-bridge source=S". A
 * group has moved, and is left alone from then on, when Kafka refuses the
 * commit (it has members there) or when an offset on Kafka carries metadata
 * that is not the bridge's.
 */
import type { Logger } from 'pino';
import { errorName } from '../../protocol/error-codes.js';
import type { CompressionCodec } from '../../protocol/records/compression.js';
import { commitOffsets, createPartitions, createTopic } from '../kafka-client/admin.js';
import { KafkaClient } from '../kafka-client/client.js';
import { KafkaConnectionError } from '../kafka-client/errors.js';
import { ProducerError, TransactionalProducer } from '../kafka-client/producer.js';
import { ClientSettingError } from '../kafka-client/settings.js';
import { kafkaBatches, mapBatch, OFFSET_MAP_TOPIC, OffsetMap, type MapEntry } from './kafka-map.js';
import { COMMIT_METADATA, type BridgeTarget, type GroupCopied, type PartitionWrite, type PartitionWritten, type SourceGroupOffset } from './target.js';

export { OFFSET_MAP_TOPIC } from './kafka-map.js';
/** One reverse bridge per Kafka cluster: a second one started fences the first (it stops, saying so). */
export const TRANSACTIONAL_ID = 'queen-bridge-reverse';
/** Settings the reverse bridge's exactly-once copy rests on; a --target-option may not change them. */
export const RESERVED_TARGET_OPTIONS = ['bootstrap.servers', 'transactional.id', 'enable.idempotence', 'acks', 'isolation.level', 'group.id', 'enable.auto.commit', 'dr_cb', 'dr_msg_cb'];

/** What a failed connect to Kafka tells the user to check. */
const KAFKA_FIX = 'Check --to-kafka and the --target-option security settings.';
const TOPIC_ALREADY_EXISTS = 36;
const INVALID_CONFIG = 40;
/** A commit from outside a group Kafka has members in (classic: unknown member, illegal generation, rebalancing; consumer protocol: member epochs). */
const GROUP_HAS_MEMBERS = new Set([22, 25, 27, 110, 113]);
const LEADERS_WAIT_MS = 60_000;

export interface KafkaTargetOptions {
  /** Kafka's bootstrap servers, "host:port,host:port". */
  bootstrap: string;
  /** Security settings for Kafka under librdkafka's names (security.protocol, sasl.*, ssl.*; src/kafka-client/settings.ts). */
  options: Readonly<Record<string, string>>;
  /** The codec of batches the bridge must re-encode (kafka-map.ts, kafkaBatches); the others keep the source's. */
  compression: CompressionCodec;
  log: Logger;
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

export class KafkaTarget implements BridgeTarget {
  readonly takesMarkers = false;
  readonly name: string;
  private readonly map = new OffsetMap();
  /** One transaction at a time: writes (the copy loop) and follows (the refresh timer) take turns. */
  private turn: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly options: KafkaTargetOptions,
    private readonly client: KafkaClient,
    private readonly producer: TransactionalProducer,
  ) {
    this.name = `Kafka at ${options.bootstrap}`;
  }

  /** Connects, fences any earlier bridge (aborting its open transaction), and reads the offset mapping. */
  static async start(options: KafkaTargetOptions): Promise<KafkaTarget> {
    let client: KafkaClient;
    try {
      client = await KafkaClient.connect({ bootstrap: options.bootstrap, settings: options.options, clientId: 'queen-bridge' });
    } catch (e) {
      if (!(e instanceof KafkaConnectionError) && !(e instanceof ClientSettingError)) throw e;
      throw new Error(`The bridge could not connect to Kafka at ${options.bootstrap}: ${e.message}. ${KAFKA_FIX}`);
    }
    try {
      await ensureTopic(client, OFFSET_MAP_TOPIC, 1, { 'cleanup.policy': 'delete', 'retention.ms': '-1', 'retention.bytes': '-1' }, options.log);
      await leadersOf(client, OFFSET_MAP_TOPIC);
      const producer = await TransactionalProducer.start(client, TRANSACTIONAL_ID);
      const target = new KafkaTarget(options, client, producer);
      const entries = await target.map.read(client);
      options.log.info({ entries, partitions: target.map.size }, `read the offset mapping from Kafka: ${target.map.size} partitions copied before`);
      return target;
    } catch (e) {
      client.close();
      throw e;
    }
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
      await ensureTopic(this.client, topic, count, this.kafkaConfigs(topic, (await sourceConfigs()) ?? {}), log);
      log.info({ topic, partitions: count }, `created ${topic} on Kafka with ${count} partitions`);
    } else if (existing < count) {
      const answer = await createPartitions(this.client, topic, count);
      if (answer.errorCode !== 0) throw new KafkaTargetError(`Adding partitions to ${topic} on Kafka failed: ${errorName(answer.errorCode)} (${answer.errorMessage}).`, false);
      log.info({ topic, partitions: count }, `${topic} has ${count} partitions on the source now; added the new ones on Kafka`);
    }
    await leadersOf(this.client, topic, count);
    const unmapped: number[] = [];
    for (let partition = known; partition < count; partition++) if (!this.map.has(topic, partition)) unmapped.push(partition);
    // Partitions created just now are empty; only ones that were there before need looking at.
    if (unmapped.length > 0) await this.claim(topic, unmapped, existing ?? 0);
    return Array.from({ length: count - known }, (_, i) => this.map.next(topic, known + i));
  }

  /**
   * Partitions the mapping does not know yet: the bridge copies only into
   * empty ones (its offsets could not be translated past records someone
   * else wrote), and records them as its own with an empty mapping entry.
   */
  private async claim(topic: string, partitions: number[], existed: number): Promise<void> {
    const old = partitions.filter((p) => p < existed);
    const ends = old.length > 0 ? await this.client.listOffsets(old.map((partition) => ({ topic, partition })), -1, false) : [];
    old.forEach((partition, i) => {
      if (ends[i]! > 0) {
        throw new KafkaTargetError(
          `${topic}/${partition} already holds ${ends[i]} offsets on Kafka that the bridge did not write (its mapping topic ${OFFSET_MAP_TOPIC} knows nothing of them); the reverse bridge copies into new or empty topics only. Delete the topic on Kafka, or leave it out of --topics.`,
          true,
        );
      }
    });
    await this.inTurn(() => this.transaction(async () => {
      const entries = partitions.map((partition): MapEntry => ({ topic, partition, runs: [], next: 0, targetEnd: 0 }));
      await this.producer.produce([{ topic: OFFSET_MAP_TOPIC, partition: 0, batches: [mapBatch(entries)] }]);
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
    const found = (await this.client.refreshMetadata(null)).find((t) => t.name === topic);
    return found && found.partitions.length > 0 ? found.partitions.length : null;
  }

  // ─── Records ─────────────────────────────────────────────────────────────

  write(writes: PartitionWrite[]): Promise<PartitionWritten[]> {
    return this.inTurn(async () => {
      const batches = writes.map((w) => kafkaBatches(w.batches, this.options.compression));
      const entries = await this.transaction(async () => {
        const bases = await this.producer.produce(writes.map((w, i) => ({ topic: w.topic, partition: w.partition, batches: batches[i]!.map((b) => b.bytes) })));
        const entries = writes.map((w, i) => {
          const next = Math.max(w.next, w.batches.at(-1)?.nextOffset ?? 0, w.endOffset ?? 0);
          const entry = this.map.entryFor(w.topic, w.partition, next, batches[i]!, bases[i]!);
          // The bridge's batches of one partition in one transaction are contiguous unless something else writes there.
          if (!entry) throw new KafkaTargetError(`${w.topic}/${w.partition} on Kafka gave the bridge's batches offsets ${bases[i]!.join(', ')}, not one after another: something other than the bridge writes to it, so its offsets cannot be mapped. Stop that writer (or leave the topic out of --topics), delete the topic on Kafka and start the bridge again.`, true);
          return entry;
        });
        await this.producer.produce([{ topic: OFFSET_MAP_TOPIC, partition: 0, batches: [mapBatch(entries)] }]);
        return entries;
      });
      return entries.map((e) => ({ next: e.next }));
    });
  }

  /**
   * One Kafka transaction around `work`, whose mapping entries are remembered
   * once it commits. A failure aborts it (what it wrote is skipped by
   * read_committed readers) and leaves the records to be written again; a
   * fatal one (another bridge fenced this one) ends the copy.
   */
  private async transaction(work: () => Promise<MapEntry[]>): Promise<MapEntry[]> {
    try {
      this.producer.begin();
      const entries = await work();
      await this.producer.commit();
      for (const e of entries) this.map.remember(e);
      return entries;
    } catch (e) {
      const fenced = e instanceof ProducerError && e.fatal;
      if (fenced) throw new KafkaTargetError(`Kafka's transaction failed for good (${e.message}); another reverse bridge with the transactional id ${TRANSACTIONAL_ID} may have started. The bridge stops; start it again once only one runs (it resumes from the mapping on Kafka).`, true);
      try {
        await this.producer.abort();
      } catch (abortError) {
        const fatal = abortError instanceof ProducerError && abortError.fatal;
        throw new KafkaTargetError(`A Kafka transaction failed (${(e as Error).message}) and could not be aborted (${(abortError as Error).message}).${fatal ? ' The bridge stops; start it again (it resumes from the mapping on Kafka).' : ''}`, fatal);
      }
      if (e instanceof KafkaTargetError) throw e;
      throw new KafkaTargetError(`A Kafka transaction failed and was aborted (${(e as Error).message})`, false);
    }
  }

  /** Anything short of a fatal failure: the records are written again later, in a new transaction. */
  passing(e: unknown): boolean {
    return !(e instanceof KafkaTargetError && e.fatal);
  }

  // ─── Groups ──────────────────────────────────────────────────────────────

  async copyGroup(group: string, source: SourceGroupOffset[], copiedTo: (topic: string, partition: number) => number | undefined): Promise<GroupCopied> {
    const committed = await this.client.groupOffsets(group);
    const foreign = committed.find((o) => o.offset >= 0 && !(o.metadata ?? '').startsWith(COMMIT_METADATA));
    if (foreign) return { moved: `it committed offset ${foreign.offset} of ${foreign.topic}/${foreign.partition} on Kafka itself` };
    const metadataOnKafka = new Map(committed.map((o) => [`${o.topic}\u0000${o.partition}`, o.metadata ?? '']));
    const offsets = source
      .filter((s) => s.offset >= 0)
      .filter((s) => {
        const copied = copiedTo(s.topic, s.partition);
        // Copied up to the committed offset, and not committed there already.
        return copied !== undefined && copied >= s.offset && metadataOnKafka.get(`${s.topic}\u0000${s.partition}`) !== commitMetadata(s.offset);
      })
      .map((s) => ({ topic: s.topic, partition: s.partition, offset: this.map.translate(s.topic, s.partition, s.offset), metadata: commitMetadata(s.offset) }));
    if (offsets.length === 0) return { commits: 0 };
    const answer = await commitOffsets(this.client, group, offsets);
    if (GROUP_HAS_MEMBERS.has(answer.errorCode)) return { moved: `it has members on Kafka (the commit was answered ${errorName(answer.errorCode)})` };
    if (answer.errorCode !== 0) throw new Error(`Committing group ${group}'s offsets on Kafka failed: ${errorName(answer.errorCode)} (${answer.errorMessage})`);
    return { commits: offsets.length };
  }

  /** The Kafka offset a consumer at source offset `offset` goes on from (kafka-map.ts). */
  translate(topic: string, partition: number, offset: number): number {
    return this.map.translate(topic, partition, offset);
  }

  async close(): Promise<void> {
    await this.turn;
    this.client.close();
  }
}

function commitMetadata(sourceOffset: number): string {
  return `${COMMIT_METADATA} source=${sourceOffset}`;
}

/** Creates a topic unless it exists; a config Kafka refuses makes it be created with Kafka's defaults, logged. */
async function ensureTopic(client: KafkaClient, topic: string, partitions: number, configs: Record<string, string>, log: Logger): Promise<void> {
  let answer = await createTopic(client, topic, partitions, configs);
  if (answer.errorCode === INVALID_CONFIG && Object.keys(configs).length > 0) {
    log.warn({ topic, config: configs }, `Kafka does not take ${topic}'s configs from the source (${answer.errorMessage}); it is created with Kafka's defaults (set them on Kafka by hand)`);
    answer = await createTopic(client, topic, partitions, {});
  }
  if (answer.errorCode !== 0 && answer.errorCode !== TOPIC_ALREADY_EXISTS) throw new KafkaTargetError(`Creating ${topic} on Kafka failed: ${errorName(answer.errorCode)} (${answer.errorMessage}).`, false);
}

/** Waits until Kafka's metadata names a leader for each of the topic's first `count` partitions (a new topic's take a moment). */
async function leadersOf(client: KafkaClient, topic: string, count = 1): Promise<void> {
  const deadline = Date.now() + LEADERS_WAIT_MS;
  for (;;) {
    const [found] = await client.refreshMetadata([topic]);
    const led = found?.partitions.filter((p) => p.errorCode === 0 && p.leader >= 0).length ?? 0;
    if (led >= count) return;
    if (Date.now() > deadline) throw new KafkaTargetError(`${topic} on Kafka has leaders for ${led} of its ${count} partitions after ${LEADERS_WAIT_MS / 1000} s`, false);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

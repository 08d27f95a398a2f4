/**
 * The migration bridge: keeps a copy of a Kafka-protocol cluster's topics and
 * consumer-group offsets in step until every client has moved. This file is
 * its reading side: it reads the source with librdkafka, follows new topics
 * and partitions, and lists group offsets; a target (target.ts) writes what it
 * read: the Queen core (to-core.ts, offset for offset) or, in reverse for a
 * rollback, an Apache Kafka cluster (to-kafka.ts).
 *
 * Exactly once by construction: the target keeps the ledger of what it holds
 * in source offsets, and a (re)started bridge asks it where each partition
 * stands and reads the source from there, so a kill at any moment loses
 * nothing and writes nothing twice.
 *
 * Transactions: the source is read read_committed. Committed records are
 * copied; aborted records and the transaction markers become gaps (a trailing
 * one is handed to the target as the partition's end offset).
 *
 * Group offsets: each group's committed offsets are read from the source and
 * handed to the target, which commits those whose records are copied (a
 * consumer switching then never meets an offset past the target's end) and
 * says when a group has moved to it; a moved group is left alone from then on.
 */
import type { Logger } from 'pino';
import type { KafkaConsumer, IAdminClient, Message, MessageHeader } from '@confluentinc/kafka-javascript';
import type { SourceRecord } from './copy-batches.js';
import { connectNamingErrors, loadLibrdkafka, LOG_EVENTS } from './librdkafka.js';
import { sourceConfigReader, type SourceConfigReader } from './source-configs.js';
import type { BridgeTarget, PartitionWrite } from './target.js';
import { CoreTarget } from './to-core.js';
import type { Core } from '../core/core.js';
import type { CompressionCodec } from '../../protocol/records/compression.js';

export { COMMIT_METADATA } from './target.js';

export interface BridgeSource {
  /** The source's bootstrap servers, "host:port,host:port". */
  source: string;
  /** librdkafka settings for the source (security.protocol, sasl.*, ssl.*, ...). */
  sourceOptions: Readonly<Record<string, string>>;
  /** Topics to copy: names this matches in full. */
  topics: RegExp;
  /** Consumer groups whose offsets to copy: names this matches in full; null copies none. */
  groups: RegExp | null;
  /** How often new topics, partitions and group offsets are looked for. */
  refreshIntervalMs: number;
  log: Logger;
}

/** Where the records go: a target (a KafkaTarget, to-kafka.ts), or a core, which becomes a CoreTarget (to-core.ts). */
export type BridgeOptions = BridgeSource & ({ target: BridgeTarget } | { core: Core; compression: CompressionCodec });

interface PartitionCopy {
  topic: string;
  partition: number;
  /** The target's next offset: everything below it is copied. */
  next: number;
  pending: SourceRecord[];
  /** The source's end seen at end-of-partition, to carry over a trailing gap. */
  endOffset: number | null;
  copied: number;
}

interface TopicCopy {
  partitions: number;
  copied: number;
}

interface GroupCopy {
  moved: string | null;
  commits: number;
}

export interface TopicProgress {
  topic: string;
  copied: number;
  /** Records in the source (up to its last stable offset) not yet on the target, as librdkafka last saw the source's end. */
  lag: number;
}

export interface BridgeProgress {
  startedAt: number;
  copied: number;
  topics: TopicProgress[];
  groups: { group: string; commits: number; moved: string | null; inStep: boolean }[];
}

/** Records buffered per partition before a write; a write also happens whenever the source has nothing more right now. */
const FLUSH_RECORDS = 5_000;
/** Records asked of librdkafka per consume call, and how long one waits for the first. */
const CONSUME_RECORDS = 5_000;
const CONSUME_WAIT_MS = 200;
/** After a failed write (the target unreachable), how long before the same write is tried again. */
const RETRY_MS = 1_000;

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/** Settings the bridge's correctness rests on; a --source-option may not change them. */
export const RESERVED_SOURCE_OPTIONS = ['isolation.level', 'enable.auto.commit', 'enable.partition.eof', 'group.id', 'enable.auto.offset.store', 'bootstrap.servers'];

export class Bridge {
  private readonly partitions = new Map<string, PartitionCopy>();
  private readonly topics = new Map<string, TopicCopy>();
  private readonly groups = new Map<string, GroupCopy>();
  private readonly configs: SourceConfigReader;
  private readonly target: BridgeTarget;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private refreshTimer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> = Promise.resolve();
  private failure: Error | null = null;
  readonly startedAt = Date.now();
  copied = 0;

  private constructor(
    private readonly options: BridgeOptions,
    private readonly consumer: KafkaConsumer,
    private readonly admin: IAdminClient,
  ) {
    this.configs = sourceConfigReader(options.source, options.sourceOptions);
    this.target = 'target' in options ? options.target : new CoreTarget(options.core, options.compression, options.log);
    if (this.configs.unavailable) options.log.warn(`Topic configs are not copied: ${this.configs.unavailable}.`);
  }

  /** Connects to the source, copies what matches, and keeps following it until stop(). */
  static async start(options: BridgeOptions): Promise<Bridge> {
    const rdkafka = await loadLibrdkafka();
    const { KafkaConsumer, AdminClient } = rdkafka;
    const common = { 'bootstrap.servers': options.source, 'client.id': 'queen-bridge', ...LOG_EVENTS, ...options.sourceOptions };
    const consumer = new KafkaConsumer(
      {
        ...common,
        // Never joined or committed: partitions are assigned by hand at the target's next offsets.
        'group.id': 'queen-bridge',
        'enable.auto.commit': false,
        'enable.auto.offset.store': false,
        'isolation.level': 'read_committed',
        'enable.partition.eof': true,
      },
      // The target's next offset fell off the source's log start (retention): copy from where the source begins.
      { 'auto.offset.reset': 'earliest' },
    );
    await connectNamingErrors(consumer, `the source ${options.source}`, 'Check --source and the --source-option security settings.', options.log);
    consumer.setDefaultConsumeTimeout(CONSUME_WAIT_MS);
    const admin = AdminClient.createFrom(consumer);
    const bridge = new Bridge(options, consumer, admin);
    consumer.on('data', (m) => bridge.accept(m));
    consumer.on('partition.eof', (e) => bridge.endOfPartition(e.topic, e.partition, e.offset));
    await bridge.refresh();
    bridge.loop = bridge.run();
    bridge.scheduleRefresh();
    return bridge;
  }

  /** Resolves when the copy stops by itself: only on a failure the bridge cannot go past (it rejects with the reason). */
  get done(): Promise<void> {
    return this.loop ?? Promise.resolve();
  }

  /** Stops reading, writes what was read, and disconnects. */
  async stop(): Promise<BridgeProgress> {
    this.stopping = true;
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    await this.loop?.catch(() => {});
    await this.refreshing.catch(() => {});
    this.configs.close();
    await this.target.close();
    await new Promise<void>((resolve) => this.consumer.disconnect(() => resolve()));
    return this.progress();
  }

  progress(): BridgeProgress {
    const lagByTopic = new Map<string, number>();
    for (const p of this.partitions.values()) {
      let end = p.next;
      try {
        end = Math.max(end, this.consumer.getWatermarkOffsets(p.topic, p.partition).highOffset ?? end);
      } catch {
        // Nothing fetched from it yet: no end known.
      }
      lagByTopic.set(p.topic, (lagByTopic.get(p.topic) ?? 0) + Math.max(0, end - p.next - p.pending.length));
    }
    return {
      startedAt: this.startedAt,
      copied: this.copied,
      topics: [...this.topics].map(([topic, t]) => ({ topic, copied: t.copied, lag: lagByTopic.get(topic) ?? 0 })).sort((a, b) => a.topic.localeCompare(b.topic)),
      groups: [...this.groups].map(([group, g]) => ({ group, commits: g.commits, moved: g.moved, inStep: g.moved === null })).sort((a, b) => a.group.localeCompare(b.group)),
    };
  }

  // ─── Records ─────────────────────────────────────────────────────────────

  private accept(m: Message): void {
    const p = this.partitions.get(key(m.topic, m.partition));
    if (!p || m.offset < p.next) return;
    p.pending.push({ offset: m.offset, key: toBuffer(m.key), value: m.value ?? null, headers: fromHeaders(m.headers), timestamp: m.timestamp ?? -1 });
  }

  private endOfPartition(topic: string, partition: number, offset: number): void {
    const p = this.partitions.get(key(topic, partition));
    // librdkafka raises it after every record before it, so every offset below is either pending or copied.
    if (p && offset > p.next) p.endOffset = Math.max(p.endOffset ?? 0, offset);
  }

  /**
   * Reads the source and writes to the target at the same time: a write
   * (flush) runs while the next records are read, so the copy goes at the
   * slower of the two rather than at their sum. One write is out at a time
   * (a Kafka target's transactions stay one after another, and each target's
   * ledger moves in order); reading stops about 2 × FLUSH_RECORDS per
   * partition ahead of what is written.
   */
  private async run(): Promise<void> {
    let writing: Promise<void> | null = null;
    while (!this.stopping) {
      const read = await new Promise<number>((resolve, reject) =>
        this.consumer.consume(CONSUME_RECORDS, (err, messages) => (err ? reject(new Error(`Reading the source failed: ${err.message}`)) : resolve(messages.length))),
      ).catch((e: Error) => {
        this.options.log.warn({ err: e.message }, 'reading the source failed; trying again');
        return 0;
      });
      const buffered = [...this.partitions.values()].reduce((n, p) => Math.max(n, p.pending.length), 0);
      if (writing === null && (read < CONSUME_RECORDS || buffered >= FLUSH_RECORDS)) {
        writing = this.flush()
          .catch((e: Error) => {
            this.failure ??= e;
          })
          .finally(() => {
            writing = null;
          });
      }
      if (writing !== null && buffered >= 2 * FLUSH_RECORDS) await writing;
      if (this.failure) throw this.failure;
    }
    await writing;
    if (this.failure) throw this.failure;
    await this.flush();
  }

  /** Writes every partition's pending records (and trailing gaps), retrying while the target is unreachable. */
  private async flush(): Promise<void> {
    const { target } = this;
    const { log } = this.options;
    for (;;) {
      const copies = [...this.partitions.values()].filter((p) => p.pending.length > 0 || (p.endOffset !== null && p.endOffset > p.next));
      if (copies.length === 0) return;
      // A copy of what is pending now: records read while the write is out are added to p.pending, not to the write.
      const writes: PartitionWrite[] = copies.map((p) => ({ topic: p.topic, partition: p.partition, next: p.next, records: p.pending.slice(), endOffset: p.endOffset }));
      let answers;
      try {
        answers = await target.write(writes);
      } catch (e) {
        // The target unreachable or full: the same write again later is safe. Anything else (and anything while stopping) ends the copy.
        if (!target.passing(e) || this.stopping || this.failure) throw e;
        log.warn({ err: (e as Error).message }, `writing to ${target.name} failed; the same records are written again (the target's ledger writes nothing twice)`);
        await new Promise((r) => setTimeout(r, RETRY_MS));
        continue;
      }
      answers.forEach((answer, i) => {
        const p = copies[i]!;
        if ('refused' in answer) {
          this.failure ??= new Error(`${capitalized(target.name)} refused the records of ${p.topic}/${p.partition} from offset ${writes[i]!.records[0]?.offset ?? p.next}: ${answer.refused}. The bridge stops; fix the cause and start it again (it resumes where the target ends).`);
          return;
        }
        // Records read while the write was out are pending too, above what it wrote: only those below the target's next offset count.
        const written = p.pending.filter((rec) => rec.offset < answer.next).length;
        p.pending = p.pending.filter((rec) => rec.offset >= answer.next);
        p.next = answer.next;
        if (p.endOffset !== null && p.endOffset <= p.next) p.endOffset = null;
        p.copied += written;
        this.topics.get(p.topic)!.copied += written;
        this.copied += written;
      });
      if (this.failure) throw this.failure;
    }
  }

  // ─── Topics, partitions, groups ──────────────────────────────────────────

  private scheduleRefresh(): void {
    if (this.stopping) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshing = this.refresh()
        .catch((e: Error) => this.options.log.warn({ err: e.message }, 'looking for new topics and group offsets failed; trying again'))
        .finally(() => this.scheduleRefresh());
    }, this.options.refreshIntervalMs);
  }

  /** Finds matching topics and new partitions, creates them on the target, assigns them; then copies group offsets. */
  private async refresh(): Promise<void> {
    const metadata = await new Promise<{ topics: { name: string; partitions: unknown[] }[] }>((resolve, reject) =>
      this.consumer.getMetadata({ allTopics: true, timeout: 15_000 }, (err, data) => (err ? reject(new Error(`Reading the source's topics failed: ${err.message}`)) : resolve(data))),
    );
    for (const { name, partitions } of metadata.topics) {
      if (this.stopping) return;
      if (name.startsWith('__') || !fullMatch(this.options.topics, name) || partitions.length === 0) continue;
      const known = this.topics.get(name);
      if (known && known.partitions >= partitions.length) continue;
      await this.follow(name, partitions.length, known);
    }
    if (this.options.groups) await this.copyGroupOffsets(this.options.groups);
  }

  private async follow(topic: string, count: number, known: TopicCopy | undefined): Promise<void> {
    const from = known?.partitions ?? 0;
    const starts = await this.target.follow(topic, count, from, () => this.configs.topicConfigs(topic));
    const assignments = starts.map((next, i) => {
      const partition = from + i;
      this.partitions.set(key(topic, partition), { topic, partition, next, pending: [], endOffset: null, copied: 0 });
      return { topic, partition, offset: next };
    });
    this.topics.set(topic, { partitions: count, copied: known?.copied ?? 0 });
    // Added to what is assigned already, at the target's next offsets (absent from the binding's types).
    (this.consumer as unknown as { incrementalAssign(a: typeof assignments): void }).incrementalAssign(assignments);
    this.options.log.info({ topic, from: assignments.map((a) => a.offset) }, `following ${topic} partitions ${from} to ${count - 1} from where ${this.target.name} ends`);
  }

  private async copyGroupOffsets(pattern: RegExp): Promise<void> {
    const listed = await new Promise<string[]>((resolve, reject) =>
      this.admin.listGroups({ timeout: 10_000 }, (err, result) => (err ? reject(new Error(`Listing the source's groups failed: ${err.message}`)) : resolve(result.groups.map((g) => g.groupId)))),
    );
    for (const group of listed) {
      if (this.stopping || !fullMatch(pattern, group)) continue;
      let state = this.groups.get(group);
      if (!state) {
        state = { moved: null, commits: 0 };
        this.groups.set(group, state);
      }
      if (state.moved) continue;
      const source = await new Promise<{ topic: string; partition: number; offset: number }[]>((resolve, reject) =>
        this.admin.listConsumerGroupOffsets([{ groupId: group }], { timeout: 10_000 }, (err, results) =>
          err ? reject(new Error(`Reading group ${group}'s offsets from the source failed: ${err.message}`)) : resolve(results[0]?.partitions ?? []),
        ),
      );
      await this.copyGroup(group, state, source);
    }
  }

  private async copyGroup(group: string, state: GroupCopy, source: { topic: string; partition: number; offset: number }[]): Promise<void> {
    const copied = await this.target.copyGroup(group, source, (topic, partition) => this.partitions.get(key(topic, partition))?.next);
    if ('moved' in copied) return this.groupMoved(group, state, copied.moved);
    if (copied.commits === 0) return;
    state.commits += copied.commits;
    this.options.log.debug({ group, offsets: copied.commits }, `copied ${copied.commits} committed offsets of group ${group}`);
  }

  private groupMoved(group: string, state: GroupCopy, why: string): void {
    state.moved = why;
    this.options.log.info({ group }, `group ${group} has moved to the target (${why}); its offsets are no longer copied`);
  }
}

function capitalized(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function fullMatch(pattern: RegExp, name: string): boolean {
  const m = pattern.exec(name);
  return m !== null && m.index === 0 && m[0].length === name.length;
}

function toBuffer(v: Buffer | string | null | undefined): Buffer | null {
  if (v === null || v === undefined) return null;
  return typeof v === 'string' ? Buffer.from(v) : v;
}

function fromHeaders(headers: MessageHeader[] | undefined): { key: string; value: Buffer | null }[] {
  const out: { key: string; value: Buffer | null }[] = [];
  for (const h of headers ?? []) for (const [k, v] of Object.entries(h)) out.push({ key: k, value: v === null || v === undefined ? null : Buffer.isBuffer(v) ? v : Buffer.from(v) });
  return out;
}

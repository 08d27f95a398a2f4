/**
 * The migration bridge: keeps a Queen copy of a Kafka cluster's topics and
 * consumer-group offsets in step, offset for offset, until every client has
 * moved. It reads the source with librdkafka and writes only through the Core
 * interface (an in-process engine or a core over the RPC).
 *
 * Exactly once by construction: every record is appended at its source offset
 * with Core.appendAt, which writes nothing below the partition's next offset
 * (answered already_there, under the partition lock). The target log is the
 * ledger of what was copied: a (re)started bridge reads each partition's next
 * offset from the target and asks the source for the records from there, so a
 * kill at any moment loses nothing and writes nothing twice.
 *
 * Transactions: the source is read read_committed. Committed records are
 * copied; aborted records and the transaction markers become gaps. A marker
 * at the end of a partition is covered by appendAt's endOffset (the source's
 * end, from librdkafka's end-of-partition event), so a consumer position there
 * is valid on the target too.
 *
 * Group offsets: each group's committed offsets are read from the source and
 * committed on the target, marked with COMMIT_METADATA, once the partition's
 * records up to that offset are copied (a consumer switching then never meets
 * an offset past the target's end). A group that has moved is left alone from
 * then on: one with members on the target (the coordinator refuses a commit
 * from outside a group with members), or one whose target offsets were
 * committed by someone other than the bridge.
 */
import type { Logger } from 'pino';
import type { KafkaConsumer, IAdminClient, Message, MessageHeader } from '@confluentinc/kafka-javascript';
import type { Core } from '../core/core.js';
import type { AppendAtPartition } from '../core/core.js';
import { CoreError } from '../core/errors.js';
import type { CompressionCodec } from '../../protocol/records/compression.js';
import { KAFKA_QUEUE_CONFIG } from '../gateway/topics.js';
import { topicConfigFromEntries, TopicConfigError } from '../gateway/topic-configs.js';
import { encodeCopy, type SourceRecord } from './copy-batches.js';
import { loadLibrdkafka } from './librdkafka.js';
import { sourceConfigReader, type SourceConfigReader } from './source-configs.js';

/** The metadata of every offset the bridge commits on the target: how it tells its own commits from a moved group's. */
export const COMMIT_METADATA = 'queen-bridge';

export interface BridgeOptions {
  /** The source's bootstrap servers, "host:port,host:port". */
  source: string;
  /** librdkafka settings for the source (security.protocol, sasl.*, ssl.*, ...). */
  sourceOptions: Readonly<Record<string, string>>;
  /** Topics to copy: names this matches in full. */
  topics: RegExp;
  /** Consumer groups whose offsets to copy: names this matches in full; null copies none. */
  groups: RegExp | null;
  core: Core;
  compression: CompressionCodec;
  /** How often new topics, partitions and group offsets are looked for. */
  refreshIntervalMs: number;
  log: Logger;
}

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
  logAppendTime: boolean;
  copied: number;
}

interface GroupCopy {
  moved: string | null;
  /** What the bridge last committed, per partition key. */
  committed: Map<string, number>;
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
/** Bytes of encoded batches per appendAt call. */
const MAX_CALL_BYTES = 8 * 1024 * 1024;
/** Records asked of librdkafka per consume call, and how long one waits for the first. */
const CONSUME_RECORDS = 5_000;
const CONSUME_WAIT_MS = 200;
/** After a failed write (the core unreachable), how long before the same write is tried again. */
const RETRY_MS = 1_000;

/** librdkafka's syslog severity for errors: what its log events are kept from (--source-option log_level changes it). */
const LIBRDKAFKA_ERROR = 3;

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/** Settings the bridge's correctness rests on; a --source-option may not change them. */
export const RESERVED_SOURCE_OPTIONS = ['isolation.level', 'enable.auto.commit', 'enable.partition.eof', 'group.id', 'enable.auto.offset.store', 'bootstrap.servers'];

export class Bridge {
  private readonly partitions = new Map<string, PartitionCopy>();
  private readonly topics = new Map<string, TopicCopy>();
  private readonly groups = new Map<string, GroupCopy>();
  private readonly configs: SourceConfigReader;
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
    if (this.configs.unavailable) options.log.warn(`Topic configs are not copied: ${this.configs.unavailable}.`);
  }

  /** Connects to the source, copies what matches, and keeps following it until stop(). */
  static async start(options: BridgeOptions): Promise<Bridge> {
    const rdkafka = await loadLibrdkafka();
    const { KafkaConsumer, AdminClient } = rdkafka;
    const common = { 'bootstrap.servers': options.source, 'client.id': 'queen-bridge', 'event_cb': true, 'log_level': LIBRDKAFKA_ERROR, ...options.sourceOptions };
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
    // librdkafka's connect fails with "broker transport failure" alone; why (a refused login, a certificate) is only
    // in its log, which event_cb hands over: its errors go to the bridge's log, and the first few into that failure.
    const reasons: string[] = [];
    consumer.on('event.log', (e: { severity: number; fac: string; message: string }) => {
      if (e.severity > LIBRDKAFKA_ERROR) return;
      if (reasons.length < 3 && !reasons.includes(e.message)) reasons.push(e.message);
      options.log.warn({ facility: e.fac }, `librdkafka: ${e.message}`);
    });
    await new Promise<void>((resolve, reject) =>
      consumer.connect({ timeout: 30_000 }, (err) =>
        err
          ? reject(new Error(`The bridge could not connect to the source ${options.source}: ${err.message}${reasons.length > 0 ? ` (${reasons.join('; ')})` : ''}. Check --source and the --source-option security settings.`))
          : resolve(),
      ),
    );
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
   * slower of the two rather than at their sum. It reads at most about
   * 2 × FLUSH_RECORDS per partition ahead of what is written.
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

  /** Writes every partition's pending records (and trailing gaps), retrying while the core is unreachable. */
  private async flush(): Promise<void> {
    for (;;) {
      const calls = this.pendingCalls();
      if (calls.length === 0) return;
      for (const call of calls) {
        try {
          await this.write(call);
        } catch (e) {
          // The core unreachable or full: the same write again later is safe. Anything else (and anything while stopping) ends the copy.
          const passing = !(e instanceof CoreError) || ['unavailable', 'closed', 'storage_full'].includes(e.code);
          // A partition the target refused (this.failure) is not tried again.
          if (!passing || this.stopping || this.failure) throw e;
          this.options.log.warn({ err: (e as Error).message }, 'writing to the target failed; the same records are written again (appendAt writes nothing twice)');
          await new Promise((r) => setTimeout(r, RETRY_MS));
          break;
        }
      }
    }
  }

  private pendingCalls(): { copies: PartitionCopy[]; parts: AppendAtPartition[] }[] {
    const calls: { copies: PartitionCopy[]; parts: AppendAtPartition[] }[] = [];
    let call = { copies: [] as PartitionCopy[], parts: [] as AppendAtPartition[] };
    let bytes = 0;
    for (const p of this.partitions.values()) {
      const trailing = p.endOffset !== null && p.endOffset > p.next;
      if (p.pending.length === 0 && !trailing) continue;
      const topic = this.topics.get(p.topic)!;
      const records = p.pending.length > 0 ? encodeCopy(p.pending, { logAppendTime: topic.logAppendTime, compression: this.options.compression }) : Buffer.alloc(0);
      if (bytes > 0 && bytes + records.length > MAX_CALL_BYTES) {
        calls.push(call);
        call = { copies: [], parts: [] };
        bytes = 0;
      }
      call.copies.push(p);
      call.parts.push({ queue: p.topic, partition: p.partition, records, ...(p.endOffset !== null ? { endOffset: p.endOffset } : {}) });
      bytes += records.length;
    }
    if (call.parts.length > 0) calls.push(call);
    return calls;
  }

  private async write(call: { copies: PartitionCopy[]; parts: AppendAtPartition[] }): Promise<void> {
    const { partitions: results } = await this.options.core.appendAt({ partitions: call.parts });
    results.forEach((r, i) => {
      const p = call.copies[i]!;
      if (r.error === null || r.error === 'already_there') {
        if (r.error === 'already_there') {
          this.options.log.warn({ topic: p.topic, partition: p.partition, nextOffset: r.nextOffset }, `records from offset ${p.pending[0]?.offset} of ${p.topic}/${p.partition} are on the target already (another bridge, or a retried write); going on from ${r.nextOffset}`);
        }
        // Records read while the write was out are pending too, above what it wrote.
        const written = p.pending.filter((rec) => rec.offset < r.nextOffset).length;
        p.pending = p.pending.filter((rec) => rec.offset >= r.nextOffset);
        p.next = r.nextOffset;
        if (p.endOffset !== null && p.endOffset <= p.next) p.endOffset = null;
        p.copied += written;
        this.topics.get(p.topic)!.copied += written;
        this.copied += written;
        return;
      }
      this.failure = new Error(`The target refused the records of ${p.topic}/${p.partition} from offset ${p.pending[0]?.offset ?? p.next}: ${r.errorMessage ?? r.error}. The bridge stops; fix the cause and start it again (it resumes where the target ends).`);
    });
    if (this.failure) throw this.failure;
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
    const { core, log } = this.options;
    let info = await core.describeQueue({ name: topic });
    let logAppendTime = known?.logAppendTime ?? false;
    if (!info) {
      const configs = (await this.configs.topicConfigs(topic)) ?? {};
      logAppendTime = configs['message.timestamp.type'] === 'LogAppendTime';
      info = await core.createQueue({ name: topic, partitions: count, config: { ...KAFKA_QUEUE_CONFIG, ...this.targetConfig(topic, configs) }, ifNotExists: true });
      log.info({ topic, partitions: count }, `created ${topic} on the target with ${count} partitions`);
    } else if (!known) {
      logAppendTime = info.config.timestampType === 'LogAppendTime';
    }
    if (info.partitions.length < count) {
      info = await core.addPartitions({ name: topic, totalCount: count });
      log.info({ topic, partitions: count }, `${topic} has ${count} partitions on the source now; added the new ones on the target`);
    }
    const from = known?.partitions ?? 0;
    const refs = Array.from({ length: count - from }, (_, i) => ({ queue: topic, partition: from + i }));
    const { partitions: offsets } = await core.offsets({ partitions: refs });
    const assignments = offsets.map((o) => {
      if (o.error) throw new Error(`The target's partition ${topic}/${o.partition} cannot be read (${o.error}).`);
      this.partitions.set(key(topic, o.partition), { topic, partition: o.partition, next: o.highWatermark, pending: [], endOffset: null, copied: 0 });
      return { topic, partition: o.partition, offset: o.highWatermark };
    });
    this.topics.set(topic, { partitions: count, logAppendTime, copied: known?.copied ?? 0 });
    // Added to what is assigned already, at the target's next offsets (absent from the binding's types).
    (this.consumer as unknown as { incrementalAssign(a: typeof assignments): void }).incrementalAssign(assignments);
    log.info({ topic, from: assignments.map((a) => a.offset) }, `following ${topic} partitions ${from} to ${count - 1} from the target's end`);
  }

  /**
   * The source's topic configs as the target's queue settings. One the target
   * refuses is left out, saying so; a compacted topic the target cannot
   * compact keeps every record instead (retention off), so nothing the
   * source still holds is deleted on the target by age or size.
   */
  private targetConfig(topic: string, configs: Record<string, string>): ReturnType<typeof topicConfigFromEntries> {
    const accepted: { name: string; value: string }[] = [];
    for (const [name, value] of Object.entries(configs)) {
      try {
        topicConfigFromEntries([{ name, value }]);
        accepted.push({ name, value });
      } catch (e) {
        if (!(e instanceof TopicConfigError)) throw e;
        const keepAll = name === 'cleanup.policy' && value.includes('compact');
        this.options.log.warn({ topic, config: name, value }, `${topic}: the target does not take ${name}=${value} (${e.message}); ${keepAll ? 'the copy keeps every record instead (no retention by time or size)' : 'the copy uses the target\'s default'}`);
        if (keepAll) accepted.push({ name: 'retention.ms', value: '-1' }, { name: 'retention.bytes', value: '-1' });
      }
    }
    return topicConfigFromEntries(accepted);
  }

  private async copyGroupOffsets(pattern: RegExp): Promise<void> {
    const listed = await new Promise<string[]>((resolve, reject) =>
      this.admin.listGroups({ timeout: 10_000 }, (err, result) => (err ? reject(new Error(`Listing the source's groups failed: ${err.message}`)) : resolve(result.groups.map((g) => g.groupId)))),
    );
    for (const group of listed) {
      if (this.stopping || !fullMatch(pattern, group)) continue;
      let state = this.groups.get(group);
      if (!state) {
        state = { moved: null, committed: new Map(), commits: 0 };
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
    const { core, log } = this.options;
    const target = await core.fetchOffsets({ group, partitions: null });
    const foreign = target.offsets.find((o) => o.offset >= 0 && o.metadata !== COMMIT_METADATA);
    if (foreign) return this.groupMoved(group, state, `it committed offset ${foreign.offset} of ${foreign.queue}/${foreign.partition} on the target itself`);
    const onTarget = new Map(target.offsets.map((o) => [key(o.queue, o.partition), o.offset]));
    const offsets = source
      .filter((s) => s.offset >= 0)
      .filter((s) => {
        const p = this.partitions.get(key(s.topic, s.partition));
        // Copied up to the committed offset, and not committed there already.
        return p !== undefined && p.next >= s.offset && onTarget.get(key(s.topic, s.partition)) !== s.offset;
      })
      .map((s) => ({ queue: s.topic, partition: s.partition, offset: s.offset, leaderEpoch: -1, metadata: COMMIT_METADATA }));
    if (offsets.length === 0) return;
    const { error } = await core.commitGroupOffsets({ group, generationId: -1, memberId: '', groupInstanceId: null, offsets });
    if (error) return this.groupMoved(group, state, `it has members on the target (the commit was answered ${error})`);
    for (const o of offsets) state.committed.set(key(o.queue, o.partition), o.offset);
    state.commits += offsets.length;
    log.debug({ group, offsets: offsets.length }, `copied ${offsets.length} committed offsets of group ${group}`);
  }

  private groupMoved(group: string, state: GroupCopy, why: string): void {
    state.moved = why;
    this.options.log.info({ group }, `group ${group} has moved to the target (${why}); its offsets are no longer copied`);
  }
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

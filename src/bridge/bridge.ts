/**
 * The migration bridge: keeps a copy of a Kafka-protocol cluster's topics and
 * consumer-group offsets in step until every client has moved. This file is
 * its reading side's conductor: it reads the source with the project's own
 * Kafka client (source.ts: record batches as the source stored them), follows
 * new topics and partitions, and lists group offsets; a target (target.ts)
 * writes what it read: the Queen core (to-core.ts, the source's batches byte
 * for byte at their offsets) or, in reverse for a rollback, an Apache Kafka
 * cluster (to-kafka.ts).
 *
 * Exactly once by construction: the target keeps the ledger of what it holds
 * in source offsets, and a (re)started bridge asks it where each partition
 * stands and reads the source from there, so a kill at any moment loses
 * nothing and writes nothing twice.
 *
 * Transactions: the source is read read_uncommitted and every batch copied as
 * stored, aborted data and the transaction markers too; the target's appendAt
 * rebuilds the partition's open transactions (its last stable offset) and
 * aborted index from them, so its read_committed readers read what the
 * source's do, and its read_uncommitted readers the aborted records too.
 *
 * Group offsets: each group's committed offsets are read from the source and
 * handed to the target, which commits those whose records are copied (a
 * consumer switching then never meets an offset past the target's end) and
 * says when a group has moved to it; a moved group is left alone from then on.
 */
import type { Logger } from 'pino';
import { KafkaClient } from '../kafka-client/client.js';
import { KafkaConnectionError } from '../kafka-client/errors.js';
import { ClientSettingError } from '../kafka-client/settings.js';
import type { BridgeTarget, PartitionWrite } from './target.js';
import { CoreTarget } from './to-core.js';
import { BUFFER_BYTES, bufferLimits, SourceReader, type PartitionCopy } from './source.js';
import type { Core } from '../core/core.js';

export { COMMIT_METADATA } from './target.js';
export { BUFFER_BYTES } from './source.js';

export interface BridgeSource {
  /** The source's bootstrap servers, "host:port,host:port". */
  source: string;
  /** Security settings for the source under librdkafka's names (security.protocol, sasl.*, ssl.*; src/kafka-client/settings.ts). */
  sourceOptions: Readonly<Record<string, string>>;
  /** Topics to copy: names this matches in full. */
  topics: RegExp;
  /** Consumer groups whose offsets to copy: names this matches in full; null copies none. */
  groups: RegExp | null;
  /** How often new topics, partitions and group offsets are looked for. */
  refreshIntervalMs: number;
  /** Bytes of source batches held in memory, read and not yet written (the write out included): BUFFER_BYTES unless given. */
  bufferBytes?: number;
  log: Logger;
}

/** Where the records go: a target (a KafkaTarget, to-kafka.ts), or a core, which becomes a CoreTarget (to-core.ts). */
export type BridgeOptions = BridgeSource & ({ target: BridgeTarget } | { core: Core });

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
  /** Offsets in the source (up to its last stable offset) not yet on the target, as the last fetch saw the source's end. */
  lag: number;
}

export interface BridgeProgress {
  startedAt: number;
  copied: number;
  /** Bytes of source batches in memory, read and not yet written. */
  bufferedBytes: number;
  topics: TopicProgress[];
  groups: { group: string; commits: number; moved: string | null; inStep: boolean }[];
}

/** After a failed write (the target unreachable), how long before the same write is tried again. */
const RETRY_MS = 1_000;

const key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/** Settings the bridge's correctness rests on; a --source-option may not change them. */
export const RESERVED_SOURCE_OPTIONS = ['isolation.level', 'enable.auto.commit', 'enable.partition.eof', 'group.id', 'enable.auto.offset.store', 'bootstrap.servers'];

export class Bridge {
  private readonly partitions = new Map<string, PartitionCopy>();
  private readonly topics = new Map<string, TopicCopy>();
  private readonly groups = new Map<string, GroupCopy>();
  private readonly target: BridgeTarget;
  private readonly reader: SourceReader;
  private readonly writeBytes: number;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private wakeWriter: (() => void) | null = null;
  private refreshTimer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> = Promise.resolve();
  private failure: Error | null = null;
  readonly startedAt = Date.now();
  copied = 0;

  private constructor(
    private readonly options: BridgeOptions,
    private readonly client: KafkaClient,
  ) {
    this.target = 'target' in options ? options.target : new CoreTarget(options.core, options.log);
    const budget = options.bufferBytes ?? BUFFER_BYTES;
    this.reader = new SourceReader(client, this.partitions, options.log, () => this.wakeWriter?.(), bufferLimits(budget), this.target.takesMarkers);
    // Bytes of batches handed to the target in one write (the core's appendAt calls split it further): half the budget.
    this.writeBytes = Math.floor(budget / 2);
  }

  /** Connects to the source, copies what matches, and keeps following it until stop(). */
  static async start(options: BridgeOptions): Promise<Bridge> {
    let client: KafkaClient;
    try {
      client = await KafkaClient.connect({ bootstrap: options.source, settings: options.sourceOptions, clientId: 'queen-bridge' });
    } catch (e) {
      if (!(e instanceof KafkaConnectionError) && !(e instanceof ClientSettingError)) throw e;
      throw new Error(`The bridge could not connect to the source ${options.source}: ${e.message}. Check --source and the --source-option security settings.`);
    }
    const bridge = new Bridge(options, client);
    try {
      await bridge.refresh();
    } catch (e) {
      client.close();
      throw e;
    }
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
    await this.reader.stop();
    this.wakeWriter?.();
    await this.loop?.catch(() => {});
    await this.refreshing.catch(() => {});
    await this.target.close();
    this.client.close();
    return this.progress();
  }

  progress(): BridgeProgress {
    const lagByTopic = new Map<string, number>();
    for (const p of this.partitions.values()) lagByTopic.set(p.topic, (lagByTopic.get(p.topic) ?? 0) + Math.max(0, p.sourceEnd - p.next));
    return {
      startedAt: this.startedAt,
      copied: this.copied,
      bufferedBytes: this.reader.buffered,
      topics: [...this.topics].map(([topic, t]) => ({ topic, copied: t.copied, lag: lagByTopic.get(topic) ?? 0 })).sort((a, b) => a.topic.localeCompare(b.topic)),
      groups: [...this.groups].map(([group, g]) => ({ group, commits: g.commits, moved: g.moved, inStep: g.moved === null })).sort((a, b) => a.group.localeCompare(b.group)),
    };
  }

  // ─── Writing ─────────────────────────────────────────────────────────────

  /**
   * Writes what the reader fetched while it fetches on: one write is out at
   * a time (a Kafka target's transactions stay one after another, and each
   * target's ledger moves in order), and it takes whatever has arrived since
   * the last, so the copy goes at the slower of reading and writing.
   */
  private async run(): Promise<void> {
    while (!this.stopping) {
      if (!this.hasWork()) {
        await new Promise<void>((resolve) => {
          this.wakeWriter = resolve;
          setTimeout(resolve, 1_000).unref();
        });
        this.wakeWriter = null;
        continue;
      }
      await this.writeOnce();
      this.reader.wake();
    }
    while (this.hasWork()) await this.writeOnce();
  }

  private hasWork(): boolean {
    for (const p of this.partitions.values()) if (p.pending.length > 0 || p.fetchAt > p.next) return true;
    return false;
  }

  /** One write of what is pending (up to half the buffer budget), retried while the target is unreachable. Long because each answer updates its partition's ledger. */
  private async writeOnce(): Promise<void> {
    const { target } = this;
    const { log } = this.options;
    const writes: PartitionWrite[] = [];
    const copies: PartitionCopy[] = [];
    let bytes = 0;
    for (const p of this.partitions.values()) {
      if (bytes >= this.writeBytes) break;
      if (p.pending.length === 0 && p.fetchAt <= p.next) continue;
      let n = 0;
      while (n < p.pending.length && (n === 0 || bytes < this.writeBytes)) bytes += p.pending[n++]!.bytes.length;
      const batches = p.pending.slice(0, n);
      const end = n === p.pending.length && p.fetchAt > (batches.at(-1)?.nextOffset ?? p.next) ? p.fetchAt : null;
      writes.push({ topic: p.topic, partition: p.partition, next: p.next, batches, endOffset: end });
      copies.push(p);
    }
    let answers;
    try {
      answers = await target.write(writes);
    } catch (e) {
      // The target unreachable or full: the same write again later is safe. Anything else ends the copy.
      if (!target.passing(e) || this.failure) throw e;
      log.warn({ err: (e as Error).message }, `writing to ${target.name} failed; the same records are written again (the target's ledger writes nothing twice)`);
      await new Promise((r) => setTimeout(r, RETRY_MS));
      return;
    }
    answers.forEach((answer, i) => {
      const p = copies[i]!;
      if ('refused' in answer) {
        this.failure ??= new Error(`${capitalized(target.name)} refused the records of ${p.topic}/${p.partition} from offset ${writes[i]!.batches[0]?.baseOffset ?? p.next}: ${answer.refused}. The bridge stops; fix the cause and start it again (it resumes where the target ends).`);
        return;
      }
      let written = 0;
      let dropped = 0;
      while (p.pending.length > 0 && p.pending[0]!.nextOffset <= answer.next) {
        const b = p.pending.shift()!;
        written += b.recordCount;
        dropped += b.bytes.length;
      }
      if (p.pending.length > 0 && p.pending[0]!.baseOffset < answer.next) {
        // The target is ahead of what was read (another bridge wrote there): read again from its end.
        dropped += p.pending.reduce((n, b) => n + b.bytes.length, 0);
        p.pending = [];
        p.fetchAt = answer.next;
      }
      p.pendingBytes -= dropped;
      this.reader.buffered -= dropped;
      p.next = answer.next;
      if (p.fetchAt < p.next) p.fetchAt = p.next;
      p.copied += written;
      this.topics.get(p.topic)!.copied += written;
      this.copied += written;
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

  /** Finds matching topics and new partitions, creates them on the target, starts reading them; then copies group offsets. */
  private async refresh(): Promise<void> {
    let topics;
    try {
      topics = await this.client.refreshMetadata(null);
    } catch (e) {
      throw new Error(`Reading the source's topics failed: ${(e as Error).message}`);
    }
    for (const { name, partitions, isInternal } of topics) {
      if (this.stopping) return;
      if (isInternal || name.startsWith('__') || !fullMatch(this.options.topics, name) || partitions.length === 0) continue;
      const known = this.topics.get(name);
      if (known && known.partitions >= partitions.length) continue;
      await this.follow(name, partitions.length, known);
    }
    for (const p of this.partitions.values()) if (p.stale && (this.client.leaderOf(p.topic, p.partition)?.leader ?? -1) >= 0) p.stale = false;
    this.reader.startLoops();
    if (this.options.groups) await this.copyGroupOffsets(this.options.groups);
  }

  private async follow(topic: string, count: number, known: TopicCopy | undefined): Promise<void> {
    const from = known?.partitions ?? 0;
    const starts = await this.target.follow(topic, count, from, () => this.topicConfigs(topic));
    starts.forEach((next, i) => {
      const partition = from + i;
      this.partitions.set(key(topic, partition), { topic, partition, next, fetchAt: next, pending: [], pendingBytes: 0, sourceEnd: next, stale: false, copied: 0 });
    });
    this.topics.set(topic, { partitions: count, copied: known?.copied ?? 0 });
    this.options.log.info({ topic, from: starts }, `following ${topic} partitions ${from} to ${count - 1} from where ${this.target.name} ends`);
  }

  /** The configs set on the source topic; null (the target's defaults, logged) when the source will not say. */
  private async topicConfigs(topic: string): Promise<Record<string, string> | null> {
    try {
      return await this.client.topicConfigs(topic);
    } catch (e) {
      this.options.log.warn({ topic, err: (e as Error).message }, `${topic}'s configs could not be read from the source; it is created with the target's defaults`);
      return null;
    }
  }

  private async copyGroupOffsets(pattern: RegExp): Promise<void> {
    const listed = await this.client.listGroups().catch((e: Error) => Promise.reject(new Error(`Listing the source's groups failed: ${e.message}`)));
    for (const group of listed) {
      if (this.stopping || !fullMatch(pattern, group)) continue;
      let state = this.groups.get(group);
      if (!state) {
        state = { moved: null, commits: 0 };
        this.groups.set(group, state);
      }
      if (state.moved) continue;
      const source = await this.client.groupOffsets(group).catch((e: Error) => Promise.reject(new Error(`Reading group ${group}'s offsets from the source failed: ${e.message}`)));
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

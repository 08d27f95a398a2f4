/**
 * The bridge's reading side on the project's own Kafka client
 * (src/kafka-client): one fetch loop per source broker, each asking its
 * partitions' leader for their record batches, read_uncommitted, and keeping
 * every batch byte for byte as the source stored it: transactional data,
 * aborted or not, and the COMMIT and ABORT markers, which the core's appendAt
 * turns into the target partition's open transactions and aborted index, so
 * the target's read_committed view is the source's (a trailing gap, which
 * compaction leaves, is handed on as the partition's end). For a target that
 * cannot take markers (Kafka, in reverse: the bridge writes its own
 * transactions there) it reads read_committed and keeps only the committed
 * batches, aborted data and markers becoming gaps.
 *
 * - A leadership error (NOT_LEADER_OR_FOLLOWER and its kin) or a failed
 *   connection sets the partition aside until the metadata is read again,
 *   which happens at once; the loop of the new leader takes it up.
 * - OFFSET_OUT_OF_RANGE below the source's log start (retention) goes on from
 *   the log start; the target's log then has a gap there.
 * - A broker's throttle time is waited out before its next fetch.
 * - Each broker's loop keeps a fetch session with it (KIP-227,
 *   ../kafka-client/fetch-session.ts): a Fetch names only the partitions
 *   whose position or limit moved, as Kafka's consumers do.
 * - Memory: fetched batches wait for the target in memory, at most
 *   an eighth of the budget per partition and the budget in all (BUFFER_BYTES
 *   unless the bridge is given another, bufferLimits); a loop
 *   stops fetching while either is full (a broker may send one batch over a
 *   partition's limit, as Kafka's consumers allow, so the budget holds to
 *   within one batch per partition and one fetch answer per broker).
 */
import type { Logger } from 'pino';
import { KafkaClient, LEADERSHIP_ERRORS } from '../kafka-client/client.js';
import { committedBatches, storedBatches, type RawBatch } from '../kafka-client/fetch.js';
import { FetchSession } from '../kafka-client/fetch-session.js';
import { reencodeTail } from './copy-batches.js';

/** Bytes of fetched batches waiting for the target, in all, by default (the bridge's bufferBytes); reading pauses above it. */
export const BUFFER_BYTES = 64 * 1024 * 1024;

/** The reader's limits, in parts of the budget: per partition waiting 1/8, per fetch request 1/4 and per partition in it 1/16 (8, 16 and 4 MiB of 64). */
export interface BufferLimits {
  total: number;
  partition: number;
  fetch: number;
  partitionFetch: number;
}

export function bufferLimits(budget: number): BufferLimits {
  return { total: budget, partition: Math.floor(budget / 8), fetch: Math.floor(budget / 4), partitionFetch: Math.floor(budget / 16) };
}
const FETCH_WAIT_MS = 500;
/** After a failed fetch (broker unreachable), how long before that broker is asked again. */
const RETRY_MS = 500;
/** After a leadership error, how long before the metadata is read again. */
const LEADER_PAUSE_MS = 100;

const OFFSET_OUT_OF_RANGE = 1;

export interface PartitionCopy {
  topic: string;
  partition: number;
  /** The target's next offset: everything below it is copied. */
  next: number;
  /** Where reading the source goes on: past every batch fetched. */
  fetchAt: number;
  /** Batches fetched and not yet written, ascending. */
  pending: RawBatch[];
  pendingBytes: number;
  /** The source's end as last seen: its high watermark (its last stable offset when read read_committed). */
  sourceEnd: number;
  /** Waiting for new metadata (its leader moved or could not be reached). */
  stale: boolean;
  copied: number;
}

export class SourceReader {
  private readonly loops = new Map<number, Promise<void>>();
  private waiters: (() => void)[] = [];
  private metadataRefresh: Promise<void> | null = null;
  private stopping = false;
  /** Bytes of every partition's pending batches. */
  buffered = 0;

  constructor(
    readonly client: KafkaClient,
    private readonly partitions: ReadonlyMap<string, PartitionCopy>,
    private readonly log: Logger,
    /** Called when batches arrive (the writer wakes). */
    private readonly onBatches: () => void,
    private readonly limits: BufferLimits = bufferLimits(BUFFER_BYTES),
    /** Every batch as stored, read_uncommitted (a core target); false: only what a read_committed reader reads, aborted data and markers left as gaps (a Kafka target). */
    private readonly asStored = true,
  ) {}

  /** Starts a fetch loop for every broker leading a partition that has none yet. */
  startLoops(): void {
    for (const p of this.partitions.values()) {
      const leader = this.client.leaderOf(p.topic, p.partition)?.leader ?? -1;
      if (leader >= 0 && !this.loops.has(leader) && !this.stopping) this.loops.set(leader, this.fetchLoop(leader).finally(() => this.loops.delete(leader)));
    }
  }

  /** Space was freed (a write went through): loops waiting on the budget go on. */
  wake(): void {
    const waiting = this.waiters;
    this.waiters = [];
    for (const w of waiting) w();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await Promise.all(this.loops.values());
  }

  /** Reads the metadata again (once at a time), clears the stale marks and starts loops for new leaders. */
  refreshLeaders(): Promise<void> {
    this.metadataRefresh ??= (async () => {
      try {
        const topics = [...new Set([...this.partitions.values()].map((p) => p.topic))];
        await this.client.refreshMetadata(topics);
        for (const p of this.partitions.values()) if ((this.client.leaderOf(p.topic, p.partition)?.leader ?? -1) >= 0) p.stale = false;
        this.startLoops();
      } catch (e) {
        this.log.warn({ err: (e as Error).message }, 'reading the source\'s metadata failed; trying again');
        await sleep(RETRY_MS);
      } finally {
        this.metadataRefresh = null;
      }
    })();
    return this.metadataRefresh;
  }

  /** Long because it is one fetch round: the partitions asked, the request, each answer's outcome. */
  private async fetchLoop(nodeId: number): Promise<void> {
    const session = new FetchSession();
    while (!this.stopping) {
      const mine = [...this.partitions.values()].filter((p) => !p.stale && this.client.leaderOf(p.topic, p.partition)?.leader === nodeId);
      if (mine.length === 0) return;
      const { limits } = this;
      const asked = mine.filter((p) => p.pendingBytes < limits.partition);
      if (asked.length === 0 || this.buffered >= limits.total) {
        await new Promise<void>((resolve) => {
          this.waiters.push(resolve);
          setTimeout(resolve, FETCH_WAIT_MS).unref();
        });
        continue;
      }
      let answer;
      try {
        const connection = await this.client.connection(nodeId);
        const asks = asked.map((p) => ({ topic: p.topic, partition: p.partition, offset: p.fetchAt, maxBytes: limits.partitionFetch }));
        answer = await session.fetch(connection, asks, { maxWaitMs: FETCH_WAIT_MS, minBytes: 1, maxBytes: Math.min(limits.fetch, Math.max(limits.partitionFetch, limits.total - this.buffered)), readCommitted: !this.asStored });
      } catch (e) {
        if (this.stopping) return;
        this.log.warn({ broker: nodeId, err: (e as Error).message }, `fetching from source broker ${nodeId} failed; reading the metadata again`);
        for (const p of mine) p.stale = true;
        await sleep(RETRY_MS);
        await this.refreshLeaders();
        continue;
      }
      let arrived = false;
      for (const f of answer.partitions) {
        const p = this.partitions.get(`${f.topic}\u0000${f.partition}`);
        if (!p) continue;
        if (f.errorCode === OFFSET_OUT_OF_RANGE) {
          await this.restartAtLogStart(p);
        } else if (LEADERSHIP_ERRORS.has(f.errorCode)) {
          p.stale = true;
        } else if (f.errorCode !== 0) {
          this.log.warn({ topic: p.topic, partition: p.partition, errorCode: f.errorCode }, `the source answered error ${f.errorCode} for ${p.topic}/${p.partition}; asking again`);
        } else {
          arrived = this.accept(p, f.records, f.aborted, this.asStored || f.lastStableOffset < 0 ? f.highWatermark : f.lastStableOffset) || arrived;
        }
      }
      if (arrived) this.onBatches();
      if (mine.some((p) => p.stale)) {
        // A leader moved (or a topic went): the metadata again, after a pause, so a partition that stays unreadable is not asked in a tight loop.
        await sleep(LEADER_PAUSE_MS);
        await this.refreshLeaders();
      }
      if (answer.throttleTimeMs > 0) await sleep(answer.throttleTimeMs);
    }
  }

  /** Keeps a fetch's batches; true when there is something new for the target. */
  private accept(p: PartitionCopy, records: Buffer | null, aborted: { producerId: bigint; firstOffset: number }[], end: number): boolean {
    p.sourceEnd = end;
    const view = this.asStored ? storedBatches(records, p.fetchAt) : committedBatches(records, aborted, p.fetchAt);
    const tail = view.straddling ? reencodeTail(view.straddling, p.fetchAt) : null;
    const kept = tail ? [tail, ...view.batches] : view.batches;
    for (const b of kept) {
      p.pending.push(b);
      p.pendingBytes += b.bytes.length;
      this.buffered += b.bytes.length;
    }
    const moved = view.next > p.fetchAt;
    p.fetchAt = Math.max(p.fetchAt, view.next);
    // Nothing more to read now, and the source's end past what is kept: the gap (compaction's; read_committed, markers and aborted records) goes over too.
    return kept.length > 0 || (moved && p.fetchAt > (p.pending.at(-1)?.nextOffset ?? p.next));
  }

  private async restartAtLogStart(p: PartitionCopy): Promise<void> {
    try {
      const [start] = await this.client.listOffsets([{ topic: p.topic, partition: p.partition }], -2, true);
      if (start! > p.fetchAt) {
        this.log.warn({ topic: p.topic, partition: p.partition, from: p.fetchAt, logStart: start }, `${p.topic}/${p.partition} at the source starts at ${start}, past ${p.fetchAt} (retention): copying from there`);
        p.fetchAt = start!;
      }
    } catch (e) {
      this.log.warn({ err: (e as Error).message }, `reading the log start of ${p.topic}/${p.partition} failed`);
      p.stale = true;
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * One pass of a ShareFetch (KIP-932) over all its share-partitions at once:
 * the log's offsets of every partition fetched, one load of every
 * share-partition touched (acknowledged or fetched), the acknowledgements
 * applied and each fetched share-partition settled to find where it reads
 * from, one read of the log for all of them, the acquisition, and one store
 * of every state that changed (./change.ts). That is four statements on a
 * PostgreSQL engine for the whole request, whatever its partition count, the
 * first two sent together: three round trips' wait.
 */
import type { Engine } from '../../engine.js';
import type { PartitionOffsets, ReadError } from '../../core.js';
import { changeShares } from './change.js';
import {
  acknowledge, acquire, acquiredRanges, advanceStart, expireLocks, nextFetchOffset,
  type BatchSpan, type FailedSink, type SharePartitionKey, type SharePartitionState,
} from './partition-state.js';
import { batchSpans } from './spans.js';
import type { AcquiredRange, ShareAcknowledgement, ShareFetchPartitionResult, ShareFetchRequest, ShareGroupConfig, ShareGroupError } from './types.js';

/** Kafka's share.partition.max.record.locks default: most records in flight per share-partition. */
export const MAX_IN_FLIGHT = 2000;
/** The least a partition's read asks for (a producer's default batch), whatever the estimate of the bytes its records take. */
const MIN_READ_BYTES = 16 * 1024;

type Offsets = PartitionOffsets & { error: ReadError | null };

export interface FetchStep {
  acknowledged: { queue: string; partition: number; error: ShareGroupError | null }[];
  partitions: ShareFetchPartitionResult[];
  acquiredCount: number;
}

/** What one fetched partition needs through the step. */
interface Fetched {
  at: number;
  offsets: Offsets;
  end: number;
  batches: Buffer[];
  spans: BatchSpan[];
}

/** Bytes per record the reads have seen, to size each partition's read to the records it may acquire. */
export class ReadSizer {
  private bytes = 0;
  private records = 0;

  /**
   * Each partition's share of a read over `partitions` partitions that is to
   * find `maxRecords` records: twice its even share of their estimated
   * bytes (the database returns up to this much of every partition, and
   * MaxRecords is usually far fewer records than the partitions hold).
   */
  budget(maxRecords: number, maxBytes: number, partitions: number): number {
    const perRecord = this.records === 0 ? 1024 : this.bytes / this.records;
    return Math.min(maxBytes, Math.max(MIN_READ_BYTES, Math.ceil((2 * maxRecords * perRecord) / Math.max(1, partitions))));
  }

  saw(batches: Buffer[], spans: BatchSpan[]): void {
    for (const [i, b] of batches.entries()) {
      this.bytes += b.length;
      this.records += spans[i]!.lastOffset - spans[i]!.baseOffset + 1;
    }
    if (this.records > 1_000_000) [this.bytes, this.records] = [this.bytes / 2, this.records / 2];
  }
}

/**
 * A share-partition as a fetch finds it: initialized where share.auto.offset.reset
 * says when new, moved past records the log no longer holds, its ended locks
 * given back, its start offset past what is done.
 */
export function settle(stored: SharePartitionState | null, offsets: { logStartOffset: number; highWatermark: number }, config: ShareGroupConfig, now: number, failed: FailedSink = []): SharePartitionState {
  const state = stored ?? { startOffset: config['share.auto.offset.reset'] === 'earliest' ? offsets.logStartOffset : offsets.highWatermark, records: [] };
  if (state.startOffset < offsets.logStartOffset) {
    state.startOffset = offsets.logStartOffset;
    state.records = state.records.filter((r) => r.offset >= offsets.logStartOffset);
  }
  expireLocks(state, now, config['share.delivery.count.limit'], failed);
  advanceStart(state);
  return state;
}

/** Applies one share-partition's acknowledgements (its ended locks given back first); answers whether all applied. */
export function applyAcknowledgements(state: SharePartitionState, memberId: string, batches: ShareAcknowledgement['batches'], config: ShareGroupConfig, now: number, failed: FailedSink): boolean {
  const limit = config['share.delivery.count.limit'];
  expireLocks(state, now, limit, failed);
  const lockMs = config['share.record.lock.duration.ms'];
  const applied = batches.map((b) => acknowledge(state, { owner: memberId, ...b, now, lockMs, deliveryLimit: limit, failed }));
  advanceStart(state);
  return applied.every(Boolean);
}

const keyText = (queue: string, partition: number) => `${partition}/${queue}`;

/** Long because it is the step's round trips in order, each with the bookkeeping that joins them. */
export async function fetchStep(engine: Engine, req: ShareFetchRequest, config: ShareGroupConfig, acks: ShareAcknowledgement[], sizer: ReadSizer): Promise<FetchStep> {
  const readCommitted = config['share.isolation.level'] === 'read_committed';
  const keys: SharePartitionKey[] = [];
  const index = new Map<string, number>();
  const keyOf = (queue: string, partition: number): number => {
    const text = keyText(queue, partition);
    if (!index.has(text)) index.set(text, keys.push({ group: req.group, queue, partition }) - 1);
    return index.get(text)!;
  };
  const ackAt = new Map(acks.map((a) => [keyOf(a.queue, a.partition), a]));
  for (const p of req.partitions) keyOf(p.queue, p.partition);
  // The log's offsets and the share-partitions' states do not depend on each other: both asked at once.
  const [offsets, loaded] = await Promise.all([
    req.partitions.length === 0 ? { partitions: [] } : engine.log.offsets({ partitions: req.partitions }),
    keys.length === 0 ? { now: 0, partitions: [] } : engine.shares.load(keys),
  ]);
  const fetched = new Map<number, Fetched>();
  req.partitions.forEach((p, i) => {
    const o = offsets.partitions[i];
    if (o === undefined || o.error !== null) return;
    fetched.set(keyOf(p.queue, p.partition), { at: i, offsets: o, end: readCommitted ? o.lastStableOffset : o.highWatermark, batches: [], spans: [] });
  });
  // Where each fetched share-partition reads from, as the loaded states say (a store refused later decides again on fresh ones).
  const reads: { queue: string; partition: number; fetchOffset: number; maxBytes: number; key: number }[] = [];
  for (const [k, f] of fetched) {
    const state = loaded.partitions[k]!.state === null ? null : structuredClone(loaded.partitions[k]!.state);
    const ack = ackAt.get(k);
    if (state !== null && ack !== undefined) applyAcknowledgements(state, req.memberId, ack.batches, config, loaded.now, []);
    const fetchOffset = nextFetchOffset(settle(state, f.offsets, config, loaded.now));
    if (fetchOffset < f.end) reads.push({ queue: keys[k]!.queue, partition: keys[k]!.partition, fetchOffset, maxBytes: 0, key: k });
  }
  for (const r of reads) r.maxBytes = sizer.budget(req.maxRecords, req.maxBytes, reads.length);
  if (reads.length > 0) {
    const read = await engine.log.read({ partitions: reads, minBytes: 0, maxWaitMs: 0, maxBytes: req.maxBytes, isolation: readCommitted ? 'read_committed' : 'read_uncommitted' });
    read.partitions.forEach((got, i) => {
      const f = fetched.get(reads[i]!.key)!;
      if (got === undefined || got.error !== null) return;
      const spans = batchSpans(got.batches, readCommitted ? got.abortedTransactions : null);
      sizer.saw(got.batches, spans);
      const kept = spans.map((s, j) => ({ s, b: got.batches[j]! })).filter(({ s }) => s.baseOffset < f.end);
      f.spans = kept.map(({ s }) => s);
      f.batches = kept.map(({ b }) => b);
    });
  }
  const taken = new Map<number, number>();
  const answers = await changeShares(engine, req.group, keys, (k, stored, now, failed) => {
    const ack = ackAt.get(k);
    const ackError: ShareGroupError | null = ack === undefined ? null : stored === null ? 'invalid_record_state' : null;
    const acked = ack !== undefined && stored !== null ? applyAcknowledgements(stored, req.memberId, ack.batches, config, now, failed) : true;
    const f = fetched.get(k);
    taken.set(k, 0);
    if (f === undefined) return { state: stored ?? undefined, answer: { ackError: ackError ?? (acked ? null : 'invalid_record_state'), acquired: [] as AcquiredRange[] } };
    const state = settle(stored, f.offsets, config, now, failed);
    const room = req.maxRecords - [...taken.values()].reduce((a, b) => a + b, 0);
    const got = room <= 0 || f.spans.length === 0 ? [] : acquire(state, f.spans, { owner: req.memberId, now, lockMs: config['share.record.lock.duration.ms'], maxRecords: room, maxInFlight: MAX_IN_FLIGHT });
    taken.set(k, got.length);
    advanceStart(state);
    return { state, answer: { ackError: ackError ?? (acked ? null : 'invalid_record_state'), acquired: acquiredRanges(got) } };
  }, loaded);
  const partitions = req.partitions.map((p, i): ShareFetchPartitionResult => {
    const f = fetched.get(keyOf(p.queue, p.partition));
    if (f === undefined || f.at !== i) return { ...p, error: f === undefined ? 'unknown_topic_or_partition' : null, records: [], acquired: [] };
    const acquired = answers[keyOf(p.queue, p.partition)]!.acquired;
    const records = f.batches.filter((_, j) => acquired.some((r) => r.firstOffset <= f.spans[j]!.lastOffset && r.lastOffset >= f.spans[j]!.baseOffset));
    return { ...p, error: null, records, acquired };
  });
  return {
    acknowledged: acks.map((a) => ({ queue: a.queue, partition: a.partition, error: answers[keyOf(a.queue, a.partition)]!.ackError })),
    partitions,
    acquiredCount: [...taken.values()].reduce((a, b) => a + b, 0),
  };
}

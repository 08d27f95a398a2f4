import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import { BatchAttr, BatchPos, readBatchHeader } from '../../../protocol/records/batch-header.js';
import { decodeBatch, rebuildBatch } from '../../../protocol/records/record-batch.js';
import type { CompactionSettings, QueueConfig } from '../core.js';
import { CoreError } from '../errors.js';

/**
 * Log compaction, engine-independent: which part of a partition may be
 * compacted, when a partition is due, and what becomes of one stored batch.
 * The engines (engines/memory/compaction.ts, engines/postgres/compaction.ts)
 * walk their batches through these and write the results.
 *
 * Kafka's log cleaner is the model:
 * - The cleanable range runs from the log start to the first uncleanable
 *   offset: the active tail (Kafka's active segment; here the newest batches,
 *   at most segment.bytes of them, appended within segment.ms and
 *   max.compaction.lag.ms; the newest batch always), the last stable offset,
 *   and the first batch younger than min.compaction.lag.ms, whichever comes
 *   first. A reader positioned in the tail therefore sees every record.
 * - A partition is due when the dirty part (not compacted since the last
 *   pass) holds at least min.cleanable.dirty.ratio of the cleanable bytes,
 *   when a dirty batch is older than max.compaction.lag.ms, or when a kept
 *   tombstone's delete horizon has passed.
 * - A pass maps each key of the dirty part to its latest offset, then
 *   rewrites the cleanable range: a record survives when no later record has
 *   its key. A tombstone (null value) that is its key's latest survives
 *   until delete.retention.ms after the first pass that kept it (KIP-534:
 *   the delete horizon is stamped in the batch: the DeleteHorizon attribute,
 *   with the horizon as baseTimestamp). A record without a key is dropped, as
 *   Kafka's cleaner drops one (produce refuses them on compacted topics).
 * - A rewritten batch keeps its base offset, last offset delta, producer
 *   fields and codec, so the survivors keep their offsets; a batch left with
 *   no record goes. Control batches (transaction markers) are kept whole.
 *   Kafka keeps an emptied batch when it is a producer's last, to rebuild
 *   producer state from the log on restart; here producer state lives in the
 *   core's own tables, so nothing needs it, and the high watermark is the
 *   partition's own field (and the newest batch is never compacted).
 */

/** What passes did, for the benchmark and the logs. */
export interface CompactionStats {
  partitions: number;
  /** Records in the compacted ranges, each read and kept or removed. */
  recordsScanned: number;
  recordsRemoved: number;
  batchesRewritten: number;
  batchesRemoved: number;
}

export const emptyCompactionStats = (): CompactionStats => ({ partitions: 0, recordsScanned: 0, recordsRemoved: 0, batchesRewritten: 0, batchesRemoved: 0 });

/** Keys of the dirty range, by their bytes as latin1 text (one char per byte, lossless), to the latest offset. */
export type LatestOffsets = Map<string, number>;

/**
 * Most keys one pass maps. Kafka's cleaner bounds its offset map the same way
 * (log.cleaner.dedupe.buffer.size): a pass whose dirty range has more keys
 * compacts up to where the map filled, and the next pass goes on from there.
 */
export const MAX_MAPPED_KEYS = 2_000_000;

/** Batch facts the range rules read. */
export interface BatchSpan {
  baseOffset: number;
  nextOffset: number;
  size: number;
  appendedAt: number;
}

/**
 * Where the tail begins: walking back from the newest batch, batches stay in
 * the tail while together they are at most segmentBytes and each was
 * appended within segmentMs and maxCompactionLagMs. The newest batch always
 * is (Kafka's active segment always holds the last append).
 */
function activeTailStart(spans: readonly BatchSpan[], settings: CompactionSettings, now: number): number {
  let bytes = 0;
  let start = Number.POSITIVE_INFINITY;
  for (let i = spans.length - 1; i >= 0; i--) {
    const batch = spans[i]!;
    bytes += batch.size;
    const age = now - batch.appendedAt;
    if (i < spans.length - 1 && (bytes > settings.segmentBytes || age >= settings.segmentMs || age >= settings.maxCompactionLagMs)) break;
    start = batch.baseOffset;
  }
  return start;
}

/** One pass over a partition: the range it compacts and the dirty part of it whose keys it maps. */
export interface CompactionPlan<B extends BatchSpan> {
  /** The first offset the pass leaves alone (the first uncleanable offset). */
  end: number;
  /** The batches below `end`, oldest first. */
  range: B[];
  /** The batches of `range` from `cleanedTo` on. */
  dirty: B[];
}

/**
 * The pass due on a partition whose batches are `spans` (oldest first), or
 * null when none is: the cleanable range ends at the active tail, the last
 * stable offset or the first dirty batch younger than min.compaction.lag.ms,
 * whichever comes first; the pass is due when its dirty part holds
 * min.cleanable.dirty.ratio of the range's bytes, or when a dirty batch is
 * older than max.compaction.lag.ms.
 */
export function planCompaction<B extends BatchSpan>(
  spans: readonly B[],
  cleanedTo: number,
  lastStableOffset: number,
  settings: CompactionSettings,
  now: number,
  /** The earliest delete horizon of a tombstone the last pass kept, or null: once it has passed, a pass is due to remove it, dirt or not (KIP-534). */
  tombstoneHorizon: number | null,
): CompactionPlan<B> | null {
  const young = spans.find((b) => b.baseOffset >= cleanedTo && now - b.appendedAt < settings.minCompactionLagMs);
  const end = Math.min(activeTailStart(spans, settings, now), lastStableOffset, young?.baseOffset ?? Number.POSITIVE_INFINITY);
  const range = spans.filter((b) => b.baseOffset < end);
  const dirty = range.filter((b) => b.baseOffset >= cleanedTo);
  const bytes = (batches: B[]) => batches.reduce((n, b) => n + b.size, 0);
  const cleanableBytes = bytes(range);
  const dirtyBytes = bytes(dirty);
  if (cleanableBytes <= 0) return null;
  if (tombstoneHorizon !== null && now >= tombstoneHorizon) return { end, range, dirty };
  if (dirtyBytes <= 0) return null;
  const overdue = now - dirty[0]!.appendedAt >= settings.maxCompactionLagMs;
  if (!overdue && dirtyBytes / cleanableBytes < settings.minCleanableDirtyRatio) return null;
  return { end, range, dirty };
}

/** The key as a map key: its bytes as latin1 text. */
function mapKey(key: Buffer): string {
  return key.toString('latin1');
}

/**
 * Notes every keyed record of one stored batch of the dirty range in
 * `latest`; false (nothing noted) when the batch would take the map past
 * MAX_MAPPED_KEYS and the map is not empty, so the pass ends before it.
 * Control batches, batches of aborted transactions (`aborted`: their records
 * never happened for a read_committed reader, so they supersede nothing) and
 * batches that cannot be decoded add nothing.
 */
export function mapBatch(latest: LatestOffsets, bytes: Buffer, baseOffset: number, maxBytes: number, aborted: AbortedCheck = NONE_ABORTED): boolean {
  if (bytes.readInt16BE(BatchPos.Attributes) & BatchAttr.Control) return true;
  if (isAbortedTransactional(bytes, baseOffset, aborted)) return true;
  const count = bytes.readInt32BE(BatchPos.RecordCount);
  if (latest.size > 0 && latest.size + count > MAX_MAPPED_KEYS) return false;
  let decoded;
  try {
    decoded = decodeBatch(bytes, 0, { maxBytes });
  } catch (e) {
    if (e instanceof DecodeError) return true;
    throw e;
  }
  for (const record of decoded.records) if (record.key !== null) latest.set(mapKey(record.key), baseOffset + record.offsetDelta);
  return true;
}

/** Whether the transactional batch of `producerId` at `baseOffset` belongs to an aborted transaction. */
export type AbortedCheck = (producerId: number, baseOffset: number) => boolean;
const NONE_ABORTED: AbortedCheck = () => false;

function isAbortedTransactional(bytes: Buffer, baseOffset: number, aborted: AbortedCheck): boolean {
  if (!(bytes.readInt16BE(BatchPos.Attributes) & BatchAttr.Transactional)) return false;
  return aborted(Number(bytes.readBigInt64BE(BatchPos.ProducerId)), baseOffset);
}

/** What compaction makes of one stored batch. */
export type BatchOutcome =
  | { kind: 'keep'; horizon: number | null }
  | { kind: 'drop'; records: number }
  | { kind: 'rewrite'; bytes: Buffer; maxTimestamp: number; removed: number; horizon: number | null };

/** The earliest of two delete horizons (null: none). */
export function earlierHorizon(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : Math.min(a, b);
}

/**
 * One stored batch of the cleanable range after compaction against `latest`
 * (the dirty range's keys). A batch that cannot be decoded (damaged on disk)
 * is kept as it is: native readers already report it, and compaction must not
 * guess at what it held. So is a batch of an aborted transaction (`aborted`):
 * read_committed readers skip it by the aborted-transactions index, and
 * Kafka's cleaner removes such batches where this one keeps them.
 */
export function compactBatch(bytes: Buffer, baseOffset: number, latest: LatestOffsets, deleteRetentionMs: number, now: number, maxBytes: number, aborted: AbortedCheck = NONE_ABORTED): BatchOutcome {
  const header = readBatchHeader(bytes);
  if (header.attributes & BatchAttr.Control) return { kind: 'keep', horizon: null };
  if (isAbortedTransactional(bytes, baseOffset, aborted)) return { kind: 'keep', horizon: null };
  let decoded;
  try {
    decoded = decodeBatch(bytes, 0, { maxBytes });
  } catch (e) {
    if (e instanceof DecodeError) return { kind: 'keep', horizon: null };
    throw e;
  }
  const horizon = decoded.hasDeleteHorizon ? Number(header.baseTimestamp) : null;
  const kept = decoded.records.filter((record) => {
    if (record.key === null) return false;
    const newest = latest.get(mapKey(record.key));
    if (newest !== undefined && newest > baseOffset + record.offsetDelta) return false;
    return record.value !== null || horizon === null || now < horizon;
  });
  if (kept.length === 0) return { kind: 'drop', records: decoded.records.length };
  const keepsTombstone = kept.some((r) => r.value === null);
  const newHorizon = keepsTombstone && horizon === null ? now + deleteRetentionMs : null;
  // The horizon the batch's kept tombstones wait for, for the pass that is to remove them.
  const pending = keepsTombstone ? (newHorizon ?? horizon) : null;
  if (kept.length === decoded.records.length && newHorizon === null) return { kind: 'keep', horizon: pending };
  const rebuilt = rebuildBatch(bytes, decoded, kept, newHorizon === null ? undefined : BigInt(newHorizon));
  return { kind: 'rewrite', bytes: rebuilt, maxTimestamp: Number(rebuilt.readBigInt64BE(BatchPos.MaxTimestamp)), removed: decoded.records.length - kept.length, horizon: pending };
}

/**
 * A native push carries no key, and a compacted queue keeps the latest record
 * per key: the push is refused (as Kafka refuses a keyless record there)
 * rather than stored for the compactor to drop.
 */
export function refuseNativePushToCompacted(queueName: string, config: Pick<QueueConfig, 'compaction'>, itemIndex: number): void {
  if (!config.compaction) return;
  throw new CoreError(
    'invalid_argument',
    `Item ${itemIndex} cannot be pushed: queue "${queueName}" is compacted (cleanup.policy=compact), which keeps the latest record per key, and a native push carries no key. Write to it with a Kafka producer that gives every record a key.`,
  );
}

import { describe, expect, it } from 'vitest';
import { readBatchHeader } from '../../../protocol/records/batch-header.js';
import { CompressionCodec } from '../../../protocol/records/compression.js';
import { buildBatch, buildControlBatch, ControlRecordType, decodeBatch, validateBatches, type RecordInput } from '../../../protocol/records/record-batch.js';
import type { CompactionSettings } from '../../../src/core/core.js';
import { compactBatch, earlierHorizon, mapBatch, planCompaction, refuseNativePushToCompacted, type BatchSpan, type LatestOffsets } from '../../../src/core/rules/compaction.js';

const settings: CompactionSettings = { deleteRetentionMs: 1_000, minCompactionLagMs: 0, maxCompactionLagMs: Number.MAX_SAFE_INTEGER, minCleanableDirtyRatio: 0.5, segmentBytes: 1_000, segmentMs: 60_000 };
const MAX = 1 << 20;

/** Batches of 100 bytes, ten offsets each, appended a second apart from t=0. */
const spans = (n: number): BatchSpan[] => Array.from({ length: n }, (_, i) => ({ baseOffset: i * 10, nextOffset: i * 10 + 10, size: 100, appendedAt: i * 1_000 }));
const ends = (plan: ReturnType<typeof planCompaction> | null) => plan && { end: plan.end, range: plan.range.length, dirty: plan.dirty.length };

describe('compaction planning', () => {
  it('never compacts the active tail: the newest batches within segment.bytes and segment.ms, the newest always', () => {
    // 20 batches of 100 bytes, segment.bytes 1,000: the newest 10 are the tail.
    expect(ends(planCompaction(spans(20), 0, 1e9, settings, 20_000, null))).toEqual({ end: 100, range: 10, dirty: 10 });
    // segment.ms short: only the newest batch stays in the tail.
    expect(ends(planCompaction(spans(20), 0, 1e9, { ...settings, segmentMs: 500 }, 20_000, null))?.end).toBe(190);
    // One batch: it is the tail, nothing to compact.
    expect(planCompaction(spans(1), 0, 1e9, settings, 1e9, null)).toBeNull();
  });

  it('stops at the last stable offset and at the first dirty batch younger than min.compaction.lag.ms', () => {
    const loose = { ...settings, segmentMs: 0 };
    expect(ends(planCompaction(spans(20), 0, 55, loose, 20_000, null))?.end).toBe(55);
    expect(ends(planCompaction(spans(20), 0, 1e9, { ...loose, minCompactionLagMs: 15_000 }, 20_000, null))?.end).toBe(60);
  });

  it('is due when the dirty part reaches min.cleanable.dirty.ratio, or a dirty batch is older than max.compaction.lag.ms', () => {
    const loose = { ...settings, segmentMs: 0 };
    // Range 0-189 (19 batches); cleaned to 100: 9 of 19 dirty, under 0.5.
    expect(planCompaction(spans(20), 100, 1e9, loose, 20_000, null)).toBeNull();
    expect(ends(planCompaction(spans(20), 90, 1e9, loose, 20_000, null))).toEqual({ end: 190, range: 19, dirty: 10 });
    expect(ends(planCompaction(spans(20), 100, 1e9, { ...loose, maxCompactionLagMs: 5_000 }, 20_000, null))?.dirty).toBe(9);
    // Nothing dirty: due only once a kept tombstone's delete horizon has passed.
    expect(planCompaction(spans(20), 190, 1e9, loose, 20_000, 30_000)).toBeNull();
    expect(ends(planCompaction(spans(20), 190, 1e9, loose, 30_000, 30_000))).toEqual({ end: 190, range: 19, dirty: 0 });
  });

  it('takes the earlier of two delete horizons, null meaning none', () => {
    expect([earlierHorizon(null, null), earlierHorizon(5, null), earlierHorizon(null, 7), earlierHorizon(9, 7)]).toEqual([null, 5, 7, 7]);
  });
});

const keyed = (pairs: [string | null, string | null][]): RecordInput[] => pairs.map(([key, value]) => ({ key, value, timestamp: 1_000 }));

describe('compacting one batch', () => {
  it('maps each key to its latest offset; control batches and aborted transactional batches map nothing', () => {
    const latest: LatestOffsets = new Map();
    expect(mapBatch(latest, buildBatch({ records: keyed([['a', '1'], ['b', '1'], ['a', '2']]) }), 10, MAX)).toBe(true);
    expect(Object.fromEntries(latest)).toEqual({ a: 12, b: 11 });
    mapBatch(latest, buildControlBatch({ type: ControlRecordType.Commit, producerId: 1, producerEpoch: 0, coordinatorEpoch: 0 }), 13, MAX);
    const aborted = buildBatch({ isTransactional: true, producerId: 5, producerEpoch: 0, baseSequence: 0, records: keyed([['a', 'aborted']]) });
    mapBatch(latest, aborted, 14, MAX, (pid, base) => pid === 5 && base === 14);
    expect(Object.fromEntries(latest)).toEqual({ a: 12, b: 11 });
    mapBatch(latest, aborted, 15, MAX, () => false);
    expect(latest.get('a')).toBe(15);
  });

  it('keeps the latest record per key at its own offset, in the batch\'s codec, with a valid CRC; drops keyless records', () => {
    const batch = buildBatch({ baseOffset: 100, compression: CompressionCodec.Gzip, records: keyed([['a', '1'], ['b', '1'], [null, 'x'], ['a', '2']]) });
    const latest: LatestOffsets = new Map([['a', 103], ['b', 101]]);
    const outcome = compactBatch(batch, 100, latest, 1_000, 5_000, MAX);
    expect(outcome.kind).toBe('rewrite');
    if (outcome.kind !== 'rewrite') return;
    expect(outcome.removed).toBe(2);
    const [valid] = validateBatches(outcome.bytes, { fromClient: false });
    expect(valid!.compression).toBe(CompressionCodec.Gzip);
    const header = readBatchHeader(outcome.bytes);
    expect([header.baseOffset, header.lastOffsetDelta]).toEqual([100n, 3]);
    const survivors = decodeBatch(outcome.bytes).records.map((r) => [r.offsetDelta, r.key?.toString(), r.value?.toString()]);
    expect(survivors).toEqual([[1, 'b', '1'], [3, 'a', '2']]);
  });

  it('keeps a batch untouched when every record is its key\'s latest, and drops one left with none', () => {
    const batch = buildBatch({ baseOffset: 0, records: keyed([['a', '1']]) });
    expect(compactBatch(batch, 0, new Map([['a', 0]]), 1_000, 0, MAX)).toEqual({ kind: 'keep', horizon: null });
    expect(compactBatch(batch, 0, new Map([['a', 7]]), 1_000, 0, MAX)).toEqual({ kind: 'drop', records: 1 });
  });

  it('stamps a kept tombstone with a delete horizon delete.retention.ms away, and removes it once that has passed', () => {
    const tombstone = buildBatch({ baseOffset: 0, records: keyed([['a', null]]) });
    const first = compactBatch(tombstone, 0, new Map([['a', 0]]), 1_000, 5_000, MAX);
    expect(first.kind).toBe('rewrite');
    if (first.kind !== 'rewrite') return;
    expect(first.horizon).toBe(6_000);
    expect(decodeBatch(first.bytes).hasDeleteHorizon).toBe(true);
    expect(compactBatch(first.bytes, 0, new Map([['a', 0]]), 1_000, 5_999, MAX)).toEqual({ kind: 'keep', horizon: 6_000 });
    expect(compactBatch(first.bytes, 0, new Map([['a', 0]]), 1_000, 6_000, MAX)).toEqual({ kind: 'drop', records: 1 });
  });

  it('keeps control batches, aborted transactional batches and undecodable batches whole', () => {
    const marker = buildControlBatch({ type: ControlRecordType.Abort, producerId: 1, producerEpoch: 0, coordinatorEpoch: 0 });
    expect(compactBatch(marker, 0, new Map(), 1_000, 0, MAX).kind).toBe('keep');
    const aborted = buildBatch({ isTransactional: true, producerId: 5, producerEpoch: 0, baseSequence: 0, records: keyed([['a', 'x']]) });
    expect(compactBatch(aborted, 3, new Map([['a', 9]]), 1_000, 0, MAX, () => true).kind).toBe('keep');
    expect(compactBatch(aborted, 3, new Map([['a', 9]]), 1_000, 0, MAX, () => false).kind).toBe('drop');
    const damaged = buildBatch({ compression: CompressionCodec.Gzip, records: keyed([['a', 'x'.repeat(100)]]) });
    damaged.fill(0xee, 61 + 10);
    expect(compactBatch(damaged, 0, new Map([['a', 9]]), 1_000, 0, MAX)).toEqual({ kind: 'keep', horizon: null });
  });

  it('refuses a native push to a compacted queue with a sentence saying what to use instead', () => {
    expect(() => refuseNativePushToCompacted('orders', { compaction: null }, 0)).not.toThrow();
    expect(() => refuseNativePushToCompacted('orders', { compaction: settings }, 3)).toThrow(/Item 3 cannot be pushed: queue "orders" is compacted.*Kafka producer that gives every record a key/);
  });
});

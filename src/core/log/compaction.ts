import { BatchPos } from '../../../protocol/records/batch-header.js';
import type { CompactionSettings } from '../core.js';
import { compactBatch, earlierHorizon, mapBatch, planCompaction, type AbortedCheck, type BatchOutcome, type BatchSpan, type CompactionPlan, type CompactionStats, type LatestOffsets } from '../rules/compaction.js';

/**
 * One compaction pass over one partition, decided once for every engine
 * (rules/compaction.ts says what compaction does). The engine walks its
 * stored batches through a pass in two walks, reading them as its storage
 * allows (memory: from a snapshot, yielding to the event loop; PostgreSQL: a
 * page of rows at a time): first the dirty part, whose keys `map` notes
 * until the map is full (the pass then ends before that batch, at `end`);
 * then the range below `end`, where `judge` says what becomes of each batch
 * and counts it. The engine then stores the outcomes, the new cleaned-to
 * offset (`end`) and the earliest delete horizon of a kept tombstone
 * (`horizon`), and calls `finish`.
 */
export class CompactionPass<B extends BatchSpan> {
  private readonly latest: LatestOffsets = new Map();
  /** The first offset the pass leaves alone. */
  end: number;
  /** The earliest delete horizon of a tombstone the pass keeps; null when none. */
  horizon: number | null = null;

  private constructor(
    readonly plan: CompactionPlan<B>,
    private readonly settings: CompactionSettings,
    private readonly now: number,
    private readonly maxBytes: number,
    private readonly isAborted: AbortedCheck,
    private readonly stats: CompactionStats,
  ) {
    this.end = plan.end;
  }

  /** The pass due on a partition whose batches are `spans` (oldest first), or null when none is (rules/compaction.ts planCompaction). */
  static due<B extends BatchSpan>(
    partition: { spans: readonly B[]; cleanedTo: number; lastStableOffset: number; settings: CompactionSettings; tombstoneHorizon: number | null; isAborted: AbortedCheck },
    now: number,
    maxBytes: number,
    stats: CompactionStats,
  ): CompactionPass<B> | null {
    const plan = planCompaction(partition.spans, partition.cleanedTo, partition.lastStableOffset, partition.settings, now, partition.tombstoneHorizon);
    return plan && new CompactionPass(plan, partition.settings, now, maxBytes, partition.isAborted, stats);
  }

  /** Notes a dirty batch's keys; false when the map is full: the pass ends before this batch, and the engine stops mapping. */
  map(bytes: Buffer, baseOffset: number): boolean {
    if (mapBatch(this.latest, bytes, baseOffset, this.maxBytes, this.isAborted)) return true;
    this.end = baseOffset;
    return false;
  }

  /** What becomes of a batch of the range below `end`: kept, rewritten or dropped; counted in the stats. */
  judge(bytes: Buffer, baseOffset: number): BatchOutcome {
    this.stats.recordsScanned += bytes.readInt32BE(BatchPos.RecordCount);
    const outcome = compactBatch(bytes, baseOffset, this.latest, this.settings.deleteRetentionMs, this.now, this.maxBytes, this.isAborted);
    if (outcome.kind !== 'drop') this.horizon = earlierHorizon(this.horizon, outcome.horizon);
    if (outcome.kind === 'drop') {
      this.stats.batchesRemoved++;
      this.stats.recordsRemoved += outcome.records;
    } else if (outcome.kind === 'rewrite') {
      this.stats.batchesRewritten++;
      this.stats.recordsRemoved += outcome.removed;
    }
    return outcome;
  }

  /** The pass stored its outcomes. */
  finish(): void {
    this.stats.partitions++;
  }
}

import type { CompactionSettings, QueueConfig, TimestampType } from '../core/index.js';
import { parseList } from './values.js';

/**
 * What a topic config does to its queue: the keys that take effect are
 * mirrored into one of the queue's own settings, cleanup.policy decides
 * whether retention deletes and whether the compactor runs.
 */

/** A key that takes effect: its value is mirrored into one of the queue's own settings. */
export interface Setting {
  toSetting(value: string): Partial<QueueConfig>;
  /** The queue's setting as this key's value. */
  fromSetting(config: QueueConfig): string;
}

/** Numbers beyond what the core holds mean "no limit" in effect: 2^53 ms is 285,000 years. */
function clampToSafe(value: string): number {
  const n = BigInt(value);
  return Number(n > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : n);
}

export const retentionMsSetting: Setting = {
  toSetting: (v) => ({ retentionMs: clampToSafe(v) }),
  fromSetting: (c) => String(c.retentionMs),
};
export const retentionBytesSetting: Setting = {
  // Kafka treats every negative size as no limit.
  toSetting: (v) => ({ retentionBytes: BigInt(v) < 0n ? -1 : clampToSafe(v) }),
  fromSetting: (c) => String(c.retentionBytes),
};
export const maxMessageBytesSetting: Setting = {
  toSetting: (v) => ({ maxMessageBytes: Number(v) }),
  fromSetting: (c) => String(c.maxMessageBytes),
};
/** cleanup.policy: "delete" lets retention.ms and retention.bytes delete; an empty list (Kafka 4.x) deletes nothing, so retention is off. */
export const DELETES_NOTHING: Partial<QueueConfig> = { retentionMs: -1, retentionBytes: -1 };
export const deletesByRetention = (policy: string) => parseList(policy).includes('delete');
export const compacts = (policy: string) => parseList(policy).includes('compact');

/** The compactor's settings for a topic whose Kafka configs are `value` (each key set or its default). */
export function compactionSettings(value: (name: string) => string): CompactionSettings {
  return {
    deleteRetentionMs: clampToSafe(value('delete.retention.ms')),
    minCompactionLagMs: clampToSafe(value('min.compaction.lag.ms')),
    maxCompactionLagMs: clampToSafe(value('max.compaction.lag.ms')),
    minCleanableDirtyRatio: Number(value('min.cleanable.dirty.ratio')),
    segmentBytes: Number(value('segment.bytes')),
    segmentMs: clampToSafe(value('segment.ms')),
  };
}

export const timestampBeforeSetting: Setting = {
  toSetting: (v) => ({ timestampBeforeMaxMs: clampToSafe(v) }),
  fromSetting: (c) => String(c.timestampBeforeMaxMs),
};
export const timestampAfterSetting: Setting = {
  toSetting: (v) => ({ timestampAfterMaxMs: clampToSafe(v) }),
  fromSetting: (c) => String(c.timestampAfterMaxMs),
};

export const timestampTypeSetting: Setting = {
  toSetting: (v) => ({ timestampType: v as TimestampType }),
  fromSetting: (c) => c.timestampType,
};

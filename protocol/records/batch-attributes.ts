/** RecordBatch v2's constants and the attribute bits of a batch, split into what they mean. */
import { BatchAttr } from './batch-header.js';
import { CompressionCodec } from './compression.js';

export const RECORD_BATCH_MAGIC = 2;
/** Smallest record on the wire: length, attributes, timestamp and offset deltas, key, value, header count. */
export const MIN_RECORD_SIZE = 7;
/** Kafka's "no timestamp" and "no producer" values. */
export const NO_TIMESTAMP = -1n;
export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
export const NO_SEQUENCE = -1;
export const NO_PARTITION_LEADER_EPOCH = -1;

export const TimestampType = {
  CreateTime: 0,
  LogAppendTime: 1,
} as const;
export type TimestampType = (typeof TimestampType)[keyof typeof TimestampType];

/** The attribute bits of a batch, split into what they mean. */
export interface BatchAttributes {
  compression: CompressionCodec;
  timestampType: TimestampType;
  isTransactional: boolean;
  isControl: boolean;
  /** Set by compaction on batches whose baseTimestamp is a delete horizon. */
  hasDeleteHorizon: boolean;
}

export function splitAttributes(attributes: number): BatchAttributes {
  const codec = attributes & BatchAttr.CompressionMask;
  return {
    // Codecs 5-7 do not exist; callers that care check with isCompressionCodec first.
    compression: codec as CompressionCodec,
    timestampType: attributes & BatchAttr.TimestampLogAppend ? TimestampType.LogAppendTime : TimestampType.CreateTime,
    isTransactional: (attributes & BatchAttr.Transactional) !== 0,
    isControl: (attributes & BatchAttr.Control) !== 0,
    hasDeleteHorizon: (attributes & BatchAttr.DeleteHorizon) !== 0,
  };
}

export function joinAttributes(a: Partial<BatchAttributes>): number {
  return (
    (a.compression ?? CompressionCodec.None) |
    (a.timestampType === TimestampType.LogAppendTime ? BatchAttr.TimestampLogAppend : 0) |
    (a.isTransactional ? BatchAttr.Transactional : 0) |
    (a.isControl ? BatchAttr.Control : 0) |
    (a.hasDeleteHorizon ? BatchAttr.DeleteHorizon : 0)
  );
}

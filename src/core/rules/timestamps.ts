import { decodeBatch, TimestampType } from '../../../protocol/records/record-batch.js';

/**
 * Kafka's ListOffsets answer inside one stored batch: the first record, at or
 * after `fromOffset`, whose timestamp is at or after `timestamp`. The engines
 * find the batch from its max timestamp; this decodes that one batch, which
 * is fine here: ListOffsets by time is rare and not on the produce or fetch
 * path. Null when no record of the batch qualifies.
 */
export function recordAtOrAfter(batch: Buffer, timestamp: number, fromOffset: number): { offset: number; timestamp: number } | null {
  const decoded = decodeBatch(batch);
  const baseOffset = Number(decoded.header.baseOffset);
  if (decoded.timestampType === TimestampType.LogAppendTime) {
    // Every record of a LogAppendTime batch carries the broker's time, the batch's max timestamp.
    const at = Number(decoded.header.maxTimestamp);
    return at >= timestamp ? { offset: Math.max(baseOffset, fromOffset), timestamp: at } : null;
  }
  const baseTimestamp = Number(decoded.header.baseTimestamp);
  for (const record of decoded.records) {
    const offset = baseOffset + record.offsetDelta;
    const recordTimestamp = baseTimestamp + record.timestampDelta;
    if (offset >= fromOffset && recordTimestamp >= timestamp) return { offset, timestamp: recordTimestamp };
  }
  return null;
}

import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import { decodeBatch, TimestampType, type DecodedBatch } from '../../../protocol/records/record-batch.js';
import { CoreError } from '../errors.js';

/** How a stored batch is read: its partition, for messages, and the inflation limit. */
export interface StoredBatchRead {
  where: string;
  maxBytes: number;
}

/**
 * Kafka's ListOffsets answer inside one stored batch: the first record, at or
 * after `fromOffset`, whose timestamp is at or after `timestamp`. The engines
 * find the batch from its max timestamp; this decodes that one batch, which
 * is fine here: ListOffsets by time is rare and not on the produce or fetch
 * path. Null when no record of the batch qualifies.
 */
export function recordAtOrAfter(batch: Buffer, timestamp: number, fromOffset: number, read: StoredBatchRead): { offset: number; timestamp: number } | null {
  let decoded: DecodedBatch;
  try {
    decoded = decodeBatch(batch, 0, { maxBytes: read.maxBytes });
  } catch (e) {
    if (!(e instanceof DecodeError)) throw e;
    // Kafka answers a corrupt segment with an error for that partition; so do we, instead of failing the whole call.
    throw new CoreError(
      'corrupt_batch',
      `The stored batch at offset ${batch.length >= 8 ? batch.readBigInt64BE(0) : '?'} of ${read.where} cannot be read (${e.message}); it was written by an older version or damaged on disk. Search by another time, or drop it by moving the log start past it (DeleteRecords).`,
    );
  }
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

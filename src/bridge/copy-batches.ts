import { TimestampType, buildBatch, decodeBatch, type RecordInput } from '../../protocol/records/record-batch.js';
import type { RawBatch } from '../kafka-client/fetch.js';

/**
 * What the bridge does with the source's record batches besides copying them
 * as they are: the records of a batch (the reverse mode's target, Kafka,
 * takes records from a producer, not batches), and the one case a batch
 * cannot go over whole: a partition copied up to an offset inside one of the
 * source's batches (a target an earlier, record-by-record bridge filled),
 * where the batch's records from that offset on are encoded as a batch of
 * their own, with the source batch's codec, timestamps and producer fields.
 */

export interface SourceRecord {
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  timestamp: number;
}

/** Uncompressed record bytes a batch may inflate to when decoded here. */
const MAX_INFLATED_BYTES = 64 * 1024 * 1024;

/** The records of back-to-back batches (control batches carry none a reader sees); a LogAppendTime batch's records take its time. */
export function recordsOf(batches: readonly RawBatch[]): SourceRecord[] {
  const records: SourceRecord[] = [];
  for (const raw of batches) {
    const batch = decodeBatch(raw.bytes, 0, { maxBytes: MAX_INFLATED_BYTES });
    if (batch.isControl) continue;
    const base = batch.header.baseTimestamp;
    const logAppend = batch.timestampType === TimestampType.LogAppendTime;
    for (const r of batch.records) {
      records.push({
        offset: raw.baseOffset + r.offsetDelta,
        key: r.key,
        value: r.value,
        headers: r.headers,
        timestamp: Number(logAppend ? batch.header.maxTimestamp : base + BigInt(r.timestampDelta)),
      });
    }
  }
  return records;
}

/** The records of `batch` from offset `from` on, as a batch of their own (see above); null when none is left. */
export function reencodeTail(raw: RawBatch, from: number): RawBatch | null {
  const batch = decodeBatch(raw.bytes, 0, { maxBytes: MAX_INFLATED_BYTES });
  const kept = batch.records.filter((r) => raw.baseOffset + r.offsetDelta >= from);
  const skipped = batch.records.length - kept.length;
  if (kept.length === 0) return null;
  const base = raw.baseOffset + kept[0]!.offsetDelta;
  const records: RecordInput[] = kept.map((r) => ({ key: r.key, value: r.value, headers: r.headers, timestamp: batch.header.baseTimestamp + BigInt(r.timestampDelta), offsetDelta: raw.baseOffset + r.offsetDelta - base }));
  const sequence = batch.header.baseSequence;
  const bytes = buildBatch({
    records,
    baseOffset: base,
    compression: batch.compression,
    timestampType: batch.timestampType,
    isTransactional: batch.isTransactional,
    producerId: batch.header.producerId,
    producerEpoch: batch.header.producerEpoch,
    baseSequence: sequence < 0 ? sequence : sequence + skipped,
    ...(batch.timestampType === TimestampType.LogAppendTime ? { maxTimestamp: batch.header.maxTimestamp } : {}),
  });
  return { bytes, baseOffset: base, nextOffset: base + records.at(-1)!.offsetDelta! + 1, recordCount: kept.length };
}

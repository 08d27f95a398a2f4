import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import { BATCH_HEADER_SIZE, BatchPos, CRC_START } from '../../../protocol/records/batch-header.js';
import { crc32c } from '../../../protocol/records/crc32c.js';
import { inflationBudget, type InflationBudget } from '../../../protocol/records/compression.js';
import { InvalidBatchError, TimestampType, validateBatches, type ValidBatch } from '../../../protocol/records/record-batch.js';
import type { AppendAtError, AppendAtPartition, AppendAtRequest } from '../core.js';
import { CoreError } from '../errors.js';
import { requireInteger } from './arguments.js';
import { PARTITION_LEADER_EPOCH, type AppendLimits } from './batches.js';
import { advanceWindows, isIdempotent, type ProducerWindow, type SequencedBatch } from './producer-window.js';
import { requirePartitionRefs } from './requests.js';
import { copiedTxnRole, type CopiedTxnRole } from './copied-transactions.js';

/**
 * The rules of appendAt, the core's append for records copied from another
 * log (the migration bridge): the batches carry their own offsets and are
 * stored at exactly those, so the target offset is the key and the target log
 * the ledger of what was copied. Checked as Kafka's broker checks batches it
 * replicates, not as it checks a producer's: offset deltas need only rise
 * inside the batch's range (compaction leaves gaps), and any producer fields
 * are kept as they are, and rebuild the target's producer windows
 * (copiedWindows), so an idempotent producer that moves from the source to
 * this log mid-stream goes on with its next sequence, and a resend of a
 * copied batch is answered as a duplicate. Transactional batches and their
 * COMMIT and ABORT markers are copied too, and the partition's open
 * transactions and aborted index follow them (copied-transactions.ts), so the
 * target's read_committed view is the source's.
 */

export interface CopiedBatch {
  start: number;
  end: number;
  baseOffset: number;
  /** The offset after the batch's range: baseOffset + lastOffsetDelta + 1. */
  nextOffset: number;
  /** What ListOffsets by time searches by: the header's for LogAppendTime, else the records' largest. */
  maxTimestamp: number;
  /** The batch's producer id, epoch and sequence, when an idempotent producer wrote it. */
  producer?: SequencedBatch;
  /** What the batch means for transactions: transactional data, a marker; absent for plain data. */
  txn?: CopiedTxnRole;
}

export type ParsedCopy =
  | { ok: true; batches: CopiedBatch[]; endOffset: number }
  | { ok: false; error: AppendAtError; message: string };

/** The request's partitions, each checked for shape; nothing is decoded here. */
export function checkAppendAtRequest(req: AppendAtRequest): AppendAtPartition[] {
  const partitions = requirePartitionRefs<AppendAtPartition>(req?.partitions);
  partitions.forEach((p, i) => {
    if (!Buffer.isBuffer(p.records)) throw new CoreError('invalid_argument', `partitions[${i}].records must be a Buffer of record batches.`);
    if (p.endOffset !== undefined) requireInteger(p.endOffset, `partitions[${i}].endOffset`, 0);
    if (p.records.length === 0 && p.endOffset === undefined) {
      throw new CoreError('invalid_argument', `partitions[${i}] carries neither records nor an endOffset; give at least one.`);
    }
  });
  return partitions;
}

/** Checks every partition's copied batches, all drawing on one inflation budget, before any lock is taken. */
export function parseCopies(partitions: readonly AppendAtPartition[], limits: AppendLimits): ParsedCopy[] {
  const budget = inflationBudget(limits.maxInflatedBatchBytes, limits.maxInflatedRequestBytes);
  return partitions.map((p) => parseCopiedRecords(p.records, p.endOffset, budget));
}

function parseCopiedRecords(records: Buffer, endOffset: number | undefined, budget: InflationBudget): ParsedCopy {
  let valid: ValidBatch[];
  try {
    valid = records.length === 0 ? [] : validateBatches(records, { fromClient: false, records: budget });
  } catch (e) {
    if (e instanceof InvalidBatchError) {
      const error: AppendAtError = e.rule === 'compression' ? 'unsupported_compression' : e.rule === 'inflated-size' ? 'message_too_large' : e.rule === 'record' ? 'invalid_record' : 'corrupt_message';
      return { ok: false, error, message: `Copied record batch ${e.batchIndex} was refused: ${e.message}. Nothing of this partition's records was stored.` };
    }
    if (e instanceof DecodeError) return { ok: false, error: 'corrupt_message', message: `The copied record batches do not hold together: ${e.message}.` };
    throw e;
  }
  const batches: CopiedBatch[] = [];
  let next = -1;
  for (const [i, batch] of valid.entries()) {
    let txn: CopiedTxnRole | null | string;
    try {
      txn = copiedTxnRole(records, batch, budget);
    } catch (e) {
      if (!(e instanceof DecodeError)) throw e;
      txn = `holds a control record that does not decode (${e.message})`;
    }
    if (typeof txn === 'string') return { ok: false, error: 'invalid_record', message: `Copied record batch ${i} ${txn}. Nothing of this partition's records was stored.` };
    const baseOffset = Number(batch.header.baseOffset);
    if (baseOffset < 0 || baseOffset < next) {
      return { ok: false, error: 'corrupt_message', message: `Copied record batch ${i} starts at offset ${baseOffset}, before the end (${next}) of the batch ahead of it; batches must come in ascending, non-overlapping offset order.` };
    }
    next = baseOffset + batch.header.lastOffsetDelta + 1;
    const maxTimestamp = batch.timestampType === TimestampType.LogAppendTime ? batch.header.maxTimestamp : (batch.recordsMaxTimestamp ?? batch.header.maxTimestamp);
    const producer = { producerId: Number(batch.header.producerId), producerEpoch: batch.header.producerEpoch, baseSequence: batch.header.baseSequence, lastOffsetDelta: batch.header.lastOffsetDelta };
    batches.push({ start: batch.start, end: batch.end, baseOffset, nextOffset: next, maxTimestamp: Number(maxTimestamp), ...(isIdempotent(producer) && producer.baseSequence >= 0 ? { producer } : {}), ...(txn ? { txn } : {}) });
  }
  return { ok: true, batches, endOffset: Math.max(next, endOffset ?? 0) };
}

/**
 * What one partition does with its checked copy, given its next offset:
 * already_there when the first offset is below it (nothing is written, so a
 * repeated or overlapping copy never writes a record twice); else the
 * batches, and the partition's new next offset.
 */
export function planCopy(
  parsed: ParsedCopy & { ok: true },
  partitionNext: number,
): { kind: 'already_there'; message: string } | { kind: 'write'; nextOffset: number; trailingGap: CopiedBatch | null } {
  const first = parsed.batches[0]?.baseOffset;
  if (first !== undefined && first < partitionNext) {
    return { kind: 'already_there', message: `Offset ${first} is below the partition's next offset ${partitionNext}: that part of the log is there already; nothing was written. Continue from offset ${partitionNext}.` };
  }
  const recordsEnd = Math.max(partitionNext, parsed.batches.at(-1)?.nextOffset ?? 0);
  const nextOffset = Math.max(recordsEnd, parsed.endOffset);
  const trailingGap = nextOffset > recordsEnd ? { start: 0, end: 0, baseOffset: recordsEnd, nextOffset, maxTimestamp: -1 } : null;
  return { kind: 'write', nextOffset, trailingGap };
}

/**
 * A trailing gap as a stored batch: no records, its offset range the gap
 * (Kafka's compaction leaves such empty batches too). Readers serve it like
 * any batch, and a consumer positioned in the gap reads it and moves to its
 * end, as it would past the source's marker; without it a fetch there would
 * find nothing until new records came.
 */
export function gapBatch(gap: CopiedBatch): Buffer {
  const batch = Buffer.alloc(BATCH_HEADER_SIZE);
  batch.writeBigInt64BE(BigInt(gap.baseOffset), BatchPos.BaseOffset);
  batch.writeInt32BE(BATCH_HEADER_SIZE - BatchPos.PartitionLeaderEpoch, BatchPos.BatchLength);
  batch.writeInt32BE(PARTITION_LEADER_EPOCH, BatchPos.PartitionLeaderEpoch);
  batch.writeInt8(2, BatchPos.Magic);
  batch.writeInt32BE(gap.nextOffset - gap.baseOffset - 1, BatchPos.LastOffsetDelta);
  batch.writeBigInt64BE(-1n, BatchPos.BaseTimestamp);
  batch.writeBigInt64BE(-1n, BatchPos.MaxTimestamp);
  batch.writeBigInt64BE(-1n, BatchPos.ProducerId);
  batch.writeInt16BE(-1, BatchPos.ProducerEpoch);
  batch.writeInt32BE(-1, BatchPos.BaseSequence);
  batch.writeInt32BE(0, BatchPos.RecordCount);
  batch.writeUInt32BE(crc32c(batch.subarray(CRC_START)), BatchPos.Crc);
  return batch;
}

/** One copied batch as it is stored: a copy, its offsets as they came, the partition leader epoch this log's (outside the CRC). */
export function storedCopy(records: Buffer, batch: CopiedBatch): Buffer {
  const stored = Buffer.from(records.subarray(batch.start, batch.end));
  stored.writeInt32BE(PARTITION_LEADER_EPOCH, BatchPos.PartitionLeaderEpoch);
  return stored;
}

/**
 * The producer windows a partition's copied batches leave, each producer's
 * advanced batch by batch from its stored window (`windowOf`) as the
 * source's broker advanced it, so the target answers that producer's next
 * batch, and a resend of one of its last five, as the source would have.
 */
export function copiedWindows(batches: readonly CopiedBatch[], windowOf: (producerId: number) => ProducerWindow | null): Map<number, ProducerWindow> {
  const sequenced = batches.flatMap((b) => (b.producer ? [{ ...b.producer, baseOffset: b.baseOffset, maxTimestamp: b.maxTimestamp }] : []));
  return advanceWindows(sequenced, windowOf);
}

/** The producers of the copied batches, each with its highest epoch: ids this core hands out later stay above them. */
export function copiedProducers(copies: readonly ParsedCopy[]): Map<number, number> {
  const epochs = new Map<number, number>();
  for (const copy of copies) {
    if (!copy.ok) continue;
    for (const b of copy.batches) if (b.producer) epochs.set(b.producer.producerId, Math.max(epochs.get(b.producer.producerId) ?? -1, b.producer.producerEpoch));
  }
  return epochs;
}

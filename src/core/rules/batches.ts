import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import { BatchAttr, BatchPos, CRC_START, setBaseOffset } from '../../../protocol/records/batch-header.js';
import { DEFAULT_DECOMPRESSION_BUDGET, inflationBudget, type InflationBudget } from '../../../protocol/records/compression.js';
import { InvalidBatchError, validateBatches, type BatchRule, type ValidBatch } from '../../../protocol/records/record-batch.js';
import { crc32c } from '../../../protocol/records/crc32c.js';
import type { AppendError, AppendPartitionResult, QueueConfig } from '../core.js';
import type { SequencedBatch } from './producer-window.js';

/**
 * What the core checks of an append's record batches before it stores them,
 * and what it reads from them. This is the one place a produced batch is
 * validated, for every caller (the gateway, the RPC, the bridge) and both
 * engines: the header and CRC, then every record by Kafka's rules, inflating
 * compressed batches within the append limits (protocol/records
 * validateBatch). A batch that fails is refused, so every stored batch can be
 * read. Nothing is re-encoded: the bytes stored are the bytes received, with
 * only header fields outside the records rewritten (prepareForStorage).
 *
 * Inflation is synchronous (the bounded decoders of protocol/records), so at
 * any moment the whole process inflates at most one batch: the per-batch limit
 * is also the process-wide bound on bytes being inflated at once, and the
 * per-request limit bounds what one request can make the core inflate in all.
 */

export interface AppendLimits {
  /** Bytes one compressed batch may inflate to. */
  maxInflatedBatchBytes: number;
  /** Bytes all compressed batches of one append may inflate to together. */
  maxInflatedRequestBytes: number;
}

const MIB = 1024 * 1024;

/**
 * Producers batch about 16 KiB (Java) to 1 MB (librdkafka) before compression,
 * so 16 MiB per batch leaves them ample room while a few kilobytes of gzip can
 * no longer claim a gigabyte; 64 MiB per request is four such batches.
 */
export const DEFAULT_APPEND_LIMITS: Readonly<AppendLimits> = {
  maxInflatedBatchBytes: 16 * MIB,
  maxInflatedRequestBytes: 64 * MIB,
};

export interface IncomingBatch extends SequencedBatch {
  /** Where the batch lies in the append's `records` buffer. */
  start: number;
  end: number;
  size: number;
  /** Offsets the batch takes: lastOffsetDelta + 1. */
  offsetCount: number;
  recordCount: number;
  baseTimestamp: number;
  /** The largest record timestamp, read from the records (Kafka stores this, not the producer's claim). */
  maxTimestamp: number;
  /** The header's maxTimestamp differs from the records' and is rewritten on storage. */
  restampMax: boolean;
  attributes: number;
  isTransactional: boolean;
  /** The ordinal of the first record without a key, or -1. */
  firstKeylessRecord: number;
}

export type ParsedAppend =
  | { ok: true; batches: IncomingBatch[] }
  | { ok: false; error: AppendError; message: string; recordIndex?: number; recordMessage?: string };

function ruleError(rule: BatchRule): AppendError {
  switch (rule) {
    case 'header':
    case 'magic':
    case 'length':
    case 'crc':
    case 'compressed':
      return 'corrupt_message';
    case 'compression':
      return 'unsupported_compression';
    case 'inflated-size':
      return 'message_too_large';
    default:
      return 'invalid_record';
  }
}

/**
 * Checks every partition's batches of one append, all of them drawing on one
 * inflation budget, before any engine work (no lock is held while records
 * inflate). The results line up with `partitions`.
 */
export function parseAppend(partitions: readonly { records: Buffer }[], limits: AppendLimits): ParsedAppend[] {
  const budget = inflationBudget(limits.maxInflatedBatchBytes, limits.maxInflatedRequestBytes);
  return partitions.map((p) => parseAppendRecords(p.records, budget));
}

/** Checks one partition's batches by Kafka's rules for produced batches and reads what decides offsets and producer state. */
export function parseAppendRecords(records: Buffer, budget: InflationBudget): ParsedAppend {
  if (!Buffer.isBuffer(records) || records.length === 0) {
    return { ok: false, error: 'corrupt_message', message: 'The append carries no record batch.' };
  }
  let valid: ValidBatch[];
  try {
    valid = validateBatches(records, { records: budget });
  } catch (e) {
    if (e instanceof InvalidBatchError) return refusal(e);
    if (e instanceof DecodeError) return { ok: false, error: 'corrupt_message', message: `The record batches do not hold together: ${e.message}.` };
    throw e;
  }
  const batches: IncomingBatch[] = [];
  for (const { start, end, header, isTransactional, recordsMaxTimestamp, firstKeylessRecord } of valid) {
    const maxTimestamp = recordsMaxTimestamp ?? header.maxTimestamp;
    batches.push({
      start,
      end,
      size: end - start,
      offsetCount: header.lastOffsetDelta + 1,
      recordCount: header.recordCount,
      lastOffsetDelta: header.lastOffsetDelta,
      baseTimestamp: Number(header.baseTimestamp),
      maxTimestamp: Number(maxTimestamp),
      restampMax: maxTimestamp !== header.maxTimestamp,
      attributes: header.attributes,
      isTransactional,
      firstKeylessRecord,
      producerId: Number(header.producerId),
      producerEpoch: header.producerEpoch,
      baseSequence: header.baseSequence,
    });
  }
  return { ok: true, batches };
}

function refusal(e: InvalidBatchError): ParsedAppend {
  const error = ruleError(e.rule);
  const advice =
    error === 'message_too_large'
      ? ' Send smaller batches (the producer\'s batch.size), or raise --max-inflated-batch-bytes / --max-inflated-request-bytes.'
      : error === 'invalid_record' || error === 'corrupt_message'
        ? ' Nothing of this partition\'s records was stored; the producer must send a well-formed batch.'
        : '';
  const message = `Record batch ${e.batchIndex} was refused: ${e.message}.${advice}`;
  if (e.recordIndex < 0) return { ok: false, error, message };
  return { ok: false, error, message, recordIndex: e.recordIndex, recordMessage: e.message };
}

/**
 * The inflation limit for reading a stored batch back (native pop, ListOffsets
 * by time): what Produce allows now, and never less than the decoders'
 * default, so lowering the flag does not make batches stored earlier unreadable.
 */
export function storedBatchLimit(limits: AppendLimits): number {
  return Math.max(limits.maxInflatedBatchBytes, DEFAULT_DECOMPRESSION_BUDGET);
}

/** A refused partition's fields of its AppendPartitionResult. */
export function appendRefusal(parsed: ParsedAppend & { ok: false }): Pick<AppendPartitionResult, 'error' | 'errorMessage' | 'recordError'> {
  const refused = { error: parsed.error, errorMessage: parsed.message };
  return parsed.recordIndex === undefined ? refused : { ...refused, recordError: { index: parsed.recordIndex, message: parsed.recordMessage! } };
}

/** Limits given as options, checked, with the defaults for those left out. */
export function appendLimitsOf(options: { maxInflatedBatchBytes?: number | undefined; maxInflatedRequestBytes?: number | undefined }): AppendLimits {
  const limits: AppendLimits = {
    maxInflatedBatchBytes: options.maxInflatedBatchBytes ?? DEFAULT_APPEND_LIMITS.maxInflatedBatchBytes,
    maxInflatedRequestBytes: options.maxInflatedRequestBytes ?? DEFAULT_APPEND_LIMITS.maxInflatedRequestBytes,
  };
  for (const [name, value] of Object.entries(limits)) {
    if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive whole number of bytes; got ${String(value)}.`);
  }
  return limits;
}

/** The queue settings an append is checked against once the queue is known. */
export type AppendRules = Pick<QueueConfig, 'maxMessageBytes' | 'timestampType' | 'timestampBeforeMaxMs' | 'timestampAfterMaxMs' | 'compaction'>;

/** Kafka's "no timestamp" (-1), which the timestamp rules let through. */
const NO_TIMESTAMP = -1;

/**
 * Kafka's timestamp rules (message.timestamp.before.max.ms and
 * .after.max.ms) for a CreateTime queue, held to the batch's first and
 * largest record timestamps (the largest as read from the records).
 */
function timestampProblem(batch: { baseTimestamp: number; maxTimestamp: number }, rules: AppendRules, now: number): string | null {
  if (rules.timestampType !== 'CreateTime') return null;
  for (const ts of [batch.baseTimestamp, batch.maxTimestamp]) {
    if (ts === NO_TIMESTAMP) continue;
    if (now - ts > rules.timestampBeforeMaxMs || ts - now > rules.timestampAfterMaxMs) {
      return `Timestamp ${ts} is out of range: the topic takes timestamps from ${now - rules.timestampBeforeMaxMs} to ${now + rules.timestampAfterMaxMs} (message.timestamp.before.max.ms, message.timestamp.after.max.ms). Fix the producer's clock or timestamps, or widen those topic configs.`;
    }
  }
  return null;
}

/**
 * The queue's own rules for batches already checked by parseAppend: its
 * maxMessageBytes (Kafka's max.message.bytes) on each batch as received, and
 * its timestamp window; and on a compacted queue, a key on every record
 * (Kafka refuses a keyless record there with INVALID_RECORD: compaction keeps
 * the latest record per key, and a record without one has no place in it).
 */
export function checkQueueRules(parsed: ParsedAppend, rules: AppendRules, now: number): ParsedAppend {
  if (!parsed.ok) return parsed;
  for (const [index, batch] of parsed.batches.entries()) {
    if (rules.compaction && batch.firstKeylessRecord >= 0) {
      const recordMessage = 'Compacted topic cannot accept message without key.';
      return {
        ok: false,
        error: 'invalid_record',
        message: `Record ${batch.firstKeylessRecord} of batch ${index} has no key, and this topic is compacted (cleanup.policy=compact), which keeps the latest record per key: give every record a key.`,
        recordIndex: batch.firstKeylessRecord,
        recordMessage,
      };
    }
    if (batch.size > rules.maxMessageBytes) {
      return { ok: false, error: 'message_too_large', message: `A record batch of ${batch.size} bytes exceeds the queue's maxMessageBytes of ${rules.maxMessageBytes}.` };
    }
    const outOfRange = timestampProblem(batch, rules, now);
    if (outOfRange) return { ok: false, error: 'invalid_timestamp', message: outOfRange };
  }
  return parsed;
}

/**
 * The leader epoch of every partition here: one leader, never re-elected
 * (Metadata and ListOffsets answer 0 too). Kafka's leader stamps its epoch
 * into each batch it appends, whatever the producer put there.
 */
export const PARTITION_LEADER_EPOCH = 0;

/**
 * One incoming batch as it is stored, with its baseOffset and partition
 * leader epoch set (both outside the CRC). For a
 * LogAppendTime queue Kafka also stamps the append time as the batch's max
 * timestamp and flags it in the attributes; otherwise it sets the max
 * timestamp to the records' largest when the producer wrote another. Both lie
 * inside the CRC, so the CRC is recomputed then. With `inPlace` (bytes handed over, see
 * AppendRequest.recordsHandedOver) the batch is rewritten where it lies and
 * a view of it returned, as Kafka's broker assigns offsets in the request's
 * own buffer; otherwise it is a copy that shares no memory with the caller's.
 */
export function prepareForStorage(records: Buffer, batch: IncomingBatch, baseOffset: number, logAppendTime: number | null, inPlace: boolean): Buffer {
  let stored: Buffer;
  if (inPlace) stored = records.subarray(batch.start, batch.end);
  else {
    stored = Buffer.allocUnsafe(batch.size);
    records.copy(stored, 0, batch.start, batch.end);
  }
  setBaseOffset(stored, 0, baseOffset);
  stored.writeInt32BE(PARTITION_LEADER_EPOCH, BatchPos.PartitionLeaderEpoch);
  if (logAppendTime !== null) {
    stored.writeInt16BE(batch.attributes | BatchAttr.TimestampLogAppend, BatchPos.Attributes);
    stored.writeBigInt64BE(BigInt(logAppendTime), BatchPos.MaxTimestamp);
    stored.writeUInt32BE(crc32c(stored.subarray(CRC_START)), BatchPos.Crc);
  } else if (batch.restampMax) {
    // As Kafka's broker does: the batch says the largest timestamp its records really hold.
    stored.writeBigInt64BE(BigInt(batch.maxTimestamp), BatchPos.MaxTimestamp);
    stored.writeUInt32BE(crc32c(stored.subarray(CRC_START)), BatchPos.Crc);
  }
  return stored;
}

/**
 * Whether an append's handed-over records may be kept where they lie: only
 * when they fill at least half of the memory they sit in, so a few small
 * batches never pin a large read buffer (they are copied instead).
 */
export function keepInPlace(request: { partitions: { records: Buffer }[]; recordsHandedOver?: boolean }): boolean {
  if (request.recordsHandedOver !== true) return false;
  let records = 0;
  const backing = new Set<ArrayBufferLike>();
  let memory = 0;
  for (const { records: r } of request.partitions) {
    records += r.length;
    if (!backing.has(r.buffer)) {
      backing.add(r.buffer);
      memory += r.buffer.byteLength;
    }
  }
  return records * 2 >= memory;
}

/** The offset after a batch: its baseOffset plus the offsets it takes. */
export function nextOffsetOf(baseOffset: number, batch: Pick<IncomingBatch, 'offsetCount'>): number {
  return baseOffset + batch.offsetCount;
}

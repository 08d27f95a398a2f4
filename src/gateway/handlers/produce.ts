// Produce: appends the producer's record batches to topic partitions.
//
// Bytes move, records stay packed: each partition's batches go to the core as
// they came, compressed or not, in one append for the whole request. The core
// checks them as Kafka's broker does (src/core/rules/batches.ts: header, CRC,
// then every record, inflating compressed batches within its limits) before it
// assigns offsets, so the check runs once per batch, and whatever calls the
// core (this gateway, the RPC, the bridge) gets it.
//
// Choices:
// - acks 0, 1 and -1 are all answered after the core's append returns (there
//   are no followers, so 1 and -1 mean the same); acks=0 then sends nothing.
//   Any other acks value fails every partition with INVALID_REQUIRED_ACKS.
// - From v3 a partition's records must be exactly one batch of magic 2, as
//   Kafka requires; none, more than one, or a legacy message set answers
//   INVALID_RECORD, and nothing of it is stored. A zstd batch before v7
//   answers UNSUPPORTED_COMPRESSION_TYPE, as Kafka does (KIP-110: v7 is the
//   client's promise that it can read zstd back).
// - A batch that breaks a framing rule (header, length, CRC, compressed bytes
//   that do not inflate) answers CORRUPT_MESSAGE, an unknown codec
//   UNSUPPORTED_COMPRESSION_TYPE, records that inflate past the core's limit
//   MESSAGE_TOO_LARGE (Kafka has no such limit; this is its code for a batch
//   too large to accept, and clients do not retry it), and a well-framed batch
//   that breaks a record or producer rule INVALID_RECORD (the core's verdicts,
//   mapped in kafka-errors.ts). From v8 the sentence goes in ErrorMessage, and
//   when one record is at fault a RecordErrors entry names it: BatchIndex is
//   the record's ordinal inside its batch, as Kafka counts it.
// - The idempotent producer's rules live in the core: an exact resend answers
//   success with the original base offset (never DUPLICATE_SEQUENCE_NUMBER,
//   which kafkajs treats as fatal); a gap answers OUT_OF_ORDER_SEQUENCE_NUMBER.
// - Exactly once across the internal RPC is the RPC's business: its client
//   keys an append from a producer without an id for the core's ledger
//   (src/rpc/methods.ts), so this handler calls the core the same way wherever
//   it runs.
// - The records are handed over to the core (recordsHandedOver): frames are
//   never reused (protocol/frame-splitter.ts), so the core writes offsets into the
//   batches where they lie and keeps them instead of copying each one.
// - ACLs, as Kafka's broker: a transactional produce needs WRITE on its
//   transactional id (else every partition answers
//   TRANSACTIONAL_ID_AUTHORIZATION_FAILED); each topic needs WRITE (else its
//   partitions answer TOPIC_AUTHORIZATION_FAILED, whether or not it exists).
//   Nothing of a refused partition is stored.
// - Quotas: the request's record bytes count against the producer's
//   producer_byte_rate; over it, the answer carries the throttle time and
//   the connection waits it out (../quotas.ts).
// - Topics are not auto-created by Produce (Kafka creates them on Metadata);
//   an unknown topic answers UNKNOWN_TOPIC_OR_PARTITION so clients refresh.
//
// Versions: v0-v2 may carry legacy message sets (magic 0/1); they are
// converted to one v2 batch each, the only time this file builds records.
// v3+ must carry v2 batches. v11 answers TRANSACTION_ABORTABLE (above), v12
// adds partitions to transactions (above). v10+ tagged CurrentLeader/NodeEndpoints are only
// for leader changes and stay absent.
//
// - v12 (KIP-890 part 2, transaction version 2): a transactional producer
//   sends no AddPartitionsToTxn; the partitions it produces to join its
//   transaction first (../implicit-transaction.ts), and a refusal there is the
//   partition's answer. Before v12 the partition must have been added.
// - Transactional batches are appended at once, durable, like any other
//   (Kafka's model: a read_committed consumer stops at the partition's last
//   stable offset until EndTxn writes the marker). The core refuses one from
//   an older epoch of its transactional id with INVALID_PRODUCER_EPOCH
//   (fenced), and one for a partition not added to the open transaction with
//   INVALID_TXN_STATE, as Kafka 3.6+ does; from v11 that is
//   TRANSACTION_ABORTABLE (KIP-890), as Kafka 4.4 answers it, so the client
//   aborts the transaction and goes on.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { Produce } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import { BATCH_LENGTH_PREFIX, BatchAttr, BatchPos, batchSize } from '../../../protocol/records/batch-header.js';
import { CompressionCodec } from '../../../protocol/records/compression.js';
import { messageSetToBatch } from '../../../protocol/records/legacy.js';
import { DecodeError } from '../../../protocol/primitives/decode-error.js';
import type { AppendError, AppendPartition } from '../../core/index.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { appendErrorCode, kafkaErrorOf, NONE, UNAVAILABLE_FOR_PRODUCE } from '../kafka-errors.js';
import { addProducedPartitions } from '../implicit-transaction.js';
import { topicNameProblem } from '../topics.js';
import { producePurgatory, topicMetrics } from '../../metrics/kafka.js';

const VALID_ACKS = new Set([0, 1, -1]);

/**
 * Refusals that still report the partition's log start offset, as Kafka's do:
 * those its log decides on (sequence, epoch, record validation, codec).
 * Oversized and corrupt batches are turned away before the log, with -1.
 */
const REPORTS_LOG_START = new Set<AppendError>(['out_of_order_sequence', 'invalid_producer_epoch', 'unknown_producer_id', 'invalid_record', 'unsupported_compression', 'invalid_txn_state']);

interface PartitionAnswer {
  index: number;
  errorCode: number;
  errorMessage: string | null;
  baseOffset: number;
  logAppendTimeMs: number;
  logStartOffset: number;
  recordErrors: { batchIndex: number; batchIndexErrorMessage: string | null }[];
}

function failed(index: number, errorCode: number, errorMessage: string | null, recordError?: { index: number; message: string }): PartitionAnswer {
  return {
    index,
    errorCode,
    errorMessage,
    baseOffset: -1,
    logAppendTimeMs: -1,
    logStartOffset: -1,
    recordErrors: recordError ? [{ batchIndex: recordError.index, batchIndexErrorMessage: recordError.message }] : [],
  };
}

/**
 * The partition's records as v2 batches for the core. Legacy message sets
 * (magic 0/1, Produce v0-v2) are converted to one v2 batch here, the only
 * time this file builds records; v2 batches pass untouched.
 */
function recordsForCore(records: Buffer | null, version: number): { records: Buffer } | { errorCode: number; message: string } {
  if (records === null || records.length === 0) {
    // Kafka checks this from v3 only; before, an empty set is still nothing to store.
    return version > 2
      ? { errorCode: ErrorCode.INVALID_RECORD, message: `Produce v${version} carries exactly one record batch per partition; this partition carries none.` }
      : { errorCode: ErrorCode.CORRUPT_MESSAGE, message: 'The partition carries no record batch.' };
  }
  if (version > 2) {
    const refusal = oneBatchRefusal(records, version);
    return refusal ?? { records };
  }
  if (records.length <= BatchPos.Magic || records.readInt8(BatchPos.Magic) >= 2) return { records };
  try {
    return { records: messageSetToBatch(records) };
  } catch (e) {
    if (e instanceof DecodeError) return { errorCode: ErrorCode.CORRUPT_MESSAGE, message: `The message set is corrupt: ${e.message}.` };
    throw e;
  }
}

/**
 * Kafka's rules for Produce v3+ records (ProduceRequest.validateRecords):
 * one batch, of magic 2, and zstd only from v7. Records too short to hold a
 * magic byte are left to the core, which answers them corrupt.
 */
function oneBatchRefusal(records: Buffer, version: number): { errorCode: number; message: string } | null {
  if (records.length <= BatchPos.Magic) return null;
  const magic = records.readInt8(BatchPos.Magic);
  if (magic !== 2) {
    return { errorCode: ErrorCode.INVALID_RECORD, message: `Produce v${version} carries record batches of magic 2 only; these records have magic ${magic}. Send legacy message sets with Produce v2 or earlier.` };
  }
  if (version < 7 && records.length >= BatchPos.Attributes + 2 && (records.readInt16BE(BatchPos.Attributes) & BatchAttr.CompressionMask) === CompressionCodec.Zstd) {
    return { errorCode: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE, message: `Produce v${version} cannot carry zstd-compressed batches; zstd needs Produce v7 or later.` };
  }
  // A second batch after the first is refused whole.
  if (records.length >= BATCH_LENGTH_PREFIX && batchSize(records) < records.length) {
    return { errorCode: ErrorCode.INVALID_RECORD, message: `Produce v${version} carries exactly one record batch per partition; these records hold more. Send each batch in its own request.` };
  }
  return null;
}

/** Kafka meters a topic's bytes and records in once they are appended (a refused batch, or an exact resend stored once, counts nowhere). */
function countAppended(topic: string, carried: { bytes: number; records: number }): void {
  const meters = topicMetrics(topic);
  meters.bytesIn.value += carried.bytes;
  meters.messagesIn.value += carried.records;
}

type ProduceRequest = RequestOf<typeof Produce>;
/** Where a partition's answer goes once the core has appended: its topic's list, at its index. */
type AnswerSlot = { answers: PartitionAnswer[]; index: number };

/** The request's partitions sorted: those refused here get their answer, the rest a slot and an append for the core. */
interface SortedPartitions {
  answers: Map<object, PartitionAnswer[]>;
  appends: AppendPartition[];
  slots: AnswerSlot[];
  producedBytes: number;
}

export const produce: ApiHandler<typeof Produce> = {
  api: Produce,
  versions: '0-12',
  async handle(request, ctx) {
    const { answers, appends, slots, producedBytes } = sortPartitions(request, ctx);
    const transactionalId: string | null = request.transactionalId ?? null;
    if (ctx.header.apiVersion >= 12 && transactionalId !== null && appends.length > 0) await joinTransaction(ctx, transactionalId, appends, slots);
    if (appends.length > 0) await appendToCore(ctx, appends, slots);
    const throttleTimeMs = ctx.quota.produced(producedBytes);
    if (request.acks === 0) {
      // No response goes out, so a refusal is only visible here.
      for (const [topic, list] of answers) {
        for (const a of list) if (a.errorCode !== NONE) ctx.log.info({ topic: (topic as { name: string }).name, partition: a.index, errorCode: a.errorCode, reason: a.errorMessage }, 'acks=0 produce refused');
      }
      return null;
    }
    return {
      responses: request.topicData.map((topic) => ({ name: topic.name, partitionResponses: answers.get(topic) })),
      throttleTimeMs,
    };
  },
};

function sortPartitions(request: ProduceRequest, ctx: HandlerContext): SortedPartitions {
  const sorted: SortedPartitions = { answers: new Map(), appends: [], slots: [], producedBytes: 0 };
  const transactionalId: string | null = request.transactionalId ?? null;
  const txnRefused = transactionalId !== null && !ctx.access.allows('WRITE', 'TRANSACTIONAL_ID', transactionalId);
  for (const topic of request.topicData) {
    const topicAnswers: PartitionAnswer[] = [];
    sorted.answers.set(topic, topicAnswers);
    const nameProblem = topicNameProblem(topic.name);
    const writable = ctx.access.allows('WRITE', 'TOPIC', topic.name);
    for (const p of topic.partitionData) {
      sorted.producedBytes += p.records?.length ?? 0;
      const refusal = refusedBeforeAppend(p.index, request.acks, txnRefused ? transactionalId : null, { name: topic.name, writable, nameProblem });
      if (refusal) {
        topicAnswers.push(refusal);
        continue;
      }
      const checked = recordsForCore(p.records, ctx.header.apiVersion);
      if ('errorCode' in checked) {
        topicAnswers.push(failed(p.index, checked.errorCode, checked.message));
        continue;
      }
      sorted.slots.push({ answers: topicAnswers, index: topicAnswers.length });
      topicAnswers.push(failed(p.index, ErrorCode.UNKNOWN_SERVER_ERROR, null)); // replaced by appendToCore
      sorted.appends.push({ queue: topic.name, partition: p.index, records: checked.records });
    }
  }
  return sorted;
}

/** Kafka's checks before a partition's records are read, in its order; null when none refuses it. */
function refusedBeforeAppend(
  partition: number,
  acks: number,
  refusedTransactionalId: string | null,
  topic: { name: string; writable: boolean; nameProblem: string | null },
): PartitionAnswer | null {
  if (!VALID_ACKS.has(acks)) return failed(partition, ErrorCode.INVALID_REQUIRED_ACKS, `acks must be 0, 1 or -1; got ${acks}.`);
  if (refusedTransactionalId !== null) {
    return failed(partition, DENIED_CODE.TRANSACTIONAL_ID, `Not authorized to write with transactional id '${refusedTransactionalId}'.`);
  }
  if (!topic.writable) return failed(partition, DENIED_CODE.TOPIC, `Not authorized to write to topic '${topic.name}'.`);
  if (topic.nameProblem !== null) return failed(partition, ErrorCode.INVALID_TOPIC_EXCEPTION, topic.nameProblem);
  return null;
}

/** One append of every accepted partition; each answer goes to its slot, a failed call answers them all with its code. */
/** v12: the partitions join the producer's transaction first; a refused one is answered and not appended. */
async function joinTransaction(ctx: HandlerContext, transactionalId: string, appends: AppendPartition[], slots: AnswerSlot[]): Promise<void> {
  const refusals = await addProducedPartitions(ctx, transactionalId, appends);
  for (let i = appends.length - 1; i >= 0; i--) {
    const refusal = refusals[i];
    if (!refusal) continue;
    const slot = slots[i]!;
    slot.answers[slot.index] = { ...failed(appends[i]!.partition, refusal.errorCode, refusal.errorMessage), logStartOffset: -1 };
    appends.splice(i, 1);
    slots.splice(i, 1);
  }
}

async function appendToCore(ctx: HandlerContext, appends: AppendPartition[], slots: AnswerSlot[]): Promise<void> {
  // Read before the core takes the batches over: what each carries, for the topic's meters.
  const carried = appends.map((a) => ({ bytes: a.records.length, records: a.records.length > BatchPos.RecordCount + 4 ? a.records.readInt32BE(BatchPos.RecordCount) : 0 }));
  producePurgatory.value++;
  try {
    // The frame is never reused, so the core may keep the batches where they lie.
    const result = await ctx.core.append({ partitions: appends, recordsHandedOver: true });
    result.partitions.forEach((r, i) => {
      const slot = slots[i]!;
      const errorCode = r.error === 'invalid_txn_state' && ctx.header.apiVersion >= 11 ? ErrorCode.TRANSACTION_ABORTABLE : appendErrorCode(r.error);
      if (errorCode === NONE && !r.duplicate) countAppended(appends[i]!.queue, carried[i]!);
      slot.answers[slot.index] =
        errorCode === NONE
          ? { index: r.partition, errorCode, errorMessage: null, baseOffset: r.baseOffset, logAppendTimeMs: r.logAppendTime, logStartOffset: r.logStartOffset, recordErrors: [] }
          : { ...failed(r.partition, errorCode, r.errorMessage ?? null, r.recordError), logStartOffset: r.error !== null && REPORTS_LOG_START.has(r.error) ? r.logStartOffset : -1 };
    });
  } catch (e) {
    const { errorCode, errorMessage } = kafkaErrorOf(e, UNAVAILABLE_FOR_PRODUCE);
    for (const slot of slots) slot.answers[slot.index] = failed(slot.answers[slot.index]!.index, errorCode, errorMessage);
  } finally {
    producePurgatory.value--;
  }
}

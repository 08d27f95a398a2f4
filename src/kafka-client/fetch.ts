/**
 * Fetch over the client: one request to one leader for several partitions,
 * the records handed out as the broker stored them; and the read_committed
 * view of those raw batches (committedBatches): which batches a
 * read_committed consumer would read, found from the answer's aborted
 * transactions and the control batches, as Kafka's consumers find it, each
 * kept as the exact bytes the broker sent.
 */
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { BATCH_HEADER_SIZE, BatchAttr, BatchPos } from '../../protocol/records/batch-header.js';
import { decodeBatch } from '../../protocol/records/record-batch.js';
import type { BrokerConnection } from './connection.js';

export interface FetchAsk {
  topic: string;
  partition: number;
  offset: number;
  maxBytes: number;
}

export interface FetchedPartition {
  topic: string;
  partition: number;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  /** read_committed: the transactions aborted in the records returned, by producer and first offset. */
  aborted: { producerId: bigint; firstOffset: number }[];
  records: Buffer | null;
}

export interface FetchAnswer {
  throttleTimeMs: number;
  errorCode: number;
  /** The fetch session the broker keeps for these fetches (0: none). */
  sessionId: number;
  partitions: FetchedPartition[];
}

export interface FetchLimits {
  maxWaitMs: number;
  minBytes: number;
  maxBytes: number;
  readCommitted: boolean;
}

/** Where a Fetch stands in a fetch session (KIP-227): none (-1), asking for one (id 0, epoch 0), or the session's next epoch, with the partitions it drops. */
export interface SessionPart {
  sessionId: number;
  sessionEpoch: number;
  forgotten: readonly { topic: string; partition: number }[];
}

const SESSIONLESS: SessionPart = { sessionId: 0, sessionEpoch: -1, forgotten: [] };

/** One Fetch; without `session`, outside any fetch session (the request names every partition). */
export async function fetchFrom(connection: BrokerConnection, asks: readonly FetchAsk[], limits: FetchLimits, session: SessionPart = SESSIONLESS): Promise<FetchAnswer> {
  const byTopic = <T extends { topic: string }>(items: readonly T[]) => [...new Set(items.map((a) => a.topic))].map((topic) => ({ topic, items: items.filter((a) => a.topic === topic) }));
  const topics = byTopic(asks).map(({ topic, items }) => ({
    topic,
    partitions: items.map((a) => ({ partition: a.partition, fetchOffset: BigInt(a.offset), partitionMaxBytes: a.maxBytes })),
  }));
  const forgottenTopicsData = byTopic(session.forgotten).map(({ topic, items }) => ({ topic, partitions: items.map((f) => f.partition) }));
  const isolationLevel = limits.readCommitted ? 1 : 0;
  const body = { replicaId: -1, maxWaitMs: limits.maxWaitMs, minBytes: limits.minBytes, maxBytes: limits.maxBytes, isolationLevel, sessionId: session.sessionId, sessionEpoch: session.sessionEpoch, topics, forgottenTopicsData, rackId: '' };
  const answer = await connection.request(ApiKey.Fetch, body, limits.maxWaitMs + 30_000);
  const partitions: FetchedPartition[] = [];
  for (const t of answer['responses'] as Message[]) {
    for (const p of t['partitions'] as Message[]) {
      partitions.push({
        topic: t['topic'] as string,
        partition: p['partitionIndex'] as number,
        errorCode: p['errorCode'] as number,
        highWatermark: Number(p['highWatermark']),
        lastStableOffset: Number(p['lastStableOffset']),
        logStartOffset: Number(p['logStartOffset']),
        aborted: ((p['abortedTransactions'] as Message[] | null) ?? []).map((a) => ({ producerId: a['producerId'] as bigint, firstOffset: Number(a['firstOffset']) })),
        records: (p['records'] as Buffer | null) ?? null,
      });
    }
  }
  return { throttleTimeMs: (answer['throttleTimeMs'] as number) ?? 0, errorCode: (answer['errorCode'] as number) ?? 0, sessionId: (answer['sessionId'] as number) ?? 0, partitions };
}

export interface RawBatch {
  /** The batch's bytes exactly as the broker sent them (a view into the response). */
  bytes: Buffer;
  baseOffset: number;
  /** The offset after the batch: baseOffset + lastOffsetDelta + 1. */
  nextOffset: number;
  recordCount: number;
}

export interface CommittedView {
  /** The batches a read_committed reader reads, at or past `from`, whole, in order. */
  batches: RawBatch[];
  /** Where reading goes on: past every whole batch returned, kept or skipped (aborted data, markers). */
  next: number;
  /** A batch starts before `from` and ends after it (a position inside a batch): it is not in `batches`. */
  straddling: RawBatch | null;
}

const CONTROL_ABORT = 0;

/**
 * Splits a fetched partition's records into whole v2 batches (a trailing
 * partial batch, which a broker may send when a limit cuts it, is left for
 * the next fetch) and keeps those a read_committed reader reads: control
 * batches (markers) and data batches of aborted transactions are skipped.
 */
export function committedBatches(records: Buffer | null, aborted: readonly { producerId: bigint; firstOffset: number }[], from: number): CommittedView {
  const pending = [...aborted].sort((a, b) => a.firstOffset - b.firstOffset);
  const aborting = new Set<bigint>();
  return splitBatches(records, from, (bytes, nextOffset) => {
    const attributes = bytes.readInt16BE(BatchPos.Attributes);
    const producerId = bytes.readBigInt64BE(BatchPos.ProducerId);
    while (pending.length > 0 && pending[0]!.firstOffset < nextOffset) aborting.add(pending.shift()!.producerId);
    if ((attributes & BatchAttr.Control) !== 0) {
      if (aborting.has(producerId) && controlType(bytes) === CONTROL_ABORT) aborting.delete(producerId);
      return false;
    }
    return (attributes & BatchAttr.Transactional) === 0 || !aborting.has(producerId);
  });
}

/**
 * The batches as the broker stored them, a read_uncommitted fetch's records
 * split as committedBatches splits them, nothing skipped: transactional data,
 * aborted or not, and the control batches (markers) too.
 */
export function storedBatches(records: Buffer | null, from: number): CommittedView {
  return splitBatches(records, from, () => true);
}

/** Whole batches at or past `from`; `keep` sees every whole batch in order (those before `from` too) and says which are read. */
function splitBatches(records: Buffer | null, from: number, keep: (bytes: Buffer, nextOffset: number) => boolean): CommittedView {
  const view: CommittedView = { batches: [], next: from, straddling: null };
  if (!records) return view;
  for (let at = 0; at + BATCH_HEADER_SIZE <= records.length; ) {
    const size = 12 + records.readInt32BE(at + BatchPos.BatchLength);
    if (at + size > records.length) break;
    const bytes = records.subarray(at, at + size);
    at += size;
    if (bytes.readInt8(BatchPos.Magic) !== 2) throw new Error(`a record batch of magic ${bytes.readInt8(BatchPos.Magic)} (a pre-0.11 message format) cannot be copied as stored`);
    const baseOffset = Number(bytes.readBigInt64BE(BatchPos.BaseOffset));
    const nextOffset = baseOffset + bytes.readInt32BE(BatchPos.LastOffsetDelta) + 1;
    const kept = keep(bytes, nextOffset);
    if (nextOffset <= from) continue;
    view.next = nextOffset;
    if (!kept) continue;
    const batch = { bytes, baseOffset, nextOffset, recordCount: bytes.readInt32BE(BatchPos.RecordCount) };
    if (baseOffset < from) {
      view.straddling = batch;
      continue;
    }
    view.batches.push(batch);
  }
  return view;
}

/** A control batch's type: its one record's key is (version int16, type int16). */
function controlType(batch: Buffer): number {
  const key = decodeBatch(batch).records[0]?.key;
  return key && key.length >= 4 ? key.readInt16BE(2) : -1;
}

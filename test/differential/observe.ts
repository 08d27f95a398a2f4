/**
 * What the differential scenarios share: raw requests built by the project's
 * own protocol layer (for what no client will send: bad sequences, stale
 * epochs, exact field inspection), and turning answers and client errors into
 * plain observation values. Each turns only what is genuinely incomparable
 * through the Normaliser (see harness.ts); everything else is kept as the
 * broker said it.
 */
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { decodeBatches, TimestampType, type DecodedBatch } from '../../protocol/records/record-batch.js';
import { RawConnection } from '../support/raw-connection.js';
import { code, type Normaliser, type ScenarioContext } from './harness.js';

export const CODEC_NAMES: Record<number, string> = {
  [CompressionCodec.None]: 'none',
  [CompressionCodec.Gzip]: 'gzip',
  [CompressionCodec.Snappy]: 'snappy',
  [CompressionCodec.Lz4]: 'lz4',
  [CompressionCodec.Zstd]: 'zstd',
};

/** Versions both Apache Kafka 4 and the gateway serve, picked for the fields they carry. */
export const V = {
  produce: 9, // flexible; ErrorMessage and RecordErrors (v8+)
  fetch: 12, // topics by name (v13+ by id); LogStartOffset, LastStableOffset
  listOffsets: 8, // -3 max timestamp (v7+), -4 earliest local (v8+)
  metadata: 12, // topic ids, topic authorized operations; by-id lookups
  describeCluster: 1,
  initProducerId: 4,
  joinGroup: 7,
  syncGroup: 5,
  heartbeat: 4,
  leaveGroup: 4,
  offsetCommit: 8,
  offsetFetch: 7,
  describeGroups: 5,
  describeProducers: 0,
} as const;

export async function openRaw(ctx: ScenarioContext): Promise<RawConnection> {
  return RawConnection.open(ctx.target.port, ctx.target.host);
}

/** Runs `body` with a raw connection to the target, closed afterwards. */
export async function withRaw<T>(ctx: ScenarioContext, body: (raw: RawConnection) => Promise<T>): Promise<T> {
  const raw = await openRaw(ctx);
  try {
    return await body(raw);
  } finally {
    raw.destroy();
  }
}

/**
 * Creates a topic with a raw CreateTopics v7 and waits until Metadata shows
 * it led: Kafka answers CreateTopics before its broker serves the topic.
 * Resolves with the CreateTopics answer's topic id and error.
 */
export async function createTopicRaw(raw: RawConnection, name: string, partitions: number, configs: Record<string, string> = {}): Promise<{ topicId: string; errorCode: number }> {
  const created = await raw.request(ApiKey.CreateTopics, 7, {
    topics: [{ name, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }],
    timeoutMs: 10_000,
    validateOnly: false,
  });
  const topic = (created.topics as Message[])[0]!;
  if (topic.errorCode === 0) await awaitLed(raw, name, partitions);
  return { topicId: topic.topicId as string, errorCode: topic.errorCode as number };
}

/**
 * Waits until every partition of a new topic answers ListOffsets: Kafka
 * answers CreateTopics (and even Metadata) before its broker leads the
 * partitions, and a Produce then gets NOT_LEADER_OR_FOLLOWER.
 */
export async function awaitLed(raw: RawConnection, topic: string, partitions: number): Promise<void> {
  for (let p = 0; p < partitions; p++) {
    for (let i = 0; ; i++) {
      const found = await rawListOffsets(raw, topic, p, LATEST);
      if (found.error === 'NONE') break;
      if (i >= 200) throw new Error(`partition ${p} of ${topic} still answers ${String(found.error)} after 20 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Asks for a group's coordinator until it is there, as clients do before any
 * group call: Kafka creates its offsets topic on the first ask and answers
 * COORDINATOR_NOT_AVAILABLE until it is loaded.
 */
export async function awaitCoordinator(raw: RawConnection, group: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const found = await raw.request(ApiKey.FindCoordinator, 4, { keyType: 0, coordinatorKeys: [group] });
    if ((found.coordinators as Message[])[0]!.errorCode === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no coordinator for group ${group} after 20 s`);
}

// ─── Produce ─────────────────────────────────────────────────────────────────

export async function rawProduce(raw: RawConnection, topic: string, partition: number, records: Buffer, acks = -1): Promise<Message> {
  const answer = await raw.request(ApiKey.Produce, V.produce, {
    transactionalId: null,
    acks,
    timeoutMs: 10_000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  });
  return (answer.responses as { partitionResponses: Message[] }[])[0]!.partitionResponses[0]!;
}

/** A Produce partition answer as an observation. */
export function produceAnswer(p: Message, n: Normaliser): Record<string, unknown> {
  return {
    error: code(p.errorCode),
    errorMessage: p.errorMessage === null ? null : '<text>',
    baseOffset: Number(p.baseOffset),
    logAppendTimeMs: n.serverTime(Number(p.logAppendTimeMs)),
    logStartOffset: Number(p.logStartOffset),
    recordErrors: (p.recordErrors as { batchIndex: number; batchIndexErrorMessage: string | null }[]).map((e) => ({
      batchIndex: e.batchIndex,
      message: e.batchIndexErrorMessage === null ? null : '<text>',
    })),
  };
}

// ─── Fetch ───────────────────────────────────────────────────────────────────

export interface FetchShape {
  partition: number;
  offset: number;
  maxWaitMs?: number;
  maxBytes?: number;
  /** 0 read_uncommitted (the default), 1 read_committed. */
  isolationLevel?: 0 | 1;
}

/** One partition fetched with a plain (sessionless) Fetch; the answer and its batches decoded. */
export async function rawFetch(raw: RawConnection, topic: string, at: FetchShape, n: Normaliser): Promise<Record<string, unknown>> {
  const answer = await raw.request(ApiKey.Fetch, V.fetch, {
    replicaId: -1,
    maxWaitMs: at.maxWaitMs ?? 50,
    minBytes: 1,
    maxBytes: at.maxBytes ?? 1 << 20,
    isolationLevel: at.isolationLevel ?? 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic, partitions: [{ partition: at.partition, currentLeaderEpoch: -1, fetchOffset: BigInt(at.offset), lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: at.maxBytes ?? 1 << 20 }] }],
    forgottenTopicsData: [],
    rackId: '',
  });
  const p = (answer.responses as { partitions: Message[] }[])[0]!.partitions[0]!;
  const records = p.records as Buffer | null;
  return {
    topLevelError: code(answer.errorCode),
    error: code(p.errorCode),
    highWatermark: Number(p.highWatermark),
    lastStableOffset: Number(p.lastStableOffset),
    logStartOffset: Number(p.logStartOffset),
    abortedTransactions: p.abortedTransactions,
    preferredReadReplica: p.preferredReadReplica,
    batches: records === null ? null : decodeBatches(records).map((b) => batchObservation(b, n)),
  };
}

export function batchObservation(b: DecodedBatch, n: Normaliser): Record<string, unknown> {
  const h = b.header;
  const logAppend = b.timestampType === TimestampType.LogAppendTime;
  return {
    baseOffset: Number(h.baseOffset),
    lastOffsetDelta: h.lastOffsetDelta,
    partitionLeaderEpoch: h.partitionLeaderEpoch,
    codec: CODEC_NAMES[b.compression] ?? b.compression,
    timestampType: logAppend ? 'LogAppendTime' : 'CreateTime',
    transactional: b.isTransactional,
    control: b.isControl,
    baseTimestamp: Number(h.baseTimestamp),
    maxTimestamp: logAppend ? n.serverTime(Number(h.maxTimestamp)) : Number(h.maxTimestamp),
    producerId: producerIdMarker(h.producerId),
    producerEpoch: h.producerEpoch,
    baseSequence: h.baseSequence,
    records: b.records.map((r) => ({
      offsetDelta: r.offsetDelta,
      timestampDelta: r.timestampDelta,
      key: r.key === null ? null : r.key.toString(),
      value: r.value === null ? null : r.value.toString(),
      headers: r.headers.map((x) => [x.key, x.value === null ? null : x.value.toString()]),
    })),
  };
}

/** A producer id: the number a broker hands out differs, whether there is one does not. */
export function producerIdMarker(id: bigint | number): unknown {
  const n = Number(id);
  return n >= 0 ? '<producer-id>' : n;
}

// ─── ListOffsets ─────────────────────────────────────────────────────────────

export const EARLIEST = -2;
export const LATEST = -1;
export const MAX_TIMESTAMP = -3;

export async function rawListOffsets(raw: RawConnection, topic: string, partition: number, timestamp: number, isolationLevel: 0 | 1 = 0): Promise<Record<string, unknown>> {
  const answer = await raw.request(ApiKey.ListOffsets, V.listOffsets, {
    replicaId: -1,
    isolationLevel,
    topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: BigInt(timestamp), maxNumOffsets: 1 }] }],
  });
  const p = (answer.topics as { partitions: Message[] }[])[0]!.partitions[0]!;
  return { error: code(p.errorCode), offset: Number(p.offset), timestamp: Number(p.timestamp), leaderEpoch: p.leaderEpoch };
}

// ─── Errors clients raise ────────────────────────────────────────────────────

/** A kafkajs error as a user sees it: its class, the broker's error type, whether kafkajs retries it. */
export function kafkajsError(e: unknown): Record<string, unknown> {
  const err = e as { name?: string; type?: string; retriable?: boolean; originalError?: unknown; cause?: unknown };
  const inner = (err.originalError ?? err.cause) as { name?: string; type?: string } | undefined;
  return { name: err.name ?? String(e), type: err.type ?? null, retriable: err.retriable ?? null, ...(inner ? { cause: { name: inner.name ?? null, type: inner.type ?? null } } : {}) };
}

/** Resolves with what the call answered, or an observation of the error it threw. */
export async function outcome<T>(call: () => Promise<T>, onError: (e: unknown) => unknown = kafkajsError): Promise<{ ok: T } | { error: unknown }> {
  try {
    return { ok: await call() };
  } catch (e) {
    return { error: onError(e) };
  }
}

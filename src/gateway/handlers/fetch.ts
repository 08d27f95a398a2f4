// Fetch: reads stored record batches for a consumer, long-polling until
// minBytes are there or maxWait has passed.
//
// Bytes move, records stay packed: the core returns each partition's stored
// batches as a Buffer[] and they go into the response by reference (the
// Writer keeps large buffers as their own writev chunks); nothing here
// decodes, copies or concatenates a batch.
//
// Choices:
// - The long-poll is the core's (core.read with minBytes and maxWaitMs). Its
//   AbortSignal fires when the connection closes (the answer is dropped) or
//   when the gateway starts shutting down (the core answers with what it has,
//   so the client gets a response before the connection ends).
// - Byte limits: the response limit is the smaller of the client's MaxBytes
//   and the gateway's fetchMaxBytes; each partition has its own limit; the
//   core returns at least one whole batch for the first partition with data
//   even above both, as Kafka does, so a consumer always progresses.
// - Fetch sessions (v7+, KIP-227, ../fetch-sessions.ts): full and
//   incremental. An incremental response lists only partitions with records,
//   an error, or a changed high watermark, last stable offset or log start
//   offset. Partitions that returned records move to the back of the session's
//   order, so a partition cannot starve its neighbours under maxBytes.
// - Isolation: read_committed reads up to the last stable offset and carries
//   the aborted-transactions list; read_uncommitted sends that list as null.
// - A fetch offset outside [logStartOffset, highWatermark], negative ones
//   included, answers OFFSET_OUT_OF_RANGE, the client then resets by its
//   policy. A partition in error carries -1 for its watermarks and log start,
//   as Kafka's does; an unknown topic or partition an empty
//   aborted-transactions list, others none (null), again as Kafka answers.
//
// - ACLs: each partition needs READ on its topic (else
//   TOPIC_AUTHORIZATION_FAILED and no records), checked on every fetch, a
//   session's partitions included.
// - Quotas: the response's record bytes count against the consumer's
//   consumer_byte_rate; a fetch that would break it answers empty with the
//   throttle time, as Kafka's broker does, and the connection waits it out
//   (../quotas.ts).
//
// Versions: 4-17 (v0-3 predate RecordBatch v2 and are not served). v13+
// names topics by id (UNKNOWN_TOPIC_ID for an id we do not know); v12+ tagged
// partition fields (DivergingEpoch, CurrentLeader, SnapshotId) and v16+
// NodeEndpoints are for replication and leader changes and stay absent.
// ReplicaId, ReplicaState, RackId and ClusterId are ignored: one broker, no
// followers, no rack-aware reads (PreferredReadReplica is always -1).
import { ErrorCode } from '../../../protocol/error-codes.js';
import { Fetch } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import type { ReadPartitionResult } from '../../core/index.js';
import { FetchSession, FetchSessionCache, type SessionPartition } from '../fetch-sessions.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { kafkaErrorOf, NONE, readErrorCode } from '../kafka-errors.js';
import { topicNameProblem, topicNamesById, ZERO_UUID } from '../topics.js';
import { fetchPurgatory, recordsIn, topicMetrics } from '../../metrics/kafka.js';

const SESSIONS = 'fetch.sessions';
const NO_RECORDS: readonly Buffer[] = [];

/** A partition in the response: read from the core, or refused before reading. */
interface PartitionAnswer {
  topic: string;
  topicId: string;
  partitionIndex: number;
  errorCode: number;
  highWatermark: number;
  lastStableOffset: number;
  logStartOffset: number;
  abortedTransactions: { producerId: number; firstOffset: number }[] | null;
  records: readonly Buffer[];
}

function sessionsOf(ctx: HandlerContext): FetchSessionCache {
  let cache = ctx.shared.get(SESSIONS) as FetchSessionCache | undefined;
  if (!cache) ctx.shared.set(SESSIONS, (cache = new FetchSessionCache(ctx.settings.maxFetchSessions)));
  return cache;
}

const UNKNOWN_PARTITION_CODES = new Set<number>([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.UNKNOWN_TOPIC_ID]);

/** A partition in error: no records, no watermarks. */
function refused(topic: string, topicId: string, partitionIndex: number, errorCode: number): PartitionAnswer {
  const abortedTransactions = UNKNOWN_PARTITION_CODES.has(errorCode) ? [] : null;
  return { topic, topicId, partitionIndex, errorCode, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, abortedTransactions, records: NO_RECORDS };
}

function errorResponse(errorCode: number) {
  return { throttleTimeMs: 0, errorCode, sessionId: 0, responses: [] };
}

/** Whether an incremental response must carry this partition. */
function hasNews(p: SessionPartition, a: PartitionAnswer): boolean {
  return (
    a.records.length > 0 ||
    a.errorCode !== NONE ||
    a.highWatermark !== p.sentHighWatermark ||
    a.lastStableOffset !== p.sentLastStableOffset ||
    a.logStartOffset !== p.sentLogStartOffset
  );
}

type FetchRequest = RequestOf<typeof Fetch>;
type Isolation = 'read_committed' | 'read_uncommitted';

export const fetch: ApiHandler<typeof Fetch> = {
  api: Fetch,
  versions: '4-17',
  async handle(request, ctx) {
    const byId = ctx.header.apiVersion >= 13;
    const lookup = ctx.header.apiVersion >= 7 ? sessionsOf(ctx).begin(request.sessionId, request.sessionEpoch) : { kind: 'sessionless' as const };
    if (lookup.kind === 'error') return errorResponse(lookup.errorCode);
    const session = lookup.kind === 'sessionless' ? null : lookup.session;
    const incremental = lookup.kind === 'incremental';

    // Partitions refused before reading go straight to `answers`; the others are read.
    const answers: PartitionAnswer[] = [];
    const wanted = await partitionsWanted(request, ctx, session, incremental, answers);
    const isolation: Isolation = request.isolationLevel === 1 ? 'read_committed' : 'read_uncommitted';
    const { toRead, results } = await readPartitions(request, ctx, refuseUnreadable(wanted, ctx, answers), isolation, answers);

    const fetchedBytes = results.reduce((sum, r) => sum + r.batches.reduce((n, b) => n + b.length, 0), 0);
    const { throttleMs: throttleTimeMs, withhold } = ctx.quota.fetched(fetchedBytes);
    if (withhold) {
      // Nothing was sent: the session's partitions keep what they last sent, so the next fetch reads these again.
      if (incremental) session!.advanceEpoch();
      return { throttleTimeMs, errorCode: NONE, sessionId: session?.id ?? 0, responses: [] };
    }
    const served = answerPartitions(toRead, results, isolation, incremental, answers);
    if (session) {
      session.rotate(served);
      if (incremental) session.advanceEpoch();
    }
    return { throttleTimeMs, errorCode: NONE, sessionId: session?.id ?? 0, responses: groupByTopic(answers, byId) };
  },
};

/**
 * The partitions this fetch reads: the session's after this request's changes
 * (forgotten topics dropped, offsets and limits updated, new ones added), or
 * the request's own without a session. Unknown topics and negative offsets are
 * refused into `answers`.
 */
async function partitionsWanted(
  request: FetchRequest,
  ctx: HandlerContext,
  session: FetchSession | null,
  incremental: boolean,
  answers: PartitionAnswer[],
): Promise<SessionPartition[]> {
  const byId = ctx.header.apiVersion >= 13;
  const names = byId ? await topicNamesById(ctx, [...request.topics, ...request.forgottenTopicsData].map((t) => t.topicId)) : null;
  const nameOf = (t: { topic?: string; topicId?: string }): string | undefined => (byId ? names!.get(t.topicId!) : t.topic);
  if (incremental) {
    for (const t of request.forgottenTopicsData) {
      const name = nameOf(t);
      if (name !== undefined) for (const p of t.partitions as number[]) session!.partitions.delete(FetchSession.key(name, p));
    }
  }
  const sessionless: SessionPartition[] = [];
  for (const t of request.topics) {
    const name = nameOf(t);
    const topicId: string = byId ? t.topicId : ZERO_UUID;
    for (const p of t.partitions) {
      const errorCode = name === undefined ? ErrorCode.UNKNOWN_TOPIC_ID : topicNameProblem(name) !== null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : null;
      const fetchOffset = Number(p.fetchOffset);
      if (errorCode !== null || fetchOffset < 0) {
        answers.push(refused(name ?? t.topicId, topicId, p.partition, errorCode ?? ErrorCode.OFFSET_OUT_OF_RANGE));
        continue;
      }
      const entry = wantedPartition(session, name!, topicId, p.partition, fetchOffset, p.partitionMaxBytes);
      if (entry) sessionless.push(entry);
    }
  }
  return session ? [...session.partitions.values()] : sessionless;
}

/** Updates or adds the partition in the session; without a session returns it to be read. */
function wantedPartition(
  session: FetchSession | null,
  topic: string,
  topicId: string,
  partition: number,
  fetchOffset: number,
  maxBytes: number,
): SessionPartition | null {
  const key = FetchSession.key(topic, partition);
  const known = session?.partitions.get(key);
  if (known) {
    known.fetchOffset = fetchOffset;
    known.maxBytes = maxBytes;
    known.topicId = topicId;
    return null;
  }
  const entry: SessionPartition = {
    topic, topicId, partition, fetchOffset, maxBytes,
    sentHighWatermark: -1, sentLastStableOffset: -1, sentLogStartOffset: -1,
  };
  if (!session) return entry;
  session.partitions.set(key, entry);
  return null;
}

/** The partitions the principal may read; the others are refused into `answers`. */
function refuseUnreadable(wanted: SessionPartition[], ctx: HandlerContext, answers: PartitionAnswer[]): SessionPartition[] {
  const readable = new Map<string, boolean>();
  const mayRead = (topic: string) => readable.get(topic) ?? readable.set(topic, ctx.access.allows('READ', 'TOPIC', topic)).get(topic)!;
  for (const p of wanted) if (!mayRead(p.topic)) answers.push(refused(p.topic, p.topicId, p.partition, DENIED_CODE.TOPIC));
  return wanted.filter((p) => mayRead(p.topic));
}

/** The core's long-poll over the partitions; when it fails, every partition is refused with its code into `answers`. */
async function readPartitions(
  request: FetchRequest,
  ctx: HandlerContext,
  toRead: SessionPartition[],
  isolation: Isolation,
  answers: PartitionAnswer[],
): Promise<{ toRead: SessionPartition[]; results: ReadPartitionResult[] }> {
  // Held in the purgatory's count while the core may wait for records (Kafka's DelayedFetch).
  const mayWait = request.maxWaitMs > 0 && request.minBytes > 0 && toRead.length > 0;
  if (mayWait) fetchPurgatory.value++;
  try {
    const read = await ctx.core.read(
      {
        partitions: toRead.map((p) => ({ queue: p.topic, partition: p.partition, fetchOffset: p.fetchOffset, maxBytes: p.maxBytes })),
        minBytes: request.minBytes,
        maxWaitMs: Math.max(0, request.maxWaitMs),
        maxBytes: Math.max(1, Math.min(request.maxBytes, ctx.settings.fetchMaxBytes)),
        isolation,
      },
      { signal: AbortSignal.any([ctx.connection.closed, ctx.connection.draining]) },
    );
    return { toRead, results: read.partitions };
  } catch (e) {
    const { errorCode } = kafkaErrorOf(e);
    for (const p of toRead) answers.push(refused(p.topic, p.topicId, p.partition, errorCode));
    return { toRead: [], results: [] };
  } finally {
    if (mayWait) fetchPurgatory.value--;
  }
}

/**
 * The answers of the partitions read, into `answers` (an incremental
 * response only those with news), remembering what each was sent. Returns
 * the keys of the partitions that served records.
 */
function answerPartitions(
  toRead: SessionPartition[],
  results: ReadPartitionResult[],
  isolation: Isolation,
  incremental: boolean,
  answers: PartitionAnswer[],
): string[] {
  const served: string[] = [];
  toRead.forEach((p, i) => {
    const r = results[i]!;
    const errorCode = readErrorCode(r.error);
    const answer: PartitionAnswer =
      errorCode !== NONE
        ? refused(p.topic, p.topicId, p.partition, errorCode)
        : {
            topic: p.topic,
            topicId: p.topicId,
            partitionIndex: p.partition,
            errorCode,
            highWatermark: r.highWatermark,
            lastStableOffset: r.lastStableOffset,
            logStartOffset: r.logStartOffset,
            abortedTransactions: isolation === 'read_committed' ? r.abortedTransactions : null,
            records: r.batches,
          };
    if (incremental && !hasNews(p, answer)) return;
    answers.push(answer);
    p.sentHighWatermark = answer.highWatermark;
    p.sentLastStableOffset = answer.lastStableOffset;
    p.sentLogStartOffset = answer.logStartOffset;
    if (answer.records.length > 0) {
      served.push(FetchSession.key(p.topic, p.partition));
      countServed(p.topic, answer.records);
    }
  });
  return served;
}

/** Bytes and records a topic served, for its meters (record counts from the batch headers only). */
function countServed(topic: string, batches: readonly Buffer[]): void {
  const meters = topicMetrics(topic);
  for (const b of batches) meters.bytesOut.value += b.length;
  meters.messagesOut.value += recordsIn(batches);
}

/** Kafka's response shape: partitions grouped under their topic, topics in first-seen order. */
function groupByTopic(answers: PartitionAnswer[], byId: boolean) {
  const topics = new Map<string, { topic: string; topicId: string; partitions: object[] }>();
  for (const a of answers) {
    const key = byId ? a.topicId : a.topic;
    let t = topics.get(key);
    if (!t) topics.set(key, (t = { topic: a.topic, topicId: a.topicId, partitions: [] }));
    t.partitions.push({
      partitionIndex: a.partitionIndex,
      errorCode: a.errorCode,
      highWatermark: a.highWatermark,
      lastStableOffset: a.lastStableOffset,
      logStartOffset: a.logStartOffset,
      abortedTransactions: a.abortedTransactions,
      preferredReadReplica: -1,
      records: a.records,
    });
  }
  return [...topics.values()];
}

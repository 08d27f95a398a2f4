/**
 * Kafka transactions, driven raw where a client would never send the request
 * (a zombie's stale epoch, a batch to a partition never added, an id never
 * handed out) and through kafkajs and librdkafka where a user would see it: every
 * transactional error code a client can meet, request version by request
 * version, and what a read_committed reader sees (records, the last stable
 * offset, the aborted-transactions list, ListOffsets) against a
 * read_uncommitted one, while a transaction is open and after it ends, and an
 * abandoned transaction aborted by its timeout.
 *
 * Transactions are ended with EndTxn v4 and partitions added with
 * AddPartitionsToTxn v3 (what clients before KIP-890's second part send, and
 * what Apache Kafka 4 still serves as transaction version 1 semantics: the
 * producer keeps its epoch across transactions). EndTxn v5, where the broker
 * bumps the epoch at every end, is observed on its own, and so are Produce
 * v12 and TxnOffsetCommit v5, which add to the transaction themselves
 * (transaction version 2, KIP-890 part 2).
 *
 * Producer ids are compared as "the same id as before" or not, never by value.
 */
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { ErrorCode } from '../../../protocol/error-codes.js';
import { buildBatch } from '../../../protocol/records/record-batch.js';
import type { LibrdKafkaError, Producer } from '@confluentinc/kafka-javascript';
import { kafkajsClient } from '../../support/kafkajs.js';
import { connectProducer, disconnect } from '../../support/rdkafka.js';
import type { RawConnection } from '../../support/raw-connection.js';
import { code, type Normaliser, type Scenario, type ScenarioContext } from '../harness.js';
import { awaitCoordinator, createTopicRaw, EARLIEST, LATEST, outcome, producerIdMarker, rawFetch, rawListOffsets, rawProduce, withRaw } from '../observe.js';

const T0 = Date.UTC(2024, 7, 1);
const TXN_KEY_TYPE = 1;

/** The versions these scenarios speak unless they walk through all of them. */
const TV = { initProducerId: 4, addPartitions: 3, addOffsets: 3, endTxn: 4, txnOffsetCommit: 3, produce: 9, offsetFetch: 7, offsetCommit: 8 } as const;

/** Answers a client retries after a pause: the coordinator is loading or moving, or an earlier end is still writing its markers. */
const RETRIABLE = new Set<number>([ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.NOT_COORDINATOR, ErrorCode.CONCURRENT_TRANSACTIONS]);

/** Sends until the answer is not retriable, as clients do. */
async function retrying(send: () => Promise<Message>, errorOf: (m: Message) => number): Promise<Message> {
  for (let attempt = 0; ; attempt++) {
    const answer = await send();
    if (!RETRIABLE.has(errorOf(answer)) || attempt >= 200) return answer;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Asks for a transactional id's coordinator until there is one: Kafka creates __transaction_state on the first ask. */
async function awaitTxnCoordinator(raw: RawConnection, transactionalId: string, n: Normaliser): Promise<Record<string, unknown>> {
  for (let i = 0; ; i++) {
    const found = await raw.request(ApiKey.FindCoordinator, 4, { keyType: TXN_KEY_TYPE, coordinatorKeys: [transactionalId] });
    const c = (found.coordinators as Message[])[0]!;
    if (c.errorCode === 0 || i >= 300) return { key: c.key, error: code(c.errorCode), nodeId: n.nodeId(c.nodeId), host: n.host(c.host), port: n.port(c.port) };
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface ProducerIdentity {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
}

interface InitAnswer {
  errorCode: number;
  producerId: bigint;
  producerEpoch: number;
}

async function initProducerId(raw: RawConnection, transactionalId: string | null, options: { timeoutMs?: number; version?: number; producerId?: bigint; producerEpoch?: number; retry?: boolean } = {}): Promise<InitAnswer> {
  const send = () =>
    raw.request(ApiKey.InitProducerId, options.version ?? TV.initProducerId, {
      transactionalId,
      transactionTimeoutMs: options.timeoutMs ?? 60_000,
      producerId: options.producerId ?? -1n,
      producerEpoch: options.producerEpoch ?? -1,
    });
  const answer = options.retry === false ? await send() : await retrying(send, (m) => m.errorCode as number);
  return { errorCode: answer.errorCode as number, producerId: answer.producerId as bigint, producerEpoch: answer.producerEpoch as number };
}

/** A transactional producer's identity, or a thrown error naming what the broker answered. */
async function initTransactional(ctx: ScenarioContext, raw: RawConnection, transactionalId: string, timeoutMs = 60_000): Promise<ProducerIdentity> {
  const a = await initProducerId(raw, transactionalId, { timeoutMs });
  if (a.errorCode !== 0) throw new Error(`InitProducerId for ${transactionalId} on ${ctx.target.name} answered ${code(a.errorCode)}`);
  return { transactionalId, producerId: a.producerId, producerEpoch: a.producerEpoch };
}

/** An InitProducerId answer as an observation, its producer id said relative to `previous`. */
function initObservation(a: InitAnswer, previous?: ProducerIdentity): Record<string, unknown> {
  return {
    error: code(a.errorCode),
    producerId: previous === undefined ? producerIdMarker(a.producerId) : a.producerId === previous.producerId ? 'same' : Number(a.producerId) < 0 ? Number(a.producerId) : 'other',
    producerEpoch: a.producerEpoch,
  };
}

/** AddPartitionsToTxn at any version; the per-partition codes (and the top-level one from v4). */
async function addPartitions(raw: RawConnection, p: ProducerIdentity, topics: { name: string; partitions: number[] }[], version: number = TV.addPartitions): Promise<Record<string, unknown>> {
  const body =
    version >= 4
      ? { transactions: [{ transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, verifyOnly: false, topics }] }
      : { v3AndBelowTransactionalId: p.transactionalId, v3AndBelowProducerId: p.producerId, v3AndBelowProducerEpoch: p.producerEpoch, v3AndBelowTopics: topics };
  const answer = await retrying(
    () => raw.request(ApiKey.AddPartitionsToTxn, version, body),
    (m) => (version >= 4 ? ((m.errorCode as number) || firstPartitionError((m.resultsByTransaction as Message[])[0]?.topicResults as Message[] | undefined)) : firstPartitionError(m.resultsByTopicV3AndBelow as Message[])),
  );
  const byTopic = (results: Message[] | undefined) =>
    Object.fromEntries((results ?? []).map((t) => [t.name as string, (t.resultsByPartition as Message[]).map((r) => [r.partitionIndex, code(r.partitionErrorCode)])]));
  if (version >= 4) {
    const txn = (answer.resultsByTransaction as Message[])[0];
    return { error: code(answer.errorCode), partitions: byTopic(txn?.topicResults as Message[] | undefined) };
  }
  return { partitions: byTopic(answer.resultsByTopicV3AndBelow as Message[]) };
}

function firstPartitionError(results: Message[] | undefined): number {
  for (const t of results ?? []) for (const r of t.resultsByPartition as Message[]) if (r.partitionErrorCode !== 0) return r.partitionErrorCode as number;
  return 0;
}

async function addOffsets(raw: RawConnection, p: ProducerIdentity, group: string, version: number = TV.addOffsets): Promise<string> {
  const answer = await retrying(
    () => raw.request(ApiKey.AddOffsetsToTxn, version, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: group }),
    (m) => m.errorCode as number,
  );
  return code(answer.errorCode);
}

async function endTxn(raw: RawConnection, p: ProducerIdentity, committed: boolean, version: number = TV.endTxn): Promise<Record<string, unknown>> {
  const answer = await retrying(
    () => raw.request(ApiKey.EndTxn, version, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, committed }),
    (m) => m.errorCode as number,
  );
  const out: Record<string, unknown> = { error: code(answer.errorCode) };
  if (answer.errorCode === 0) await awaitSettled(raw, p.transactionalId);
  if (version >= 5) {
    out.producerId = answer.producerId === p.producerId ? 'same' : Number(answer.producerId) < 0 ? Number(answer.producerId) : 'other';
    out.producerEpoch = answer.producerEpoch;
  }
  return out;
}

/**
 * Waits until the transaction's markers are written: Apache Kafka answers
 * EndTxn once the decision is logged (PrepareCommit, PrepareAbort) and writes
 * the markers after, so what a reader sees the moment after differs from run
 * to run. Observations are of the settled state.
 */
async function awaitSettled(raw: RawConnection, transactionalId: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const a = await raw.request(ApiKey.DescribeTransactions, 0, { transactionalIds: [transactionalId] });
    const state = (a.transactionStates as Message[])[0]!.transactionState as string;
    if (!state.startsWith('Prepare')) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`transaction ${transactionalId} still not settled after 5 s`);
}

async function txnOffsetCommit(raw: RawConnection, p: ProducerIdentity, group: string, topic: string, offsets: [number, number][], version: number = TV.txnOffsetCommit): Promise<unknown> {
  const answer = await retrying(
    () =>
      raw.request(ApiKey.TxnOffsetCommit, version, {
        transactionalId: p.transactionalId,
        groupId: group,
        producerId: p.producerId,
        producerEpoch: p.producerEpoch,
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: topic, partitions: offsets.map(([partitionIndex, offset]) => ({ partitionIndex, committedOffset: BigInt(offset), committedLeaderEpoch: -1, committedMetadata: null })) }],
      }),
    (m) => firstCommitError(m),
  );
  return (answer.topics as { partitions: Message[] }[])[0]!.partitions.map((x) => [x.partitionIndex, code(x.errorCode)]);
}

function firstCommitError(m: Message): number {
  for (const t of m.topics as { partitions: Message[] }[]) for (const x of t.partitions) if (x.errorCode !== 0) return x.errorCode as number;
  return 0;
}

/** A transactional batch of `values` at `sequence`, produced raw under the producer's transactional id. */
async function produceTransactional(raw: RawConnection, p: ProducerIdentity, topic: string, partition: number, sequence: number, values: string[], version: number = TV.produce): Promise<Record<string, unknown>> {
  const records = buildBatch({ producerId: p.producerId, producerEpoch: p.producerEpoch, baseSequence: sequence, isTransactional: true, records: values.map((value, i) => ({ value, timestamp: T0 + i })) });
  const answer = await raw.request(ApiKey.Produce, version, {
    transactionalId: p.transactionalId,
    acks: -1,
    timeoutMs: 10_000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  });
  const r = (answer.responses as { partitionResponses: Message[] }[])[0]!.partitionResponses[0]!;
  return { error: code(r.errorCode), baseOffset: Number(r.baseOffset) };
}

async function producePlain(ctx: ScenarioContext, raw: RawConnection, topic: string, values: string[]): Promise<void> {
  const answer = await rawProduce(raw, topic, 0, buildBatch({ records: values.map((value, i) => ({ value, timestamp: T0 + i })) }));
  if (answer.errorCode !== 0) throw new Error(`producing to ${topic} on ${ctx.target.name} answered ${code(answer.errorCode)}`);
}

async function createTopic(ctx: ScenarioContext, raw: RawConnection, name: string, partitions = 1): Promise<void> {
  const { errorCode } = await createTopicRaw(raw, name, partitions);
  if (errorCode !== 0) throw new Error(`creating ${name} on ${ctx.target.name} answered ${code(errorCode)}`);
}

/** Fails the scenario (naming the step) when a setup step's answer is not NONE: what follows would observe nothing. */
function expectNone(ctx: ScenarioContext, step: string, observed: unknown): void {
  const text = JSON.stringify(observed);
  if (/"[A-Z_]+ \(\d+\)"/.test(text)) throw new Error(`${step} on ${ctx.target.name} answered ${text}`);
}

/**
 * A partition read the way a consumer reads it, under one isolation level:
 * fetches from `offset`, then from after the last batch received, until the
 * high watermark (read_uncommitted) or the last stable offset
 * (read_committed). Apache Kafka may answer one batch per fetch where the
 * gateway answers all, so the batches and aborted transactions are gathered
 * across fetches; the watermarks are the first fetch's. Kafka writes a
 * transaction's markers just after EndTxn answers, so a read that falls
 * short of its end is retried briefly: what is observed is the settled log.
 */
async function fetchAt(raw: RawConnection, topic: string, isolationLevel: 0 | 1, n: Normaliser, offset = 0): Promise<Record<string, unknown>> {
  for (let attempt = 0; ; attempt++) {
    const first = await rawFetch(raw, topic, { partition: 0, offset, isolationLevel }, n);
    const end = isolationLevel === 1 ? (first.lastStableOffset as number) : (first.highWatermark as number);
    const batches: Record<string, unknown>[] = [];
    const aborted = new Map<number, unknown>();
    let f = first;
    let next = offset;
    for (let i = 0; i < 100; i++) {
      for (const a of (f.abortedTransactions as Message[] | null) ?? []) aborted.set(Number(a.firstOffset), { producerId: producerIdMarker(a.producerId as bigint), firstOffset: Number(a.firstOffset) });
      const got = (f.batches as Record<string, unknown>[] | null) ?? [];
      batches.push(...got);
      const last = got.at(-1) as { baseOffset: number; lastOffsetDelta: number } | undefined;
      if (!last) break;
      next = last.baseOffset + last.lastOffsetDelta + 1;
      if (next >= end) break;
      f = await rawFetch(raw, topic, { partition: 0, offset: next, isolationLevel }, n);
    }
    if (next < end && attempt < 40) {
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    return {
      ...first,
      abortedTransactions: first.abortedTransactions === null && aborted.size === 0 ? null : [...aborted.entries()].sort(([a], [b]) => a - b).map(([, a]) => a),
      batches: batches.map((b) => ({
        baseOffset: b.baseOffset,
        lastOffsetDelta: b.lastOffsetDelta,
        transactional: b.transactional,
        control: b.control,
        producerId: b.producerId,
        producerEpoch: b.producerEpoch,
        baseSequence: b.baseSequence,
        // A control record's key says commit or abort; its value carries the coordinator's epoch, which differs.
        records: (b.records as { key: string | null; value: string | null }[]).map((r) => (b.control ? 'marker' : r.value)),
      })),
    };
  }
}

/** What a read_committed consumer hands the application: records outside aborted transactions and markers. */
function committedValues(fetched: Record<string, unknown>): string[] {
  const aborted = ((fetched.abortedTransactions as { firstOffset: number }[] | null) ?? []).map((a) => a.firstOffset);
  const out: string[] = [];
  let skipping = false;
  for (const b of (fetched.batches as { baseOffset: number; control: boolean; transactional: boolean; records: string[] }[] | null) ?? []) {
    if (b.control) {
      skipping = false;
      continue;
    }
    if (aborted.includes(b.baseOffset)) skipping = true;
    if (!skipping || !b.transactional) out.push(...b.records);
  }
  return out;
}

// ─── InitProducerId ──────────────────────────────────────────────────────────

const initScenario: Scenario = {
  name: 'transactions: InitProducerId with a transactional id',
  async run(ctx) {
    const n = ctx.normalise;
    const tid = 'diff-txn-init';
    const topic = 'diff-txn-init';
    return withRaw(ctx, async (raw) => {
      const coordinator = await awaitTxnCoordinator(raw, tid, n);
      await createTopic(ctx, raw, topic);
      const fresh = await initProducerId(raw, tid);
      const first: ProducerIdentity = { transactionalId: tid, producerId: fresh.producerId, producerEpoch: fresh.producerEpoch };
      const again = await initProducerId(raw, tid);
      const withIdAndEpoch = await initProducerId(raw, tid, { producerId: again.producerId, producerEpoch: again.producerEpoch });
      const staleEpoch = await initProducerId(raw, tid, { producerId: first.producerId, producerEpoch: first.producerEpoch, retry: false });
      const otherId = await initProducerId(raw, tid, { producerId: first.producerId + 1_000n, producerEpoch: withIdAndEpoch.producerEpoch, retry: false });

      // A new instance while the previous one's transaction is open: Kafka aborts that transaction first.
      const current: ProducerIdentity = { transactionalId: tid, producerId: withIdAndEpoch.producerId, producerEpoch: withIdAndEpoch.producerEpoch };
      const added = await addPartitions(raw, current, [{ name: topic, partitions: [0] }]);
      const produced = await produceTransactional(raw, current, topic, 0, 0, ['open-0']);
      const firstAnswerWhileOpen = await initProducerId(raw, tid, { retry: false });
      const whileOpen = await initProducerId(raw, tid);

      const versions: Record<string, unknown> = {};
      for (let v = 0; v <= 5; v++) {
        const id = `diff-txn-init-v${v}`;
        await awaitTxnCoordinator(raw, id, n);
        const a = await initProducerId(raw, id, { version: v });
        const b = await initProducerId(raw, id, { version: v });
        versions[`v${v}`] = { fresh: initObservation(a), again: initObservation(b, { transactionalId: id, producerId: a.producerId, producerEpoch: a.producerEpoch }) };
      }
      const timeouts: Record<string, unknown> = {};
      for (const timeoutMs of [0, -1, 1, 900_000, 900_001, 2_147_483_647]) {
        const id = `diff-txn-timeout-${timeoutMs}`;
        await awaitTxnCoordinator(raw, id, n);
        timeouts[String(timeoutMs)] = initObservation(await initProducerId(raw, id, { timeoutMs }));
      }
      const idempotentIgnoresTimeout = initObservation(await initProducerId(raw, null, { timeoutMs: 0 }));
      return {
        coordinator,
        fresh: initObservation(fresh),
        again: initObservation(again, first),
        withIdAndEpoch: initObservation(withIdAndEpoch, first),
        staleEpoch: initObservation(staleEpoch, first),
        otherId: initObservation(otherId, first),
        openTransaction: { added, produced, firstAnswer: initObservation(firstAnswerWhileOpen, first), retried: initObservation(whileOpen, first) },
        fetchedAfterFencing: await fetchAt(raw, topic, 0, n),
        versions,
        timeouts,
        idempotentIgnoresTimeout,
      };
    });
  },
};

// ─── Zombie fencing ──────────────────────────────────────────────────────────

const zombieScenario: Scenario = {
  name: 'transactions: a zombie producer is fenced, request version by version',
  async run(ctx) {
    const n = ctx.normalise;
    const tid = 'diff-txn-zombie';
    const topic = 'diff-txn-zombie';
    const group = 'diff-txn-zombie-group';
    return withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic);
      await awaitTxnCoordinator(raw, tid, n);
      await awaitCoordinator(raw, group);
      const zombie = await initTransactional(ctx, raw, tid);
      const begun = {
        added: await addPartitions(raw, zombie, [{ name: topic, partitions: [0] }]),
        produced: await produceTransactional(raw, zombie, topic, 0, 0, ['zombie-0', 'zombie-1']),
        offsetsAdded: await addOffsets(raw, zombie, group),
        offsetsCommitted: await txnOffsetCommit(raw, zombie, group, topic, [[0, 2]]),
      };
      expectNone(ctx, 'the zombie transaction', begun);
      const successor = await initProducerId(raw, tid);
      const fenced: Record<string, unknown> = {};
      for (const v of [3, 7, 9, 11]) fenced[`produceV${v}`] = await produceTransactional(raw, zombie, topic, 0, 2, [`zombie-v${v}`], v);
      for (let v = 0; v <= 5; v++) fenced[`addPartitionsV${v}`] = await addPartitions(raw, zombie, [{ name: topic, partitions: [0] }], v);
      for (let v = 0; v <= 4; v++) fenced[`addOffsetsV${v}`] = await addOffsets(raw, zombie, group, v);
      for (let v = 0; v <= 4; v++) fenced[`txnOffsetCommitV${v}`] = await txnOffsetCommit(raw, zombie, group, topic, [[0, 9]], v);
      for (let v = 0; v <= 5; v++) fenced[`endTxnCommitV${v}`] = await endTxn(raw, zombie, true, v);
      fenced.endTxnAbort = await endTxn(raw, zombie, false);
      // The successor's epoch from before the bump is no better than the zombie's.
      const older = { ...zombie, producerEpoch: successor.producerEpoch - 1 };
      fenced.epochBetween = { addPartitions: await addPartitions(raw, older, [{ name: topic, partitions: [0] }]), endTxn: await endTxn(raw, older, true) };
      return {
        begun,
        successor: initObservation(successor, zombie),
        fenced,
        readUncommitted: await fetchAt(raw, topic, 0, n),
        readCommitted: await fetchAt(raw, topic, 1, n),
        committedOffset: await offsetFetch(raw, group, topic, false),
      };
    });
  },
};

// ─── Invalid state and unknown ids ───────────────────────────────────────────

const stateScenario: Scenario = {
  name: 'transactions: INVALID_TXN_STATE and INVALID_PRODUCER_ID_MAPPING',
  async run(ctx) {
    const n = ctx.normalise;
    const tid = 'diff-txn-state';
    const topic = 'diff-txn-state';
    const group = 'diff-txn-state-group';
    return withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic, 2);
      await awaitTxnCoordinator(raw, tid, n);
      await awaitCoordinator(raw, group);
      const p = await initTransactional(ctx, raw, tid);
      const out: Record<string, unknown> = {};
      out.commitWithNoTransaction = await endTxn(raw, p, true);
      out.abortWithNoTransaction = await endTxn(raw, p, false);
      out.produceToPartitionNotAdded = await produceTransactional(raw, p, topic, 0, 0, ['not-added']);
      out.added = await addPartitions(raw, p, [{ name: topic, partitions: [0] }]);
      out.produceToOtherPartitionNotAdded = await produceTransactional(raw, p, topic, 1, 0, ['not-added-1']);
      out.produceToAdded = await produceTransactional(raw, p, topic, 0, 0, ['added-0']);
      out.txnOffsetCommitWithoutAddOffsets = await txnOffsetCommit(raw, p, group, topic, [[0, 1]]);
      out.addUnknownTopic = await addPartitions(raw, p, [{ name: topic, partitions: [0] }, { name: 'diff-txn-no-such-topic', partitions: [0] }]);
      out.addPartitionOutOfRange = await addPartitions(raw, p, [{ name: topic, partitions: [7] }]);
      out.commit = await endTxn(raw, p, true);
      out.commitAgain = await endTxn(raw, p, true);
      out.abortAfterCommit = await endTxn(raw, p, false);

      const stranger: ProducerIdentity = { transactionalId: 'diff-txn-never-initialised', producerId: p.producerId, producerEpoch: p.producerEpoch };
      await awaitTxnCoordinator(raw, stranger.transactionalId, n);
      out.unknownTransactionalId = {
        addPartitions: await addPartitions(raw, stranger, [{ name: topic, partitions: [0] }]),
        addOffsets: await addOffsets(raw, stranger, group),
        endTxn: await endTxn(raw, stranger, true),
        txnOffsetCommit: await txnOffsetCommit(raw, stranger, group, topic, [[0, 1]]),
      };
      const wrongId: ProducerIdentity = { ...p, producerId: p.producerId + 1_000n };
      out.wrongProducerId = {
        addPartitions: await addPartitions(raw, wrongId, [{ name: topic, partitions: [0] }]),
        addOffsets: await addOffsets(raw, wrongId, group),
        endTxn: await endTxn(raw, wrongId, true),
      };
      const futureEpoch: ProducerIdentity = { ...p, producerEpoch: p.producerEpoch + 5 };
      out.futureEpoch = { addPartitions: await addPartitions(raw, futureEpoch, [{ name: topic, partitions: [0] }]), endTxn: await endTxn(raw, futureEpoch, true) };
      out.nonTransactionalBatchUnderTransactionalId = await (async () => {
        const records = buildBatch({ producerId: p.producerId, producerEpoch: p.producerEpoch, baseSequence: 1, records: [{ value: 'plain', timestamp: T0 }] });
        const a = await raw.request(ApiKey.Produce, TV.produce, { transactionalId: tid, acks: -1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
        return code((a.responses as { partitionResponses: Message[] }[])[0]!.partitionResponses[0]!.errorCode as number);
      })();
      out.fetched = await fetchAt(raw, topic, 0, n);
      // The committed transaction's batch again (producer id, epoch, sequence) once its transaction has ended: Kafka 4.4
      // refuses it (INVALID_TXN_STATE: the partition is in no open transaction) rather than answering the idempotent duplicate.
      out.resendAfterCommit = await produceTransactional(raw, p, topic, 0, 0, ['added-0']);
      return out;
    });
  },
};

// ─── EndTxn v5: the epoch moves at every end ────────────────────────────────

const endTxnV5Scenario: Scenario = {
  name: 'transactions: EndTxn v5 bumps the epoch at every end',
  async run(ctx) {
    const n = ctx.normalise;
    const tid = 'diff-txn-v5';
    const topic = 'diff-txn-v5';
    return withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic);
      await awaitTxnCoordinator(raw, tid, n);
      const p = await initTransactional(ctx, raw, tid);
      const out: Record<string, unknown> = { init: p.producerEpoch };
      out.added = await addPartitions(raw, p, [{ name: topic, partitions: [0] }], 3);
      out.produced = await produceTransactional(raw, p, topic, 0, 0, ['v5-0']);
      const committed = await endTxn(raw, p, true, 5);
      out.commit = committed;
      const next: ProducerIdentity = { ...p, producerEpoch: committed.producerEpoch as number };
      out.oldEpochAfterCommit = await addPartitions(raw, p, [{ name: topic, partitions: [0] }], 3);
      out.nextAdded = await addPartitions(raw, next, [{ name: topic, partitions: [0] }], 3);
      out.nextProduced = await produceTransactional(raw, next, topic, 0, 0, ['v5-1']);
      out.abort = await endTxn(raw, next, false, 5);
      out.emptyCommit = await endTxn(raw, { ...next, producerEpoch: (out.abort as { producerEpoch: number }).producerEpoch }, true, 5);
      out.readCommitted = await fetchAt(raw, topic, 1, n);
      return out;
    });
  },
};

/** Transaction version 2's other half: partitions and groups join the transaction through Produce v12 and TxnOffsetCommit v5 themselves. */
const implicitJoinScenario: Scenario = {
  name: 'transactions: Produce v12 and TxnOffsetCommit v5 join the transaction without AddPartitionsToTxn or AddOffsetsToTxn',
  async run(ctx) {
    const n = ctx.normalise;
    const tid = 'diff-txn-tv2';
    const topic = 'diff-txn-tv2';
    const group = 'diff-txn-tv2-group';
    return withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic);
      await awaitTxnCoordinator(raw, tid, n);
      await awaitCoordinator(raw, group);
      const p = await initTransactional(ctx, raw, tid);
      const out: Record<string, unknown> = {};
      out.v11WithoutAdd = await produceTransactional(raw, p, topic, 0, 0, ['v11'], 11);
      out.v12 = await produceTransactional(raw, p, topic, 0, 0, ['tv2-0', 'tv2-1'], 12);
      out.offsetsV4WithoutAdd = await txnOffsetCommit(raw, p, group, topic, [[0, 3]], 4);
      out.offsetsV5 = await txnOffsetCommit(raw, p, group, topic, [[0, 3]], 5);
      out.pending = await offsetFetch(raw, group, topic, true);
      const committed = await endTxn(raw, p, true, 5);
      out.commit = committed;
      const next: ProducerIdentity = { ...p, producerEpoch: committed.producerEpoch as number };
      out.afterCommit = { offsets: await offsetFetch(raw, group, topic, true), read: await fetchAt(raw, topic, 1, n) };
      // The next transaction: offsets only, then an abort; they never land.
      out.nextOffsets = await txnOffsetCommit(raw, next, group, topic, [[0, 9]], 5);
      out.lateBatch = await produceTransactional(raw, p, topic, 0, 2, ['late'], 12);
      out.abort = await endTxn(raw, next, false, 5);
      out.afterAbort = await offsetFetch(raw, group, topic, true);
      return out;
    });
  },
};

// ─── DescribeTransactions, ListTransactions ─────────────────────────────────

async function describeTxn(raw: RawConnection, ids: string[], n: Normaliser, p?: ProducerIdentity): Promise<unknown[]> {
  const a = await raw.request(ApiKey.DescribeTransactions, 0, { transactionalIds: ids });
  return (a.transactionStates as Message[]).map((s) => ({
    error: code(s.errorCode),
    transactionalId: s.transactionalId,
    state: s.transactionState,
    timeoutMs: s.transactionTimeoutMs,
    startTimeMs: Number(s.transactionStartTimeMs) <= 0 ? Number(s.transactionStartTimeMs) : n.serverTime(Number(s.transactionStartTimeMs)),
    producerId: p && s.producerId === p.producerId ? 'same' : Number(s.producerId),
    producerEpoch: s.producerEpoch,
    topics: (s.topics as Message[]).map((t) => ({ topic: t.topic, partitions: [...(t.partitions as number[])].sort() })),
  }));
}

async function listTxn(raw: RawConnection, prefix: string, filters: { stateFilters?: string[]; producerIdFilters?: bigint[] } = {}): Promise<unknown> {
  const a = await raw.request(ApiKey.ListTransactions, 0, { stateFilters: filters.stateFilters ?? [], producerIdFilters: filters.producerIdFilters ?? [], durationFilter: -1n });
  return {
    error: code(a.errorCode),
    unknownStateFilters: a.unknownStateFilters,
    transactions: (a.transactionStates as Message[])
      .filter((s) => (s.transactionalId as string).startsWith(prefix))
      .map((s) => ({ transactionalId: s.transactionalId, state: s.transactionState }))
      .sort((x, y) => x.transactionalId.localeCompare(y.transactionalId)),
  };
}

/** Describes until the state is not a passing one (PrepareCommit, PrepareAbort: markers still being written). */
async function describeSettled(raw: RawConnection, id: string, n: Normaliser, p: ProducerIdentity): Promise<unknown> {
  for (let i = 0; ; i++) {
    const [d] = await describeTxn(raw, [id], n, p);
    const state = (d as { state: string }).state;
    if (!state.startsWith('Prepare') || i >= 100) return d;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const describeScenario: Scenario = {
  name: 'transactions: DescribeTransactions and ListTransactions',
  async run(ctx) {
    const n = ctx.normalise;
    const prefix = 'diff-txn-describe';
    const tid = `${prefix}-a`;
    const idle = `${prefix}-b`;
    const topic = prefix;
    return withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic, 2);
      await awaitTxnCoordinator(raw, tid, n);
      await awaitTxnCoordinator(raw, idle, n);
      const out: Record<string, unknown> = {};
      out.unknown = await describeTxn(raw, [`${prefix}-unknown`], n);
      const p = await initTransactional(ctx, raw, tid, 45_000);
      await initTransactional(ctx, raw, idle, 30_000);
      out.empty = await describeTxn(raw, [tid], n, p);
      out.added = await addPartitions(raw, p, [{ name: topic, partitions: [1, 0] }]);
      out.produced = await produceTransactional(raw, p, topic, 1, 0, ['describe-1']);
      out.ongoing = await describeTxn(raw, [tid, `${prefix}-unknown`], n, p);
      out.listAll = await listTxn(raw, prefix);
      out.listOngoing = await listTxn(raw, prefix, { stateFilters: ['Ongoing'] });
      out.listEmptyAndBogus = await listTxn(raw, prefix, { stateFilters: ['Empty', 'Bogus'] });
      out.listByProducerId = await listTxn(raw, prefix, { producerIdFilters: [p.producerId] });
      out.commit = await endTxn(raw, p, true);
      out.committed = await describeSettled(raw, tid, n, p);
      out.listAfterCommit = await listTxn(raw, prefix);
      out.producers = await (async () => {
        const a = await raw.request(ApiKey.DescribeProducers, 0, { topics: [{ name: topic, partitionIndexes: [0, 1] }] });
        return (a.topics as { partitions: Message[] }[])[0]!.partitions.map((x) => ({
          partition: x.partitionIndex,
          error: code(x.errorCode),
          active: (x.activeProducers as Message[]).map((s) => ({ producer: s.producerId === p.producerId ? 'same' : 'other', epoch: s.producerEpoch, lastSequence: s.lastSequence, currentTxnStartOffset: Number(s.currentTxnStartOffset) })),
        }));
      })();
      return out;
    });
  },
};

// ─── Isolation levels ────────────────────────────────────────────────────────

const isolationScenario: Scenario = {
  name: 'transactions: read_committed and read_uncommitted, LSO, aborted transactions, ListOffsets',
  async run(ctx) {
    const n = ctx.normalise;
    const tid = 'diff-txn-isolation';
    const topic = 'diff-txn-isolation';
    return withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic);
      await awaitTxnCoordinator(raw, tid, n);
      const p = await initTransactional(ctx, raw, tid);
      const setup: Record<string, unknown> = {};
      await producePlain(ctx, raw, topic, ['plain-0']);
      setup.addCommitted = await addPartitions(raw, p, [{ name: topic, partitions: [0] }]);
      setup.produceCommitted = await produceTransactional(raw, p, topic, 0, 0, ['committed-0', 'committed-1', 'committed-2']);
      setup.commit = await endTxn(raw, p, true);
      setup.addAborted = await addPartitions(raw, p, [{ name: topic, partitions: [0] }]);
      setup.produceAborted = await produceTransactional(raw, p, topic, 0, 3, ['aborted-0', 'aborted-1']);
      setup.abort = await endTxn(raw, p, false);
      await producePlain(ctx, raw, topic, ['plain-1']);
      setup.addOpen = await addPartitions(raw, p, [{ name: topic, partitions: [0] }]);
      setup.produceOpen = await produceTransactional(raw, p, topic, 0, 5, ['open-0', 'open-1']);
      await producePlain(ctx, raw, topic, ['plain-2']);
      expectNone(ctx, 'the transactions', setup);

      const whileOpen = {
        readUncommitted: await fetchAt(raw, topic, 0, n),
        readCommitted: await fetchAt(raw, topic, 1, n),
        readCommittedAtHighWatermark: await fetchAt(raw, topic, 1, n, 12),
        latestUncommitted: await rawListOffsets(raw, topic, 0, LATEST, 0),
        latestCommitted: await rawListOffsets(raw, topic, 0, LATEST, 1),
        earliestCommitted: await rawListOffsets(raw, topic, 0, EARLIEST, 1),
      };
      const commit = await endTxn(raw, p, true);
      const afterCommit = {
        readCommitted: await fetchAt(raw, topic, 1, n),
        latestUncommitted: await rawListOffsets(raw, topic, 0, LATEST, 0),
        latestCommitted: await rawListOffsets(raw, topic, 0, LATEST, 1),
      };
      return {
        setup,
        whileOpen,
        valuesReadCommittedWhileOpen: committedValues(whileOpen.readCommitted),
        commit,
        afterCommit,
        valuesReadCommittedAfterCommit: committedValues(afterCommit.readCommitted),
      };
    });
  },
};

// ─── Offsets in a transaction ────────────────────────────────────────────────

async function offsetFetch(raw: RawConnection, group: string, topic: string, requireStable: boolean, version: number = TV.offsetFetch): Promise<unknown> {
  if (version >= 8) {
    const a = await raw.request(ApiKey.OffsetFetch, version, { groups: [{ groupId: group, memberId: null, memberEpoch: -1, topics: [{ name: topic, partitionIndexes: [0] }] }], requireStable });
    const g = (a.groups as Message[])[0]!;
    return { groupError: code(g.errorCode), partitions: (g.topics as Message[]).flatMap((t) => (t.partitions as Message[]).map((x) => ({ offset: Number(x.committedOffset), error: code(x.errorCode) }))) };
  }
  const a = await raw.request(ApiKey.OffsetFetch, version, { groupId: group, topics: [{ name: topic, partitionIndexes: [0] }], requireStable });
  return { error: code(a.errorCode), partitions: (a.topics as Message[]).flatMap((t) => (t.partitions as Message[]).map((x) => ({ offset: Number(x.committedOffset), error: code(x.errorCode) }))) };
}

async function plainCommit(raw: RawConnection, group: string, topic: string, offset: number): Promise<unknown> {
  const a = await retrying(
    () =>
      raw.request(ApiKey.OffsetCommit, TV.offsetCommit, {
        groupId: group,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: BigInt(offset), committedLeaderEpoch: -1, committedMetadata: null }] }],
      }),
    firstCommitError,
  );
  return code((a.topics as { partitions: Message[] }[])[0]!.partitions[0]!.errorCode as number);
}

const offsetsScenario: Scenario = {
  name: 'transactions: offsets committed in a transaction, OffsetFetch require_stable',
  async run(ctx) {
    const n = ctx.normalise;
    const tid = 'diff-txn-offsets';
    const topic = 'diff-txn-offsets';
    const group = 'diff-txn-offsets-group';
    return withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic);
      await producePlain(ctx, raw, topic, Array.from({ length: 12 }, (_, i) => `in-${i}`));
      await awaitTxnCoordinator(raw, tid, n);
      await awaitCoordinator(raw, group);
      const p = await initTransactional(ctx, raw, tid);
      const out: Record<string, unknown> = { plainCommit: await plainCommit(raw, group, topic, 1) };
      out.addOffsets = await addOffsets(raw, p, group);
      out.txnCommit = await txnOffsetCommit(raw, p, group, topic, [[0, 5]]);
      out.pending = {
        stableV7: await offsetFetch(raw, group, topic, true),
        unstableV7: await offsetFetch(raw, group, topic, false),
        stableV8: await offsetFetch(raw, group, topic, true, 8),
        unstableV8: await offsetFetch(raw, group, topic, false, 8),
        stableV6: await offsetFetch(raw, group, topic, false, 6),
      };
      out.commit = await endTxn(raw, p, true);
      out.afterCommit = { stable: await offsetFetch(raw, group, topic, true), unstable: await offsetFetch(raw, group, topic, false) };
      // A plain commit made while a transactional one is pending: the later write wins when the transaction commits.
      out.second = { addOffsets: await addOffsets(raw, p, group), txnCommit: await txnOffsetCommit(raw, p, group, topic, [[0, 9]]) };
      out.plainCommitWhilePending = await plainCommit(raw, group, topic, 7);
      out.secondCommit = await endTxn(raw, p, true);
      out.afterSecondCommit = await offsetFetch(raw, group, topic, true);
      out.abortedAddOffsets = await addOffsets(raw, p, group);
      out.abortedTxnCommit = await txnOffsetCommit(raw, p, group, topic, [[0, 11]]);
      out.abort = await endTxn(raw, p, false);
      out.afterAbort = await offsetFetch(raw, group, topic, true);
      return out;
    });
  },
};

// ─── The transaction timeout ─────────────────────────────────────────────────

const timeoutScenario: Scenario = {
  name: 'transactions: an abandoned transaction is aborted after its timeout',
  async run(ctx) {
    const n = ctx.normalise;
    const tid = 'diff-txn-timeout-abort';
    const topic = 'diff-txn-timeout-abort';
    return withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic);
      await awaitTxnCoordinator(raw, tid, n);
      const p = await initTransactional(ctx, raw, tid, 1_000);
      const out: Record<string, unknown> = {};
      out.added = await addPartitions(raw, p, [{ name: topic, partitions: [0] }]);
      out.produced = await produceTransactional(raw, p, topic, 0, 0, ['abandoned-0', 'abandoned-1']);
      await producePlain(ctx, raw, topic, ['plain-after']);
      out.whileOpen = { lastStableOffset: (await rawFetch(raw, topic, { partition: 0, offset: 0, isolationLevel: 1 }, n)).lastStableOffset };
      // Apache Kafka looks for timed-out transactions every 10 s (transaction.abort.timed.out.transaction.cleanup.interval.ms).
      let state = '';
      for (let i = 0; i < 300 && state !== 'CompleteAbort'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        state = ((await describeTxn(raw, [tid], n, p))[0] as { state: string }).state;
      }
      out.described = await describeTxn(raw, [tid], n, p);
      out.readCommitted = await fetchAt(raw, topic, 1, n);
      out.valuesReadCommitted = committedValues(out.readCommitted as Record<string, unknown>);
      out.abandonedProducer = {
        produce: await produceTransactional(raw, p, topic, 0, 2, ['late']),
        addPartitions: await addPartitions(raw, p, [{ name: topic, partitions: [0] }]),
        endTxn: await endTxn(raw, p, true),
      };
      // KIP-360: the abandoned producer asking to bump its own epoch.
      out.bumpWithOldEpoch = initObservation(await initProducerId(raw, tid, { timeoutMs: 1_000, producerId: p.producerId, producerEpoch: p.producerEpoch, retry: false }), p);
      out.reinitialised = initObservation(await initProducerId(raw, tid, { timeoutMs: 1_000 }), p);
      return out;
    });
  },
};

/** The same with transaction version 2: the transaction opened by Produce v12, and the producer then aborting with the epoch it had (EndTxn v5). */
const timeoutV2Scenario: Scenario = {
  name: 'transactions: an abandoned transaction version 2 transaction is aborted after its timeout',
  async run(ctx) {
    const n = ctx.normalise;
    const tid = 'diff-txn-timeout-v2';
    const topic = 'diff-txn-timeout-v2';
    return withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic);
      await awaitTxnCoordinator(raw, tid, n);
      const p = await initTransactional(ctx, raw, tid, 1_000);
      const out: Record<string, unknown> = {};
      out.produced = await produceTransactional(raw, p, topic, 0, 0, ['abandoned-0'], 12);
      let state = '';
      for (let i = 0; i < 300 && state !== 'CompleteAbort'; i++) {
        await new Promise((r) => setTimeout(r, 100));
        state = ((await describeTxn(raw, [tid], n, p))[0] as { state: string }).state;
      }
      out.described = await describeTxn(raw, [tid], n, p);
      out.lateProduce = await produceTransactional(raw, p, topic, 0, 1, ['late'], 12);
      const aborted = await endTxn(raw, p, false, 5);
      out.abortWithOldEpoch = aborted;
      if (aborted.error === 'NONE') {
        const next: ProducerIdentity = { ...p, producerEpoch: aborted.producerEpoch as number };
        out.next = { produced: await produceTransactional(raw, next, topic, 0, 0, ['next'], 12), commit: await endTxn(raw, next, true, 5) };
        out.valuesReadCommitted = committedValues(await fetchAt(raw, topic, 1, n));
      }
      return out;
    });
  },
};

// ─── kafkajs ─────────────────────────────────────────────────────────────────

const kafkajsScenario: Scenario = {
  name: 'transactions: kafkajs commit, abort, sendOffsets and a fenced zombie',
  async run(ctx) {
    const n = ctx.normalise;
    const topic = 'diff-txn-kafkajs';
    const group = 'diff-txn-kafkajs-group';
    const tid = 'diff-txn-kafkajs';
    await withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic);
      await awaitTxnCoordinator(raw, tid, n);
      await awaitCoordinator(raw, group);
    });
    const kafka = kafkajsClient(ctx.target.bootstrap, { clientId: 'queen-diff', retries: 8 });
    const first = kafka.producer({ transactionalId: tid, idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    const second = kafka.producer({ transactionalId: tid, idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    const out: Record<string, unknown> = {};
    try {
      await first.connect();
      const committed = await first.transaction();
      await committed.send({ topic, messages: [{ partition: 0, value: 'kjs-committed-0', timestamp: String(T0) }, { partition: 0, value: 'kjs-committed-1', timestamp: String(T0) }] });
      await committed.sendOffsets({ consumerGroupId: group, topics: [{ topic, partitions: [{ partition: 0, offset: '2' }] }] });
      out.commit = await outcome(() => committed.commit().then(() => 'committed'));
      const aborted = await first.transaction();
      await aborted.send({ topic, messages: [{ partition: 0, value: 'kjs-aborted', timestamp: String(T0) }] });
      out.abort = await outcome(() => aborted.abort().then(() => 'aborted'));
      const zombieTxn = await first.transaction();
      await zombieTxn.send({ topic, messages: [{ partition: 0, value: 'kjs-zombie', timestamp: String(T0) }] });
      await second.connect();
      // kafkajs asks InitProducerId at the first transaction(): that is what fences the first instance.
      const successor = await second.transaction();
      out.zombieSend = await outcome(() => zombieTxn.send({ topic, messages: [{ partition: 0, value: 'kjs-zombie-2', timestamp: String(T0) }] }).then(() => 'sent'));
      out.zombieCommit = await outcome(() => zombieTxn.commit().then(() => 'committed'));
      await successor.send({ topic, messages: [{ partition: 0, value: 'kjs-successor', timestamp: String(T0) }] });
      out.successorCommit = await outcome(() => successor.commit().then(() => 'committed'));
    } finally {
      await first.disconnect().catch(() => {});
      await second.disconnect().catch(() => {});
    }
    const admin = kafka.admin();
    await admin.connect();
    try {
      out.groupOffsets = (await admin.fetchOffsets({ groupId: group, topics: [topic] })).map((t) => ({ topic: t.topic, partitions: t.partitions.map((x) => [x.partition, x.offset]) }));
    } finally {
      await admin.disconnect();
    }
    const consumer = kafka.consumer({ groupId: `${group}-reader`, readUncommitted: false });
    const values: string[] = [];
    await consumer.connect();
    try {
      await consumer.subscribe({ topic, fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`kafkajs read_committed consumer read ${values.length} records in 30 s: ${values.join(', ')}`)), 30_000);
        void consumer.run({
          eachMessage: async ({ message }) => {
            values.push(message.value!.toString());
            if (values.includes('kjs-successor')) {
              clearTimeout(timer);
              resolve();
            }
          },
        });
      });
    } finally {
      await consumer.disconnect();
    }
    out.readCommittedValues = values;
    out.readUncommitted = await withRaw(ctx, async (raw) => {
      await awaitSettled(raw, tid);
      return fetchAt(raw, topic, 0, n);
    });
    return out;
  },
};

// ─── librdkafka ──────────────────────────────────────────────────────────────

/** A librdkafka call's outcome as a user sees it: done, or its error code and kind. */
function rdkafkaCall(what: string, call: (cb: (err: LibrdKafkaError | null | undefined) => void) => void): Promise<unknown> {
  return new Promise((resolve) =>
    call((err) => resolve(err ? { error: err.code, fatal: err.isFatal ?? false, requiresAbort: err.isTxnRequiresAbort ?? false, retriable: err.isRetriable ?? false } : `${what} done`)),
  );
}

const librdkafkaScenario: Scenario = {
  name: 'transactions: librdkafka commit, abort and a fenced zombie',
  async run(ctx) {
    const n = ctx.normalise;
    const topic = 'diff-txn-librdkafka';
    const tid = 'diff-txn-librdkafka';
    await withRaw(ctx, async (raw) => {
      await createTopic(ctx, raw, topic);
      await awaitTxnCoordinator(raw, tid, n);
    });
    const config = { 'transactional.id': tid, 'linger.ms': 5 };
    const first = await connectProducer(ctx.target.bootstrap, config, topic);
    let second: Producer | null = null;
    const out: Record<string, unknown> = {};
    const send = (p: Producer, value: string) => p.produce(topic, 0, Buffer.from(value), null, T0);
    try {
      out.init = await rdkafkaCall('init', (cb) => first.initTransactions(30_000, cb));
      out.begin = await rdkafkaCall('begin', (cb) => first.beginTransaction(cb));
      send(first, 'rdk-committed-0');
      send(first, 'rdk-committed-1');
      out.commit = await rdkafkaCall('commit', (cb) => first.commitTransaction(30_000, cb));
      await rdkafkaCall('begin', (cb) => first.beginTransaction(cb));
      send(first, 'rdk-aborted');
      // Written before the abort, on every broker: librdkafka's abort purges what it has not sent yet, which made the log depend on timing.
      await new Promise<void>((resolve) => first.flush(10_000, () => resolve()));
      out.abort = await rdkafkaCall('abort', (cb) => first.abortTransaction(30_000, cb));
      await rdkafkaCall('begin', (cb) => first.beginTransaction(cb));
      send(first, 'rdk-zombie');
      await new Promise<void>((resolve) => first.flush(10_000, () => resolve()));
      second = await connectProducer(ctx.target.bootstrap, config, topic);
      out.successorInit = await rdkafkaCall('init', (cb) => second!.initTransactions(30_000, cb));
      out.zombieCommit = await rdkafkaCall('commit', (cb) => first.commitTransaction(30_000, cb));
      await rdkafkaCall('begin', (cb) => second!.beginTransaction(cb));
      send(second, 'rdk-successor');
      out.successorCommit = await rdkafkaCall('commit', (cb) => second!.commitTransaction(30_000, cb));
    } finally {
      await Promise.allSettled([disconnect(first), second && disconnect(second)]);
    }
    const readCommitted = await withRaw(ctx, async (raw) => {
      await awaitSettled(raw, tid);
      return fetchAt(raw, topic, 1, n);
    });
    return { ...out, valuesReadCommitted: committedValues(readCommitted), readCommitted };
  },
};

export const TRANSACTION_SCENARIOS: Scenario[] = [initScenario, zombieScenario, stateScenario, endTxnV5Scenario, implicitJoinScenario, describeScenario, isolationScenario, offsetsScenario, timeoutScenario, timeoutV2Scenario, kafkajsScenario, librdkafkaScenario];

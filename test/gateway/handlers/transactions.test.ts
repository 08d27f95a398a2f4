/**
 * The transaction handlers called in process (./in-process.ts):
 * AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn,
 * DescribeTransactions and ListTransactions, with InitProducerId, Produce,
 * Fetch and OffsetFetch around them as a transactional producer and a
 * read_committed consumer use them, at the oldest and newest version served.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { buildBatch, decodeBatches } from '../../../protocol/records/record-batch.js';
import { InProcessGateway, named, versionEnds } from './in-process.js';

const READ_COMMITTED = 1;
let gw: InProcessGateway;
let serial = 0;

beforeAll(async () => {
  gw = await InProcessGateway.open();
});
afterAll(() => gw.close());

interface TxnProducer {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  sequence: number;
}

async function topic(partitions = 1): Promise<string> {
  const name = `txn-topic-${++serial}`;
  await gw.core.createQueue({ name, partitions, config: { dedupWindowSeconds: 0 } });
  return name;
}

async function initTxn(transactionalId = `tx-${++serial}`, version = 5): Promise<TxnProducer> {
  const response = await gw.answer(ApiKey.InitProducerId, version, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
  expect(named(response.errorCode)).toBe('NONE');
  return { transactionalId, producerId: response.producerId, producerEpoch: response.producerEpoch, sequence: 0 };
}

/** AddPartitionsToTxn in the client's form (v0-3) or the broker's (v4+); each partition's code as "topic/partition". */
async function addPartitions(p: TxnProducer, topics: { name: string; partitions: number[] }[], version = 3, verifyOnly = false): Promise<Record<string, string>> {
  const results = (rs: Message[]) => Object.fromEntries(rs.flatMap((t) => t.resultsByPartition.map((r: Message) => [`${t.name}/${r.partitionIndex}`, named(r.partitionErrorCode)])));
  if (version <= 3) {
    const response = await gw.answer(ApiKey.AddPartitionsToTxn, version, { v3AndBelowTransactionalId: p.transactionalId, v3AndBelowProducerId: p.producerId, v3AndBelowProducerEpoch: p.producerEpoch, v3AndBelowTopics: topics });
    return results(response.resultsByTopicV3AndBelow);
  }
  const response = await gw.answer(ApiKey.AddPartitionsToTxn, version, {
    transactions: [{ transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, verifyOnly, topics }],
  });
  expect(named(response.errorCode)).toBe('NONE');
  expect(response.resultsByTransaction.map((t: Message) => t.transactionalId)).toEqual([p.transactionalId]);
  return results(response.resultsByTransaction[0].topicResults);
}

async function produce(p: TxnProducer, name: string, values: string[], partition = 0): Promise<string> {
  const records = buildBatch({ isTransactional: true, producerId: p.producerId, producerEpoch: p.producerEpoch, baseSequence: p.sequence, records: values.map((value) => ({ key: value, value })) });
  // v10: before KIP-890 a partition outside the transaction answers INVALID_TXN_STATE (v11+ is transaction-version.test.ts's).
  const response = await gw.answer(ApiKey.Produce, 10, { transactionalId: p.transactionalId, acks: -1, timeoutMs: 1000, topicData: [{ name, partitionData: [{ index: partition, records }] }] });
  const code = named(response.responses[0].partitionResponses[0].errorCode);
  if (code === 'NONE') p.sequence += values.length;
  return code;
}

async function endTxn(p: Pick<TxnProducer, 'transactionalId' | 'producerId' | 'producerEpoch'>, committed: boolean, version = 5): Promise<string> {
  const response = await gw.answer(ApiKey.EndTxn, version, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, committed });
  return named(response.errorCode);
}

/** What a consumer at `isolationLevel` reads of partition 0 from offset 0: values and the aborted transactions it is told of. */
async function read(name: string, isolationLevel: number): Promise<{ values: string[]; aborted: number; lastStable: bigint; highWatermark: bigint }> {
  const response = await gw.answer(ApiKey.Fetch, 11, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic: name, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
    forgottenTopicsData: [], rackId: '',
  });
  const part = response.responses[0].partitions[0];
  expect(named(part.errorCode)).toBe('NONE');
  const batches = part.records && part.records.length > 0 ? decodeBatches(part.records) : [];
  const abortedIds = new Set((part.abortedTransactions ?? []).map((a: Message) => a.producerId));
  // A read_committed consumer drops the batches of aborted producers the answer names, and every marker.
  const kept = batches.filter((b) => !b.isControl && !(isolationLevel === READ_COMMITTED && b.isTransactional && abortedIds.has(b.header.producerId)));
  return { values: kept.flatMap((b) => b.records.map((r) => r.value!.toString())), aborted: abortedIds.size, lastStable: part.lastStableOffset, highWatermark: part.highWatermark };
}

describe('AddPartitionsToTxn and EndTxn', () => {
  it.each([0, 3, 4, 5])('v%i: a producer writes only to partitions it added, and read_committed sees the records once committed', async (version) => {
    const name = await topic();
    const p = await initTxn();
    expect(await produce(p, name, ['early'])).toBe('INVALID_TXN_STATE');
    expect(await addPartitions(p, [{ name, partitions: [0] }], version)).toEqual({ [`${name}/0`]: 'NONE' });
    expect(await produce(p, name, ['a', 'b'])).toBe('NONE');
    const open = await read(name, READ_COMMITTED);
    expect([open.values, open.lastStable]).toEqual([[], 0n]);
    expect((await read(name, 0)).values).toEqual(['a', 'b']);
    expect(await endTxn(p, true, version === 0 ? 0 : 5)).toBe('NONE');
    const done = await read(name, READ_COMMITTED);
    // Two records and the commit marker.
    expect([done.values, done.lastStable, done.highWatermark]).toEqual([['a', 'b'], 3n, 3n]);
  });

  it('v4+ VerifyOnly says whether partitions are in the transaction without adding them', async () => {
    const name = await topic(2);
    const p = await initTxn();
    await addPartitions(p, [{ name, partitions: [0] }]);
    const verified = await addPartitions(p, [{ name, partitions: [0, 1] }], 5, true);
    expect(verified[`${name}/0`]).toBe('NONE');
    expect(verified[`${name}/1`]).not.toBe('NONE');
    expect(await produce(p, name, ['x'], 1)).toBe('INVALID_TXN_STATE');
  });

  it('adds nothing when a topic is unknown: it answers UNKNOWN_TOPIC_OR_PARTITION, the others OPERATION_NOT_ATTEMPTED', async () => {
    const name = await topic();
    const p = await initTxn();
    const results = await addPartitions(p, [{ name, partitions: [0] }, { name: 'txn-no-such-topic', partitions: [0] }]);
    expect(results).toEqual({ [`${name}/0`]: 'OPERATION_NOT_ATTEMPTED', 'txn-no-such-topic/0': 'UNKNOWN_TOPIC_OR_PARTITION' });
    expect(await produce(p, name, ['x'])).toBe('INVALID_TXN_STATE');
  });

  it('an abort leaves the records in the log and tells read_committed consumers to drop them', async () => {
    const name = await topic();
    const p = await initTxn();
    await addPartitions(p, [{ name, partitions: [0] }]);
    await produce(p, name, ['gone']);
    expect(await endTxn(p, false)).toBe('NONE');
    const committed = await read(name, READ_COMMITTED);
    expect([committed.values, committed.aborted]).toEqual([[], 1]);
    expect((await read(name, 0)).values).toEqual(['gone']);
  });

  it('ending the same way twice is a retry; the other way, or with nothing open, INVALID_TXN_STATE', async () => {
    const name = await topic();
    const p = await initTxn();
    expect(await endTxn(p, true)).toBe('INVALID_TXN_STATE');
    await addPartitions(p, [{ name, partitions: [0] }]);
    expect(await endTxn(p, true)).toBe('NONE');
    expect(await endTxn(p, true)).toBe('NONE');
    expect(await endTxn(p, false)).toBe('INVALID_TXN_STATE');
  });

  it.each([[1, 'INVALID_PRODUCER_EPOCH'], [2, 'PRODUCER_FENCED'], [5, 'PRODUCER_FENCED']] as const)(
    'v%i: a second InitProducerId fences the first instance (%s), aborting its open transaction',
    async (version, code) => {
      const name = await topic();
      const first = await initTxn();
      await addPartitions(first, [{ name, partitions: [0] }]);
      await produce(first, name, ['zombie']);
      const second = await initTxn(first.transactionalId);
      expect(second.producerEpoch).toBe(first.producerEpoch + 1);
      expect(await endTxn(first, true, version)).toBe(code);
      expect((await addPartitions(first, [{ name, partitions: [0] }], version <= 1 ? 1 : 3))[`${name}/0`]).toBe(code);
      expect(await produce(first, name, ['late'])).toBe('INVALID_PRODUCER_EPOCH');
      expect((await read(name, READ_COMMITTED)).values).toEqual([]);
    },
  );

  it('a producer id that is not the transactional id\'s is INVALID_PRODUCER_ID_MAPPING', async () => {
    const p = await initTxn();
    expect(await endTxn({ ...p, producerId: p.producerId + 1000n }, true)).toBe('INVALID_PRODUCER_ID_MAPPING');
  });
});

describe('AddOffsetsToTxn and TxnOffsetCommit', () => {
  async function offsets(group: string, name: string, requireStable: boolean): Promise<{ code: string; offset: number }> {
    const response = await gw.answer(ApiKey.OffsetFetch, 7, { groupId: group, topics: [{ name, partitionIndexes: [0] }], requireStable });
    const p = response.topics[0].partitions[0];
    return { code: named(response.errorCode !== 0 ? response.errorCode : p.errorCode), offset: Number(p.committedOffset) };
  }

  it.each(versionEnds(ApiKey.TxnOffsetCommit))('v%i: offsets sent with a transaction land in the group at commit, and are unstable until then', async (version) => {
    const name = await topic();
    const group = `txn-group-${++serial}`;
    const p = await initTxn();
    await addPartitions(p, [{ name, partitions: [0] }]);
    // AddOffsetsToTxn ends at v4; TxnOffsetCommit v5 needs none, but takes a group already added.
    const added = await gw.answer(ApiKey.AddOffsetsToTxn, Math.min(version, 4), { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: group });
    expect(named(added.errorCode)).toBe('NONE');
    const sent = await gw.answer(ApiKey.TxnOffsetCommit, version, {
      transactionalId: p.transactionalId, groupId: group, producerId: p.producerId, producerEpoch: p.producerEpoch, generationId: -1, memberId: '', groupInstanceId: null,
      topics: [{ name, partitions: [{ partitionIndex: 0, committedOffset: 42n, committedLeaderEpoch: -1, committedMetadata: 'm' }] }],
    });
    expect(sent.topics[0].partitions.map((x: Message) => named(x.errorCode))).toEqual(['NONE']);
    expect(await offsets(group, name, true)).toEqual({ code: 'UNSTABLE_OFFSET_COMMIT', offset: -1 });
    expect((await offsets(group, name, false)).offset).toBe(-1);
    expect(await endTxn(p, true)).toBe('NONE');
    expect(await offsets(group, name, true)).toEqual({ code: 'NONE', offset: 42 });
  });

  it('an aborted transaction\'s offsets never land', async () => {
    const name = await topic();
    const group = `txn-group-${++serial}`;
    const p = await initTxn();
    await gw.answer(ApiKey.AddOffsetsToTxn, 3, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: p.producerEpoch, groupId: group });
    await gw.answer(ApiKey.TxnOffsetCommit, 3, {
      transactionalId: p.transactionalId, groupId: group, producerId: p.producerId, producerEpoch: p.producerEpoch, generationId: -1, memberId: '', groupInstanceId: null,
      topics: [{ name, partitions: [{ partitionIndex: 0, committedOffset: 7n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    expect(await endTxn(p, false)).toBe('NONE');
    expect(await offsets(group, name, true)).toEqual({ code: 'NONE', offset: -1 });
  });

  it('a fenced producer\'s AddOffsetsToTxn is refused by version (INVALID_PRODUCER_EPOCH, then PRODUCER_FENCED from v2), its TxnOffsetCommit as Kafka (INVALID_PRODUCER_EPOCH, PRODUCER_FENCED at v5)', async () => {
    const name = await topic();
    const old = await initTxn();
    await initTxn(old.transactionalId);
    const group = `txn-group-${++serial}`;
    for (const [version, code] of [[0, 'INVALID_PRODUCER_EPOCH'], [2, 'PRODUCER_FENCED']] as const) {
      // AddOffsetsToTxn ends at v4; TxnOffsetCommit v5 needs none, but takes a group already added.
    const added = await gw.answer(ApiKey.AddOffsetsToTxn, Math.min(version, 4), { transactionalId: old.transactionalId, producerId: old.producerId, producerEpoch: old.producerEpoch, groupId: group });
      expect(named(added.errorCode)).toBe(code);
    }
    for (const [version, code] of [[0, 'INVALID_PRODUCER_EPOCH'], [3, 'INVALID_PRODUCER_EPOCH'], [4, 'INVALID_PRODUCER_EPOCH'], [5, 'PRODUCER_FENCED']] as const) {
      const sent = await gw.answer(ApiKey.TxnOffsetCommit, version, {
        transactionalId: old.transactionalId, groupId: group, producerId: old.producerId, producerEpoch: old.producerEpoch, generationId: -1, memberId: '', groupInstanceId: null,
        topics: [{ name, partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
      expect([version, named(sent.topics[0].partitions[0].errorCode)]).toEqual([version, code]);
    }
  });
});

describe('DescribeTransactions and ListTransactions', () => {
  it('describes an open transaction with its partitions, and an unknown id as TRANSACTIONAL_ID_NOT_FOUND', async () => {
    const name = await topic(3);
    const p = await initTxn();
    await addPartitions(p, [{ name, partitions: [2, 0] }]);
    const response = await gw.answer(ApiKey.DescribeTransactions, 0, { transactionalIds: [p.transactionalId, 'txn-never-seen'] });
    const [open, unknown] = response.transactionStates;
    expect([named(open.errorCode), open.transactionState, open.producerId, open.producerEpoch, open.transactionTimeoutMs]).toEqual(['NONE', 'Ongoing', p.producerId, p.producerEpoch, 60_000]);
    expect(open.topics).toEqual([{ topic: name, partitions: [0, 2] }]);
    expect(open.transactionStartTimeMs).toBeGreaterThan(0n);
    expect([unknown.transactionalId, named(unknown.errorCode)]).toEqual(['txn-never-seen', 'TRANSACTIONAL_ID_NOT_FOUND']);
    await endTxn(p, false);
    const ended = await gw.answer(ApiKey.DescribeTransactions, 0, { transactionalIds: [p.transactionalId] });
    expect([ended.transactionStates[0].transactionState, ended.transactionStates[0].topics]).toEqual(['CompleteAbort', []]);
  });

  it.each(versionEnds(ApiKey.ListTransactions))('v%i lists by state and producer id, reporting unknown state filters', async (version) => {
    const name = await topic();
    const open = await initTxn();
    await addPartitions(open, [{ name, partitions: [0] }]);
    const idle = await initTxn();
    const list = async (stateFilters: string[], producerIdFilters: bigint[] = []) =>
      gw.answer(ApiKey.ListTransactions, version, { stateFilters, producerIdFilters, durationFilter: -1n });
    const ongoing = await list(['Ongoing']);
    const ids = ongoing.transactionStates.map((t: Message) => t.transactionalId);
    expect(ids).toContain(open.transactionalId);
    expect(ids).not.toContain(idle.transactionalId);
    const byProducer = await list([], [idle.producerId]);
    expect(byProducer.transactionStates.map((t: Message) => [t.transactionalId, t.transactionState])).toEqual([[idle.transactionalId, 'Empty']]);
    const unknown = await list(['Ongoing', 'Sleeping']);
    expect([named(unknown.errorCode), unknown.unknownStateFilters]).toEqual(['NONE', ['Sleeping']]);
    await endTxn(open, true);
  });

  it('v1 filters by how long a transaction has been open', async () => {
    const name = await topic();
    const p = await initTxn();
    await addPartitions(p, [{ name, partitions: [0] }]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const recent = await gw.answer(ApiKey.ListTransactions, 1, { stateFilters: [], producerIdFilters: [p.producerId], durationFilter: 5n });
    expect(recent.transactionStates.map((t: Message) => t.transactionalId)).toEqual([p.transactionalId]);
    const long = await gw.answer(ApiKey.ListTransactions, 1, { stateFilters: [], producerIdFilters: [p.producerId], durationFilter: 3_600_000n });
    expect(long.transactionStates).toEqual([]);
    await endTxn(p, false);
  });
});

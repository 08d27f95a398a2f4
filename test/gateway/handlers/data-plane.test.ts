/**
 * The data-plane handlers called in process (./in-process.ts): Produce,
 * Fetch, ListOffsets, DeleteRecords, OffsetForLeaderEpoch, InitProducerId and
 * DescribeProducers, at the oldest and newest version served, with the error
 * codes producers and consumers meet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { CompressionCodec } from '../../../protocol/records/compression.js';
import { buildBatch, decodeBatches } from '../../../protocol/records/record-batch.js';
import { legacyMessage, messageSet } from '../../protocol/records/bytes.js';
import { InProcessGateway, named, versionEnds } from './in-process.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
const EARLIEST = -2;
const LATEST = -1;
const MAX_TIMESTAMP = -3;
const READ_COMMITTED = 1;

let gw: InProcessGateway;

beforeAll(async () => {
  gw = await InProcessGateway.open();
});
afterAll(() => gw.close());

async function topic(name: string, partitions = 1): Promise<string> {
  await gw.core.createQueue({ name, partitions, config: { dedupWindowSeconds: 0 } });
  return name;
}

interface Producer {
  producerId: number;
  producerEpoch: number;
}

function batch(values: string[], options: { timestamps?: number[]; producer?: Producer; baseSequence?: number } = {}): Buffer {
  return buildBatch({
    records: values.map((value, i) => ({ value, key: `k${i}`, timestamp: options.timestamps?.[i] })),
    producerId: options.producer?.producerId,
    producerEpoch: options.producer?.producerEpoch,
    baseSequence: options.baseSequence,
  });
}

/** One partition's Produce answer at `version`. */
async function produce(name: string, partition: number, records: Buffer, version = 11, acks = -1): Promise<Message> {
  const response = await gw.answer(ApiKey.Produce, version, {
    transactionalId: null,
    acks,
    timeoutMs: 1000,
    topicData: [{ name, partitionData: [{ index: partition, records }] }],
  });
  expect(response.responses.map((t: Message) => t.name)).toEqual([name]);
  return response.responses[0].partitionResponses[0];
}

async function topicId(name: string): Promise<string> {
  const queue = await gw.core.describeQueue({ name });
  if (!queue) throw new Error(`no topic ${name}`);
  return queue.id;
}

/** A Fetch request for one partition at `version` (by name before v13, by id from v13). */
async function fetchRequest(version: number, name: string, partition: number, fetchOffset: number, more: Partial<Message> = {}): Promise<Message> {
  const id = version >= 13 ? await topicId(name).catch(() => '0f0e0d0c-0b0a-4908-8706-050403020100') : ZERO_UUID;
  return {
    replicaId: -1,
    maxWaitMs: 0,
    minBytes: 0,
    maxBytes: 1024 * 1024,
    isolationLevel: 0,
    sessionId: 0,
    sessionEpoch: -1,
    topics: [{ topic: name, topicId: id, partitions: [{ partition, fetchOffset, partitionMaxBytes: 1024 * 1024, currentLeaderEpoch: -1, logStartOffset: -1 }] }],
    forgottenTopicsData: [],
    rackId: '',
    ...more,
  };
}

/** One partition's Fetch answer. */
async function fetchPartition(version: number, name: string, partition: number, fetchOffset: number, more: Partial<Message> = {}): Promise<Message> {
  const response = await gw.answer(ApiKey.Fetch, version, await fetchRequest(version, name, partition, fetchOffset, more));
  expect(response.responses).toHaveLength(1);
  return response.responses[0].partitions[0];
}

function values(records: Buffer | null): string[] {
  if (!records || records.length === 0) return [];
  return decodeBatches(records).flatMap((b) => b.records.map((r) => r.value!.toString()));
}

function offsetsOf(records: Buffer | null): number[] {
  if (!records || records.length === 0) return [];
  return decodeBatches(records).flatMap((b) => b.records.map((r) => Number(b.header.baseOffset) + r.offsetDelta));
}

async function initProducer(version = 5): Promise<Producer> {
  const response = await gw.answer(ApiKey.InitProducerId, version, { transactionalId: null, transactionTimeoutMs: 60000, producerId: -1, producerEpoch: -1 });
  expect(named(response.errorCode)).toBe('NONE');
  return { producerId: Number(response.producerId), producerEpoch: response.producerEpoch };
}

describe('Produce', () => {
  it('v0 takes a legacy message set, stored as one batch a consumer reads back', async () => {
    const name = await topic('produce-legacy');
    const legacy = messageSet([
      { offset: 0, message: legacyMessage({ magic: 0, key: 'a', value: 'first' }) },
      { offset: 1, message: legacyMessage({ magic: 0, key: 'b', value: 'second' }) },
    ]);
    const answer = await produce(name, 0, legacy, 0);
    expect([named(answer.errorCode), answer.baseOffset]).toEqual(['NONE', 0n]);
    expect(values((await fetchPartition(4, name, 0, 0)).records)).toEqual(['first', 'second']);
  });

  it.each(versionEnds(ApiKey.Produce))('v%i appends batches at consecutive offsets', async (version) => {
    const name = await topic(`produce-v${version}`);
    const first = await produce(name, 0, batch(['a', 'b', 'c']), version);
    const second = await produce(name, 0, batch(['d']), version);
    expect([named(first.errorCode), first.baseOffset, named(second.errorCode), second.baseOffset]).toEqual(['NONE', 0n, 'NONE', 3n]);
    if (version >= 5) expect(second.logStartOffset).toBe(0n);
    const read = await fetchPartition(17, name, 0, 0);
    expect(values(read.records)).toEqual(['a', 'b', 'c', 'd']);
    expect(offsetsOf(read.records)).toEqual([0, 1, 2, 3]);
  });

  it('sends no answer for acks=0, and still stores the records', async () => {
    const name = await topic('produce-acks0');
    const response = await gw.call(ApiKey.Produce, 11, { transactionalId: null, acks: 0, timeoutMs: 1000, topicData: [{ name, partitionData: [{ index: 0, records: batch(['quiet']) }] }] });
    expect(response).toBeNull();
    expect(values((await fetchPartition(17, name, 0, 0)).records)).toEqual(['quiet']);
  });

  it.each(versionEnds(ApiKey.Produce))('v%i answers UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or partition, and creates no topic', async (version) => {
    const name = await topic(`produce-unknown-v${version}`);
    expect(named((await produce(`produce-missing-v${version}`, 0, batch(['x']), version)).errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(named((await produce(name, 5, batch(['x']), version)).errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(await gw.core.describeQueue({ name: `produce-missing-v${version}` })).toBeNull();
  });

  it.each(versionEnds(ApiKey.Produce))('v%i answers INVALID_REQUIRED_ACKS for acks other than 0, 1 and -1, storing nothing', async (version) => {
    const name = await topic(`produce-acks-v${version}`);
    const answer = await produce(name, 0, batch(['x']), version, 2);
    expect([named(answer.errorCode), answer.baseOffset]).toEqual(['INVALID_REQUIRED_ACKS', -1n]);
    expect(values((await fetchPartition(17, name, 0, 0)).records)).toEqual([]);
  });

  it.each(versionEnds(ApiKey.Produce))('v%i answers CORRUPT_MESSAGE for a batch whose CRC does not match, storing nothing', async (version) => {
    const name = await topic(`produce-crc-v${version}`);
    const corrupt = batch(['good', 'bytes']);
    corrupt.writeUInt8(corrupt.readUInt8(corrupt.length - 1) ^ 0xff, corrupt.length - 1);
    const answer = await produce(name, 0, corrupt, version);
    expect(named(answer.errorCode)).toBe('CORRUPT_MESSAGE');
    if (version >= 8) expect(answer.errorMessage).toEqual(expect.any(String));
    expect(values((await fetchPartition(17, name, 0, 0)).records)).toEqual([]);
  });

  it('answers INVALID_RECORD for two batches in one partition (v3+), storing neither', async () => {
    const name = await topic('produce-two-batches');
    const answer = await produce(name, 0, Buffer.concat([batch(['one']), batch(['two'])]), 11);
    expect(named(answer.errorCode)).toBe('INVALID_RECORD');
    expect(values((await fetchPartition(17, name, 0, 0)).records)).toEqual([]);
  });

  it('answers INVALID_RECORD for a legacy message set or no batch at all from v3, as Kafka requires one v2 batch there', async () => {
    const name = await topic('produce-v3-legacy');
    const legacy = messageSet([{ offset: 0, message: legacyMessage({ magic: 1, timestamp: BigInt(Date.now()), key: 'a', value: 'old' }) }]);
    for (const version of [3, 11]) {
      expect(named((await produce(name, 0, legacy, version)).errorCode), `v${version} legacy`).toBe('INVALID_RECORD');
      expect(named((await produce(name, 0, Buffer.alloc(0), version)).errorCode), `v${version} empty`).toBe('INVALID_RECORD');
    }
    expect(values((await fetchPartition(17, name, 0, 0)).records)).toEqual([]);
  });

  it('answers UNSUPPORTED_COMPRESSION_TYPE for a zstd batch before v7, as Kafka does, and takes it from v7', async () => {
    const name = await topic('produce-zstd');
    const zstd = () => buildBatch({ records: [{ value: 'squeezed' }], compression: CompressionCodec.Zstd });
    expect(named((await produce(name, 0, zstd(), 6)).errorCode)).toBe('UNSUPPORTED_COMPRESSION_TYPE');
    expect(named((await produce(name, 0, zstd(), 7)).errorCode)).toBe('NONE');
    expect(values((await fetchPartition(17, name, 0, 0)).records)).toEqual(['squeezed']);
  });

  it('answers INVALID_TOPIC_EXCEPTION for a name Kafka forbids', async () => {
    expect(named((await produce('bad name', 0, batch(['x']))).errorCode)).toBe('INVALID_TOPIC_EXCEPTION');
  });

  it('idempotent producer: a resent batch answers its first offset and is stored once; a gap answers OUT_OF_ORDER_SEQUENCE_NUMBER', async () => {
    const name = await topic('produce-idempotent');
    const producer = await initProducer();
    const first = batch(['a', 'b'], { producer, baseSequence: 0 });
    expect((await produce(name, 0, first)).baseOffset).toBe(0n);
    const resent = await produce(name, 0, Buffer.from(first));
    expect([named(resent.errorCode), resent.baseOffset]).toEqual(['NONE', 0n]);
    const gap = await produce(name, 0, batch(['z'], { producer, baseSequence: 5 }));
    expect(named(gap.errorCode)).toBe('OUT_OF_ORDER_SEQUENCE_NUMBER');
    const next = await produce(name, 0, batch(['c'], { producer, baseSequence: 2 }));
    expect([named(next.errorCode), next.baseOffset]).toEqual(['NONE', 2n]);
    expect(values((await fetchPartition(17, name, 0, 0)).records)).toEqual(['a', 'b', 'c']);
  });

  it('idempotent producer: after an epoch bump, the old epoch answers INVALID_PRODUCER_EPOCH', async () => {
    const name = await topic('produce-fenced');
    const old = await initProducer();
    expect(named((await produce(name, 0, batch(['a'], { producer: old, baseSequence: 0 }))).errorCode)).toBe('NONE');
    const bumped = await gw.answer(ApiKey.InitProducerId, 5, { transactionalId: null, transactionTimeoutMs: 60000, producerId: old.producerId, producerEpoch: old.producerEpoch });
    const current = { producerId: Number(bumped.producerId), producerEpoch: bumped.producerEpoch };
    expect(named((await produce(name, 0, batch(['b'], { producer: current, baseSequence: 0 }))).errorCode)).toBe('NONE');
    const stale = await produce(name, 0, batch(['c'], { producer: old, baseSequence: 1 }));
    expect(named(stale.errorCode)).toBe('INVALID_PRODUCER_EPOCH');
    expect(values((await fetchPartition(17, name, 0, 0)).records)).toEqual(['a', 'b']);
  });
});

describe('Fetch', () => {
  let name: string;
  beforeAll(async () => {
    name = await topic('fetch-topic', 2);
    await produce(name, 0, batch(['r0', 'r1', 'r2']));
  });

  it.each(versionEnds(ApiKey.Fetch))('v%i returns the stored records with the watermarks', async (version) => {
    const p = await fetchPartition(version, name, 0, 1);
    expect(named(p.errorCode)).toBe('NONE');
    expect(p.highWatermark).toBe(3n);
    expect(p.lastStableOffset).toBe(3n);
    if (version >= 5) expect(p.logStartOffset).toBe(0n);
    // Whole batches are served, so the batch holding offset 1 comes from its start, as from Kafka.
    expect(values(p.records)).toEqual(['r0', 'r1', 'r2']);
    expect(p.abortedTransactions).toBeNull();
    const empty = await fetchPartition(version, name, 1, 0);
    expect([named(empty.errorCode), empty.highWatermark, values(empty.records)]).toEqual(['NONE', 0n, []]);
  });

  it.each(versionEnds(ApiKey.Fetch))('v%i answers OFFSET_OUT_OF_RANGE past the high watermark and below zero', async (version) => {
    for (const offset of [4, -5]) {
      const p = await fetchPartition(version, name, 0, offset);
      expect([named(p.errorCode), p.highWatermark, values(p.records)], `offset ${offset}`).toEqual(['OFFSET_OUT_OF_RANGE', -1n, []]);
    }
  });

  it.each(versionEnds(ApiKey.Fetch))('v%i answers an unknown topic or partition by name (v4-12) or id (v13+)', async (version) => {
    const unknownTopic = await fetchPartition(version, 'fetch-missing', 0, 0);
    expect(named(unknownTopic.errorCode)).toBe(version >= 13 ? 'UNKNOWN_TOPIC_ID' : 'UNKNOWN_TOPIC_OR_PARTITION');
    const unknownPartition = await fetchPartition(version, name, 9, 0);
    expect(named(unknownPartition.errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
  });

  // As for ListOffsets (above): Kafka answers a Fetch whose CurrentLeaderEpoch
  // (v9+) the leader has not reached with UNKNOWN_LEADER_EPOCH; the handler
  // ignores the field.
  it.fails('answers UNKNOWN_LEADER_EPOCH for a current leader epoch the leader has not reached (v9+), as Kafka does', async () => {
    const request = await fetchRequest(17, name, 0, 0);
    request.topics[0].partitions[0].currentLeaderEpoch = 1;
    const response = await gw.answer(ApiKey.Fetch, 17, request);
    expect(named(response.responses[0].partitions[0].errorCode)).toBe('UNKNOWN_LEADER_EPOCH');
  });

  it('read_committed carries an aborted-transactions list (empty), read_uncommitted none', async () => {
    const committed = await fetchPartition(17, name, 0, 0, { isolationLevel: READ_COMMITTED });
    expect(committed.abortedTransactions).toEqual([]);
    expect(values(committed.records)).toEqual(['r0', 'r1', 'r2']);
  });

  it('long-polls until records arrive', async () => {
    const polled = await topic('fetch-long-poll');
    const waiting = fetchPartition(17, polled, 0, 0, { maxWaitMs: 30_000, minBytes: 1 });
    await produce(polled, 0, batch(['late']));
    expect(values((await waiting).records)).toEqual(['late']);
  });

  it('answers a long-poll at once, with what there is, when the gateway starts draining', async () => {
    const polled = await topic('fetch-drain');
    const connection = gw.openConnection();
    const waiting = gw.answer(ApiKey.Fetch, 17, await fetchRequest(17, polled, 0, 0, { maxWaitMs: 30_000, minBytes: 1 }), { connection });
    connection.drain();
    const response = await waiting;
    expect([named(response.responses[0].partitions[0].errorCode), values(response.responses[0].partitions[0].records)]).toEqual(['NONE', []]);
  });

  it('fetch sessions (v7+): opens one, answers only partitions with news incrementally, refuses a wrong epoch or unknown id', async () => {
    const sessionTopic = await topic('fetch-session', 2);
    const id = await topicId(sessionTopic);
    const partitions = [0, 1].map((partition) => ({ partition, fetchOffset: 0, partitionMaxBytes: 1024 * 1024, currentLeaderEpoch: -1, logStartOffset: -1 }));
    const base = { replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1024 * 1024, isolationLevel: 0, forgottenTopicsData: [], rackId: '' };
    const full = await gw.answer(ApiKey.Fetch, 17, { ...base, sessionId: 0, sessionEpoch: 0, topics: [{ topicId: id, partitions }] });
    expect(named(full.errorCode)).toBe('NONE');
    expect(full.sessionId).not.toBe(0);
    expect(full.responses[0].partitions.map((p: Message) => p.partitionIndex)).toEqual([0, 1]);

    const quiet = await gw.answer(ApiKey.Fetch, 17, { ...base, sessionId: full.sessionId, sessionEpoch: 1, topics: [] });
    expect([named(quiet.errorCode), quiet.sessionId, quiet.responses]).toEqual(['NONE', full.sessionId, []]);

    await produce(sessionTopic, 1, batch(['news']));
    const news = await gw.answer(ApiKey.Fetch, 17, { ...base, sessionId: full.sessionId, sessionEpoch: 2, topics: [] });
    expect(news.responses.flatMap((t: Message) => t.partitions.map((p: Message) => [p.partitionIndex, values(p.records)]))).toEqual([[1, ['news']]]);

    const stale = await gw.answer(ApiKey.Fetch, 17, { ...base, sessionId: full.sessionId, sessionEpoch: 2, topics: [] });
    expect(named(stale.errorCode)).toBe('INVALID_FETCH_SESSION_EPOCH');
    const unknown = await gw.answer(ApiKey.Fetch, 17, { ...base, sessionId: full.sessionId + 1, sessionEpoch: 1, topics: [] });
    expect(named(unknown.errorCode)).toBe('FETCH_SESSION_ID_NOT_FOUND');
  });
});

describe('ListOffsets', () => {
  let name: string;
  const t0 = Date.now() - 60_000;
  beforeAll(async () => {
    name = await topic('list-offsets');
    await produce(name, 0, batch(['a', 'b', 'c'], { timestamps: [t0, t0 + 1000, t0 + 2000] }));
  });

  const find = async (version: number, partitionIndex: number, timestamp: number, topicName = name) => {
    const response = await gw.answer(ApiKey.ListOffsets, version, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name: topicName, partitions: [{ partitionIndex, timestamp, maxNumOffsets: 1, currentLeaderEpoch: -1 }] }],
      timeoutMs: 1000,
    });
    return response.topics[0].partitions[0];
  };

  it('v0 answers the earliest and latest offsets in the old shape', async () => {
    expect((await find(0, 0, EARLIEST)).oldStyleOffsets).toEqual([0n]);
    expect((await find(0, 0, LATEST)).oldStyleOffsets).toEqual([3n]);
  });

  it.each(versionEnds(ApiKey.ListOffsets).filter((v) => v >= 1))('v%i finds offsets by earliest, latest, time and largest timestamp', async (version) => {
    const earliest = await find(version, 0, EARLIEST);
    expect([named(earliest.errorCode), earliest.offset]).toEqual(['NONE', 0n]);
    expect((await find(version, 0, LATEST)).offset).toBe(3n);
    const byTime = await find(version, 0, t0 + 500);
    expect([byTime.offset, byTime.timestamp]).toEqual([1n, BigInt(t0 + 1000)]);
    const pastEverything = await find(version, 0, t0 + 10_000);
    expect([named(pastEverything.errorCode), pastEverything.offset, pastEverything.timestamp]).toEqual(['NONE', -1n, -1n]);
    if (version >= 7) {
      const largest = await find(version, 0, MAX_TIMESTAMP);
      expect([largest.offset, largest.timestamp]).toEqual([2n, BigInt(t0 + 2000)]);
    }
  });

  // Kafka checks a client's CurrentLeaderEpoch (v4+) against the partition's
  // (Partition.localLogWithEpochOrThrow): one the leader has not reached
  // answers UNKNOWN_LEADER_EPOCH. ListOffsets ignores the field here (every
  // partition is at epoch 0); OffsetForLeaderEpoch already checks it. The fix
  // is one check shared by ListOffsets, Fetch and OffsetForLeaderEpoch (next
  // to partitionLeadership in src/gateway/topics.ts), not a third copy here.
  it.fails('answers UNKNOWN_LEADER_EPOCH for a current leader epoch the leader has not reached (v4+), as Kafka does', async () => {
    const response = await gw.answer(ApiKey.ListOffsets, 10, {
      replicaId: -1,
      isolationLevel: 0,
      topics: [{ name, partitions: [{ partitionIndex: 0, timestamp: LATEST, currentLeaderEpoch: 1 }] }],
      timeoutMs: 1000,
    });
    expect(named(response.topics[0].partitions[0].errorCode)).toBe('UNKNOWN_LEADER_EPOCH');
  });

  it.each(versionEnds(ApiKey.ListOffsets))('v%i answers UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or partition', async (version) => {
    expect(named((await find(version, 0, LATEST, 'list-offsets-missing')).errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(named((await find(version, 4, LATEST)).errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
  });
});

describe('DeleteRecords', () => {
  const remove = async (version: number, topicName: string, partitionIndex: number, offset: number) => {
    const response = await gw.answer(ApiKey.DeleteRecords, version, { topics: [{ name: topicName, partitions: [{ partitionIndex, offset }] }], timeoutMs: 1000 });
    return response.topics[0].partitions[0];
  };

  it.each(versionEnds(ApiKey.DeleteRecords))('v%i moves the log start: earlier offsets are gone for consumers', async (version) => {
    const name = await topic(`delete-records-v${version}`);
    for (const v of ['a', 'b', 'c', 'd', 'e']) await produce(name, 0, batch([v]));
    const deleted = await remove(version, name, 0, 2);
    expect([named(deleted.errorCode), deleted.lowWatermark]).toEqual(['NONE', 2n]);
    expect(named((await fetchPartition(17, name, 0, 0)).errorCode)).toBe('OFFSET_OUT_OF_RANGE');
    const read = await fetchPartition(17, name, 0, 2);
    expect([read.logStartOffset, values(read.records)]).toEqual([2n, ['c', 'd', 'e']]);
    // -1 deletes up to the high watermark.
    expect((await remove(version, name, 0, -1)).lowWatermark).toBe(5n);
  });

  it.each(versionEnds(ApiKey.DeleteRecords))('v%i answers OFFSET_OUT_OF_RANGE past the high watermark, UNKNOWN_TOPIC_OR_PARTITION for unknown partitions', async (version) => {
    const name = await topic(`delete-records-refused-v${version}`);
    await produce(name, 0, batch(['a', 'b']));
    const past = await remove(version, name, 0, 3);
    expect([named(past.errorCode), past.lowWatermark]).toEqual(['OFFSET_OUT_OF_RANGE', -1n]);
    expect(named((await remove(version, name, 0, -7)).errorCode)).toBe('OFFSET_OUT_OF_RANGE');
    expect(named((await remove(version, name, 3, 0)).errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(named((await remove(version, 'delete-records-missing', 0, 0)).errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(values((await fetchPartition(17, name, 0, 0)).records)).toEqual(['a', 'b']);
  });
});

describe('OffsetForLeaderEpoch', () => {
  let name: string;
  beforeAll(async () => {
    name = await topic('leader-epoch');
    await produce(name, 0, batch(['a', 'b', 'c', 'd']));
  });

  const ask = async (version: number, partition: number, leaderEpoch: number, currentLeaderEpoch = -1, topicName = name) => {
    const response = await gw.answer(ApiKey.OffsetForLeaderEpoch, version, {
      replicaId: -1,
      topics: [{ topic: topicName, partitions: [{ partition, currentLeaderEpoch, leaderEpoch }] }],
    });
    return response.topics[0].partitions[0];
  };

  it.each(versionEnds(ApiKey.OffsetForLeaderEpoch))('v%i answers epoch 0 with the log end offset, a later epoch with -1', async (version) => {
    const current = await ask(version, 0, 0);
    expect([named(current.errorCode), current.endOffset]).toEqual(['NONE', 4n]);
    if (version >= 1) expect(current.leaderEpoch).toBe(0);
    const later = await ask(version, 0, 5);
    expect([named(later.errorCode), later.endOffset, later.leaderEpoch]).toEqual(['NONE', -1n, -1]);
  });

  it.each(versionEnds(ApiKey.OffsetForLeaderEpoch))('v%i answers UNKNOWN_TOPIC_OR_PARTITION for an unknown topic or partition', async (version) => {
    expect(named((await ask(version, 0, 0, -1, 'leader-epoch-missing')).errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
    expect(named((await ask(version, 3, 0)).errorCode)).toBe('UNKNOWN_TOPIC_OR_PARTITION');
  });

  it('answers UNKNOWN_LEADER_EPOCH for a current leader epoch the leader has not reached (v2+)', async () => {
    const ahead = await ask(4, 0, 0, 1);
    expect([named(ahead.errorCode), ahead.endOffset]).toEqual(['UNKNOWN_LEADER_EPOCH', -1n]);
  });
});

describe('InitProducerId', () => {
  it.each(versionEnds(ApiKey.InitProducerId))('v%i gives each idempotent producer its own id at epoch 0', async (version) => {
    const a = await initProducer(version);
    const b = await initProducer(version);
    expect(a.producerEpoch).toBe(0);
    expect(b.producerEpoch).toBe(0);
    expect(a.producerId).toBeGreaterThanOrEqual(0);
    expect(b.producerId).not.toBe(a.producerId);
  });

  it('v3+: a producer sending its id and epoch gets the next epoch of the same id (KIP-360)', async () => {
    const first = await initProducer(5);
    const bumped = await gw.answer(ApiKey.InitProducerId, 5, { transactionalId: null, transactionTimeoutMs: 60000, producerId: first.producerId, producerEpoch: first.producerEpoch });
    expect([named(bumped.errorCode), Number(bumped.producerId), bumped.producerEpoch]).toEqual(['NONE', first.producerId, first.producerEpoch + 1]);
  });
});

describe('DescribeProducers', () => {
  it('lists the idempotent producers a partition remembers, with their last sequence', async () => {
    const name = await topic('describe-producers', 2);
    const producer = await initProducer();
    const t = Date.now() - 1000;
    await produce(name, 0, batch(['a', 'b', 'c'], { producer, baseSequence: 0, timestamps: [t, t + 1, t + 2] }));
    const response = await gw.answer(ApiKey.DescribeProducers, 0, { topics: [{ name, partitionIndexes: [0, 1] }] });
    const [p0, p1] = response.topics[0].partitions;
    expect(named(p0.errorCode)).toBe('NONE');
    expect(p0.activeProducers).toEqual([
      expect.objectContaining({ producerId: BigInt(producer.producerId), producerEpoch: producer.producerEpoch, lastSequence: 2, lastTimestamp: BigInt(t + 2) }),
    ]);
    expect([named(p1.errorCode), p1.activeProducers]).toEqual(['NONE', []]);
  });

  it('answers UNKNOWN_TOPIC_OR_PARTITION, with a message, for unknown topics and partitions', async () => {
    const name = await topic('describe-producers-refused');
    const response = await gw.answer(ApiKey.DescribeProducers, 0, {
      topics: [
        { name, partitionIndexes: [4] },
        { name: 'describe-producers-missing', partitionIndexes: [0] },
      ],
    });
    const answers = response.topics.map((t: Message) => t.partitions[0]);
    expect(answers.map((p: Message) => named(p.errorCode))).toEqual(['UNKNOWN_TOPIC_OR_PARTITION', 'UNKNOWN_TOPIC_OR_PARTITION']);
    expect(answers.every((p: Message) => typeof p.errorMessage === 'string')).toBe(true);
  });
});

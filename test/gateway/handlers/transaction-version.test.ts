/**
 * Transaction version 2 (KIP-890 part 2) called in process (./in-process.ts):
 * ApiVersions finalizing transaction.version at --transaction-version, Produce
 * v12 adding the partitions it writes to the transaction, EndTxn v5 bumping
 * the epoch at every end (markers, retries, a late batch of the ended
 * transaction fenced), and TxnOffsetCommit v5 adding its group, as a Kafka 4
 * producer with transaction.version 2 uses them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { buildBatch, decodeBatches } from '../../../protocol/records/record-batch.js';
import { InProcessGateway, named } from './in-process.js';

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
  /** The next sequence per partition; a new epoch starts every partition at 0. */
  sequences: Map<number, number>;
}

async function topic(partitions = 1): Promise<string> {
  const name = `tv2-topic-${++serial}`;
  await gw.core.createQueue({ name, partitions, config: { dedupWindowSeconds: 0 } });
  return name;
}

async function initTxn(transactionalId = `tv2-${++serial}`): Promise<TxnProducer> {
  const response = await gw.answer(ApiKey.InitProducerId, 5, { transactionalId, transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 });
  expect(named(response.errorCode)).toBe('NONE');
  return { transactionalId, producerId: response.producerId, producerEpoch: response.producerEpoch, sequences: new Map() };
}

/** Produce of one transactional batch per partition; each partition's code as "topic/partition". */
async function produce(p: TxnProducer, name: string, values: string[], partitions = [0], version = 12, epoch = p.producerEpoch): Promise<Record<string, string>> {
  const partitionData = partitions.map((index) => ({
    index,
    records: buildBatch({ isTransactional: true, producerId: p.producerId, producerEpoch: epoch, baseSequence: p.sequences.get(index) ?? 0, records: values.map((value) => ({ key: value, value })) }),
  }));
  const response = await gw.answer(ApiKey.Produce, version, { transactionalId: p.transactionalId, acks: -1, timeoutMs: 1000, topicData: [{ name, partitionData }] });
  const codes: Record<string, string> = {};
  for (const r of response.responses[0].partitionResponses as Message[]) {
    codes[`${name}/${r.index}`] = named(r.errorCode);
    if (r.errorCode === 0) p.sequences.set(r.index, (p.sequences.get(r.index) ?? 0) + values.length);
  }
  return codes;
}

/** EndTxn v5: the code, and the producer moved to the identity it answers. */
async function endTxn(p: TxnProducer, committed: boolean, epoch = p.producerEpoch): Promise<{ code: string; producerEpoch: number }> {
  const response = await gw.answer(ApiKey.EndTxn, 5, { transactionalId: p.transactionalId, producerId: p.producerId, producerEpoch: epoch, committed });
  if (response.errorCode === 0) {
    expect(response.producerId).toBe(p.producerId);
    if (response.producerEpoch !== p.producerEpoch) p.sequences.clear();
    p.producerEpoch = response.producerEpoch;
  }
  return { code: named(response.errorCode), producerEpoch: response.producerEpoch };
}

async function readCommitted(name: string): Promise<{ values: string[]; markerEpochs: number[] }> {
  const response = await gw.answer(ApiKey.Fetch, 11, {
    replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: READ_COMMITTED, sessionId: 0, sessionEpoch: -1,
    topics: [{ topic: name, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
    forgottenTopicsData: [], rackId: '',
  });
  const part = response.responses[0].partitions[0];
  const batches = part.records && part.records.length > 0 ? decodeBatches(part.records) : [];
  // As a read_committed consumer does: a producer's batches from an aborted transaction's first offset up to its next marker are dropped.
  const starts = (part.abortedTransactions ?? []).map((a: Message) => ({ producerId: a.producerId as bigint, firstOffset: a.firstOffset as bigint }));
  const dropping = new Set<bigint>();
  const kept = batches.filter((b) => {
    for (const s of starts) if (s.producerId === b.header.producerId && s.firstOffset <= b.header.baseOffset && !b.isControl) dropping.add(s.producerId);
    if (b.isControl) {
      dropping.delete(b.header.producerId);
      for (let i = starts.length - 1; i >= 0; i--) if (starts[i]!.producerId === b.header.producerId && starts[i]!.firstOffset <= b.header.baseOffset) starts.splice(i, 1);
      return false;
    }
    return !dropping.has(b.header.producerId);
  });
  return {
    values: kept.flatMap((b) => b.records.map((r) => r.value!.toString())),
    markerEpochs: batches.filter((b) => b.isControl).map((b) => b.header.producerEpoch),
  };
}

describe('ApiVersions', () => {
  it('finalizes transaction.version 2 by default and serves Produce v12, TxnOffsetCommit v5 and EndTxn v5, as Kafka 4.4', async () => {
    const response = await gw.answer(ApiKey.ApiVersions, 4, { clientSoftwareName: 'test', clientSoftwareVersion: '1.0' });
    expect(response.supportedFeatures).toContainEqual({ name: 'transaction.version', minVersion: 0, maxVersion: 2 });
    expect(response.finalizedFeatures).toContainEqual({ name: 'transaction.version', minVersionLevel: 2, maxVersionLevel: 2 });
    const max = new Map(response.apiKeys.map((k: Message) => [k.apiKey, k.maxVersion]));
    expect([max.get(ApiKey.Produce), max.get(ApiKey.TxnOffsetCommit), max.get(ApiKey.EndTxn)]).toEqual([12, 5, 5]);
    // Before v4 Kafka 4.4 lists no feature whose lowest level is 0 as supported, and still lists the finalized ones.
    const v3 = await gw.answer(ApiKey.ApiVersions, 3, { clientSoftwareName: 'test', clientSoftwareVersion: '1.0' });
    expect(v3.supportedFeatures).toEqual([]);
    expect(v3.finalizedFeatures).toContainEqual({ name: 'transaction.version', minVersionLevel: 2, maxVersionLevel: 2 });
  });

  it.each([[1, [{ name: 'transaction.version', minVersionLevel: 1, maxVersionLevel: 1 }]], [0, []]] as const)(
    '--transaction-version %i finalizes that level (a level 0 is left out, as Kafka leaves it)',
    async (level, finalized) => {
      const other = await InProcessGateway.open({ settings: { transactionVersion: level } });
      try {
        const response = await other.answer(ApiKey.ApiVersions, 4, { clientSoftwareName: 'test', clientSoftwareVersion: '1.0' });
        expect(response.finalizedFeatures.filter((f: Message) => f.name === 'transaction.version')).toEqual(finalized);
        expect(response.supportedFeatures).toContainEqual({ name: 'transaction.version', minVersion: 0, maxVersion: 2 });
      } finally {
        await other.close();
      }
    },
  );
});

describe('Produce v12 and EndTxn v5', () => {
  it('a producer writes without AddPartitionsToTxn, every end bumps the epoch its markers carry, and the next transaction goes on at the new epoch', async () => {
    const name = await topic();
    const p = await initTxn();
    const first = p.producerEpoch;
    expect(await produce(p, name, ['a', 'b'])).toEqual({ [`${name}/0`]: 'NONE' });
    expect((await readCommitted(name)).values).toEqual([]);
    expect(await endTxn(p, true)).toEqual({ code: 'NONE', producerEpoch: first + 1 });
    expect(await readCommitted(name)).toEqual({ values: ['a', 'b'], markerEpochs: [first + 1] });
    // A late batch of the ended transaction's epoch is fenced.
    expect(await produce(p, name, ['late'], [0], 12, first)).toEqual({ [`${name}/0`]: 'INVALID_PRODUCER_EPOCH' });
    expect(await produce(p, name, ['c'])).toEqual({ [`${name}/0`]: 'NONE' });
    expect(await endTxn(p, false)).toEqual({ code: 'NONE', producerEpoch: first + 2 });
    expect(await produce(p, name, ['d'])).toEqual({ [`${name}/0`]: 'NONE' });
    expect(await endTxn(p, true)).toEqual({ code: 'NONE', producerEpoch: first + 3 });
    expect(await readCommitted(name)).toEqual({ values: ['a', 'b', 'd'], markerEpochs: [first + 1, first + 2, first + 3] });
  });

  it('Produce v11 still needs AddPartitionsToTxn: without it TRANSACTION_ABORTABLE, as Kafka 4.4 answers (INVALID_TXN_STATE before v11)', async () => {
    const name = await topic();
    const p = await initTxn();
    expect(await produce(p, name, ['early'], [0], 11)).toEqual({ [`${name}/0`]: 'TRANSACTION_ABORTABLE' });
    expect(await produce(p, name, ['early'], [0], 10)).toEqual({ [`${name}/0`]: 'INVALID_TXN_STATE' });
  });

  it('a partition that does not exist answers UNKNOWN_TOPIC_OR_PARTITION; the others are added and written', async () => {
    const name = await topic(2);
    const p = await initTxn();
    expect(await produce(p, name, ['x'], [0, 1, 7])).toEqual({ [`${name}/0`]: 'NONE', [`${name}/1`]: 'NONE', [`${name}/7`]: 'UNKNOWN_TOPIC_OR_PARTITION' });
    expect((await endTxn(p, true)).code).toBe('NONE');
    expect((await readCommitted(name)).values).toEqual(['x']);
  });

  it('a fenced producer\'s Produce v12 answers INVALID_PRODUCER_EPOCH and writes nothing', async () => {
    const name = await topic();
    const zombie = await initTxn();
    await initTxn(zombie.transactionalId);
    expect(await produce(zombie, name, ['zombie'])).toEqual({ [`${name}/0`]: 'INVALID_PRODUCER_EPOCH' });
    expect((await readCommitted(name)).values).toEqual([]);
  });

  it('a retry with the epoch before the bump gets the same answer; the other way round, or a commit with nothing open, INVALID_TXN_STATE; an abort with nothing open bumps', async () => {
    const name = await topic();
    const p = await initTxn();
    const first = p.producerEpoch;
    expect((await endTxn(p, true)).code).toBe('INVALID_TXN_STATE');
    await produce(p, name, ['a']);
    expect(await endTxn(p, true)).toEqual({ code: 'NONE', producerEpoch: first + 1 });
    expect(await endTxn(p, true, first)).toEqual({ code: 'NONE', producerEpoch: first + 1 });
    expect((await endTxn(p, false, first)).code).toBe('INVALID_TXN_STATE');
    expect(await endTxn(p, false)).toEqual({ code: 'NONE', producerEpoch: first + 2 });
    expect((await endTxn(p, true, first)).code).toBe('PRODUCER_FENCED');
    // The abort with nothing open wrote no marker.
    expect((await readCommitted(name)).markerEpochs).toEqual([first + 1]);
  });
});

describe('TxnOffsetCommit v5', () => {
  async function commitOffset(p: TxnProducer, group: string, name: string, offset: bigint, version: number): Promise<string> {
    const sent = await gw.answer(ApiKey.TxnOffsetCommit, version, {
      transactionalId: p.transactionalId, groupId: group, producerId: p.producerId, producerEpoch: p.producerEpoch, generationId: -1, memberId: '', groupInstanceId: null,
      topics: [{ name, partitions: [{ partitionIndex: 0, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    return named(sent.topics[0].partitions[0].errorCode);
  }

  async function committed(group: string, name: string): Promise<number> {
    const response = await gw.answer(ApiKey.OffsetFetch, 7, { groupId: group, topics: [{ name, partitionIndexes: [0] }], requireStable: true });
    expect(named(response.errorCode)).toBe('NONE');
    return Number(response.topics[0].partitions[0].committedOffset);
  }

  it('adds its group to the transaction (opening one) without AddOffsetsToTxn; v4 still needs it (TRANSACTION_ABORTABLE without, as Kafka 4.4)', async () => {
    const name = await topic();
    const group = `tv2-group-${++serial}`;
    const p = await initTxn();
    expect(await commitOffset(p, group, name, 5n, 4)).toBe('TRANSACTION_ABORTABLE');
    expect(await commitOffset(p, group, name, 5n, 3)).toBe('INVALID_TXN_STATE');
    expect(await commitOffset(p, group, name, 5n, 5)).toBe('NONE');
    expect(await produce(p, name, ['r'])).toEqual({ [`${name}/0`]: 'NONE' });
    expect((await endTxn(p, true)).code).toBe('NONE');
    expect(await committed(group, name)).toBe(5);
    // The next transaction, offsets only, then aborted: they never land.
    expect(await commitOffset(p, group, name, 9n, 5)).toBe('NONE');
    expect((await endTxn(p, false)).code).toBe('NONE');
    expect(await committed(group, name)).toBe(5);
  });
});

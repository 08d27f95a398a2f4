/**
 * The transactional APIs on the wire, request by request, in every version a
 * client may send (flexible versions included): what each answers, and the
 * error codes a client meets (PRODUCER_FENCED from KIP-588's versions on,
 * INVALID_PRODUCER_EPOCH before; INVALID_TXN_STATE for a partition outside
 * the transaction; UNKNOWN_TOPIC_OR_PARTITION with OPERATION_NOT_ATTEMPTED;
 * UNSTABLE_OFFSET_COMMIT for require_stable; TRANSACTIONAL_ID_NOT_FOUND).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import type { Message } from '../../protocol/codec/compile.js';
import { buildBatch, decodeBatches } from '../../protocol/records/record-batch.js';
import { startBroker, type Broker } from '../../src/index.js';
import { WireClient } from './wire-client.js';

interface Identity {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
}

let counter = 0;
const uniqueId = (base: string) => `${base}-${process.pid}-${counter++}`;

describe('transactional APIs on the wire (memory engine)', () => {
  let broker: Broker;
  let client: WireClient;
  const topic = 'txn-wire';

  beforeAll(async () => {
    broker = await startBroker({ logLevel: 'silent' } as never);
    await broker.core.createQueue({ name: topic, partitions: 2, config: { dedupWindowSeconds: 0 } });
    client = await WireClient.open(broker.port);
  });
  afterAll(async () => {
    client?.destroy();
    await broker?.stop();
  });

  async function init(transactionalId: string, version = 4, previous?: Identity): Promise<Message> {
    return client.request(ApiKey.InitProducerId, version, {
      transactionalId,
      transactionTimeoutMs: 60_000,
      producerId: previous?.producerId ?? -1n,
      producerEpoch: previous?.producerEpoch ?? -1,
    });
  }

  async function identity(transactionalId: string): Promise<Identity> {
    const answer = await init(transactionalId);
    expect(answer.errorCode).toBe(0);
    return { transactionalId, producerId: answer.producerId, producerEpoch: answer.producerEpoch };
  }

  function addPartitions(who: Identity, version: number, partitions: { name: string; partitions: number[] }[]): Promise<Message> {
    return client.request(ApiKey.AddPartitionsToTxn, version, {
      v3AndBelowTransactionalId: who.transactionalId,
      v3AndBelowProducerId: who.producerId,
      v3AndBelowProducerEpoch: who.producerEpoch,
      v3AndBelowTopics: partitions,
    });
  }

  const partitionCodes = (answer: Message) =>
    (answer.resultsByTopicV3AndBelow as Message[]).flatMap((t) => (t.resultsByPartition as Message[]).map((p) => [`${t.name}:${p.partitionIndex}`, p.partitionErrorCode]));

  function produce(who: Identity, partition: number, values: string[], baseSequence: number): Promise<Message> {
    return client.request(ApiKey.Produce, 9, {
      transactionalId: who.transactionalId,
      acks: -1,
      timeoutMs: 5000,
      topicData: [
        {
          name: topic,
          partitionData: [{ index: partition, records: buildBatch({ records: values.map((value) => ({ value })), producerId: who.producerId, producerEpoch: who.producerEpoch, baseSequence, isTransactional: true }) }],
        },
      ],
    });
  }

  const produceCode = (answer: Message) => answer.responses[0].partitionResponses[0].errorCode;

  function endTxn(who: Identity, version: number, committed: boolean): Promise<Message> {
    return client.request(ApiKey.EndTxn, version, { transactionalId: who.transactionalId, producerId: who.producerId, producerEpoch: who.producerEpoch, committed });
  }

  it('runs a whole transaction in every version of each API (InitProducerId 0-5, AddPartitionsToTxn 0-3, AddOffsetsToTxn 0-4, TxnOffsetCommit 0-4, EndTxn 0-5)', async () => {
    for (let v = 0; v <= 5; v++) {
      const transactionalId = uniqueId(`every-version-${v}`);
      const first = await init(transactionalId, v);
      expect(first.errorCode, `InitProducerId v${v}`).toBe(0);
      const who = { transactionalId, producerId: first.producerId, producerEpoch: first.producerEpoch };
      expect(partitionCodes(await addPartitions(who, Math.min(v, 3), [{ name: topic, partitions: [0] }])), `AddPartitionsToTxn v${Math.min(v, 3)}`).toEqual([[`${topic}:0`, 0]]);
      expect(produceCode(await produce(who, 0, [`v${v}`], 0))).toBe(0);
      const group = uniqueId('group');
      expect((await client.request(ApiKey.AddOffsetsToTxn, Math.min(v, 4), { ...who, groupId: group })).errorCode, `AddOffsetsToTxn v${Math.min(v, 4)}`).toBe(0);
      const committed = await client.request(ApiKey.TxnOffsetCommit, Math.min(v, 4), {
        ...who,
        groupId: group,
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        topics: [{ name: topic, partitions: [{ partitionIndex: 1, committedOffset: 3n + BigInt(v), committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
      expect(committed.topics[0].partitions[0].errorCode, `TxnOffsetCommit v${Math.min(v, 4)}`).toBe(0);
      const ended = await endTxn(who, v, true);
      expect(ended.errorCode, `EndTxn v${v}`).toBe(0);
      // EndTxn v5 is transaction version 2 (KIP-890): the answer carries the epoch bumped for the next transaction.
      if (v === 5) expect(ended).toMatchObject({ producerId: who.producerId, producerEpoch: who.producerEpoch + 1 });
      const offsets = await client.request(ApiKey.OffsetFetch, 7, { groupId: group, topics: [{ name: topic, partitionIndexes: [1] }], requireStable: true });
      expect(offsets.topics[0].partitions[0]).toMatchObject({ committedOffset: 3n + BigInt(v), errorCode: 0 });
    }
  });

  it('answers a fenced instance PRODUCER_FENCED from KIP-588\'s versions on and INVALID_PRODUCER_EPOCH before them', async () => {
    const transactionalId = uniqueId('fenced');
    const zombie = await identity(transactionalId);
    expect(partitionCodes(await addPartitions(zombie, 3, [{ name: topic, partitions: [0] }]))).toEqual([[`${topic}:0`, 0]]);
    expect(produceCode(await produce(zombie, 0, ['zombie'], 0))).toBe(0);
    const successor = await identity(transactionalId);
    expect(successor.producerEpoch).toBe(zombie.producerEpoch + 1);

    expect(partitionCodes(await addPartitions(zombie, 1, [{ name: topic, partitions: [0] }]))).toEqual([[`${topic}:0`, ErrorCode.INVALID_PRODUCER_EPOCH]]);
    expect(partitionCodes(await addPartitions(zombie, 2, [{ name: topic, partitions: [0] }]))).toEqual([[`${topic}:0`, ErrorCode.PRODUCER_FENCED]]);
    expect((await endTxn(zombie, 1, true)).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await endTxn(zombie, 3, true)).errorCode).toBe(ErrorCode.PRODUCER_FENCED);
    expect((await client.request(ApiKey.AddOffsetsToTxn, 1, { ...zombie, groupId: 'g' })).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await client.request(ApiKey.AddOffsetsToTxn, 3, { ...zombie, groupId: 'g' })).errorCode).toBe(ErrorCode.PRODUCER_FENCED);
    expect((await init(transactionalId, 3, { ...zombie, producerEpoch: zombie.producerEpoch })).errorCode).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await init(transactionalId, 4, { ...zombie, producerEpoch: zombie.producerEpoch })).errorCode).toBe(ErrorCode.PRODUCER_FENCED);
    expect(produceCode(await produce(zombie, 0, ['late'], 1))).toBe(ErrorCode.INVALID_PRODUCER_EPOCH);
    expect((await endTxn({ ...successor, producerId: successor.producerId + 1000n }, 3, true)).errorCode).toBe(ErrorCode.INVALID_PRODUCER_ID_MAPPING);
    // Nothing open for the successor: ending is INVALID_TXN_STATE.
    expect((await endTxn(successor, 3, true)).errorCode).toBe(ErrorCode.INVALID_TXN_STATE);
  });

  it('refuses a transactional batch for a partition outside the transaction, and adds nothing when a partition is unknown', async () => {
    const who = await identity(uniqueId('outside'));
    expect(partitionCodes(await addPartitions(who, 3, [{ name: topic, partitions: [0] }]))).toEqual([[`${topic}:0`, 0]]);
    expect(produceCode(await produce(who, 1, ['outside'], 0))).toBe(ErrorCode.INVALID_TXN_STATE);
    expect(partitionCodes(await addPartitions(who, 3, [{ name: topic, partitions: [1, 7] }, { name: 'no-such-topic', partitions: [0] }]))).toEqual([
      [`${topic}:1`, ErrorCode.OPERATION_NOT_ATTEMPTED],
      [`${topic}:7`, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ['no-such-topic:0', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
    ]);
    expect(produceCode(await produce(who, 1, ['still-outside'], 0))).toBe(ErrorCode.INVALID_TXN_STATE);
    // v4+ (the broker-to-broker form): VerifyOnly answers whether each partition is in the transaction.
    const verified = await client.request(ApiKey.AddPartitionsToTxn, 4, {
      transactions: [{ transactionalId: who.transactionalId, producerId: who.producerId, producerEpoch: who.producerEpoch, verifyOnly: true, topics: [{ name: topic, partitions: [0, 1] }] }],
    });
    expect(verified.errorCode).toBe(0);
    expect(verified.resultsByTransaction[0].topicResults[0].resultsByPartition).toEqual([
      { partitionIndex: 0, partitionErrorCode: 0 },
      { partitionIndex: 1, partitionErrorCode: ErrorCode.INVALID_TXN_STATE },
    ]);
    expect((await endTxn(who, 3, false)).errorCode).toBe(0);
  });

  it('finds this gateway as the coordinator of a transactional id (key type 1), v1-v3 and v4+', async () => {
    const v3 = await client.request(ApiKey.FindCoordinator, 3, { key: 'any-transactional-id', keyType: 1 });
    expect(v3).toMatchObject({ errorCode: 0, host: '127.0.0.1', port: broker.port });
    const v4 = await client.request(ApiKey.FindCoordinator, 4, { keyType: 1, coordinatorKeys: ['a', 'b'] });
    expect(v4.coordinators.map((c: Message) => [c.key, c.errorCode, c.port])).toEqual([
      ['a', 0, broker.port],
      ['b', 0, broker.port],
    ]);
  });

  it('answers require_stable with UNSTABLE_OFFSET_COMMIT while offsets are pending, and read_committed Fetch with the LSO and the aborted list', async () => {
    const who = await identity(uniqueId('pending'));
    const group = uniqueId('group');
    const fetchTopic = uniqueId('txn-fetch');
    await broker.core.createQueue({ name: fetchTopic, partitions: 1, config: { dedupWindowSeconds: 0 } });
    expect((await client.request(ApiKey.AddOffsetsToTxn, 3, { ...who, groupId: group })).errorCode).toBe(0);
    await client.request(ApiKey.TxnOffsetCommit, 3, {
      ...who,
      groupId: group,
      generationId: -1,
      memberId: '',
      groupInstanceId: null,
      topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: 9n, committedLeaderEpoch: -1, committedMetadata: null }] }],
    });
    const unstable = await client.request(ApiKey.OffsetFetch, 8, { groups: [{ groupId: group, topics: [{ name: topic, partitionIndexes: [0] }] }], requireStable: true });
    expect(unstable.groups[0].topics[0].partitions[0]).toMatchObject({ committedOffset: -1n, errorCode: ErrorCode.UNSTABLE_OFFSET_COMMIT });
    const loose = await client.request(ApiKey.OffsetFetch, 8, { groups: [{ groupId: group, topics: [{ name: topic, partitionIndexes: [0] }] }], requireStable: false });
    expect(loose.groups[0].topics[0].partitions[0]).toMatchObject({ committedOffset: -1n, errorCode: 0 });

    // An aborted transaction on the fetched topic, then an open one.
    const add = (id: Identity) =>
      client.request(ApiKey.AddPartitionsToTxn, 3, { v3AndBelowTransactionalId: id.transactionalId, v3AndBelowProducerId: id.producerId, v3AndBelowProducerEpoch: id.producerEpoch, v3AndBelowTopics: [{ name: fetchTopic, partitions: [0] }] });
    const produceTo = (id: Identity, value: string, baseSequence: number) =>
      client.request(ApiKey.Produce, 9, {
        transactionalId: id.transactionalId,
        acks: -1,
        timeoutMs: 5000,
        topicData: [{ name: fetchTopic, partitionData: [{ index: 0, records: buildBatch({ records: [{ value }], producerId: id.producerId, producerEpoch: id.producerEpoch, baseSequence, isTransactional: true }) }] }],
      });
    const writer = await identity(uniqueId('writer'));
    await add(writer);
    await produceTo(writer, 'aborted', 0);
    expect((await endTxn(writer, 3, false)).errorCode).toBe(0);
    await add(writer);
    await produceTo(writer, 'open', 1);
    const fetch = (isolationLevel: number) =>
      client.request(ApiKey.Fetch, 12, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel,
        sessionId: 0,
        sessionEpoch: -1,
        topics: [{ topic: fetchTopic, partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n }] }],
        forgottenTopicsData: [],
        rackId: '',
      });
    const committed = (await fetch(1)).responses[0].partitions[0];
    expect(committed).toMatchObject({ highWatermark: 3n, lastStableOffset: 2n, abortedTransactions: [{ producerId: writer.producerId, firstOffset: 0n }] });
    const batches = decodeBatches(committed.records, { fromClient: false });
    expect(batches.map((b) => [Number(b.header.baseOffset), b.isControl])).toEqual([
      [0, false],
      [1, true],
    ]);
    const uncommitted = (await fetch(0)).responses[0].partitions[0];
    expect(uncommitted).toMatchObject({ highWatermark: 3n, lastStableOffset: 2n, abortedTransactions: null });
    expect(decodeBatches(uncommitted.records, { fromClient: false })).toHaveLength(3);
    const listed = await client.request(ApiKey.ListOffsets, 5, {
      replicaId: -1,
      isolationLevel: 1,
      topics: [{ name: fetchTopic, partitions: [{ partitionIndex: 0, currentLeaderEpoch: -1, timestamp: -1n }] }],
    });
    expect(listed.topics[0].partitions[0]).toMatchObject({ errorCode: 0, offset: 2n });
    expect((await endTxn(who, 3, true)).errorCode).toBe(0);
    expect((await endTxn(writer, 3, true)).errorCode).toBe(0);
  });

  it('describes and lists transactions (DescribeTransactions v0, ListTransactions v0-v1)', async () => {
    const who = await identity(uniqueId('described'));
    await addPartitions(who, 3, [{ name: topic, partitions: [1, 0] }]);
    const described = await client.request(ApiKey.DescribeTransactions, 0, { transactionalIds: [who.transactionalId, 'never-initialized'] });
    expect(described.transactionStates[0]).toMatchObject({
      errorCode: 0,
      transactionalId: who.transactionalId,
      transactionState: 'Ongoing',
      transactionTimeoutMs: 60_000,
      producerId: who.producerId,
      producerEpoch: who.producerEpoch,
      topics: [{ topic, partitions: [0, 1] }],
    });
    expect(described.transactionStates[0].transactionStartTimeMs > 0n).toBe(true);
    expect(described.transactionStates[1]).toMatchObject({ errorCode: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND, transactionalId: 'never-initialized' });

    const ongoing = await client.request(ApiKey.ListTransactions, 1, { stateFilters: ['Ongoing', 'Bogus'], producerIdFilters: [who.producerId], durationFilter: -1n });
    expect(ongoing).toMatchObject({ errorCode: 0, unknownStateFilters: ['Bogus'], transactionStates: [{ transactionalId: who.transactionalId, producerId: who.producerId, transactionState: 'Ongoing' }] });
    expect((await endTxn(who, 3, false)).errorCode).toBe(0);
    const aborted = await client.request(ApiKey.ListTransactions, 0, { stateFilters: ['CompleteAbort'], producerIdFilters: [who.producerId] });
    expect(aborted.transactionStates).toEqual([{ transactionalId: who.transactionalId, producerId: who.producerId, transactionState: 'CompleteAbort' }]);
  });
});

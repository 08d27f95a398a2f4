/**
 * The record-side admin APIs: DeleteRecords through kafkajs 2.2.4
 * (deleteTopicRecords, fetchTopicOffsets) and raw, OffsetForLeaderEpoch and
 * DescribeProducers raw (kafkajs has neither).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../protocol/api-keys.js';
import type { Message } from '../../protocol/codec/compile.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import { failureTypes, startAdminHarness, type AdminHarness } from './admin-support.js';

describe('admin: records', () => {
  let h: AdminHarness;
  beforeAll(async () => {
    h = await startAdminHarness();
  });
  afterAll(async () => {
    await h?.stop();
  });

  /** Creates a topic and writes `count` records to each of its partitions, one batch per record. */
  async function topicWithRecords(topic: string, partitions: number, count: number, idempotent = false): Promise<void> {
    await h.admin.createTopics({ topics: [{ topic, numPartitions: partitions }] });
    const producer = h.kafka.producer(idempotent ? { idempotent: true, maxInFlightRequests: 1 } : {});
    await producer.connect();
    for (let i = 0; i < count; i++) {
      for (let partition = 0; partition < partitions; partition++) {
        await producer.send({ topic, messages: [{ partition, value: `record ${i}` }] });
      }
    }
    await producer.disconnect();
  }

  const offsetsOf = async (topic: string) =>
    Object.fromEntries((await h.admin.fetchTopicOffsets(topic)).map((o) => [o.partition, { low: Number(o.low), high: Number(o.high) }]));

  describe('DeleteRecords', () => {
    it('moves the low watermark to the given offset, in that partition only; -1 means the high watermark', async () => {
      await topicWithRecords('trimmed', 2, 10);
      // kafkajs finds partition leaders in metadata it has already loaded; fetchTopicOffsets loads it.
      expect(await offsetsOf('trimmed')).toEqual({ 0: { low: 0, high: 10 }, 1: { low: 0, high: 10 } });
      await h.admin.deleteTopicRecords({ topic: 'trimmed', partitions: [{ partition: 0, offset: '4' }] });
      expect(await offsetsOf('trimmed')).toEqual({ 0: { low: 4, high: 10 }, 1: { low: 0, high: 10 } });

      await h.admin.deleteTopicRecords({ topic: 'trimmed', partitions: [{ partition: 1, offset: '-1' }] });
      expect((await offsetsOf('trimmed'))[1]).toEqual({ low: 10, high: 10 });
    });

    it('answers the low watermark, which an offset below it leaves where it is', async () => {
      await topicWithRecords('answered', 1, 5);
      const deleteAt = (offset: number) =>
        h.request(ApiKey.DeleteRecords, 2, { topics: [{ name: 'answered', partitions: [{ partitionIndex: 0, offset: BigInt(offset) }] }], timeoutMs: 1000 });
      expect((await deleteAt(3)).topics[0].partitions[0]).toMatchObject({ partitionIndex: 0, errorCode: 0, lowWatermark: 3n });
      expect((await deleteAt(1)).topics[0].partitions[0]).toMatchObject({ errorCode: 0, lowWatermark: 3n });
    });

    it('answers OFFSET_OUT_OF_RANGE past the high watermark and deletes nothing; unknown partitions are named', async () => {
      await topicWithRecords('bounded', 1, 3);
      await offsetsOf('bounded');
      expect(await failureTypes(h.admin.deleteTopicRecords({ topic: 'bounded', partitions: [{ partition: 0, offset: '4' }] }))).toContain(
        'OFFSET_OUT_OF_RANGE',
      );
      const { topics } = await h.request(ApiKey.DeleteRecords, 0, {
        topics: [
          { name: 'bounded', partitions: [{ partitionIndex: 0, offset: 99n }, { partitionIndex: 7, offset: 0n }] },
          { name: 'nowhere', partitions: [{ partitionIndex: 0, offset: 0n }] },
        ],
        timeoutMs: 1000,
      });
      expect(topics[0].partitions).toEqual([
        { partitionIndex: 0, errorCode: ErrorCode.OFFSET_OUT_OF_RANGE, lowWatermark: -1n },
        { partitionIndex: 7, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, lowWatermark: -1n },
      ]);
      expect(topics[1].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      expect(await offsetsOf('bounded')).toEqual({ 0: { low: 0, high: 3 } });
    });
  });

  describe('OffsetForLeaderEpoch', () => {
    const ask = (version: number, topic: string, partitions: Partial<{ partition: number; currentLeaderEpoch: number; leaderEpoch: number }>[]) =>
      h
        .request(ApiKey.OffsetForLeaderEpoch, version, {
          replicaId: -1,
          topics: [{ topic, partitions: partitions.map((p) => ({ partition: 0, currentLeaderEpoch: -1, leaderEpoch: 0, ...p })) }],
        })
        .then((r) => r.topics[0].partitions as Message[]);

    it('answers the high watermark as the end of epoch 0, in every version', async () => {
      await topicWithRecords('epochs', 2, 6);
      for (const version of [0, 1, 2, 3, 4]) {
        const partitions = await ask(version, 'epochs', [{ partition: 0 }, { partition: 1 }]);
        expect(partitions.map((p) => [p.errorCode, p.endOffset])).toEqual([
          [0, 6n],
          [0, 6n],
        ]);
        // LeaderEpoch is in the answer from v1; v0 decodes its default, -1.
        expect(partitions[0]!.leaderEpoch).toBe(version >= 1 ? 0 : -1);
      }
    });

    it('follows Kafka for other epochs: above the current one or undefined gives -1/-1, a newer current epoch is unknown', async () => {
      await topicWithRecords('epoch-rules', 1, 2);
      const [above, undefinedEpoch, newerCurrent, checkedCurrent] = await ask(4, 'epoch-rules', [
        { leaderEpoch: 5 },
        { leaderEpoch: -1 },
        { currentLeaderEpoch: 1 },
        { currentLeaderEpoch: 0 },
      ]);
      expect(above).toMatchObject({ errorCode: 0, leaderEpoch: -1, endOffset: -1n });
      expect(undefinedEpoch).toMatchObject({ errorCode: 0, leaderEpoch: -1, endOffset: -1n });
      expect(newerCurrent).toMatchObject({ errorCode: ErrorCode.UNKNOWN_LEADER_EPOCH, endOffset: -1n });
      expect(checkedCurrent).toMatchObject({ errorCode: 0, leaderEpoch: 0, endOffset: 2n });
    });

    it('answers UNKNOWN_TOPIC_OR_PARTITION for unknown topics and partitions, beside good ones', async () => {
      await topicWithRecords('epoch-known', 1, 1);
      expect((await ask(4, 'epoch-known', [{ partition: 0 }, { partition: 3 }])).map((p) => p.errorCode)).toEqual([0, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
      expect((await ask(2, 'epoch-unknown', [{ partition: 0 }]))[0]).toMatchObject({ errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, endOffset: -1n });
    });
  });

  describe('DescribeProducers', () => {
    it('lists the idempotent producer that wrote to a partition, with its last sequence', async () => {
      await topicWithRecords('produced', 2, 3, true);
      const { topics } = await h.request(ApiKey.DescribeProducers, 0, { topics: [{ name: 'produced', partitionIndexes: [0, 1, 5] }] });
      const [p0, p1, p5] = topics[0].partitions as Message[];
      expect(p0).toMatchObject({ partitionIndex: 0, errorCode: 0 });
      expect(p0!.activeProducers).toHaveLength(1);
      expect(p0!.activeProducers[0]).toMatchObject({ producerEpoch: 0, lastSequence: 2 });
      expect(p0!.activeProducers[0].producerId).toBeGreaterThanOrEqual(0n);
      expect(p1!.activeProducers[0].producerId).toBe(p0!.activeProducers[0].producerId);
      expect(p5).toMatchObject({ partitionIndex: 5, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, activeProducers: [] });
      expect(p5!.errorMessage).toMatch(/partition/);
    });

    it('answers no producers for a partition written without idempotence, and UNKNOWN_TOPIC_OR_PARTITION for unknown topics', async () => {
      await topicWithRecords('plain', 1, 2);
      const { topics } = await h.request(ApiKey.DescribeProducers, 0, {
        topics: [
          { name: 'plain', partitionIndexes: [0] },
          { name: 'missing', partitionIndexes: [0] },
        ],
      });
      expect(topics[0].partitions[0]).toMatchObject({ errorCode: 0, activeProducers: [] });
      expect(topics[1].partitions[0].errorCode).toBe(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    });
  });
});

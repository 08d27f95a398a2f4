/**
 * How a native push becomes a Kafka record and back (src/core/rules/
 * native-records.ts); the batch walk itself is pop-collector.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { setBaseOffset } from '../../../protocol/records/batch-header.js';
import { CompressionCodec } from '../../../protocol/records/compression.js';
import { buildBatch, buildControlBatch, ControlRecordType, decodeBatch, TimestampType } from '../../../protocol/records/record-batch.js';
import { decodeStoredBatch, encodePushBatch, MESSAGE_ID_HEADER, PopCollector, toQueenMessage, TRACE_ID_HEADER, TRANSACTION_ID_HEADER } from '../../../src/core/rules/native-records.js';
import { kafkaRecordMessageId } from '../../../src/core/rules/uuidv7.js';

const where = { queue: 'orders', queueId: '018f0000-0000-7000-8000-000000000000', partition: 'eu', partitionIndex: 2 };
const MIB = 1024 * 1024;

describe('native records', () => {
  it('stores a push as a keyless record: the payload as JSON value, its ids in headers, the trace id only when given', () => {
    const batch = encodePushBatch(
      [
        { transactionId: 'tx-1', messageId: 'm-1', payloadJson: '{"n":1}', traceId: 'trace-1' },
        { transactionId: 'tx-2', messageId: 'm-2', payloadJson: '"two"', traceId: undefined },
      ],
      1_700_000_000_000,
    );
    const decoded = decodeBatch(batch);
    expect(decoded.records.map((r) => [r.key, r.value?.toString(), r.headers.map((h) => h.key)])).toEqual([
      [null, '{"n":1}', [TRANSACTION_ID_HEADER, MESSAGE_ID_HEADER, TRACE_ID_HEADER]],
      [null, '"two"', [TRANSACTION_ID_HEADER, MESSAGE_ID_HEADER]],
    ]);
    expect(decoded.header.baseTimestamp).toBe(1_700_000_000_000n);
  });

  it('reads a pushed record back as the message that was pushed, its headers taken out of the user headers', () => {
    const batch = encodePushBatch([{ transactionId: 'tx-1', messageId: 'm-1', payloadJson: '{"n":1}', traceId: 'trace-1' }], 5_000);
    setBaseOffset(batch, 0, 30);
    const [record] = decodeStoredBatch(batch, MIB);
    expect(toQueenMessage(record!, where)).toEqual({
      queue: 'orders', partition: 'eu', partitionIndex: 2, offset: 30, messageId: 'm-1', transactionId: 'tx-1', traceId: 'trace-1', payload: { n: 1 }, key: null, headers: [], timestamp: 5_000,
    });
  });

  it('gives a record a Kafka producer wrote the id derived from its place, as both message and transaction id; text stays text', () => {
    const batch = buildBatch({ baseOffset: 7, records: [{ key: 'k', value: 'not json', headers: [{ key: 'h', value: 'v' }], timestamp: 9_000 }] });
    const message = toQueenMessage(decodeStoredBatch(batch, MIB)[0]!, where);
    const id = kafkaRecordMessageId(where.queueId, 2, 7);
    expect([message.messageId, message.transactionId, message.payload, message.key?.toString(), message.traceId]).toEqual([id, id, 'not json', 'k', null]);
    expect(message.headers.map((h) => [h.key, h.value?.toString()])).toEqual([['h', 'v']]);
    expect(toQueenMessage({ offset: 0, timestamp: 0, key: null, value: null, headers: [] }, where).payload).toBeNull();
  });

  it('reads absolute offsets and timestamps (LogAppendTime from the batch), inflating compressed batches; markers hold no record', () => {
    const batch = buildBatch({ baseOffset: 100, compression: CompressionCodec.Lz4, records: [{ value: 'a', timestamp: 1_000 }, { value: 'b', timestamp: 1_500 }] });
    expect(decodeStoredBatch(batch, MIB).map((r) => [r.offset, r.timestamp])).toEqual([[100, 1_000], [101, 1_500]]);
    const stamped = buildBatch({ timestampType: TimestampType.LogAppendTime, maxTimestamp: 8_000, records: [{ value: 'a', timestamp: 1_000 }] });
    expect(decodeStoredBatch(stamped, MIB)[0]!.timestamp).toBe(8_000);
    expect(decodeStoredBatch(buildControlBatch({ type: ControlRecordType.Commit, producerId: 1, producerEpoch: 0, coordinatorEpoch: 0 }), MIB)).toEqual([]);
  });

  it('passes over a transaction marker and an aborted transaction\'s batch met first, and ends the pop at one met after messages', () => {
    const marker = buildControlBatch({ type: ControlRecordType.Commit, producerId: 5, producerEpoch: 0, coordinatorEpoch: 0, baseOffset: 0 });
    const aborted = buildBatch({ baseOffset: 1, isTransactional: true, producerId: 6, producerEpoch: 0, baseSequence: 0, records: [{ value: 'x' }] });
    const plain = buildBatch({ baseOffset: 2, records: [{ value: '"ok"' }] });
    const isAborted = (pid: number) => pid === 6;
    const first = new PopCollector(0, 10, where, MIB);
    for (const [bytes, next] of [[marker, 1], [aborted, 2], [plain, 3]] as const) expect(first.take({ bytes, nextOffset: next }, isAborted)).toBe(true);
    expect([first.position, first.messages.map((m) => m.payload)]).toEqual([2, ['ok']]);

    const after = new PopCollector(2, 10, where, MIB);
    after.take({ bytes: plain, nextOffset: 3 }, isAborted);
    const laterAborted = buildBatch({ baseOffset: 3, isTransactional: true, producerId: 6, producerEpoch: 0, baseSequence: 1, records: [{ value: 'y' }] });
    expect(after.take({ bytes: laterAborted, nextOffset: 4 }, isAborted)).toBe(false);
    expect(after.messages).toHaveLength(1);
    // A committed transactional batch is delivered.
    const committed = new PopCollector(3, 10, where, MIB);
    expect(committed.take({ bytes: laterAborted, nextOffset: 4 }, () => false)).toBe(true);
    expect(committed.messages.map((m) => m.payload)).toEqual(['y']);
  });

  it('holds back records stamped after visibleUntil (delayed processing), ending the pop there', () => {
    const batch = buildBatch({ baseOffset: 0, records: [{ value: '1', timestamp: 1_000 }, { value: '2', timestamp: 3_000 }] });
    const pop = new PopCollector(0, 10, where, MIB, 2_000);
    expect(pop.take({ bytes: batch, nextOffset: 2 })).toBe(false);
    expect(pop.messages.map((m) => m.offset)).toEqual([0]);
  });
});

import { describe, expect, it } from 'vitest';
import { assemblePushResults, isInsideWindow, planPush, splitByHits } from '../../../src/core/rules/dedup.js';
import { kafkaRecordMessageId, messageIdTime, mintMessageId } from '../../../src/core/rules/uuidv7.js';
import { retentionStartOffset } from '../../../src/core/rules/retention.js';

describe('push plan', () => {
  it('groups per queue and partition, marks repeats, and answers repeats with their first occurrence', () => {
    const plan = planPush(
      [
        { queue: 'q', transactionId: 'a', payload: 1 },
        { queue: 'q', partition: 'p', transactionId: 'a', payload: 2 },
        { queue: 'q', transactionId: 'a', payload: 3 },
        { queue: 'q', payload: 4 },
      ],
      1_000,
    );
    expect(plan.items.map((i) => i.repeatOf)).toEqual([null, null, 0, null]);
    expect(plan.partitions.map((g) => [g.partition, g.firsts.map((f) => f.index)])).toEqual([
      ['Default', [0, 3]],
      ['p', [1]],
    ]);
    const { toWrite, stored } = splitByHits(plan.partitions[0]!, new Map([['a', { messageId: 'old', offset: 9 }]]));
    expect(toWrite.map((i) => i.index)).toEqual([3]);
    const results = assemblePushResults(plan, (i) =>
      stored.has(i) ? { status: 'duplicate', ...stored.get(i)!, partitionIndex: 0 } : { status: 'queued', messageId: plan.items[i]!.messageId, offset: 10, partitionIndex: 0 },
    );
    expect(results.map((r) => [r.status, r.offset])).toEqual([
      ['duplicate', 9],
      ['queued', 10],
      ['duplicate', 9],
      ['queued', 10],
    ]);
  });

  it('counts the window in whole seconds and turns it off at 0', () => {
    expect(isInsideWindow(0, 9_999, 10)).toBe(true);
    expect(isInsideWindow(0, 10_000, 10)).toBe(false);
    expect(isInsideWindow(0, 0, 0)).toBe(false);
  });
});

describe('message ids', () => {
  it('mints increasing UUIDv7 ids carrying their time', () => {
    const ids = Array.from({ length: 50 }, () => mintMessageId(1_700_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(messageIdTime(ids[0]!)).toBe(1_700_000_000_000);
  });

  it('derives a Kafka record\'s id from its position alone', () => {
    const queueId = '0190f0f0-0000-4000-8000-000000000001';
    expect(kafkaRecordMessageId(queueId, 0, 5)).toBe(kafkaRecordMessageId(queueId, 0, 5));
    expect(kafkaRecordMessageId(queueId, 0, 5)).not.toBe(kafkaRecordMessageId(queueId, 1, 5));
  });
});

describe('retention', () => {
  const batches = [0, 1, 2].map((i) => ({ baseOffset: i * 2, nextOffset: i * 2 + 2, size: 100, appendedAt: i * 1000 }));
  it('drops whole batches by age and by size, never moving the start backwards', () => {
    expect(retentionStartOffset(batches, { retentionMs: 1500, retentionBytes: -1 }, 0, 2600)).toBe(4);
    expect(retentionStartOffset(batches, { retentionMs: -1, retentionBytes: 150 }, 0, 0)).toBe(4);
    expect(retentionStartOffset(batches, { retentionMs: -1, retentionBytes: -1 }, 5, 0)).toBe(5);
  });
});

import { describe, expect, it } from 'vitest';
import { kafkaRecordMessageId, messageIdTime, mintMessageId, mintQueueId } from '../../../src/core/rules/uuidv7.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-([0-9a-f])[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('message ids', () => {
  it('mints RFC 9562 version 7 ids carrying the time they were minted at', () => {
    const id = mintMessageId(1_700_000_000_123);
    expect(id).toMatch(UUID);
    expect(UUID.exec(id)![1]).toBe('7');
    expect(messageIdTime(id)).toBe(1_700_000_000_123);
  });

  it('keeps ids minted in one millisecond increasing, and later ms sort after', () => {
    const ids = Array.from({ length: 1_000 }, () => mintMessageId(1_800_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    expect(mintMessageId(1_800_000_000_001) > ids.at(-1)!).toBe(true);
  });

  it('derives a Kafka record id from queue, partition and offset: the same place, the same id (version 5)', () => {
    const queue = mintQueueId();
    expect(queue).toMatch(UUID);
    const id = kafkaRecordMessageId(queue, 2, 41);
    expect(id).toMatch(UUID);
    expect(UUID.exec(id)![1]).toBe('5');
    expect(kafkaRecordMessageId(queue, 2, 41)).toBe(id);
    const others = [kafkaRecordMessageId(queue, 2, 42), kafkaRecordMessageId(queue, 3, 41), kafkaRecordMessageId(mintQueueId(), 2, 41), kafkaRecordMessageId(queue, 24, 1)];
    expect(new Set([id, ...others]).size).toBe(5);
  });
});

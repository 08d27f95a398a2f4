import { describe, expect, it } from 'vitest';
import { buildBatch, decodeBatch, validateBatches } from '../../../protocol/records/record-batch.js';
import { CompressionCodec, inflationBudget } from '../../../protocol/records/compression.js';
import { crc32c } from '../../../protocol/records/crc32c.js';
import { checkQueueRules, keepInPlace, parseAppend, parseAppendRecords, prepareForStorage } from '../../../src/core/rules/batches.js';
import { DEFAULT_QUEUE_CONFIG, type QueueConfig } from '../../../src/core/core.js';

const batch = (values: string[]) => buildBatch({ records: values.map((value) => ({ key: null, value, timestamp: 1_700_000_000_000 })) });

/** Bytes in memory of their own, as a socket read or an assembled frame is (not Node's shared pool). */
function own(...parts: Buffer[]): Buffer {
  const joined = Buffer.concat(parts);
  const out = Buffer.allocUnsafeSlow(joined.length);
  joined.copy(out);
  return out;
}

function resignBatch(b: Buffer): Buffer {
  b.writeUInt32BE(crc32c(b.subarray(21)), 17);
  return b;
}

function parsed(records: Buffer) {
  const result = parseAppendRecords(records, inflationBudget(1 << 20, 1 << 20));
  if (!result.ok) throw new Error(result.message);
  return result.batches;
}

describe('storing handed-over batches', () => {
  it('keeps batches where they lie only when the caller hands them over and they fill their memory', () => {
    const frame = own(batch(['a', 'b']), batch(['c']));
    const partitions = [{ records: frame }];
    expect(keepInPlace({ partitions })).toBe(false);
    expect(keepInPlace({ partitions, recordsHandedOver: true })).toBe(true);
    // A small batch at the end of a large read buffer is copied, so it does not pin the buffer.
    const big = Buffer.alloc(64 * 1024);
    const small = batch(['z']);
    small.copy(big, big.length - small.length);
    expect(keepInPlace({ partitions: [{ records: big.subarray(big.length - small.length) }], recordsHandedOver: true })).toBe(false);
  });

  it('writes the offset into the batch in place, or into a copy that leaves the caller alone', () => {
    const frame = own(batch(['a', 'b']), batch(['c']));
    const original = Buffer.from(frame);
    const [first, second] = parsed(frame);

    const copy = prepareForStorage(frame, second!, 41, null, false);
    expect(frame.equals(original)).toBe(true);
    expect(Number(decodeBatch(copy).header.baseOffset)).toBe(41);
    copy.fill(0);
    expect(frame.equals(original)).toBe(true);

    const view = prepareForStorage(frame, first!, 7, null, true);
    expect(view.buffer).toBe(frame.buffer);
    expect(Number(decodeBatch(frame).header.baseOffset)).toBe(7);
    expect(decodeBatch(view).records.map((r) => r.value!.toString())).toEqual(['a', 'b']);
  });

  it('stamps LogAppendTime in place with a CRC that still holds', () => {
    const frame = own(batch(['a']));
    const [only] = parsed(frame);
    const view = prepareForStorage(frame, only!, 3, 1_800_000_000_000, true);
    expect(() => validateBatches(view)).not.toThrow();
    const { header } = decodeBatch(view);
    expect(Number(header.maxTimestamp)).toBe(1_800_000_000_000);
    expect(Number(header.baseOffset)).toBe(3);
  });
});

describe('what an append refuses, in the core vocabulary', () => {
  const limits = { maxInflatedBatchBytes: 1 << 20, maxInflatedRequestBytes: 1 << 21 };
  const poison = () => {
    const b = batch(['abc']);
    b.fill(0xee, 61);
    return resignBatch(b);
  };

  it('maps each broken rule to the error Kafka gives and names the failing record', () => {
    const badCrc = batch(['a']);
    badCrc.writeUInt8(badCrc.readUInt8(badCrc.length - 1) ^ 1, badCrc.length - 1);
    const bomb = buildBatch({ compression: CompressionCodec.Gzip, records: [{ value: Buffer.alloc(2 << 20) }] });
    const [good, garbled, corrupt, tooLarge] = parseAppend([{ records: batch(['a']) }, { records: poison() }, { records: badCrc }, { records: bomb }], limits);
    expect(good!.ok).toBe(true);
    expect(garbled).toMatchObject({ ok: false, error: 'invalid_record', recordIndex: 0 });
    expect(corrupt).toMatchObject({ ok: false, error: 'corrupt_message' });
    expect(tooLarge).toMatchObject({ ok: false, error: 'message_too_large' });
    expect(tooLarge!.ok || tooLarge!.message).toMatch(/Record batch 0 was refused: .*1048576-byte inflation limit for one batch.*--max-inflated-batch-bytes/);
  });

  it('stores the largest record timestamp as the batch max when the producer wrote another, with a CRC that holds', () => {
    const frame = own(buildBatch({ records: [{ value: 'a', timestamp: 1_000 }, { value: 'b', timestamp: 9_000 }], maxTimestamp: 1_000 }));
    const [only] = parsed(frame);
    expect(only!.maxTimestamp).toBe(9_000);
    const stored = prepareForStorage(frame, only!, 0, null, false);
    expect(() => validateBatches(stored)).not.toThrow();
    expect(decodeBatch(stored).header.maxTimestamp).toBe(9_000n);
  });
});

describe('timestamp rules (message.timestamp.before.max.ms, message.timestamp.after.max.ms)', () => {
  const now = 1_700_000_000_000;
  const at = (timestamp: number) => buildBatch({ records: [{ key: null, value: 'x', timestamp }] });
  const rules = { ...DEFAULT_QUEUE_CONFIG, timestampBeforeMaxMs: 60_000, timestampAfterMaxMs: 1_000 };
  const check = (records: Buffer, queue: QueueConfig) => checkQueueRules(parseAppendRecords(records, inflationBudget(1 << 20, 1 << 20)), queue, now);

  it('refuses a CreateTime batch outside the window with invalid_timestamp, naming the window', () => {
    expect(check(at(now - 60_000), rules).ok).toBe(true);
    expect(check(at(now + 1_000), rules).ok).toBe(true);
    const early = check(own(at(now), at(now - 60_001)), rules);
    expect(early).toMatchObject({ ok: false, error: 'invalid_timestamp' });
    expect(early.ok ? '' : early.message).toContain(`from ${now - 60_000} to ${now + 1_000}`);
    expect(check(at(now + 1_001), rules)).toMatchObject({ ok: false, error: 'invalid_timestamp' });
  });

  it('lets anything through on a LogAppendTime queue, and Kafka 4 defaults refuse only more than an hour ahead', () => {
    expect(check(at(now + 10_000), { ...rules, timestampType: 'LogAppendTime' }).ok).toBe(true);
    expect(check(at(0), DEFAULT_QUEUE_CONFIG).ok).toBe(true);
    expect(check(at(now + 3_600_000), DEFAULT_QUEUE_CONFIG).ok).toBe(true);
    expect(check(at(now + 3_600_001), DEFAULT_QUEUE_CONFIG).ok).toBe(false);
  });
});

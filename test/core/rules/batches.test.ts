import { describe, expect, it } from 'vitest';
import { buildBatch, decodeBatch, validateBatches } from '../../../protocol/records/record-batch.js';
import { DEFAULT_QUEUE_CONFIG } from '../../../src/core/core.js';
import { keepInPlace, parseAppendRecords, prepareForStorage } from '../../../src/core/rules/batches.js';

const batch = (values: string[]) => buildBatch({ records: values.map((value) => ({ key: null, value, timestamp: 1_700_000_000_000 })) });

/** Bytes in memory of their own, as a socket read or an assembled frame is (not Node's shared pool). */
function own(...parts: Buffer[]): Buffer {
  const joined = Buffer.concat(parts);
  const out = Buffer.allocUnsafeSlow(joined.length);
  joined.copy(out);
  return out;
}

function parsed(records: Buffer) {
  const result = parseAppendRecords(records, { ...DEFAULT_QUEUE_CONFIG, maxMessageBytes: 1 << 20 }, 1_700_000_000_000);
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

describe('timestamp rules (message.timestamp.before.max.ms, message.timestamp.after.max.ms)', () => {
  const now = 1_700_000_000_000;
  const at = (timestamp: number) => buildBatch({ records: [{ key: null, value: 'x', timestamp }] });
  const rules = { ...DEFAULT_QUEUE_CONFIG, timestampBeforeMaxMs: 60_000, timestampAfterMaxMs: 1_000 };

  it('refuses a CreateTime batch outside the window with invalid_timestamp, naming the window', () => {
    expect(parseAppendRecords(at(now - 60_000), rules, now).ok).toBe(true);
    expect(parseAppendRecords(at(now + 1_000), rules, now).ok).toBe(true);
    const early = parseAppendRecords(own(at(now), at(now - 60_001)), rules, now);
    expect(early).toMatchObject({ ok: false, error: 'invalid_timestamp', batchIndex: 1 });
    expect(early.ok ? '' : early.message).toContain(`from ${now - 60_000} to ${now + 1_000}`);
    expect(parseAppendRecords(at(now + 1_001), rules, now)).toMatchObject({ ok: false, error: 'invalid_timestamp' });
  });

  it('lets anything through on a LogAppendTime queue, and Kafka 4 defaults refuse only more than an hour ahead', () => {
    expect(parseAppendRecords(at(now + 10_000), { ...rules, timestampType: 'LogAppendTime' }, now).ok).toBe(true);
    expect(parseAppendRecords(at(0), DEFAULT_QUEUE_CONFIG, now).ok).toBe(true);
    expect(parseAppendRecords(at(now + 3_600_000), DEFAULT_QUEUE_CONFIG, now).ok).toBe(true);
    expect(parseAppendRecords(at(now + 3_600_001), DEFAULT_QUEUE_CONFIG, now).ok).toBe(false);
  });
});

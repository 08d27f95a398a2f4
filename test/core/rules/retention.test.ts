import { describe, expect, it } from 'vitest';
import { retentionStartOffset, type RetainedBatchInfo } from '../../../src/core/rules/retention.js';

// Three batches of 100 bytes: offsets 0-9 appended at 1,000, 10-19 at 2,000, 20-29 at 3,000.
const batches: RetainedBatchInfo[] = [0, 1, 2].map((i) => ({ baseOffset: i * 10, nextOffset: i * 10 + 10, size: 100, appendedAt: (i + 1) * 1_000 }));
const unlimited = { retentionMs: -1, retentionBytes: -1 };

describe('retention', () => {
  it('removes nothing with both limits off (-1)', () => {
    expect(retentionStartOffset(batches, unlimited, 0, 1e12)).toBe(0);
  });

  it('by time, removes whole batches appended longer ago than retention.ms, oldest first', () => {
    expect(retentionStartOffset(batches, { ...unlimited, retentionMs: 1_500 }, 0, 3_500)).toBe(10);
    expect(retentionStartOffset(batches, { ...unlimited, retentionMs: 1_500 }, 0, 4_400)).toBe(20);
    // Exactly retention.ms old is kept; one ms more goes.
    expect(retentionStartOffset(batches, { ...unlimited, retentionMs: 2_000 }, 0, 3_000)).toBe(0);
    expect(retentionStartOffset(batches, { ...unlimited, retentionMs: 2_000 }, 0, 3_001)).toBe(10);
  });

  it('by size, removes the oldest while the partition holds more than retention.bytes', () => {
    expect(retentionStartOffset(batches, { ...unlimited, retentionBytes: 300 }, 0, 0)).toBe(0);
    expect(retentionStartOffset(batches, { ...unlimited, retentionBytes: 250 }, 0, 0)).toBe(10);
    expect(retentionStartOffset(batches, { ...unlimited, retentionBytes: 0 }, 0, 0)).toBe(30);
  });

  it('stops at the first batch neither limit removes, even if a later one is older (append order rules)', () => {
    const outOfOrder = [{ ...batches[0]!, appendedAt: 5_000 }, batches[1]!];
    expect(retentionStartOffset(outOfOrder, { ...unlimited, retentionMs: 1_000 }, 0, 5_500)).toBe(0);
  });

  it('never moves the log start offset backwards', () => {
    expect(retentionStartOffset(batches, unlimited, 25, 0)).toBe(25);
    expect(retentionStartOffset(batches, { ...unlimited, retentionBytes: 250 }, 15, 0)).toBe(15);
  });
});

import { describe, expect, it } from 'vitest';
import { inWindowBuffer, isLeaseLive, leaseHoldsOffset, popVisibleUntil, requireCurrentLease } from '../../../src/core/rules/leases.js';

const lease = { id: 'L1', owner: 'w', deadline: 1_000, fromOffset: 10, toOffset: 13 };

describe('native leases', () => {
  it('is live strictly before its deadline', () => {
    expect(isLeaseLive(lease, 999)).toBe(true);
    expect(isLeaseLive(lease, 1_000)).toBe(false);
    expect(isLeaseLive(null, 0)).toBe(false);
  });

  it('holds exactly the offsets it handed out, while live', () => {
    expect([9, 10, 12, 13].map((o) => leaseHoldsOffset(lease, o, 500))).toEqual([false, true, true, false]);
    expect(leaseHoldsOffset(lease, 10, 1_000)).toBe(false);
    expect(leaseHoldsOffset(undefined, 10, 0)).toBe(false);
  });

  it('refuses an ack naming a lease that is not the current live one, saying its messages come again', () => {
    expect(() => requireCurrentLease(lease, 'L1', 500, 'group "g" on q/0')).not.toThrow();
    for (const [held, id, now] of [[lease, 'L0', 500], [lease, 'L1', 1_000], [null, 'L1', 0]] as const) {
      expect(() => requireCurrentLease(held, id, now, 'group "g" on q/0')).toThrow(/is not the current lease of group "g" on q\/0.*delivered again/);
    }
  });

  it('delays records younger than delayedProcessing, and holds back a partition written within its window buffer', () => {
    expect(popVisibleUntil(0, 5_000)).toBe(Number.POSITIVE_INFINITY);
    expect(popVisibleUntil(2_000, 5_000)).toBe(3_000);
    expect(inWindowBuffer(0, 4_999, 5_000)).toBe(false);
    expect(inWindowBuffer(1_000, 4_500, 5_000)).toBe(true);
    expect(inWindowBuffer(1_000, 4_000, 5_000)).toBe(false);
    expect(inWindowBuffer(1_000, null, 5_000)).toBe(false);
  });
});

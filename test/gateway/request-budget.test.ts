import { describe, expect, it } from 'vitest';
import { RequestBudget } from '../../src/gateway/request-budget.js';

describe('RequestBudget', () => {
  it('grants room while it fits, queues the rest in arrival order, and admits them as bytes are released', () => {
    const budget = new RequestBudget(100);
    const granted: string[] = [];
    expect(budget.request(60, () => granted.push('first'))).toBe(true);
    expect(budget.request(50, () => granted.push('big'))).toBe(false);
    // Would fit, but waits behind the larger request that came first.
    expect(budget.request(10, () => granted.push('small'))).toBe(false);
    budget.release(60);
    expect(granted).toEqual(['big', 'small']);
    expect(budget.heldBytes).toBe(60);
  });

  it('lets any single frame in when nothing is held, so a frame up to the limit always fits', () => {
    const budget = new RequestBudget(100);
    expect(budget.request(500, () => {})).toBe(true);
    expect(budget.request(1, () => {})).toBe(false);
  });

  it('a request for 0 bytes waits only for the total to be back under the cap', () => {
    const budget = new RequestBudget(100);
    budget.hold(150);
    let resumed = false;
    expect(budget.request(0, () => (resumed = true))).toBe(false);
    budget.release(40);
    expect(resumed, 'still 110 of 100').toBe(false);
    budget.release(20);
    expect(resumed).toBe(true);
  });

  it('a cancelled waiter is never granted, and does not hold back the one behind it', () => {
    const budget = new RequestBudget(100);
    budget.hold(90);
    const granted: string[] = [];
    const gone = () => granted.push('gone');
    budget.request(50, gone);
    budget.request(5, () => granted.push('next'));
    budget.cancel(gone);
    expect(granted).toEqual(['next']);
  });
});

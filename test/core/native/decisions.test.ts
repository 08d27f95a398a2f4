import { describe, expect, it } from 'vitest';
import type { AckRequest } from '../../../src/core/core.js';
import { afterAck, applyAck, resolveAck, type AckView } from '../../../src/core/native/ack.js';
import { popPosition, popReady } from '../../../src/core/native/pop.js';
import { resolveQueueConfig } from '../../../src/core/rules/config.js';

/**
 * The core's native decisions (src/core/native/) on their own, for what the
 * behaviour suite (../behaviour-native.ts) reaches only through a compacted
 * or copied log: acks over a lease whose offsets have gaps, and the lease and
 * position checks a pop makes per partition.
 */

const NOW = 1_700_000_000_000;
const ack = (offset: number, status: AckRequest['status'] = 'completed'): AckRequest => ({ queue: 'q', partition: 'p', consumerGroup: 'g', offset, status });
const view = (delivered: number[] | null, committed: number | null = null): AckView<string> => ({
  partition: 'handle',
  queue: 'q',
  index: 0,
  committed,
  lease: { id: 'lease-1', owner: 'w', deadline: NOW + 1000, fromOffset: 10, toOffset: 20, acked: [], delivered },
});

describe('native ack decision', () => {
  it('moves the position over acked offsets and over the gaps a compacted lease never handed out', () => {
    let current = view([10, 12, 19]);
    const first = applyAck(current, ack(12), NOW);
    // Offset 10 is not acked yet: the position stays at 10, 12 is remembered.
    expect(first).toEqual({ acked: true, write: { partition: 'handle', queue: 'q', index: 0, group: 'g', position: 10, lease: [12] } });
    current = afterAck(current, first.write);
    const second = applyAck(current, ack(10), NOW);
    // 10 and 12 done, 11 never delivered: the group now waits on 19.
    expect(second.write).toMatchObject({ position: 19, lease: [] });
    current = afterAck(current, second.write);
    const last = applyAck(current, ack(19), NOW);
    expect(last.write).toMatchObject({ position: 20, lease: 'drop' });
    expect(applyAck(afterAck(current, last.write), ack(19), NOW)).toEqual({ acked: false, write: null });
  });

  it('answers acked: false, writing nothing, for an offset the lease did not hand out or after it ran out', () => {
    expect(applyAck(view(null), ack(25), NOW)).toEqual({ acked: false, write: null });
    expect(applyAck(view(null), ack(12), NOW + 1000)).toEqual({ acked: false, write: null });
  });

  it('ends the lease on a failed ack and leaves the position where it was', () => {
    expect(applyAck(view(null, 10), ack(15, 'failed'), NOW).write).toMatchObject({ position: null, lease: 'drop' });
  });

  it('fails the call when the ack names a lease that is not the current one, or a queue or partition that is not there', () => {
    expect(() => resolveAck(view(null), { ...ack(12), leaseId: 'lease-0' }, NOW)).toThrow(/Lease lease-0 is not the current lease of group "g" on q\/p/);
    expect(() => resolveAck({ missing: 'unknown_queue' }, ack(1), NOW)).toThrow('Queue "q" does not exist; create it first.');
    expect(() => resolveAck({ missing: 'unknown_partition' }, ack(1), NOW)).toThrow('Queue "q" has no partition named "p".');
  });
});

describe('native pop decisions', () => {
  const config = resolveQueueConfig({ windowBufferMs: 500 });

  it('passes a partition over while the group holds a live lease there, and drops one that ran out', () => {
    expect(popPosition({ deadline: NOW + 1 }, 3, 0, 10, NOW)).toEqual({ dropExpired: false, idle: false, position: null });
    expect(popPosition({ deadline: NOW }, 3, 0, 10, NOW)).toEqual({ dropExpired: true, idle: false, position: 3 });
  });

  it('reads from the committed position or the log start, and not at all when nothing is past it', () => {
    expect(popPosition(null, null, 4, 10, NOW).position).toBe(4);
    expect(popPosition(null, 10, 4, 10, NOW).position).toBeNull();
    // Nothing past the position and no live lease: no work there until an append or the position moves back.
    expect(popPosition(null, 10, 4, 10, NOW).idle).toBe(true);
    expect(popPosition({ deadline: NOW }, 10, 4, 10, NOW)).toEqual({ dropExpired: true, idle: true, position: null });
  });

  it('hands nothing out at the last stable offset, nor inside the window buffer', () => {
    expect(popReady(5, 5, config, null, NOW)).toBe(false);
    expect(popReady(5, 6, config, NOW - 100, NOW)).toBe(false);
    expect(popReady(5, 6, config, NOW - 600, NOW)).toBe(true);
  });
});

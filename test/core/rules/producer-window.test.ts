import { describe, expect, it } from 'vitest';
import { advance, checkPartitionSequences, checkSequence, lastSequenceOf, MAX_SEQUENCE, type ProducerWindow } from '../../../src/core/rules/producer-window.js';

const batch = (baseSequence: number, records = 1, producerEpoch = 0) => ({ producerId: 7, producerEpoch, baseSequence, lastOffsetDelta: records - 1 });

describe('producer window', () => {
  it('wraps the sequence to 0 after int32 max, as Kafka does', () => {
    expect(lastSequenceOf({ baseSequence: MAX_SEQUENCE - 1, lastOffsetDelta: 3 })).toBe(1);
    const window = advance(null, batch(0), 0, 0);
    const nearEnd: ProducerWindow = { ...window, batches: [{ firstSeq: MAX_SEQUENCE - 2, lastSeq: MAX_SEQUENCE, baseOffset: 10 }] };
    expect(checkSequence(nearEnd, batch(0)).kind).toBe('accept');
    expect(checkSequence(nearEnd, batch(MAX_SEQUENCE + 1 - 1)).kind).toBe('out_of_order_sequence');
  });

  it('retains exactly the last five batches', () => {
    let window: ProducerWindow | null = null;
    for (let seq = 0; seq < 7; seq++) window = advance(window, batch(seq), seq * 10, 0);
    expect(window!.batches.map((b) => b.firstSeq)).toEqual([2, 3, 4, 5, 6]);
    expect(checkSequence(window, batch(2))).toEqual({ kind: 'duplicate', baseOffset: 20 });
    expect(checkSequence(window, batch(1)).kind).toBe('out_of_order_sequence');
  });

  it('forgets the old epoch\'s batches when a new epoch starts', () => {
    const old = advance(null, batch(0, 3), 0, 0);
    const bumped = advance(old, batch(0, 1, 1), 3, 0);
    expect(bumped).toMatchObject({ producerEpoch: 1, batches: [{ firstSeq: 0, lastSeq: 0, baseOffset: 3 }] });
  });

  it('checks several batches of one append in order, each against the window the earlier ones leave', () => {
    const none = () => null;
    expect(checkPartitionSequences([batch(0, 2), batch(2)], none).kind).toBe('append');
    expect(checkPartitionSequences([batch(0, 2), batch(3)], none).kind).toBe('out_of_order_sequence');
    const stored = advance(advance(null, batch(0, 2), 0, 0), batch(2), 2, 0);
    expect(checkPartitionSequences([batch(0, 2), batch(2)], () => stored)).toEqual({ kind: 'duplicate', baseOffset: 0 });
    expect(checkPartitionSequences([batch(2), batch(3)], () => stored).kind).toBe('out_of_order_sequence');
  });

  it('does not check producer id -1', () => {
    expect(checkSequence(null, { producerId: -1, producerEpoch: -1, baseSequence: -1, lastOffsetDelta: 0 }).kind).toBe('accept');
  });
});

import { describe, expect, it } from 'vitest';
import { MAX_PARTITIONS, requireArray, requireCommittedOffset, requireFiniteNumber, requireInteger, requireJsonValue, requirePartitionCount } from '../../../src/core/rules/arguments.js';

/** The refusal a caller gets: an invalid_argument CoreError whose sentence names the field. */
const refused = (call: () => unknown) => {
  try {
    call();
  } catch (e) {
    return { code: (e as { code?: string }).code, message: (e as Error).message };
  }
  throw new Error('the call was accepted');
};

describe('argument checks', () => {
  it('accepts integers within range and names the field and the rule in every refusal', () => {
    expect(requireInteger(0, 'offset')).toBe(0);
    expect(requireInteger(5, 'batch', 1, 10)).toBe(5);
    expect(refused(() => requireInteger(-1, 'offset'))).toEqual({ code: 'invalid_argument', message: 'offset must be zero or more; got -1.' });
    expect(refused(() => requireInteger(0, 'batch', 1))).toMatchObject({ message: 'batch must be at least 1; got 0.' });
    expect(refused(() => requireInteger(11, 'batch', 1, 10))).toMatchObject({ message: 'batch must be at most 10; got 11.' });
    expect(refused(() => requireInteger(1.5, 'offset'))).toMatchObject({ message: 'offset must be an integer; got 1.5.' });
    expect(refused(() => requireInteger('7', 'offset'))).toMatchObject({ message: 'offset must be an integer; got "7".' });
    expect(refused(() => requireInteger(2 ** 53, 'offset'))).toMatchObject({ message: /must be an integer/ });
    expect(refused(() => requireInteger(undefined, 'offset'))).toMatchObject({ message: 'offset must be an integer; got undefined.' });
  });

  it('lets a committed offset be negative, as the reset tools commit -1 and -2', () => {
    expect(requireCommittedOffset(-2, 'offset')).toBe(-2);
    expect(requireCommittedOffset(-1, 'offset')).toBe(-1);
    expect(refused(() => requireCommittedOffset(0.5, 'offset'))).toMatchObject({ code: 'invalid_argument' });
  });

  it('bounds partition counts to 1..MAX_PARTITIONS', () => {
    expect(requirePartitionCount(1)).toBe(1);
    expect(requirePartitionCount(MAX_PARTITIONS)).toBe(MAX_PARTITIONS);
    expect(refused(() => requirePartitionCount(0))).toMatchObject({ message: 'partitions must be at least 1; got 0.' });
    expect(refused(() => requirePartitionCount(MAX_PARTITIONS + 1, 'count'))).toMatchObject({ message: `count must be at most ${MAX_PARTITIONS}; got ${MAX_PARTITIONS + 1}.` });
  });

  it('refuses non-finite numbers and non-arrays', () => {
    expect(requireFiniteNumber(-0.25, 'by')).toBe(-0.25);
    expect(refused(() => requireFiniteNumber(Number.NaN, 'by'))).toMatchObject({ message: 'by must be a finite number; got NaN.' });
    expect(refused(() => requireFiniteNumber(Number.POSITIVE_INFINITY, 'by'))).toMatchObject({ message: /finite number; got Infinity/ });
    expect(requireArray([1], 'items')).toEqual([1]);
    expect(refused(() => requireArray({ length: 1 }, 'items'))).toMatchObject({ message: 'items must be an array; got {"length":1}.' });
  });

  it('answers a JSON value as its text, and refuses what JSON cannot carry', () => {
    expect(requireJsonValue({ a: [1, 'x'] }, 'payload')).toBe('{"a":[1,"x"]}');
    expect(requireJsonValue(null, 'payload')).toBe('null');
    expect(refused(() => requireJsonValue(undefined, 'payload'))).toMatchObject({ message: 'payload must be a JSON value (not undefined, a function or a symbol); got "undefined".' });
    expect(refused(() => requireJsonValue(() => 1, 'payload'))).toMatchObject({ code: 'invalid_argument' });
    const cycle: Record<string, unknown> = {};
    cycle['self'] = cycle;
    expect(refused(() => requireJsonValue(cycle, 'payload'))).toMatchObject({ message: /payload must be a JSON value: .*circular/i });
    expect(refused(() => requireJsonValue(10n, 'payload'))).toMatchObject({ message: /payload must be a JSON value: .*BigInt/i });
  });
});

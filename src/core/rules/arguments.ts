import { CoreError } from '../errors.js';

/**
 * Range checks for the numbers callers pass: counts, offsets, sizes, waits.
 * A failed check is a CoreError('invalid_argument') that names the field, so
 * the whole call fails before anything is written.
 */

export const MAX_PARTITIONS = 10_000;

function fail(field: string, rule: string, value: unknown): never {
  const shown = typeof value === 'number' || typeof value === 'bigint' ? String(value) : JSON.stringify(value) ?? String(value);
  throw new CoreError('invalid_argument', `${field} must be ${rule}; got ${shown}.`);
}

/** An integer ≥ min (default 0). */
export function requireInteger(value: unknown, field: string, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) fail(field, 'an integer', value);
  if (value < min) fail(field, min === 0 ? 'zero or more' : `at least ${min}`, value);
  if (value > max) fail(field, `at most ${max}`, value);
  return value;
}

/**
 * A committed group offset: any integer, as Kafka's coordinator stores it.
 * Tools commit the logical offsets -1 (latest) and -2 (earliest) to reset a
 * group (kafkajs admin.resetOffsets), and consumers read them back as they
 * wrote them and apply their reset policy; a native reader starts at the log
 * start from any offset below it.
 */
export function requireCommittedOffset(value: unknown, field: string): number {
  return requireInteger(value, field, Number.MIN_SAFE_INTEGER);
}

export function requireFiniteNumber(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) fail(field, 'a finite number', value);
  return value;
}

export function requirePartitionCount(value: unknown, field = 'partitions'): number {
  return requireInteger(value, field, 1, MAX_PARTITIONS);
}

export function requireArray<T>(value: unknown, field: string): T[] {
  if (!Array.isArray(value)) fail(field, 'an array', value);
  return value as T[];
}

/** A value that survives a JSON round trip unchanged in meaning: what jsonb stores. */
export function requireJsonValue(value: unknown, field: string): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (e) {
    throw new CoreError('invalid_argument', `${field} must be a JSON value: ${(e as Error).message}.`);
  }
  if (text === undefined) fail(field, 'a JSON value (not undefined, a function or a symbol)', typeof value);
  return text;
}

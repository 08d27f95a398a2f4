import { CoreError } from '../errors.js';
import type { KvEntry, KvPutResult, Lifetime } from '../core.js';
import { requireFiniteNumber, requireInteger, requireJsonValue } from './arguments.js';
import { validateKvKey, validateKvNamespace } from './names.js';

/**
 * KV semantics both engines share: lifetimes, expiry, versions, and what a
 * put, putIfAbsent or incr decides given the entry as it stands. An expired
 * entry is absent: reads miss it, putIfAbsent wins over it, and a write over it
 * starts again at version 1. Engines read the current entry under their lock,
 * call these, and store what comes back.
 */

/** `once` markers store this value; what matters is that the key exists. */
export const ONCE_MARKER_VALUE = true;

export function validateLifetime(lifetime: unknown, field = 'lifetime'): Lifetime {
  if (typeof lifetime !== 'object' || lifetime === null) {
    throw new CoreError('invalid_argument', `${field} must be { ttlMs } or { forever: true }.`);
  }
  const hasTtl = 'ttlMs' in lifetime && (lifetime as { ttlMs?: unknown }).ttlMs !== undefined;
  const forever = (lifetime as { forever?: unknown }).forever;
  if (hasTtl && forever !== undefined) {
    throw new CoreError('invalid_argument', `${field} gives both ttlMs and forever; give exactly one.`);
  }
  if (hasTtl) return { ttlMs: requireInteger((lifetime as { ttlMs: unknown }).ttlMs, `${field}.ttlMs`, 1) };
  if (forever === true) return { forever: true };
  throw new CoreError('invalid_argument', `${field} must be { ttlMs } with a positive number of milliseconds, or { forever: true }.`);
}

export function validateOptionalLifetime(lifetime: unknown, field = 'lifetime'): Lifetime | undefined {
  return lifetime === undefined ? undefined : validateLifetime(lifetime, field);
}

export function validateExpectedVersion(version: unknown, field = 'expectedVersion'): number | undefined {
  return version === undefined ? undefined : requireInteger(version, field, 0);
}

/** Epoch ms the entry expires at, or null for forever. */
export function expiresAtOf(lifetime: Lifetime | undefined, nowMs: number): number | null {
  return lifetime && 'ttlMs' in lifetime ? nowMs + lifetime.ttlMs : null;
}

export function isLive(entry: KvEntry | null | undefined, nowMs: number): entry is KvEntry {
  return !!entry && (entry.expiresAt === null || entry.expiresAt > nowMs);
}

/** The entry as a caller may see it: null once expired. */
export function liveOrNull(entry: KvEntry | null | undefined, nowMs: number): KvEntry | null {
  return isLive(entry, nowMs) ? entry : null;
}

/** A stored copy of a JSON value, so later changes to the caller's object do not reach the store. */
export function storedValue(value: unknown, field = 'value'): unknown {
  return JSON.parse(requireJsonValue(value, field));
}

export interface KvWrite {
  ns: string;
  key: string;
  value: unknown;
  lifetime?: Lifetime;
  expectedVersion?: number;
}

/** A put: applies when there is no expectedVersion or it equals the live entry's version (0 = absent). */
export function decidePut(current: KvEntry | null, write: KvWrite, nowMs: number): KvPutResult {
  const live = liveOrNull(current, nowMs);
  if (write.expectedVersion !== undefined && write.expectedVersion !== (live?.version ?? 0)) {
    return { applied: false, entry: live };
  }
  return {
    applied: true,
    entry: {
      ns: write.ns,
      key: write.key,
      value: storedValue(write.value),
      version: (live?.version ?? 0) + 1,
      expiresAt: expiresAtOf(write.lifetime, nowMs),
    },
  };
}

export function decidePutIfAbsent(current: KvEntry | null, write: Omit<KvWrite, 'expectedVersion'>, nowMs: number): KvPutResult {
  return decidePut(current, { ...write, expectedVersion: 0 }, nowMs);
}

/**
 * An increment: an absent entry counts from 0. Without a lifetime the entry
 * keeps its expiry (a new one lives forever).
 */
export function decideIncr(current: KvEntry | null, req: { ns: string; key: string; by: number | bigint; lifetime?: Lifetime }, nowMs: number): KvEntry {
  const by = requireIncrement(req.by);
  const live = liveOrNull(current, nowMs);
  if (live && typeof live.value !== 'number' && typeof live.value !== 'bigint') {
    throw new CoreError('invalid_argument', `KV entry ${req.ns}/${req.key} holds a ${typeof live.value}, not a number; it cannot be incremented.`);
  }
  return {
    ns: req.ns,
    key: req.key,
    value: addExactly((live?.value as number | bigint | undefined) ?? 0, by),
    version: (live?.version ?? 0) + 1,
    expiresAt: req.lifetime ? expiresAtOf(req.lifetime, nowMs) : (live?.expiresAt ?? null),
  };
}

/**
 * An increment: a finite number, or a bigint from an in-process caller. An
 * integer beyond 2^53-1 as a JS number has already lost its exact value
 * (JSON parsers read it as a double), so it is refused rather than added.
 */
function requireIncrement(by: unknown): number | bigint {
  if (typeof by === 'bigint') return by;
  const n = requireFiniteNumber(by, 'by');
  if (Number.isInteger(n) && !Number.isSafeInteger(n)) {
    throw new CoreError('invalid_argument', `by is ${n}, beyond 2^53-1: a number that large has lost its exact value before it arrived; increment in steps of at most 9007199254740991.`);
  }
  return n;
}

/**
 * Counters are exact: integers add as integers, however large; a sum beyond
 * 2^53-1 is a bigint (stored and answered as its exact digits), one within
 * it a number. A fraction on either side makes it a floating-point sum.
 */
function addExactly(a: number | bigint, b: number | bigint): number | bigint {
  const integral = (v: number | bigint) => typeof v === 'bigint' || Number.isInteger(v);
  if (!integral(a) || !integral(b)) return Number(a) + Number(b);
  const sum = BigInt(a) + BigInt(b);
  return sum >= BigInt(Number.MIN_SAFE_INTEGER) && sum <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(sum) : sum;
}

/** A KV value as JSON text for storage; a bigint counter as its exact digits. */
export function kvValueToJson(value: unknown): string {
  return typeof value === 'bigint' ? value.toString() : JSON.stringify(value);
}

/** A stored KV value from its JSON text; an integer beyond 2^53-1 comes back as an exact bigint. */
export function kvValueFromJson(text: string): unknown {
  if (/^-?\d+$/.test(text)) {
    const n = Number(text);
    return Number.isSafeInteger(n) ? n : BigInt(text);
  }
  return JSON.parse(text);
}

/** A put's or putIfAbsent's fields, checked (the expected version separately). */
export function checkKvWrite(req: { ns: string; key: string; value: unknown; lifetime?: unknown }): Omit<KvWrite, 'expectedVersion'> {
  const ns = validateKvNamespace(req?.ns);
  const key = validateKvKey(req.key);
  const lifetime = validateOptionalLifetime(req.lifetime);
  return lifetime ? { ns, key, value: req.value, lifetime } : { ns, key, value: req.value };
}

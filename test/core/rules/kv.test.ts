import { describe, expect, it } from 'vitest';
import type { KvEntry } from '../../../src/core/core.js';
import { checkKvWrite, decideIncr, decidePut, decidePutIfAbsent, kvValueFromJson, kvValueToJson, liveOrNull, validateLifetime } from '../../../src/core/rules/kv.js';

const entry = (over: Partial<KvEntry> = {}): KvEntry => ({ ns: 'app', key: 'k', value: 1, version: 3, expiresAt: null, ...over });

describe('KV decisions both engines share', () => {
  it('a lifetime is a positive ttlMs or forever, exactly one of them', () => {
    expect(validateLifetime({ ttlMs: 5 })).toEqual({ ttlMs: 5 });
    expect(validateLifetime({ forever: true })).toEqual({ forever: true });
    expect(() => validateLifetime({ ttlMs: 5, forever: true })).toThrow('lifetime gives both ttlMs and forever; give exactly one.');
    expect(() => validateLifetime({ ttlMs: 0 })).toThrow('lifetime.ttlMs must be at least 1; got 0.');
    expect(() => validateLifetime({ forever: false })).toThrow(/must be \{ ttlMs \}.*or \{ forever: true \}/);
    expect(() => validateLifetime(null, 'ttl')).toThrow('ttl must be { ttlMs } or { forever: true }.');
  });

  it('an expired entry is absent: a read misses it and a write over it starts again at version 1', () => {
    const expired = entry({ expiresAt: 1_000 });
    expect(liveOrNull(expired, 999)).toBe(expired);
    expect(liveOrNull(expired, 1_000)).toBeNull();
    expect(decidePut(expired, { ns: 'app', key: 'k', value: 'new' }, 2_000)).toEqual({ applied: true, entry: { ns: 'app', key: 'k', value: 'new', version: 1, expiresAt: null } });
    expect(decidePutIfAbsent(expired, { ns: 'app', key: 'k', value: 'mine', lifetime: { ttlMs: 10 } }, 2_000)).toMatchObject({ applied: true, entry: { version: 1, expiresAt: 2_010 } });
  });

  it('a put with expectedVersion applies only on that version (0: absent), and answers the live entry when it does not', () => {
    const live = entry();
    expect(decidePut(live, { ns: 'app', key: 'k', value: 2, expectedVersion: 3 }, 0)).toMatchObject({ applied: true, entry: { value: 2, version: 4 } });
    expect(decidePut(live, { ns: 'app', key: 'k', value: 2, expectedVersion: 2 }, 0)).toEqual({ applied: false, entry: live });
    expect(decidePutIfAbsent(live, { ns: 'app', key: 'k', value: 2 }, 0)).toEqual({ applied: false, entry: live });
    expect(decidePut(null, { ns: 'app', key: 'k', value: 2, expectedVersion: 0 }, 0)).toMatchObject({ applied: true, entry: { version: 1 } });
  });

  it('stores a copy of the value, so later changes to the caller\'s object do not reach the store', () => {
    const value = { items: [1] };
    const decided = decidePut(null, { ns: 'app', key: 'k', value }, 0);
    value.items.push(2);
    expect(decided.entry!.value).toEqual({ items: [1] });
  });

  it('increments exactly, past 2^53 as a bigint, keeping the expiry unless a lifetime is given', () => {
    expect(decideIncr(null, { ns: 'app', key: 'n', by: 5 }, 0)).toEqual({ ns: 'app', key: 'n', value: 5, version: 1, expiresAt: null });
    const big = decideIncr(entry({ value: Number.MAX_SAFE_INTEGER, expiresAt: 50 }), { ns: 'app', key: 'k', by: 2 }, 0);
    expect(big).toMatchObject({ value: 9007199254740993n, version: 4, expiresAt: 50 });
    expect(decideIncr(entry({ value: 0.5 }), { ns: 'app', key: 'k', by: 0.25, lifetime: { ttlMs: 10 } }, 100)).toMatchObject({ value: 0.75, expiresAt: 110 });
    expect(() => decideIncr(entry({ value: 'text' }), { ns: 'app', key: 'k', by: 1 }, 0)).toThrow('KV entry app/k holds a string, not a number; it cannot be incremented.');
    expect(() => decideIncr(null, { ns: 'app', key: 'k', by: 2 ** 60 }, 0)).toThrow(/beyond 2\^53-1/);
  });

  it('stores counters past 2^53 as their exact digits and reads them back exactly', () => {
    expect(kvValueToJson(9007199254740993n)).toBe('9007199254740993');
    expect(kvValueFromJson('9007199254740993')).toBe(9007199254740993n);
    expect(kvValueFromJson('42')).toBe(42);
    expect(kvValueFromJson('{"a":1}')).toEqual({ a: 1 });
  });

  it('checks a write\'s namespace, key and lifetime', () => {
    expect(checkKvWrite({ ns: 'app', key: 'k', value: 1 })).toEqual({ ns: 'app', key: 'k', value: 1 });
    expect(checkKvWrite({ ns: 'app', key: 'k', value: 1, lifetime: { forever: true } })).toMatchObject({ lifetime: { forever: true } });
    expect(() => checkKvWrite({ ns: '', key: 'k', value: 1 })).toThrow(/namespace/i);
    expect(() => checkKvWrite({ ns: 'app', key: 'k', value: 1, lifetime: { ttlMs: -1 } })).toThrow(/ttlMs/);
  });
});

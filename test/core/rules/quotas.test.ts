import { describe, expect, it } from 'vitest';
import type { ClientQuotaEntry } from '../../../src/core/core.js';
import { applyQuotaAlterations, checkQuotaAlterations, checkQuotaEntity, quotaEntityKey } from '../../../src/core/rules/quotas.js';

describe('client quotas', () => {
  it('takes an entity naming a user, a client id, both, or their defaults (null)', () => {
    expect(checkQuotaEntity({ user: 'alice' }, 'e')).toEqual({ user: 'alice' });
    expect(checkQuotaEntity({ user: null, clientId: 'app' }, 'e')).toEqual({ user: null, clientId: 'app' });
    expect(() => checkQuotaEntity({}, 'e')).toThrow(/e names neither a user nor a client id/);
    expect(() => checkQuotaEntity({ ip: '1.2.3.4' }, 'e')).toThrow(/e has "ip"; a quota entity has only user and clientId/);
    expect(() => checkQuotaEntity({ user: '' }, 'e')).toThrow(/e\.user must be a non-empty string, or null for the default/);
    expect(() => checkQuotaEntity('alice', 'e')).toThrow(/e must be an object/);
  });

  it('keys a default apart from a name and from an absent component', () => {
    const keys = [{ user: 'alice' }, { user: null }, { clientId: 'alice' }, { user: 'alice', clientId: null }, { user: '<default>' }].map(quotaEntityKey);
    expect(new Set(keys).size).toBe(keys.length);
    expect(quotaEntityKey({ user: 'alice' })).toBe(quotaEntityKey({ user: 'alice' }));
  });

  it('checks every alteration: known keys, positive finite values, entity, and says which one is wrong', () => {
    const ok = checkQuotaAlterations({ alterations: [{ entity: { user: 'alice' }, set: { producer_byte_rate: 1024 }, remove: ['request_percentage'] }] });
    expect(ok).toEqual([{ entity: { user: 'alice' }, set: { producer_byte_rate: 1024 }, remove: ['request_percentage'] }]);
    const bad = (alteration: unknown) => () => checkQuotaAlterations({ alterations: [alteration] } as never);
    expect(bad({ entity: { user: 'a' }, set: { byte_rate: 1 } })).toThrow(/alterations\[0\]\.set key must be one of producer_byte_rate/);
    expect(bad({ entity: { user: 'a' }, set: { producer_byte_rate: 0 } })).toThrow(/producer_byte_rate must be a number above 0; got 0/);
    expect(bad({ entity: { user: 'a' }, set: { producer_byte_rate: Number.POSITIVE_INFINITY } })).toThrow(/above 0/);
    expect(bad({ entity: { user: 'a' }, remove: ['nope'] })).toThrow(/alterations\[0\]\.remove\[0\]/);
    expect(bad({ entity: {}, set: {} })).toThrow(/alterations\[0\]\.entity names neither/);
    expect(() => checkQuotaAlterations({} as never)).toThrow(/alterations/);
  });

  it('sets, replaces and removes values, and forgets an entity left with none', () => {
    const entries = new Map<string, ClientQuotaEntry>();
    const alice = { user: 'alice' };
    applyQuotaAlterations(entries, [{ entity: alice, set: { producer_byte_rate: 100, consumer_byte_rate: 200 }, remove: [] }]);
    applyQuotaAlterations(entries, [{ entity: alice, set: { producer_byte_rate: 300 }, remove: ['consumer_byte_rate'] }]);
    expect([...entries.values()]).toEqual([{ entity: alice, values: { producer_byte_rate: 300 } }]);
    applyQuotaAlterations(entries, [{ entity: alice, set: {}, remove: ['producer_byte_rate'] }]);
    expect(entries.size).toBe(0);
  });
});

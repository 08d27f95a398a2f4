import { describe, expect, it } from 'vitest';
import type { AclBinding, AclBindingFilter } from '../../../src/core/core.js';
import { aclBindingKey, checkAclBinding, checkAclBindings, checkAclFilters, filterMatches, patternCovers, sortAclBindings } from '../../../src/core/rules/acls.js';

const alice: AclBinding = { resourceType: 'TOPIC', resourceName: 'orders', patternType: 'LITERAL', principal: 'User:alice', host: '*', operation: 'READ', permission: 'ALLOW' };
const anyFilter: AclBindingFilter = { resourceType: 'ANY', resourceName: null, patternType: 'ANY', principal: null, host: null, operation: 'ANY', permission: 'ANY' };

describe('ACL bindings', () => {
  it('takes a binding as Kafka does and refuses each malformed field by name', () => {
    expect(checkAclBinding({ ...alice })).toEqual(alice);
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ resourceType: 'QUEUE' }, /binding\.resourceType must be one of TOPIC, GROUP/],
      [{ resourceName: '' }, /binding\.resourceName must be a non-empty string/],
      [{ resourceName: 'x'.repeat(32_768) }, /32768 characters; at most 32767/],
      [{ patternType: 'MATCH' }, /binding\.patternType must be one of LITERAL, PREFIXED/],
      [{ principal: 'alice' }, /must be TYPE:NAME/],
      [{ principal: 'User:' }, /must be TYPE:NAME/],
      [{ operation: 'ANY' }, /binding\.operation must be one of/],
      [{ permission: 'ANY' }, /binding\.permission must be one of ALLOW, DENY/],
      [{ resourceType: 'CLUSTER', resourceName: 'other' }, /CLUSTER binding names the literal resource "kafka-cluster"/],
    ];
    for (const [change, message] of cases) expect(() => checkAclBinding({ ...alice, ...change })).toThrow(message);
    expect(() => checkAclBinding(null)).toThrow(/binding must be an object/);
    expect(checkAclBinding({ ...alice, resourceType: 'CLUSTER', resourceName: 'kafka-cluster', operation: 'ALTER' }).resourceType).toBe('CLUSTER');
  });

  it('names the index of the bad binding in a list, and refuses a list that is not one', () => {
    expect(() => checkAclBindings([alice, { ...alice, host: '' }])).toThrow(/bindings\[1\]\.host/);
    expect(() => checkAclBindings('orders')).toThrow(/bindings/);
  });

  it('reads filters with ANY and MATCH and null for "any name/principal/host"', () => {
    const [f] = checkAclFilters([{ resourceType: 'ANY', patternType: 'MATCH', resourceName: 'orders', operation: 'ANY', permission: 'ANY' }]);
    expect(f).toEqual({ ...anyFilter, patternType: 'MATCH', resourceName: 'orders' });
    expect(() => checkAclFilters([{ ...anyFilter, permission: 'MAYBE' }])).toThrow(/filters\[0\]\.permission/);
    expect(() => checkAclFilters([{ ...anyFilter, principal: '' }])).toThrow(/filters\[0\]\.principal must be a non-empty string/);
  });

  it('keys equal bindings equally and different ones differently', () => {
    expect(aclBindingKey({ ...alice })).toBe(aclBindingKey(alice));
    expect(aclBindingKey({ ...alice, permission: 'DENY' })).not.toBe(aclBindingKey(alice));
    expect(aclBindingKey({ ...alice, patternType: 'PREFIXED' })).not.toBe(aclBindingKey(alice));
  });

  it('covers a name by its literal, by the wildcard and by a prefix', () => {
    expect(patternCovers({ patternType: 'LITERAL', resourceName: 'orders' }, 'orders')).toBe(true);
    expect(patternCovers({ patternType: 'LITERAL', resourceName: 'orders' }, 'orders-eu')).toBe(false);
    expect(patternCovers({ patternType: 'LITERAL', resourceName: '*' }, 'anything')).toBe(true);
    expect(patternCovers({ patternType: 'PREFIXED', resourceName: 'ord' }, 'orders')).toBe(true);
    expect(patternCovers({ patternType: 'PREFIXED', resourceName: 'ord' }, 'invoices')).toBe(false);
    // A PREFIXED "*" is a prefix of the character "*", not a wildcard, as in Kafka.
    expect(patternCovers({ patternType: 'PREFIXED', resourceName: '*' }, 'orders')).toBe(false);
  });

  it('selects with Kafka filter rules: exact fields, ANY, and MATCH over literal, wildcard and prefixes', () => {
    const wildcard: AclBinding = { ...alice, resourceName: '*' };
    const prefixed: AclBinding = { ...alice, resourceName: 'ord', patternType: 'PREFIXED' };
    const other: AclBinding = { ...alice, resourceName: 'invoices' };
    const group: AclBinding = { ...alice, resourceType: 'GROUP', resourceName: 'orders' };
    const all = [alice, wildcard, prefixed, other, group];
    const pick = (f: Partial<AclBindingFilter>) => all.filter((b) => filterMatches({ ...anyFilter, ...f }, b));
    expect(pick({})).toEqual(all);
    expect(pick({ resourceType: 'TOPIC', patternType: 'MATCH', resourceName: 'orders' })).toEqual([alice, wildcard, prefixed]);
    expect(pick({ patternType: 'LITERAL', resourceName: 'orders' })).toEqual([alice, group]);
    expect(pick({ patternType: 'PREFIXED' })).toEqual([prefixed]);
    expect(pick({ principal: 'User:bob' })).toEqual([]);
    expect(pick({ operation: 'WRITE' })).toEqual([]);
    expect(pick({ permission: 'ALLOW', host: '*' })).toEqual(all);
  });

  it('lists bindings in one order whatever order they were stored in', () => {
    const a = [{ ...alice, principal: 'User:zed' }, alice, { ...alice, resourceType: 'GROUP' as const }];
    const b = [a[2]!, a[0]!, a[1]!];
    expect(sortAclBindings([...a]).map(aclBindingKey)).toEqual(sortAclBindings([...b]).map(aclBindingKey));
  });
});

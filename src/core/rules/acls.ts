import {
  ACL_OPERATIONS,
  ACL_PATTERN_TYPES,
  ACL_RESOURCE_TYPES,
  type AclBinding,
  type AclBindingFilter,
} from '../core.js';
import { CoreError } from '../errors.js';
import { requireArray } from './arguments.js';

/**
 * ACL bindings as the core stores them: checked on the way in, each with a
 * stable key (so adding one twice stores it once), and the filter rule
 * DescribeAcls and DeleteAcls select with. Both engines use these, and the
 * gateway's DescribeAcls filters its cache with the same `filterMatches`.
 */

/** Kafka's wildcard resource name and principal. */
export const WILDCARD_RESOURCE = '*';
export const WILDCARD_PRINCIPAL = 'User:*';
export const WILDCARD_HOST = '*';

function invalid(message: string): never {
  throw new CoreError('invalid_argument', message);
}

function requireChoice<T extends string>(value: unknown, choices: readonly T[], field: string): T {
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    invalid(`${field} must be one of ${choices.join(', ')}; got ${JSON.stringify(value)}.`);
  }
  return value as T;
}

function requireText(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) invalid(`${field} must be a non-empty string; got ${JSON.stringify(value)}.`);
  if (value.length > 32_767) invalid(`${field} is ${value.length} characters; at most 32767 fit a Kafka string.`);
  return value;
}

/** A binding as Kafka's controller accepts it; anything else fails the whole call. */
export function checkAclBinding(value: unknown, field = 'binding'): AclBinding {
  if (typeof value !== 'object' || value === null) invalid(`${field} must be an object; got ${JSON.stringify(value)}.`);
  const b = value as Record<string, unknown>;
  const binding: AclBinding = {
    resourceType: requireChoice(b.resourceType, ACL_RESOURCE_TYPES, `${field}.resourceType`),
    resourceName: requireText(b.resourceName, `${field}.resourceName`),
    patternType: requireChoice(b.patternType, ACL_PATTERN_TYPES, `${field}.patternType`),
    principal: requireText(b.principal, `${field}.principal`),
    host: requireText(b.host, `${field}.host`),
    operation: requireChoice(b.operation, ACL_OPERATIONS, `${field}.operation`),
    permission: requireChoice(b.permission, ['ALLOW', 'DENY'] as const, `${field}.permission`),
  };
  const colon = binding.principal.indexOf(':');
  if (colon <= 0 || colon === binding.principal.length - 1) {
    invalid(`${field}.principal "${binding.principal}" must be TYPE:NAME, e.g. "User:alice" or "User:*".`);
  }
  if (binding.resourceType === 'CLUSTER' && (binding.resourceName !== 'kafka-cluster' || binding.patternType !== 'LITERAL')) {
    invalid(`${field}: a CLUSTER binding names the literal resource "kafka-cluster"; got ${binding.patternType} "${binding.resourceName}".`);
  }
  return binding;
}

export function checkAclBindings(value: unknown): AclBinding[] {
  return requireArray<unknown>(value, 'bindings').map((b, i) => checkAclBinding(b, `bindings[${i}]`));
}

export function checkAclFilters(value: unknown): AclBindingFilter[] {
  return requireArray<unknown>(value, 'filters').map((v, i) => {
    const field = `filters[${i}]`;
    if (typeof v !== 'object' || v === null) invalid(`${field} must be an object; got ${JSON.stringify(v)}.`);
    const f = v as Record<string, unknown>;
    const nullableText = (x: unknown, name: string) => (x === null || x === undefined ? null : requireText(x, `${field}.${name}`));
    return {
      resourceType: requireChoice(f.resourceType, [...ACL_RESOURCE_TYPES, 'ANY'] as const, `${field}.resourceType`),
      resourceName: nullableText(f.resourceName, 'resourceName'),
      patternType: requireChoice(f.patternType, [...ACL_PATTERN_TYPES, 'ANY', 'MATCH'] as const, `${field}.patternType`),
      principal: nullableText(f.principal, 'principal'),
      host: nullableText(f.host, 'host'),
      operation: requireChoice(f.operation, [...ACL_OPERATIONS, 'ANY'] as const, `${field}.operation`),
      permission: requireChoice(f.permission, ['ALLOW', 'DENY', 'ANY'] as const, `${field}.permission`),
    };
  });
}

/** One string per binding: equal bindings, equal keys. */
export function aclBindingKey(b: AclBinding): string {
  return JSON.stringify([b.resourceType, b.patternType, b.resourceName, b.principal, b.host, b.operation, b.permission]);
}

/** Whether a binding's pattern covers a resource name (LITERAL: the name or "*"; PREFIXED: a prefix of it). */
export function patternCovers(binding: Pick<AclBinding, 'patternType' | 'resourceName'>, name: string): boolean {
  if (binding.patternType === 'PREFIXED') return name.startsWith(binding.resourceName);
  return binding.resourceName === name || binding.resourceName === WILDCARD_RESOURCE;
}

/** Kafka's AclBindingFilter.matches. */
export function filterMatches(filter: AclBindingFilter, b: AclBinding): boolean {
  if (filter.resourceType !== 'ANY' && filter.resourceType !== b.resourceType) return false;
  if (filter.patternType === 'MATCH') {
    // Every binding that applies to the named resource: its literal, the wildcard, and the prefixes.
    if (filter.resourceName !== null && !patternCovers(b, filter.resourceName)) return false;
  } else {
    if (filter.patternType !== 'ANY' && filter.patternType !== b.patternType) return false;
    if (filter.resourceName !== null && filter.resourceName !== b.resourceName) return false;
  }
  if (filter.principal !== null && filter.principal !== b.principal) return false;
  if (filter.host !== null && filter.host !== b.host) return false;
  if (filter.operation !== 'ANY' && filter.operation !== b.operation) return false;
  if (filter.permission !== 'ANY' && filter.permission !== b.permission) return false;
  return true;
}

/** Bindings in a stable order (resource, then principal, host, operation, permission), as listings show them. */
export function sortAclBindings(bindings: AclBinding[]): AclBinding[] {
  return bindings.sort((a, b) => (aclBindingKey(a) < aclBindingKey(b) ? -1 : aclBindingKey(a) > aclBindingKey(b) ? 1 : 0));
}

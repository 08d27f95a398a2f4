import { ErrorCode } from '../../protocol/error-codes.js';
import { type AclBinding, type AclBindingFilter, checkAclBinding, checkAclFilters, isCoreError } from '../core/index.js';
import { CLUSTER_NAME, nameOfCode, OPERATION_CODES, PATTERN_TYPE_CODES, PERMISSION_CODES, RESOURCE_TYPE_CODES } from '../access/acl-operations.js';
import type { HandlerContext } from './handler.js';

/**
 * ACL bindings and filters between Kafka's wire form (int8 codes, shared by
 * CreateAcls, DescribeAcls and DeleteAcls) and the core's, plus the answer
 * every ACL API gives when the authorizer is off or the principal may not
 * use it.
 */

/** The fields a binding or a filter carries on the wire (filters name them ...Filter). */
export interface WireBinding {
  resourceType: number;
  resourceName: string | null;
  patternType: number;
  principal: string | null;
  host: string | null;
  operation: number;
  permissionType: number;
}

function invalidRequest(message: string): never {
  throw new WireAclError(message);
}

/** A binding or filter a request carries that cannot be one: answered INVALID_REQUEST with this message. */
export class WireAclError extends Error {
  override readonly name = 'WireAclError';
  readonly errorCode = ErrorCode.INVALID_REQUEST;
}

function named<T extends string>(table: Readonly<Record<T, number>>, code: number, what: string): T {
  const name = nameOfCode(table, code);
  if (name === undefined) invalidRequest(`${what} ${code} is not one Kafka defines.`);
  return name;
}

/** Checks a core rule, turning its refusal into the wire's INVALID_REQUEST. */
function checked<T>(check: () => T): T {
  try {
    return check();
  } catch (e) {
    if (isCoreError(e)) invalidRequest(e.message);
    throw e;
  }
}

export function bindingFromWire(w: WireBinding): AclBinding {
  const resourceType = named(RESOURCE_TYPE_CODES, w.resourceType, 'Resource type');
  const patternType = named(PATTERN_TYPE_CODES, w.patternType, 'Pattern type');
  const operation = named(OPERATION_CODES, w.operation, 'Operation');
  const permission = named(PERMISSION_CODES, w.permissionType, 'Permission type');
  if (resourceType === 'ANY' || patternType === 'ANY' || patternType === 'MATCH' || operation === 'ANY' || permission === 'ANY') {
    invalidRequest('An ACL to create names a resource type, a LITERAL or PREFIXED pattern, an operation and ALLOW or DENY; ANY and MATCH are for filters.');
  }
  return checked(() => checkAclBinding({ resourceType, resourceName: w.resourceName, patternType, principal: w.principal, host: w.host, operation, permission }, 'ACL'));
}

export function filterFromWire(w: WireBinding): AclBindingFilter {
  const filter = {
    resourceType: named(RESOURCE_TYPE_CODES, w.resourceType, 'Resource type'),
    resourceName: w.resourceName,
    patternType: named(PATTERN_TYPE_CODES, w.patternType, 'Pattern type'),
    principal: w.principal,
    host: w.host,
    operation: named(OPERATION_CODES, w.operation, 'Operation'),
    permission: named(PERMISSION_CODES, w.permissionType, 'Permission type'),
  };
  return checked(() => checkAclFilters([filter])[0]!);
}

/** A stored binding on the wire: unlike a filter's, its name, principal and host are always there. */
export function bindingToWire(b: AclBinding): WireBinding & { resourceName: string; principal: string; host: string } {
  return {
    resourceType: RESOURCE_TYPE_CODES[b.resourceType],
    resourceName: b.resourceName,
    patternType: PATTERN_TYPE_CODES[b.patternType],
    principal: b.principal,
    host: b.host,
    operation: OPERATION_CODES[b.operation],
    permissionType: PERMISSION_CODES[b.permission],
  };
}

/**
 * Why this request may not use an ACL API, or null when it may: the
 * authorizer must be on (else SECURITY_DISABLED, Kafka's answer without one)
 * and the principal needs `operation` on the cluster (ALTER to change ACLs,
 * DESCRIBE to list them).
 */
export function aclApiRefusal(ctx: HandlerContext, operation: 'ALTER' | 'DESCRIBE'): { errorCode: number; errorMessage: string } | null {
  if (!ctx.authorizer.enabled) {
    return { errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: 'No authorizer is configured on this gateway; start it with --authorizer to use ACLs.' };
  }
  if (!ctx.access.allows(operation, 'CLUSTER', CLUSTER_NAME)) {
    return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: `Not authorized: this needs ${operation} on the cluster.` };
  }
  return null;
}

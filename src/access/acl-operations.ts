import { ErrorCode } from '../../protocol/error-codes.js';
import type { AclOperation, AclPatternType, AclPermission, AclResourceType } from '../core/index.js';

/**
 * Kafka's ACL vocabulary on the wire: the int8 codes of resource types,
 * pattern types, operations and permissions (CreateAcls, DescribeAcls,
 * DeleteAcls), which operations each resource type has (the authorized
 * operations bit fields of Metadata, DescribeCluster, DescribeGroups,
 * DescribeTopicPartitions: one bit per operation code), and the error code a
 * refusal on each resource type answers.
 */

export const RESOURCE_TYPE_CODES: Readonly<Record<AclResourceType | 'ANY', number>> = {
  ANY: 1, TOPIC: 2, GROUP: 3, CLUSTER: 4, TRANSACTIONAL_ID: 5, DELEGATION_TOKEN: 6, USER: 7,
};
export const PATTERN_TYPE_CODES: Readonly<Record<AclPatternType | 'ANY' | 'MATCH', number>> = { ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 };
export const OPERATION_CODES: Readonly<Record<AclOperation | 'ANY', number>> = {
  ANY: 1, ALL: 2, READ: 3, WRITE: 4, CREATE: 5, DELETE: 6, ALTER: 7, DESCRIBE: 8, CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10, ALTER_CONFIGS: 11, IDEMPOTENT_WRITE: 12, CREATE_TOKENS: 13, DESCRIBE_TOKENS: 14, TWO_PHASE_COMMIT: 15,
};
export const PERMISSION_CODES: Readonly<Record<AclPermission | 'ANY', number>> = { ANY: 1, DENY: 2, ALLOW: 3 };

/** The name a wire code stands for in one of the tables above, or undefined (UNKNOWN, or a code Kafka has not defined). */
export function nameOfCode<T extends string>(table: Readonly<Record<T, number>>, code: number): T | undefined {
  return (Object.keys(table) as T[]).find((name) => table[name] === code);
}

/** Kafka's one cluster resource name. */
export const CLUSTER_NAME = 'kafka-cluster';

/** The operations each resource type has, as Kafka's authorized-operations fields list them. */
export const RESOURCE_OPERATIONS: Readonly<Record<AclResourceType, readonly AclOperation[]>> = {
  TOPIC: ['READ', 'WRITE', 'CREATE', 'DELETE', 'ALTER', 'DESCRIBE', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS'],
  CLUSTER: ['CREATE', 'ALTER', 'DESCRIBE', 'CLUSTER_ACTION', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS', 'IDEMPOTENT_WRITE'],
  GROUP: ['READ', 'DELETE', 'DESCRIBE', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS'],
  TRANSACTIONAL_ID: ['WRITE', 'DESCRIBE', 'TWO_PHASE_COMMIT'],
  DELEGATION_TOKEN: ['DESCRIBE'],
  USER: ['CREATE_TOKENS', 'DESCRIBE_TOKENS'],
};

/** A bit field with one bit per operation code. */
export function operationBits(operations: Iterable<AclOperation>): number {
  let field = 0;
  for (const op of operations) field |= 1 << OPERATION_CODES[op];
  return field;
}

/** The code a request refused on a resource of this type answers. */
export const DENIED_CODE: Readonly<Record<AclResourceType, number>> = {
  TOPIC: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  GROUP: ErrorCode.GROUP_AUTHORIZATION_FAILED,
  CLUSTER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
  TRANSACTIONAL_ID: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
  DELEGATION_TOKEN: ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED,
  USER: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
};

/** Kafka's "not asked for" value: the field's default. */
export const OPERATIONS_NOT_REQUESTED = -2147483648;

/** The field's value: the operations when asked for, else Kafka's sentinel. */
export function authorizedOperations(asked: boolean | undefined, operations: number): number {
  return asked ? operations : OPERATIONS_NOT_REQUESTED;
}

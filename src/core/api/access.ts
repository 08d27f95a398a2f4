/** The Core interface (../core.ts), ACLs and client quotas: requests and results, plain data. */

// Kept here so every gateway in front of one store authorizes alike; the core
// stores them and decides nothing (the gateway's authorizer does).

/** Kafka's ACL resource types (ANY only in filters). */
export const ACL_RESOURCE_TYPES = ['TOPIC', 'GROUP', 'CLUSTER', 'TRANSACTIONAL_ID', 'DELEGATION_TOKEN', 'USER'] as const;
export type AclResourceType = (typeof ACL_RESOURCE_TYPES)[number];
export const ACL_PATTERN_TYPES = ['LITERAL', 'PREFIXED'] as const;
export type AclPatternType = (typeof ACL_PATTERN_TYPES)[number];
/** Kafka's ACL operations (ANY only in filters). */
export const ACL_OPERATIONS = [
  'ALL', 'READ', 'WRITE', 'CREATE', 'DELETE', 'ALTER', 'DESCRIBE', 'CLUSTER_ACTION',
  'DESCRIBE_CONFIGS', 'ALTER_CONFIGS', 'IDEMPOTENT_WRITE', 'CREATE_TOKENS', 'DESCRIBE_TOKENS', 'TWO_PHASE_COMMIT',
] as const;
export type AclOperation = (typeof ACL_OPERATIONS)[number];
export type AclPermission = 'ALLOW' | 'DENY';

/** One ACL: `principal` from `host` may (ALLOW) or may not (DENY) do `operation` on the resources the pattern names. */
export interface AclBinding {
  resourceType: AclResourceType;
  /** A name, a prefix (PREFIXED), or "*" (LITERAL: every resource of the type). */
  resourceName: string;
  patternType: AclPatternType;
  /** "User:alice", or "User:*" for everyone. */
  principal: string;
  /** An IP address, or "*" for any. */
  host: string;
  operation: AclOperation;
  permission: AclPermission;
}

/**
 * Selects bindings, as Kafka's DescribeAcls and DeleteAcls filters do: ANY and
 * null match everything; pattern MATCH selects every binding that applies to
 * the named resource (its literal, the wildcard and the prefixes of the name).
 */
export interface AclBindingFilter {
  resourceType: AclResourceType | 'ANY';
  resourceName: string | null;
  patternType: AclPatternType | 'ANY' | 'MATCH';
  principal: string | null;
  host: string | null;
  operation: AclOperation | 'ANY';
  permission: AclPermission | 'ANY';
}

/**
 * Whom a client quota applies to, as Kafka names it: a component absent is not
 * part of the entity; present and null is the default for that kind
 * ("<default>" in kafka-configs).
 */
export interface QuotaEntity {
  user?: string | null;
  clientId?: string | null;
}

/** The quota keys Kafka defines for users and client ids, in bytes/s and percent of one thread's time. */
export const QUOTA_KEYS = ['producer_byte_rate', 'consumer_byte_rate', 'request_percentage', 'controller_mutation_rate'] as const;
export type QuotaKey = (typeof QUOTA_KEYS)[number];

export interface ClientQuotaEntry {
  entity: QuotaEntity;
  values: Partial<Record<QuotaKey, number>>;
}

export interface AlterClientQuotasRequest {
  alterations: {
    entity: QuotaEntity;
    /** Keys to set to these values. */
    set: Partial<Record<QuotaKey, number>>;
    /** Keys to remove. */
    remove: QuotaKey[];
  }[];
}

/**
 * The authorized-operations bit fields Kafka answers when a client asks for
 * them (Metadata, DescribeCluster, DescribeGroups, DescribeTopicPartitions).
 * There are no ACLs here, so every client may do everything a resource
 * supports: the answer is what Kafka's broker answers without an authorizer,
 * all operations of the resource's type, one bit per ACL operation code
 * (READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9,
 * DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12).
 */

/** Kafka's "not asked for" value: the field's default. */
export const OPERATIONS_NOT_REQUESTED = -2147483648;

function bits(...codes: number[]): number {
  return codes.reduce((field, code) => field | (1 << code), 0);
}

export const TOPIC_OPERATIONS = bits(3, 4, 5, 6, 7, 8, 10, 11);
export const CLUSTER_OPERATIONS = bits(5, 7, 8, 9, 10, 11, 12);
export const GROUP_OPERATIONS = bits(3, 6, 8, 10, 11);

/** The field's value: the operations when asked for, else Kafka's sentinel. */
export function authorizedOperations(asked: boolean | undefined, operations: number): number {
  return asked ? operations : OPERATIONS_NOT_REQUESTED;
}

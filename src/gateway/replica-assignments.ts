import { ErrorCode } from '../../protocol/error-codes.js';

/**
 * Replica lists that clients give (CreateTopics and CreatePartitions
 * assignments, AlterPartitionReassignments targets), checked against the
 * brokers Metadata lists: the live gateways (this one alone without a
 * cluster). Every partition is listed with all of them as replicas;
 * durability comes from the core, not from copies on brokers. So a list is
 * met when it names only brokers Kafka would find registered, and refused
 * as Kafka refuses a list naming a broker it does not know.
 */

export class ReplicaAssignmentError extends Error {
  override readonly name = 'ReplicaAssignmentError';
  readonly errorCode = ErrorCode.INVALID_REPLICA_ASSIGNMENT;
}

/** Why a replica list cannot be met by the brokers listed (`known`), or null when it can. */
export function replicaListProblem(brokerIds: readonly number[], known: readonly number[]): string | null {
  if (brokerIds.length === 0) return 'The manual partition assignment includes an empty replica list; list the broker ids to hold each partition.';
  const seen = new Set<number>();
  for (const id of brokerIds) {
    if (seen.has(id)) return `The manual partition assignment includes the broker ${id} more than once; list each broker once.`;
    seen.add(id);
    if (!known.includes(id)) {
      const listed = known.length === 1 ? `this gateway lists itself alone, as broker ${known[0]}` : `the live gateways are brokers ${known.join(', ')}`;
      return `The manual partition assignment includes broker ${id}, but no such broker is registered: ${listed}. Assign partitions to [${known.join(', ')}] or a part of it.`;
    }
  }
  return null;
}

/**
 * CreateTopics' manual assignments: partitions 0..N-1, each once, each
 * replica list met. Answers the partition count, or throws a
 * ReplicaAssignmentError saying what is wrong.
 */
export function checkNewTopicAssignments(assignments: readonly { partitionIndex: number; brokerIds: number[] }[], known: readonly number[]): number {
  const indexes = new Set<number>();
  for (const a of assignments) {
    if (indexes.has(a.partitionIndex)) throw new ReplicaAssignmentError(`Partition ${a.partitionIndex} is assigned more than once; assign each partition once.`);
    indexes.add(a.partitionIndex);
    const problem = replicaListProblem(a.brokerIds, known);
    if (problem) throw new ReplicaAssignmentError(problem);
  }
  for (let i = 0; i < assignments.length; i++) {
    if (!indexes.has(i)) {
      throw new ReplicaAssignmentError(`Partitions should be numbered 0 to ${assignments.length - 1} in a manual assignment, but partition ${i} is missing.`);
    }
  }
  return assignments.length;
}

/** The Core interface (../core.ts), consumer groups' committed offsets: requests and results, plain data. */
import type { PartitionRef } from './log.js';

// A Kafka consumer group's committed offsets and a Queen consumer group's
// position are one thing here.

export interface CommittedOffset extends PartitionRef {
  offset: number;
  leaderEpoch: number;
  metadata: string | null;
}

export interface CommitOffsetsRequest {
  group: string;
  offsets: CommittedOffset[];
  /**
   * Set by the group coordinator: the group's coordinator lease the commit
   * was decided under. An engine shared by several cores refuses the commit
   * (CoreError not_coordinator) unless the lease is still held by that owner
   * at that epoch, checked in the commit's own transaction; one alone ignores it.
   */
  fence?: { owner: string; epoch: number };
}

export interface FetchOffsetsRequest {
  group: string;
  /** Null means every partition the group has an offset for. */
  partitions: PartitionRef[] | null;
}

export interface FetchOffsetsResult {
  /** Partitions without a committed offset answer offset -1. */
  offsets: CommittedOffset[];
}

export interface DeleteOffsetsRequest {
  group: string;
  partitions: PartitionRef[];
}

export interface GroupSummary {
  group: string;
  /** 'consumer' for Kafka-style groups; later the coordinator adds state. */
  protocolType: string;
}

// The group coordinator (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// DescribeGroups, DeleteGroups) joins this interface with the consumer-groups
// issue, as methods on `Core` beside the offsets above.

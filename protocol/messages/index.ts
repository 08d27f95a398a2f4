// Every API the project has a definition for, by key (what the gateway serves is its handlers' list).
import type { ApiDef } from '../schema/definition.js';
import { Produce } from './produce.js';
import { Fetch } from './fetch.js';
import { ListOffsets } from './list-offsets.js';
import { Metadata } from './metadata.js';
import { OffsetCommit } from './offset-commit.js';
import { OffsetFetch } from './offset-fetch.js';
import { FindCoordinator } from './find-coordinator.js';
import { JoinGroup } from './join-group.js';
import { Heartbeat } from './heartbeat.js';
import { LeaveGroup } from './leave-group.js';
import { SyncGroup } from './sync-group.js';
import { DescribeGroups } from './describe-groups.js';
import { ListGroups } from './list-groups.js';
import { SaslHandshake } from './sasl-handshake.js';
import { ApiVersions } from './api-versions.js';
import { CreateTopics } from './create-topics.js';
import { DeleteTopics } from './delete-topics.js';
import { DeleteRecords } from './delete-records.js';
import { InitProducerId } from './init-producer-id.js';
import { OffsetForLeaderEpoch } from './offset-for-leader-epoch.js';
import { AddPartitionsToTxn } from './add-partitions-to-txn.js';
import { AddOffsetsToTxn } from './add-offsets-to-txn.js';
import { EndTxn } from './end-txn.js';
import { TxnOffsetCommit } from './txn-offset-commit.js';
import { DescribeAcls } from './describe-acls.js';
import { CreateAcls } from './create-acls.js';
import { DeleteAcls } from './delete-acls.js';
import { DescribeConfigs } from './describe-configs.js';
import { AlterConfigs } from './alter-configs.js';
import { SaslAuthenticate } from './sasl-authenticate.js';
import { CreatePartitions } from './create-partitions.js';
import { DeleteGroups } from './delete-groups.js';
import { IncrementalAlterConfigs } from './incremental-alter-configs.js';
import { AlterPartitionReassignments } from './alter-partition-reassignments.js';
import { ListPartitionReassignments } from './list-partition-reassignments.js';
import { OffsetDelete } from './offset-delete.js';
import { DescribeClientQuotas } from './describe-client-quotas.js';
import { AlterClientQuotas } from './alter-client-quotas.js';
import { DescribeUserScramCredentials } from './describe-user-scram-credentials.js';
import { AlterUserScramCredentials } from './alter-user-scram-credentials.js';
import { DescribeCluster } from './describe-cluster.js';
import { DescribeProducers } from './describe-producers.js';
import { DescribeTransactions } from './describe-transactions.js';
import { ListTransactions } from './list-transactions.js';
import { ConsumerGroupHeartbeat } from './consumer-group-heartbeat.js';
import { ConsumerGroupDescribe } from './consumer-group-describe.js';
import { DescribeTopicPartitions } from './describe-topic-partitions.js';
import { DescribeLogDirs } from './describe-log-dirs.js';
import { DescribeQuorum } from './describe-quorum.js';
import { ShareGroupHeartbeat } from './share-group-heartbeat.js';
import { ShareGroupDescribe } from './share-group-describe.js';
import { StreamsGroupHeartbeat } from './streams-group-heartbeat.js';
import { StreamsGroupDescribe } from './streams-group-describe.js';
import { ShareFetch } from './share-fetch.js';
import { ShareAcknowledge } from './share-acknowledge.js';
import { DescribeShareGroupOffsets } from './describe-share-group-offsets.js';
import { AlterShareGroupOffsets } from './alter-share-group-offsets.js';
import { DeleteShareGroupOffsets } from './delete-share-group-offsets.js';

export {
  Produce,
  Fetch,
  ListOffsets,
  Metadata,
  OffsetCommit,
  OffsetFetch,
  FindCoordinator,
  JoinGroup,
  Heartbeat,
  LeaveGroup,
  SyncGroup,
  DescribeGroups,
  ListGroups,
  SaslHandshake,
  ApiVersions,
  CreateTopics,
  DeleteTopics,
  DeleteRecords,
  InitProducerId,
  OffsetForLeaderEpoch,
  AddPartitionsToTxn,
  AddOffsetsToTxn,
  EndTxn,
  TxnOffsetCommit,
  DescribeAcls,
  CreateAcls,
  DeleteAcls,
  DescribeConfigs,
  AlterConfigs,
  SaslAuthenticate,
  CreatePartitions,
  DeleteGroups,
  IncrementalAlterConfigs,
  AlterPartitionReassignments,
  ListPartitionReassignments,
  OffsetDelete,
  DescribeClientQuotas,
  AlterClientQuotas,
  DescribeUserScramCredentials,
  AlterUserScramCredentials,
  DescribeCluster,
  DescribeProducers,
  DescribeTransactions,
  ListTransactions,
  ConsumerGroupHeartbeat,
  ConsumerGroupDescribe,
  DescribeTopicPartitions,
  DescribeLogDirs,
  DescribeQuorum,
  ShareGroupHeartbeat,
  ShareGroupDescribe,
  ShareFetch,
  ShareAcknowledge,
  DescribeShareGroupOffsets,
  AlterShareGroupOffsets,
  DeleteShareGroupOffsets,
  StreamsGroupHeartbeat,
  StreamsGroupDescribe,
};

export const apis: readonly ApiDef[] = [
  Produce,
  Fetch,
  ListOffsets,
  Metadata,
  OffsetCommit,
  OffsetFetch,
  FindCoordinator,
  JoinGroup,
  Heartbeat,
  LeaveGroup,
  SyncGroup,
  DescribeGroups,
  ListGroups,
  SaslHandshake,
  ApiVersions,
  CreateTopics,
  DeleteTopics,
  DeleteRecords,
  InitProducerId,
  OffsetForLeaderEpoch,
  AddPartitionsToTxn,
  AddOffsetsToTxn,
  EndTxn,
  TxnOffsetCommit,
  DescribeAcls,
  CreateAcls,
  DeleteAcls,
  DescribeConfigs,
  AlterConfigs,
  SaslAuthenticate,
  CreatePartitions,
  DeleteGroups,
  IncrementalAlterConfigs,
  AlterPartitionReassignments,
  ListPartitionReassignments,
  OffsetDelete,
  DescribeClientQuotas,
  AlterClientQuotas,
  DescribeUserScramCredentials,
  AlterUserScramCredentials,
  DescribeCluster,
  DescribeProducers,
  DescribeTransactions,
  ListTransactions,
  ConsumerGroupHeartbeat,
  ConsumerGroupDescribe,
  DescribeTopicPartitions,
  DescribeLogDirs,
  DescribeQuorum,
  ShareGroupHeartbeat,
  ShareGroupDescribe,
  ShareFetch,
  ShareAcknowledge,
  DescribeShareGroupOffsets,
  AlterShareGroupOffsets,
  DeleteShareGroupOffsets,
  StreamsGroupHeartbeat,
  StreamsGroupDescribe,
];

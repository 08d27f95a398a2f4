// Every API handler the gateway serves, one file per API key. The server
// builds its dispatch table and ApiVersions from this list alone; adding a
// handler is one import and one entry below.
import type { ApiHandler } from '../handler.js';
import { alterClientQuotas } from './alter-client-quotas.js';
import { alterConfigs } from './alter-configs.js';
import { alterPartitionReassignments } from './alter-partition-reassignments.js';
import { alterUserScramCredentials } from './alter-user-scram-credentials.js';
import { apiVersions } from './api-versions.js';
import { consumerGroupDescribe } from './consumer-group-describe.js';
import { consumerGroupHeartbeat } from './consumer-group-heartbeat.js';
import { streamsGroupDescribe } from './streams-group-describe.js';
import { streamsGroupHeartbeat } from './streams-group-heartbeat.js';
import { createAcls } from './create-acls.js';
import { shareGroupHeartbeat } from './share-group-heartbeat.js';
import { shareGroupDescribe } from './share-group-describe.js';
import { shareFetch } from './share-fetch.js';
import { shareAcknowledge } from './share-acknowledge.js';
import { describeShareGroupOffsets } from './describe-share-group-offsets.js';
import { alterShareGroupOffsets } from './alter-share-group-offsets.js';
import { deleteShareGroupOffsets } from './delete-share-group-offsets.js';
import { createPartitions } from './create-partitions.js';
import { createTopics } from './create-topics.js';
import { deleteAcls } from './delete-acls.js';
import { deleteGroups } from './delete-groups.js';
import { deleteRecords } from './delete-records.js';
import { deleteTopics } from './delete-topics.js';
import { describeAcls } from './describe-acls.js';
import { describeClientQuotas } from './describe-client-quotas.js';
import { describeCluster } from './describe-cluster.js';
import { describeConfigs } from './describe-configs.js';
import { describeLogDirs } from './describe-log-dirs.js';
import { describeQuorum } from './describe-quorum.js';
import { describeGroups } from './describe-groups.js';
import { describeProducers } from './describe-producers.js';
import { describeTopicPartitions } from './describe-topic-partitions.js';
import { describeUserScramCredentials } from './describe-user-scram-credentials.js';
import { fetch } from './fetch.js';
import { findCoordinator } from './find-coordinator.js';
import { heartbeat } from './heartbeat.js';
import { incrementalAlterConfigs } from './incremental-alter-configs.js';
import { initProducerId } from './init-producer-id.js';
import { joinGroup } from './join-group.js';
import { leaveGroup } from './leave-group.js';
import { listGroups } from './list-groups.js';
import { listPartitionReassignments } from './list-partition-reassignments.js';
import { listOffsets } from './list-offsets.js';
import { metadata } from './metadata.js';
import { offsetCommit } from './offset-commit.js';
import { offsetDelete } from './offset-delete.js';
import { offsetFetch } from './offset-fetch.js';
import { offsetForLeaderEpoch } from './offset-for-leader-epoch.js';
import { produce } from './produce.js';
import { saslAuthenticate } from './sasl-authenticate.js';
import { saslHandshake } from './sasl-handshake.js';
import { syncGroup } from './sync-group.js';
import { addOffsetsToTxn } from './add-offsets-to-txn.js';
import { addPartitionsToTxn } from './add-partitions-to-txn.js';
import { describeTransactions } from './describe-transactions.js';
import { endTxn } from './end-txn.js';
import { listTransactions } from './list-transactions.js';
import { txnOffsetCommit } from './txn-offset-commit.js';

export const handlers: readonly ApiHandler[] = [
  alterConfigs,
  alterPartitionReassignments,
  apiVersions,
  createPartitions,
  createTopics,
  deleteGroups,
  deleteRecords,
  deleteTopics,
  describeCluster,
  describeConfigs,
  describeLogDirs,
  describeQuorum,
  describeGroups,
  describeProducers,
  describeTopicPartitions,
  fetch,
  findCoordinator,
  heartbeat,
  incrementalAlterConfigs,
  initProducerId,
  joinGroup,
  leaveGroup,
  listGroups,
  listPartitionReassignments,
  listOffsets,
  metadata,
  offsetCommit,
  offsetDelete,
  offsetFetch,
  offsetForLeaderEpoch,
  produce,
  saslAuthenticate,
  saslHandshake,
  syncGroup,
  // KIP-848 consumer groups (src/core/groups/consumer).
  consumerGroupHeartbeat,
  consumerGroupDescribe,
  streamsGroupHeartbeat,
  streamsGroupDescribe,
  // Share groups (src/core/groups/share).
  shareGroupHeartbeat,
  shareGroupDescribe,
  shareFetch,
  shareAcknowledge,
  describeShareGroupOffsets,
  alterShareGroupOffsets,
  deleteShareGroupOffsets,
  addPartitionsToTxn,
  addOffsetsToTxn,
  endTxn,
  txnOffsetCommit,
  describeTransactions,
  listTransactions,
  // ACLs and quotas (../../access/authorizer.ts, ../quotas.ts).
  createAcls,
  describeAcls,
  deleteAcls,
  describeClientQuotas,
  alterClientQuotas,
  alterUserScramCredentials,
  describeUserScramCredentials,
];

// Every API handler the gateway serves, one file per API key. The server
// builds its dispatch table and ApiVersions from this list alone; adding a
// handler is one import and one entry below.
import type { ApiHandler } from '../handler.js';
import { alterConfigs } from './alter-configs.js';
import { apiVersions } from './api-versions.js';
import { createPartitions } from './create-partitions.js';
import { createTopics } from './create-topics.js';
import { deleteRecords } from './delete-records.js';
import { deleteTopics } from './delete-topics.js';
import { describeCluster } from './describe-cluster.js';
import { describeConfigs } from './describe-configs.js';
import { describeProducers } from './describe-producers.js';
import { describeTopicPartitions } from './describe-topic-partitions.js';
import { fetch } from './fetch.js';
import { incrementalAlterConfigs } from './incremental-alter-configs.js';
import { initProducerId } from './init-producer-id.js';
import { listOffsets } from './list-offsets.js';
import { metadata } from './metadata.js';
import { offsetForLeaderEpoch } from './offset-for-leader-epoch.js';
import { produce } from './produce.js';

export const handlers: readonly ApiHandler[] = [
  alterConfigs,
  apiVersions,
  createPartitions,
  createTopics,
  deleteRecords,
  deleteTopics,
  describeCluster,
  describeConfigs,
  describeProducers,
  describeTopicPartitions,
  fetch,
  incrementalAlterConfigs,
  initProducerId,
  listOffsets,
  metadata,
  offsetForLeaderEpoch,
  produce,
];

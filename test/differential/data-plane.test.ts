/**
 * The data plane against Apache Kafka: produce and fetch with every codec,
 * LogAppendTime, records too large, unknown topics, fetch out of range,
 * ListOffsets, Metadata and DescribeCluster, the idempotent producer. Each
 * scenario runs on Apache Kafka and on the gateway (memory and PostgreSQL)
 * and the observations are compared field by field (./harness.ts), through
 * the table of deliberate differences (./differences.ts).
 */
import { DATA_PLANE_SCENARIOS } from './scenarios/data-plane.js';
import { CLUSTER_SCENARIOS } from './scenarios/cluster.js';
import { IDEMPOTENT_SCENARIOS } from './scenarios/idempotent.js';
import { describeDifferential } from './targets.js';
import { startReferenceKafka } from './reference.js';

await describeDifferential('data plane', [...DATA_PLANE_SCENARIOS, ...CLUSTER_SCENARIOS, ...IDEMPOTENT_SCENARIOS], startReferenceKafka, 120_000);

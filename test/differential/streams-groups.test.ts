/**
 * Streams groups (KIP-1071) against Apache Kafka 4.4: the same raw
 * StreamsGroupHeartbeat steps, StreamsGroupDescribe, ListGroups,
 * DescribeGroups and the internal topics on both, compared field by field
 * (./harness.ts) through the table of deliberate differences
 * (./differences.ts).
 */
import { STREAMS_GROUP_SCENARIOS } from './scenarios/streams-groups.js';
import { describeDifferential } from './targets.js';
import { startReferenceKafka } from './reference.js';

await describeDifferential('streams groups', STREAMS_GROUP_SCENARIOS, startReferenceKafka, 180_000);

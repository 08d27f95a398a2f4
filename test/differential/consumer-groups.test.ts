/**
 * KIP-848 consumer groups against Apache Kafka 4.4: the same raw
 * ConsumerGroupHeartbeat steps, ConsumerGroupDescribe, ListGroups and
 * DescribeGroups on both, compared field by field (./harness.ts) through the
 * table of deliberate differences (./differences.ts).
 */
import { CONSUMER_GROUP_SCENARIOS } from './scenarios/consumer-groups.js';
import { describeDifferential } from './targets.js';
import { startReferenceKafka } from './reference.js';

await describeDifferential('KIP-848 consumer groups', CONSUMER_GROUP_SCENARIOS, startReferenceKafka, 180_000);

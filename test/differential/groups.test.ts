/**
 * Consumer groups against Apache Kafka: kafkajs and librdkafka members, the
 * classic protocol raw (errors clients never provoke), static membership,
 * negative commits (kafkajs admin.resetOffsets), missing groups,
 * describe/list/delete, lag. Each scenario runs on Apache Kafka and on the
 * gateway (memory and PostgreSQL); observations are compared field by field
 * (./harness.ts) through the table of deliberate differences (./differences.ts).
 */
import { GROUP_SCENARIOS } from './scenarios/groups.js';
import { describeDifferential } from './targets.js';
import { startReferenceKafka } from './reference.js';

await describeDifferential('consumer groups', GROUP_SCENARIOS, startReferenceKafka, 180_000);

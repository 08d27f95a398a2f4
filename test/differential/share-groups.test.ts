/**
 * Share groups (KIP-932) against Apache Kafka 4.4: the same raw
 * ShareGroupHeartbeat, ShareFetch, ShareAcknowledge and admin steps on both,
 * compared field by field (./harness.ts) through the table of deliberate
 * differences (./differences.ts).
 */
import { SHARE_GROUP_SCENARIOS } from './scenarios/share-groups.js';
import { describeDifferential } from './targets.js';
import { startReferenceKafka } from './reference.js';

await describeDifferential('share groups (KIP-932)', SHARE_GROUP_SCENARIOS, startReferenceKafka, 180_000);

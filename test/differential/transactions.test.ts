/**
 * Kafka transactions against Apache Kafka: InitProducerId with a
 * transactional id, fencing a zombie at every request version, the invalid
 * states and unknown ids, EndTxn v5's epoch bump, DescribeTransactions and
 * ListTransactions, ApiVersions' transaction.version and group.version
 * feature levels, what read_committed and read_uncommitted readers see (the
 * last stable offset, the aborted transactions, ListOffsets), offsets
 * committed in a transaction and OffsetFetch's require_stable, and kafkajs's
 * transactional producer. Each scenario runs on Apache Kafka and on the
 * gateway (memory and PostgreSQL), compared field by field (./harness.ts).
 */
import { FEATURE_SCENARIOS } from './scenarios/features.js';
import { TRANSACTION_SCENARIOS } from './scenarios/transactions.js';
import { describeDifferential } from './targets.js';
import { startReferenceKafka } from './reference.js';

await describeDifferential('transactions', [...FEATURE_SCENARIOS, ...TRANSACTION_SCENARIOS], startReferenceKafka, 120_000);

/**
 * The differences between Apache Kafka and the gateway that are kept on
 * purpose, each with its reason: the one table the differential harness
 * consults (./harness.ts judge). The README's "Differences from Apache Kafka"
 * section lists the same rows for users; ./differences.test.ts keeps the two
 * in step.
 *
 * `paths` are observation paths of the scenario (`*` one segment or index,
 * `**` any rest). A difference in a listed path passes; one elsewhere fails;
 * an entry whose paths all agree fails as stale.
 */
import type { TargetName } from './harness.js';

export interface DeliberateDifference {
  /** The scenario whose observation shows it. */
  scenario: string;
  paths: string[];
  /** Only on these engines (default: both). */
  engines?: TargetName[];
  /** The README row: what differs, what Kafka does, what the gateway does, why. */
  behaviour: string;
  kafka: string;
  gateway: string;
  why: string;
}

const ERROR_SENTENCES = {
  behaviour: 'ErrorMessage of a refused Produce partition',
  kafka: 'null for most refusals (message too large, unknown topic, sequence and epoch errors)',
  gateway: 'a sentence saying what was wrong and what to do',
  why: 'the project gives every error a user sees as a sentence; clients print it and ignore it otherwise',
};

const ONE_EPOCH_BUMP = {
  behaviour: 'the epoch a new instance gets when it fences an instance with an open transaction',
  kafka: 'the old epoch + 2 (one bump to abort the open transaction, one for the new instance)',
  gateway: 'the old epoch + 1, which the abort markers also carry',
  why: 'one bump fences the old instance everywhere: every later request of its epoch is refused, as with Kafka; clients use whatever epoch they are given',
};

export const DELIBERATE_DIFFERENCES: readonly DeliberateDifference[] = [
  { scenario: 'record above max.message.bytes', paths: ['raw.*.errorMessage'], ...ERROR_SENTENCES },
  { scenario: 'unknown topic, auto-create not allowed', paths: ['produce.errorMessage'], ...ERROR_SENTENCES },
  {
    scenario: 'idempotent producer: resend, gap, stale epoch',
    paths: ['gap.errorMessage', 'overlapping.errorMessage', 'newEpochNotAtZero.errorMessage', 'staleEpoch.errorMessage', 'unknownIdNotAtZero.errorMessage'],
    ...ERROR_SENTENCES,
  },
  {
    scenario: 'unknown topic, auto-created',
    paths: ['first.error', 'first.topicId', 'first.partitions'],
    behaviour: 'Metadata that auto-creates a topic',
    kafka: 'the first answer is UNKNOWN_TOPIC_OR_PARTITION; the topic appears on a later Metadata',
    gateway: 'the first answer already carries the new topic, its id and partitions',
    why: 'creation is one synchronous call to the core, so there is nothing to wait for; clients take either answer',
  },
  {
    scenario: 'Metadata and DescribeCluster',
    paths: ['groupOffsetsTopic.length', 'groupOffsetsTopic[*].**'],
    behaviour: 'the internal topic `__consumer_offsets`',
    kafka: 'listed (isInternal) once a group coordinator was asked for',
    gateway: 'not listed',
    why: 'committed offsets live in the core, in the same rows as Queen consumer groups, not in a topic',
  },
  {
    scenario: 'idempotent producer: resend, gap, stale epoch',
    paths: ['exactResend.logAppendTimeMs', 'resendOfOlder.logAppendTimeMs'],
    behaviour: 'LogAppendTimeMs answering an exact resend on a CreateTime topic',
    kafka: "the retained batch's max timestamp (a first append answers -1)",
    gateway: '-1, as for the first append',
    why: 'CreateTime topics have no log-append time; the producer window keeps sequences and offsets, not timestamps',
  },
  {
    scenario: 'idempotent producer: resend, gap, stale epoch',
    paths: ['bump.sameProducerId', 'bump.producerEpoch'],
    behaviour: 'InitProducerId with the id and epoch of an idempotent producer (no transactional id; KIP-360)',
    kafka: 'a new producer id at epoch 0',
    gateway: 'the same producer id at the next epoch',
    why: 'clients take either; keeping the id lets every partition fence the old epoch (INVALID_PRODUCER_EPOCH) instead of leaving a second live producer',
  },
  {
    scenario: 'idempotent producer: resend, gap, stale epoch',
    paths: ['unknownIdNotAtZero.error', 'unknownIdNotAtZero.baseOffset', 'unknownIdNotAtZero.logStartOffset'],
    behaviour: 'first batch of a producer id the partition has no state for, at a sequence above 0',
    kafka: 'accepted (the state may have been deleted with old segments)',
    gateway: 'OUT_OF_ORDER_SEQUENCE_NUMBER',
    why: "the core never drops a producer's state while its log lives, so a missing state means a new producer, and a batch that overtook sequence 0 must not be written first",
  },
  {
    scenario: 'transactions: InitProducerId with a transactional id',
    paths: ['openTransaction.firstAnswer.error', 'openTransaction.firstAnswer.producerId', 'openTransaction.firstAnswer.producerEpoch'],
    behaviour: 'InitProducerId for a transactional id whose transaction is still open',
    kafka: 'CONCURRENT_TRANSACTIONS while the coordinator aborts it; the client retries',
    gateway: 'the abort (markers and all) is done inside the call, which answers the new epoch at once',
    why: 'the core ends a transaction in one atomic step, so there is no in-between state to wait out',
  },
  {
    scenario: 'transactions: EndTxn v5 bumps the epoch at every end',
    paths: ['commit.producerEpoch', 'oldEpochAfterCommit.**', 'nextProduced.**', 'abort.producerEpoch', 'readCommitted.**'],
    behaviour: 'transaction.version 2 (KIP-890 part 2: an epoch bump per transaction, AddPartitionsToTxn implied by Produce)',
    kafka: 'Kafka 4 finalizes it and clients use it',
    gateway: 'not advertised (ApiVersions lists no features): clients use the classic transaction protocol',
    why: "the classic protocol is what every client speaks; KIP-890's second part is not built",
  },
  {
    scenario: 'transactions: a zombie producer is fenced, request version by version',
    paths: ['successor.producerEpoch'],
    ...ONE_EPOCH_BUMP,
  },
  {
    scenario: 'transactions: kafkajs commit, abort, sendOffsets and a fenced zombie',
    paths: ['readUncommitted.batches[6].producerEpoch', 'readUncommitted.batches[7].producerEpoch'],
    ...ONE_EPOCH_BUMP,
  },
  {
    scenario: 'transactions: librdkafka commit, abort and a fenced zombie',
    paths: ['readCommitted.batches[6].producerEpoch', 'readCommitted.batches[7].producerEpoch'],
    ...ONE_EPOCH_BUMP,
  },
];

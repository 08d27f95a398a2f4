/**
 * The differences between Apache Kafka and the gateway that are kept on
 * purpose, each with its reason: the one table the differential harness
 * consults (./harness.ts judge). docs/differences.md ("Differences from Apache Kafka")
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
  /** The docs/differences.md row: what differs, what Kafka does, what the gateway does, why. */
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

const SCRAM_UNKNOWN_USER = {
  behaviour: 'SCRAM with an unknown user',
  kafka: 'refused at the first message',
  gateway: 'a made-up salt and the usual count, refused at the proof; same code and message',
  why: 'the exchange does not tell which users exist',
};

export const DELIBERATE_DIFFERENCES: readonly DeliberateDifference[] = [
  {
    scenario: 'share group (KIP-932): two members, locks, ACCEPT/RELEASE/REJECT, redelivery, describe, reset and delete',
    paths: ['describe[0].groupEpoch', 'describe[*].members[*].epoch'],
    behaviour: 'the group epoch of a share group whose first member subscribes to partitions without share state',
    kafka: 'one more than its joins: it bumps the epoch again once it has initialized the partitions\' share state, and assigns them at that epoch',
    gateway: 'one per join, leave or subscription change; the partitions are assigned at the join',
    why: 'share state here is created by the first fetch of a partition, in the same unit that acquires; no separate initialization step needs an epoch of its own. Members follow whatever epoch they are given',
  },
  {
    scenario: 'share group (KIP-932): two members, locks, ACCEPT/RELEASE/REJECT, redelivery, describe, reset and delete',
    paths: ['offsets[*].topics[*].partitions[*].startOffset'],
    behaviour: 'DescribeShareGroupOffsets\' start offset once every record in flight is acknowledged',
    kafka: 'the offset of the last record redelivered (1 in the scenario), ten seconds after the last acknowledgement, with lag 0',
    gateway: 'the log\'s end (6), with lag 0',
    why: 'the gateway moves the start offset past the records that are done in the unit that finishes them; both answer the same lag, which is what kafka-share-groups.sh and clients act on',
  },
  {
    scenario: 'consumer group (KIP-848): one member, then a second; errors; describe and list',
    paths: ['bJoins.memberEpoch'],
    behaviour: 'the epoch a KIP-848 member joining a group with members is first answered',
    kafka: 'the group\'s assignment epoch before the join, until the assignor has run for it; the new epoch at a later heartbeat',
    gateway: 'the new group epoch at once, with no partitions until their owners released them',
    why: 'the target assignment is computed within the joining heartbeat; the member reaches the same epoch and partitions, one heartbeat sooner',
  },
  {
    scenario: 'streams group (KIP-1071): a member runs a word count topology; errors; describe and list; internal topics',
    paths: ['steady.memberEpoch', 'describe[*].groupEpoch', 'describe[*].members[*].memberEpoch'],
    behaviour: 'the epochs a new streams group goes through before its first member runs its tasks',
    kafka: 'three: the join, then its internal topics created in the background, then the end of its initial rebalance delay (3 s)',
    gateway: 'one step fewer at least: the internal topics are created before the first answer; with the delay at 0, as the harness sets it for groups, the join\'s answer already has every task',
    why: 'creating the topics within the heartbeat lets the member start at once; members follow whatever epoch they are given',
  },
  {
    scenario: 'SaslHandshake: each enabled mechanism, and one that is not',
    paths: ['*.mechanisms[*]'],
    behaviour: 'the order of the mechanisms SaslHandshake lists',
    kafka: 'its own order (SCRAM-SHA-512 before SCRAM-SHA-256 whatever `sasl.enabled.mechanisms` says)',
    gateway: 'the order of `--sasl-mechanisms`',
    why: 'clients read the list as a set and ask for their own mechanism; the same names are listed',
  },
  {
    scenario: 'PLAIN: right and wrong passwords, an unknown user, a malformed token',
    paths: ['no separators.answer.errorMessage'],
    behaviour: 'SaslAuthenticate with a PLAIN message that is not authzid NUL user NUL password',
    kafka: 'SASL_AUTHENTICATION_FAILED, "Invalid SASL/PLAIN response: expected 3 tokens, got 1"',
    gateway: 'the same code with a sentence saying what the message must be',
    why: 'errors users see are sentences',
  },
  {
    scenario: 'authorization: bob without ACLs against alice’s topic, group and transactions, and the cluster',
    paths: ['describeUserScramCredentials', 'describeUserScramCredentials.**'],
    behaviour: 'DescribeUserScramCredentials without DESCRIBE on the cluster',
    kafka: 'Kafka 4.4 sends no answer: the request waits for the client\'s timeout, and the connection\'s later requests with it',
    gateway: 'CLUSTER_AUTHORIZATION_FAILED',
    why: 'a refusal is answered with its code, as Kafka answers every other refused request',
  },
  { scenario: 'SCRAM: a whole exchange right and wrong, and an unknown user', paths: ['* unknown user.serverFirst.**', '* unknown user.final', '* unknown user.final.**'], ...SCRAM_UNKNOWN_USER },
  {
    scenario: 'requests out of order: before the handshake, before authenticating, a second handshake, on the PLAINTEXT listener',
    paths: ['metadataBetweenHandshakeAndAuthenticate.answer'],
    behaviour: 'a request other than SaslAuthenticate between SaslHandshake and SaslAuthenticate',
    kafka: "answered with that request's error response (ILLEGAL_SASL_STATE where it has an error field), then the connection closes",
    gateway: 'the connection closes without an answer',
    why: 'only a broken client does this and it loses the connection on both; the gateway answers no request it does not serve',
  },
  {
    scenario: 'sessions: the lifetime answered, re-authentication, a request after expiry, another principal',
    paths: ['reauthenticationWithAnotherMechanism.handshake', 'reauthenticationWithAnotherMechanism.serverFirst'],
    behaviour: 're-authentication with another mechanism than the session began with',
    kafka: 'SaslHandshake accepts it; the first SaslAuthenticate closes the connection without an answer',
    gateway: 'SaslHandshake answers UNSUPPORTED_SASL_MECHANISM, then the connection closes',
    why: 'the session ends either way (KIP-368 keeps the mechanism); the client is told why at the first step',
  },
  {
    scenario: 'sessions: the lifetime answered, re-authentication, a request after expiry, another principal',
    paths: ['reauthenticationAsAnotherPrincipal.answer.errorMessage'],
    behaviour: 're-authentication as another principal',
    kafka: 'SASL_AUTHENTICATION_FAILED, "Cannot change principals during re-authentication from User.alice: User.bob"',
    gateway: 'the same code, "... from User:alice to User:bob"',
    why: 'principals are written as Kafka writes them everywhere else',
  },
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

import { ErrorCode } from '../../protocol/error-codes.js';
import { type AppendError, type ConsumerGroupError, type CoreErrorCode, type GroupError, isCoreError, type ReadError, type StreamsGroupError } from '../core/index.js';

/**
 * The one translation from the core's error vocabulary to Kafka error codes.
 * Handlers put these codes into responses; anything that is not a CoreError is
 * a bug or a dead core and is rethrown, so the connection closes, logged.
 */

/** Kafka has no name for success; 0 means no error. */
export const NONE = 0;

const CORE_ERRORS: Readonly<Record<CoreErrorCode, number>> = {
  invalid_name: ErrorCode.INVALID_TOPIC_EXCEPTION,
  invalid_argument: ErrorCode.INVALID_REQUEST,
  unknown_queue: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  unknown_partition: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  queue_exists: ErrorCode.TOPIC_ALREADY_EXISTS,
  transaction_id_too_long: ErrorCode.INVALID_REQUEST,
  invalid_config: ErrorCode.INVALID_CONFIG,
  unknown_lease: ErrorCode.INVALID_REQUEST,
  not_supported: ErrorCode.UNSUPPORTED_VERSION,
  // Kafka answers a corrupt segment with CorruptRecordException's code.
  corrupt_batch: ErrorCode.CORRUPT_MESSAGE,
  // A closing core is a transient condition for a client: it retries elsewhere or later.
  closed: ErrorCode.NOT_LEADER_OR_FOLLOWER,
  // The store did not answer. KAFKA_STORAGE_ERROR is Kafka's own answer when a
  // broker's log directory fails, and both clients retry it: kafkajs marks it
  // retriable, librdkafka refreshes metadata and retries (a consumer backs off
  // as for a leader change instead of raising an error). Produce answers
  // REQUEST_TIMED_OUT instead (UNAVAILABLE_FOR_PRODUCE below).
  unavailable: ErrorCode.KAFKA_STORAGE_ERROR,
  // The memory engine's size limit is the operator's policy and retrying does
  // not make room, so the answer must not be retriable (clients would spin
  // until their delivery timeout and say nothing useful): POLICY_VIOLATION is
  // final for kafkajs and librdkafka, and its message (Produce v8+) says why.
  storage_full: ErrorCode.POLICY_VIOLATION,
  // Transactional handlers answer INVALID_PRODUCER_EPOCH instead for request versions older than KIP-588's.
  producer_fenced: ErrorCode.PRODUCER_FENCED,
  invalid_producer_id_mapping: ErrorCode.INVALID_PRODUCER_ID_MAPPING,
  invalid_txn_state: ErrorCode.INVALID_TXN_STATE,
  invalid_transaction_timeout: ErrorCode.INVALID_TRANSACTION_TIMEOUT,
  // Another core node holds the transactional id's coordinator lease; clients find the coordinator again.
  not_coordinator: ErrorCode.NOT_COORDINATOR,
};

/**
 * What Produce answers when the store did not answer: the append may have
 * committed before the answer was lost (a COMMIT cut off by a timeout), and
 * REQUEST_TIMED_OUT says exactly that. librdkafka retries it marking the
 * records "possibly persisted", kafkajs retries it; an idempotent producer
 * resends the same sequence numbers, which the core answers with the first
 * append's offsets, so nothing is written twice. (KAFKA_STORAGE_ERROR would
 * tell librdkafka the records were surely not persisted.)
 */
export const UNAVAILABLE_FOR_PRODUCE: Partial<Record<CoreErrorCode, number>> = { unavailable: ErrorCode.REQUEST_TIMED_OUT };

const APPEND_ERRORS: Readonly<Record<AppendError, number>> = {
  unknown_queue: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  unknown_partition: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  out_of_order_sequence: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
  invalid_producer_epoch: ErrorCode.INVALID_PRODUCER_EPOCH,
  unknown_producer_id: ErrorCode.UNKNOWN_PRODUCER_ID,
  message_too_large: ErrorCode.MESSAGE_TOO_LARGE,
  corrupt_message: ErrorCode.CORRUPT_MESSAGE,
  unsupported_compression: ErrorCode.UNSUPPORTED_COMPRESSION_TYPE,
  invalid_record: ErrorCode.INVALID_RECORD,
  invalid_timestamp: ErrorCode.INVALID_TIMESTAMP,
  invalid_txn_state: ErrorCode.INVALID_TXN_STATE,
};

const READ_ERRORS: Readonly<Record<ReadError, number>> = {
  unknown_queue: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  unknown_partition: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  offset_out_of_range: ErrorCode.OFFSET_OUT_OF_RANGE,
};

export function coreErrorCode(code: CoreErrorCode): number {
  return CORE_ERRORS[code] ?? ErrorCode.UNKNOWN_SERVER_ERROR;
}

export function appendErrorCode(error: AppendError | null): number {
  return error === null ? NONE : APPEND_ERRORS[error] ?? ErrorCode.UNKNOWN_SERVER_ERROR;
}

export function readErrorCode(error: ReadError | null): number {
  return error === null ? NONE : READ_ERRORS[error] ?? ErrorCode.UNKNOWN_SERVER_ERROR;
}

/**
 * The Kafka code and message for an error a core call threw. A CoreError
 * becomes a response code; anything else is rethrown (the connection dies).
 */
export function kafkaErrorOf(e: unknown, overrides?: Partial<Record<CoreErrorCode, number>>): { errorCode: number; errorMessage: string } {
  if (isCoreError(e)) return { errorCode: overrides?.[e.code] ?? coreErrorCode(e.code), errorMessage: e.message };
  throw e;
}

const GROUP_ERRORS: Readonly<Record<GroupError, number>> = {
  invalid_group_id: ErrorCode.INVALID_GROUP_ID,
  unknown_member_id: ErrorCode.UNKNOWN_MEMBER_ID,
  member_id_required: ErrorCode.MEMBER_ID_REQUIRED,
  illegal_generation: ErrorCode.ILLEGAL_GENERATION,
  rebalance_in_progress: ErrorCode.REBALANCE_IN_PROGRESS,
  fenced_instance_id: ErrorCode.FENCED_INSTANCE_ID,
  inconsistent_group_protocol: ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
  invalid_session_timeout: ErrorCode.INVALID_SESSION_TIMEOUT,
  group_max_size_reached: ErrorCode.GROUP_MAX_SIZE_REACHED,
  group_id_not_found: ErrorCode.GROUP_ID_NOT_FOUND,
  non_empty_group: ErrorCode.NON_EMPTY_GROUP,
  group_subscribed_to_topic: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC,
  coordinator_not_available: ErrorCode.COORDINATOR_NOT_AVAILABLE,
  not_coordinator: ErrorCode.NOT_COORDINATOR,
  stale_member_epoch: ErrorCode.STALE_MEMBER_EPOCH,
};

export function groupErrorCode(error: GroupError | null): number {
  return error === null ? NONE : GROUP_ERRORS[error] ?? ErrorCode.UNKNOWN_SERVER_ERROR;
}

const CONSUMER_GROUP_ERRORS: Readonly<Record<ConsumerGroupError, number>> = {
  invalid_request: ErrorCode.INVALID_REQUEST,
  invalid_group_id: ErrorCode.INVALID_GROUP_ID,
  unknown_member_id: ErrorCode.UNKNOWN_MEMBER_ID,
  fenced_member_epoch: ErrorCode.FENCED_MEMBER_EPOCH,
  stale_member_epoch: ErrorCode.STALE_MEMBER_EPOCH,
  unreleased_instance_id: ErrorCode.UNRELEASED_INSTANCE_ID,
  fenced_instance_id: ErrorCode.FENCED_INSTANCE_ID,
  unsupported_assignor: ErrorCode.UNSUPPORTED_ASSIGNOR,
  invalid_regular_expression: ErrorCode.INVALID_REGULAR_EXPRESSION,
  group_max_size_reached: ErrorCode.GROUP_MAX_SIZE_REACHED,
  group_id_not_found: ErrorCode.GROUP_ID_NOT_FOUND,
  coordinator_not_available: ErrorCode.COORDINATOR_NOT_AVAILABLE,
  not_coordinator: ErrorCode.NOT_COORDINATOR,
};

/** A KIP-848 consumer group's error (ConsumerGroupHeartbeat, ConsumerGroupDescribe, OffsetFetch v9+) as its Kafka code. */
export function consumerGroupErrorCode(error: ConsumerGroupError | null): number {
  return error === null ? NONE : CONSUMER_GROUP_ERRORS[error] ?? ErrorCode.UNKNOWN_SERVER_ERROR;
}

const STREAMS_GROUP_ERRORS: Readonly<Record<StreamsGroupError, number>> = {
  invalid_request: ErrorCode.INVALID_REQUEST,
  unknown_member_id: ErrorCode.UNKNOWN_MEMBER_ID,
  fenced_member_epoch: ErrorCode.FENCED_MEMBER_EPOCH,
  unreleased_instance_id: ErrorCode.UNRELEASED_INSTANCE_ID,
  fenced_instance_id: ErrorCode.FENCED_INSTANCE_ID,
  group_max_size_reached: ErrorCode.GROUP_MAX_SIZE_REACHED,
  group_id_not_found: ErrorCode.GROUP_ID_NOT_FOUND,
  streams_invalid_topology: ErrorCode.STREAMS_INVALID_TOPOLOGY,
  streams_invalid_topology_epoch: ErrorCode.STREAMS_INVALID_TOPOLOGY_EPOCH,
  streams_topology_fenced: ErrorCode.STREAMS_TOPOLOGY_FENCED,
  coordinator_not_available: ErrorCode.COORDINATOR_NOT_AVAILABLE,
  not_coordinator: ErrorCode.NOT_COORDINATOR,
};

/** A streams group's error (StreamsGroupHeartbeat, StreamsGroupDescribe) as its Kafka code. */
export function streamsGroupErrorCode(error: StreamsGroupError | null): number {
  return error === null ? NONE : STREAMS_GROUP_ERRORS[error] ?? ErrorCode.UNKNOWN_SERVER_ERROR;
}

/**
 * What a group API answers when the core could not: a store that did not
 * answer is COORDINATOR_NOT_AVAILABLE, which Kafka's group coordinator
 * answers when it cannot read or write its log, and on which every client
 * looks the coordinator up again and retries (KAFKA_STORAGE_ERROR, the data
 * plane's answer, is fatal to the Java consumer's commit and offset fetch);
 * a closing core is NOT_COORDINATOR, so the client goes to another one.
 */
export const COORDINATOR_TRANSIENT: Partial<Record<CoreErrorCode, number>> = {
  unavailable: ErrorCode.COORDINATOR_NOT_AVAILABLE,
  closed: ErrorCode.NOT_COORDINATOR,
};

/** COORDINATOR_TRANSIENT's code for `e` (ApiHandler.unavailable); undefined for anything else, which stays a dead connection. */
export function transientCoordinatorCode(e: unknown): number | undefined {
  return isCoreError(e) ? COORDINATOR_TRANSIENT[e.code] : undefined;
}

/**
 * Share sessions (KIP-932), kept by the gateway a member fetches through, as
 * Kafka's broker keeps them: epoch 0 opens a session with the partitions
 * named, each later request carries the next epoch and names only what it
 * adds, -1 closes it. A session is transient (no durable state): a member
 * sent to another gateway gets SHARE_SESSION_NOT_FOUND and opens a new one,
 * as on Kafka after a broker restart. Also: the core's share group errors as
 * Kafka's error codes.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import { isCoreError, type ShareGroupError } from '../core/index.js';
import type { HandlerContext } from './handler.js';

export interface SharePartitionRef {
  topicId: string;
  topic: string;
  partition: number;
}

export interface ShareSession {
  /** The epoch the next request must carry. */
  epoch: number;
  partitions: Map<string, SharePartitionRef>;
}

const SESSIONS = 'share-sessions';
export const FINAL_EPOCH = -1;

function sessions(ctx: HandlerContext): Map<string, ShareSession> {
  let map = ctx.shared.get(SESSIONS) as Map<string, ShareSession> | undefined;
  if (!map) ctx.shared.set(SESSIONS, (map = new Map()));
  return map;
}

export function partitionKey(topicId: string, partition: number): string {
  return `${topicId}:${partition}`;
}

/**
 * The session a request with this epoch works in: a new one for 0, the
 * member's for the next epoch (then moved on), and for -1 the member's,
 * removed. Answers an error code when the epoch does not fit.
 */
export function shareSession(ctx: HandlerContext, group: string, memberId: string, epoch: number): ShareSession | number {
  const map = sessions(ctx);
  const key = `${group}\0${memberId}`;
  if (epoch === 0) {
    const session: ShareSession = { epoch: 1, partitions: new Map() };
    map.set(key, session);
    return session;
  }
  const session = map.get(key);
  if (session === undefined) return ErrorCode.SHARE_SESSION_NOT_FOUND;
  if (epoch === FINAL_EPOCH) {
    map.delete(key);
    return session;
  }
  if (epoch !== session.epoch) return ErrorCode.INVALID_SHARE_SESSION_EPOCH;
  session.epoch = epoch === 0x7fffffff ? 1 : epoch + 1;
  return session;
}

const SHARE_ERRORS: Record<ShareGroupError, number> = {
  invalid_request: ErrorCode.INVALID_REQUEST,
  invalid_group_id: ErrorCode.INVALID_GROUP_ID,
  unknown_member_id: ErrorCode.UNKNOWN_MEMBER_ID,
  fenced_member_epoch: ErrorCode.FENCED_MEMBER_EPOCH,
  group_id_not_found: ErrorCode.GROUP_ID_NOT_FOUND,
  group_max_size_reached: ErrorCode.GROUP_MAX_SIZE_REACHED,
  non_empty_group: ErrorCode.NON_EMPTY_GROUP,
  unknown_topic_or_partition: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  unknown_topic_id: ErrorCode.UNKNOWN_TOPIC_ID,
  invalid_record_state: ErrorCode.INVALID_RECORD_STATE,
  coordinator_not_available: ErrorCode.COORDINATOR_NOT_AVAILABLE,
  not_coordinator: ErrorCode.NOT_COORDINATOR,
};

/**
 * A share-group admin call the core refused as malformed (an empty group id,
 * a negative partition, an offset past what an int64 a reader can hold): the
 * request is answered INVALID_REQUEST with the core's sentence, and nothing
 * changed. Anything else is rethrown.
 */
export async function orInvalidRequest<T>(call: () => Promise<T>): Promise<T | { invalid: string }> {
  try {
    return await call();
  } catch (e) {
    if (isCoreError(e) && (e.code === 'invalid_argument' || e.code === 'invalid_name')) return { invalid: e.message };
    throw e;
  }
}

export function shareErrorCode(error: ShareGroupError | null): number {
  return error === null ? 0 : SHARE_ERRORS[error] ?? ErrorCode.UNKNOWN_SERVER_ERROR;
}

/** The wire's acknowledgement batches as the core takes them. */
export function ackBatches(batches: { firstOffset: bigint; lastOffset: bigint; acknowledgeTypes: number[] }[]) {
  return batches.map((b) => ({ firstOffset: Number(b.firstOffset), lastOffset: Number(b.lastOffset), types: b.acknowledgeTypes }));
}

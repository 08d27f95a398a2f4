import { randomInt } from 'node:crypto';
import { ErrorCode } from '../../protocol/error-codes.js';

/**
 * Incremental fetch sessions (KIP-227). A consumer that fetches the same
 * partitions over and over opens a session with a full fetch; later fetches
 * name only what changed (new fetch offsets, added and forgotten partitions)
 * and get back only partitions with news. Sessions belong to the gateway, not
 * the connection: a client may reconnect and go on with its session.
 *
 * Request rules, by (sessionId, epoch):
 *   (0, -1)  a full fetch without a session
 *   (0,  0)  a full fetch that opens a session
 *   (S, -1)  closes S, then a full fetch without a session
 *   (S,  0)  closes S, then a full fetch that opens a new one
 *   (S,  n)  an incremental fetch in S; n must be the epoch S expects next
 */

export interface SessionPartition {
  topic: string;
  /** Kafka's topic id, kept so v13+ responses name the topic as asked. */
  topicId: string;
  partition: number;
  fetchOffset: number;
  maxBytes: number;
  /** What the last response told the client; -1 before the first. */
  sentHighWatermark: number;
  sentLastStableOffset: number;
  sentLogStartOffset: number;
}

export class FetchSession {
  /** The epoch the next incremental fetch must carry. */
  nextEpoch = 1;
  /** In fetch order; partitions that returned data move to the end, so none starves under maxBytes. */
  readonly partitions = new Map<string, SessionPartition>();

  constructor(readonly id: number) {}

  static key(topic: string, partition: number): string {
    return `${partition}\u0000${topic}`;
  }

  advanceEpoch(): void {
    // Epochs wrap from the int32 maximum back to 1 (0 and -1 are reserved).
    this.nextEpoch = this.nextEpoch === 0x7fffffff ? 1 : this.nextEpoch + 1;
  }

  /** Moves partitions that just returned records behind the others. */
  rotate(served: Iterable<string>): void {
    for (const key of served) {
      const p = this.partitions.get(key);
      if (p) {
        this.partitions.delete(key);
        this.partitions.set(key, p);
      }
    }
  }
}

export type SessionLookup =
  | { kind: 'sessionless' }
  | { kind: 'new'; session: FetchSession }
  | { kind: 'incremental'; session: FetchSession }
  | { kind: 'error'; errorCode: number };

export class FetchSessionCache {
  /** Least recently used first. */
  private readonly sessions = new Map<number, FetchSession>();

  constructor(private readonly maxSessions: number) {}

  get size(): number {
    return this.sessions.size;
  }

  /** Applies the (sessionId, epoch) rules above. */
  begin(sessionId: number, epoch: number): SessionLookup {
    if (epoch === -1 || epoch === 0) {
      if (sessionId !== 0) this.sessions.delete(sessionId);
      if (epoch === -1 || this.maxSessions <= 0) return { kind: 'sessionless' };
      return { kind: 'new', session: this.open() };
    }
    const session = this.sessions.get(sessionId);
    if (!session) return { kind: 'error', errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND };
    if (epoch !== session.nextEpoch) return { kind: 'error', errorCode: ErrorCode.INVALID_FETCH_SESSION_EPOCH };
    this.sessions.delete(sessionId);
    this.sessions.set(sessionId, session);
    return { kind: 'incremental', session };
  }

  private open(): FetchSession {
    if (this.sessions.size >= this.maxSessions) {
      const oldest = this.sessions.keys().next().value;
      if (oldest !== undefined) this.sessions.delete(oldest);
    }
    let id: number;
    do id = randomInt(1, 0x7fffffff);
    while (this.sessions.has(id));
    const session = new FetchSession(id);
    this.sessions.set(id, session);
    return session;
  }
}

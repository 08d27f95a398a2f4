/**
 * A fetch session with one broker (KIP-227), as Kafka's consumers keep one:
 * the first Fetch names every partition and asks for a session; each later
 * one names only the partitions whose position or limit changed since the
 * broker last heard of them, and the partitions to drop, and the broker
 * answers only the partitions with something to say. A broker that keeps no
 * session (id 0 in its answer, or a version before 7) is asked in full each
 * time; one that lost the session (FETCH_SESSION_ID_NOT_FOUND,
 * INVALID_FETCH_SESSION_EPOCH) or a new connection starts a new one.
 */
import { ApiKey } from '../../protocol/api-keys.js';
import { ErrorCode } from '../../protocol/error-codes.js';
import type { BrokerConnection } from './connection.js';
import { fetchFrom, type FetchAnswer, type FetchAsk, type FetchLimits } from './fetch.js';

/** The first Fetch version with sessions. */
const SESSIONS_FROM = 7;
const SESSION_LOST = new Set<number>([ErrorCode.FETCH_SESSION_ID_NOT_FOUND, ErrorCode.INVALID_FETCH_SESSION_EPOCH]);

export class FetchSession {
  private connection: BrokerConnection | null = null;
  private id = 0;
  private epoch = 0;
  /** The partitions in the session, as the broker last heard of them: position and limit. */
  private readonly known = new Map<string, FetchAsk>();

  /** Fetches `asks` (every partition the caller wants now) in the session; an answer whose session was lost has no partitions, and the next fetch starts a new session. */
  async fetch(connection: BrokerConnection, asks: readonly FetchAsk[], limits: FetchLimits): Promise<FetchAnswer> {
    if (connection.version(ApiKey.Fetch) < SESSIONS_FROM) return fetchFrom(connection, asks, limits);
    if (connection !== this.connection) this.reset(connection);
    const full = this.id === 0;
    const wanted = new Map(asks.map((a) => [key(a), a]));
    const changed = full ? asks : asks.filter((a) => !same(this.known.get(key(a)), a));
    const forgotten = full ? [] : [...this.known.values()].filter((a) => !wanted.has(key(a)));
    let answer: FetchAnswer;
    try {
      answer = await fetchFrom(connection, changed, limits, { sessionId: this.id, sessionEpoch: this.epoch, forgotten });
    } catch (e) {
      this.reset(null);
      throw e;
    }
    if (SESSION_LOST.has(answer.errorCode)) {
      this.reset(connection);
      return { ...answer, partitions: [] };
    }
    if (answer.errorCode !== 0) return answer;
    if (full) {
      this.id = answer.sessionId;
      this.epoch = this.id === 0 ? 0 : 1;
      this.known.clear();
    } else {
      this.epoch = this.epoch === 0x7fffffff ? 1 : this.epoch + 1;
    }
    if (this.id !== 0) {
      for (const f of forgotten) this.known.delete(key(f));
      for (const a of changed) this.known.set(key(a), a);
    }
    return answer;
  }

  /** The session this client holds: its id (0 when none) and the epoch its next Fetch carries. */
  get state(): { id: number; epoch: number; partitions: number } {
    return { id: this.id, epoch: this.epoch, partitions: this.known.size };
  }

  private reset(connection: BrokerConnection | null): void {
    this.connection = connection;
    this.id = 0;
    this.epoch = 0;
    this.known.clear();
  }
}

function key(p: { topic: string; partition: number }): string {
  return `${p.topic}\u0000${p.partition}`;
}

function same(a: FetchAsk | undefined, b: FetchAsk): boolean {
  return a !== undefined && a.offset === b.offset && a.maxBytes === b.maxBytes;
}

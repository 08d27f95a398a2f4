import type { Logger } from 'pino';
import { CoreError, isCoreError } from '../../errors.js';

/**
 * Whether PostgreSQL is answering, as the engine's calls find it.
 *
 * A failure that means "the database is not answering" (refused or broken
 * connections, connect and statement timeouts, a server shutting down or out
 * of connections) becomes CoreError('unavailable'): the gateway answers it
 * with Kafka's retriable codes and the HTTP API with 503, instead of treating
 * it as a bug. Any other database error is still a bug and stays as it is.
 *
 * Such faults come in episodes (a restart, a freeze), hundreds of failed calls
 * each: the first failure logs one warning, the first success after it one
 * line saying the database is back and how many calls failed meanwhile, and
 * nothing is logged per call in between.
 */

/** Node socket errors that mean the server cannot be reached. */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going away, refusing or out of resources, or
 * of a statement timeout; of a write that reached a server that is a standby
 * now (25006: a failover happened under the connection); of a primary
 * that does not wait for a synchronous standby (QS001, database.ts); and of
 * a commit in doubt (40003, database.ts).
 */
const SQLSTATES = new Set(['57P01', '57P02', '57P03', '57014', '53000', '53100', '53200', '53300', '58000', '58030', '25006', 'QS001', '40003']);

/** node-postgres's own messages for a connection that broke or timed out (they carry no code). */
const DRIVER_MESSAGES = /connection terminated|timeout exceeded when trying to connect|query read timeout|timeout expired|connection error and is not queryable|not queryable|terminating connection/i;

/** Of those, the ones of a server that answers but cannot take a write now: a standby, no synchronous standby, a commit in doubt. */
const WRITES_REFUSED = new Set(['25006', 'QS001', '40003']);

export function isUnavailableError(e: unknown): boolean {
  if (isCoreError(e)) return e.code === 'unavailable';
  if (!(e instanceof Error)) return false;
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNREACHABLE.has(code) || SQLSTATES.has(code) || code.startsWith('08')) return true;
  }
  return DRIVER_MESSAGES.test(e.message);
}

function describe(e: unknown): string {
  const err = e as { code?: unknown; message?: unknown };
  const message = typeof err.message === 'string' && err.message !== '' ? err.message : String(e);
  return typeof err.code === 'string' && !message.includes(err.code) ? `${message} (${err.code})` : message;
}

/** When a call began, relative to fault episodes (`Availability.begin`). */
export type CallMark = number;

export class Availability {
  private downSince: number | null = null;
  /** Episodes so far: a call's mark says which one, if any, it began in. */
  private episodes = 0;
  private failedCalls = 0;
  private firstReason = '';
  /** This episode saw writes refused or in doubt while the server answered. */
  private writesRefused = false;

  /** `onFault` hears of every call that found the database not answering (hosts.ts forgets the primary then). */
  constructor(
    private readonly log: Logger | null,
    private readonly onFault: () => void = () => {},
  ) {}

  get available(): boolean {
    return this.downSince === null;
  }

  /**
   * The error to throw for `e`: a CoreError('unavailable') when it means the
   * database did not answer (the episode's first one logged), else `e` itself.
   */
  translate(e: unknown): unknown {
    if (isCoreError(e) || !isUnavailableError(e)) return e;
    const reason = describe(e);
    this.onFault();
    this.failedCalls++;
    if (WRITES_REFUSED.has((e as { code?: string }).code ?? '')) this.writesRefused = true;
    if (this.downSince === null) {
      this.episodes++;
      this.downSince = Date.now();
      this.firstReason = reason;
      this.log?.warn({ reason }, 'PostgreSQL is not answering; requests get retriable errors (Kafka) and 503 (HTTP) until it is back');
    }
    const error = new CoreError('unavailable', `PostgreSQL did not answer (${reason}); retry the request once the database is back.`);
    (error as { cause?: unknown }).cause = e;
    return error;
  }

  /** Taken as a call begins, and given back to `succeeded`. */
  begin(): CallMark {
    return this.downSince === null ? -1 : this.episodes;
  }

  /**
   * A call reached the database and came back: ends an episode, if one was
   * under way and the call began during it. A call already in flight when the
   * database went away can still come back (a server shutting down answers
   * some statements before it closes their connections): that says nothing
   * about the database being back, and ending the episode on it would log a
   * second "not answering" line for the same fault. `committed` says a
   * transaction committed: only that ends an episode in which writes were
   * refused, as reads succeed all through a failover's last seconds.
   */
  succeeded(mark: CallMark, committed = false): void {
    if (this.downSince === null || mark !== this.episodes) return;
    // While writes are refused (a failover under way), reads still answer: only a commit ends that episode.
    if (this.writesRefused && !committed) return;
    this.writesRefused = false;
    const downForMs = Date.now() - this.downSince;
    this.log?.info({ downForMs, failedCalls: this.failedCalls, firstReason: this.firstReason }, 'PostgreSQL is answering again');
    this.downSince = null;
    this.failedCalls = 0;
  }
}

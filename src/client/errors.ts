/** What the client throws. Both carry the server's sentence as their message. */

/** The server refused a request (4xx) or failed (5xx); nothing was written for a 4xx. */
export class QueenHttpError extends Error {
  override readonly name = 'QueenHttpError';
  constructor(
    message: string,
    /** The HTTP status. */
    readonly status: number,
    /** The server's stable code: unknown_queue, invalid_request, body_too_large, ... */
    readonly code: string,
  ) {
    super(message);
  }
}

/**
 * A transaction rolled back because one of its pushes carries an id its
 * partition already stores: a retry of a transaction that committed. Nothing
 * in it was written this time.
 */
export class QueenDuplicateError extends Error {
  override readonly name = 'QueenDuplicateError';
  readonly reason = 'duplicate' as const;
  constructor(
    message: string,
    /** The builder call that failed, counting from 0 in the order they were made. */
    readonly failedIndex: number,
    /** For a push call, which item of it. */
    readonly failedItem: number | null,
  ) {
    super(message);
  }
}

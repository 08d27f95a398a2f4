/**
 * The one error a decoder raises. Whatever the input (truncated, garbled or
 * hostile), decoding either succeeds or throws a DecodeError: callers catch this
 * type alone and treat anything else as a bug.
 */
export class DecodeError extends Error {
  override readonly name = 'DecodeError';
  /** Byte position in the input where decoding gave up. */
  readonly position: number;

  constructor(message: string, position: number) {
    super(`${message} (at byte ${position})`);
    this.position = position;
  }
}

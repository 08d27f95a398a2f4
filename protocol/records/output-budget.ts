/** What decompression may produce, counted as it goes, and how its failures read. */
import { DecodeError } from '../primitives/decode-error.js';

/**
 * The records would inflate past the budget. A DecodeError like any other, so
 * callers that only care whether bytes decode need not know it; a Produce
 * tells it apart, because the batch is too large rather than corrupt.
 */
export class InflationLimitError extends DecodeError {}

/** Counts output bytes against the budget and phrases the codec's failures. */
export class OutputBudget {
  used = 0;

  constructor(
    readonly codec: string,
    readonly maxBytes: number,
    readonly at: number,
  ) {}

  get left(): number {
    return this.maxBytes - this.used;
  }

  /** Claims `n` more output bytes, or fails before they are produced. */
  take(n: number): void {
    if (n > this.left) this.exceeded();
    this.used += n;
  }

  exceeded(): never {
    throw new InflationLimitError(`${this.codec} decompression exceeds the ${this.maxBytes}-byte budget`, this.at);
  }

  corrupt(detail: string): never {
    throw new DecodeError(`${this.codec} compressed records are corrupt: ${detail}`, this.at);
  }
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/**
 * The gateway-wide cap on request bytes held in memory: frames being read
 * and requests being handled, across every connection.
 *
 * A connection asks for room for a frame's claimed size as soon as the size
 * prefix is in, before its body arrives; without room it stops reading
 * (back-pressure, not failure) and waits in line. Room is counted for the
 * claimed size, so a frame that was let in can always finish arriving: the
 * budget never lets every connection start a frame that none can complete.
 * Bytes already in memory (whole frames that came in one chunk) are counted
 * without asking; a connection that pushed the total past the cap then waits
 * for room like everyone else before it reads on.
 *
 * Grants go in arrival order, so one large frame is not starved by a stream
 * of small ones. When nothing is held, any single frame is let in, so a frame
 * up to the frame-size maximum always fits.
 */

interface Waiter {
  bytes: number;
  grant: () => void;
}

export class RequestBudget {
  private used = 0;
  private readonly waiting: Waiter[] = [];

  constructor(readonly limit: number) {}

  get heldBytes(): number {
    return this.used;
  }

  get waiters(): number {
    return this.waiting.length;
  }

  /** Counts bytes already in memory, whether or not there was room. */
  hold(bytes: number): void {
    this.used += bytes;
  }

  release(bytes: number): void {
    this.used -= bytes;
    this.admitWaiting();
  }

  /**
   * Asks for room for `bytes` (0: only for the total to be back under the
   * cap). True when granted now (the bytes are then held); otherwise false,
   * and `grant` runs once room is made (the bytes held by then), unless
   * `cancel(grant)` comes first.
   */
  request(bytes: number, grant: () => void): boolean {
    if (this.waiting.length === 0 && this.fits(bytes)) {
      this.used += bytes;
      return true;
    }
    this.waiting.push({ bytes, grant });
    return false;
  }

  cancel(grant: () => void): void {
    const i = this.waiting.findIndex((w) => w.grant === grant);
    if (i >= 0) this.waiting.splice(i, 1);
    // The head may have been what held the others back.
    if (i === 0) this.admitWaiting();
  }

  private fits(bytes: number): boolean {
    return this.used === 0 || this.used + bytes <= this.limit;
  }

  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.fits(this.waiting[0]!.bytes)) {
      const next = this.waiting.shift()!;
      this.used += next.bytes;
      next.grant();
    }
  }
}

/**
 * Splits a TCP byte stream into Kafka frames: a 4-byte big-endian size, then
 * that many bytes. Every complete frame in a chunk is handed out in one pass.
 *
 * Frames are views, never copies, and their bytes are never overwritten later:
 * a decoded Produce request keeps `records` as a view into its frame while the
 * core works on it asynchronously. So a partial frame is kept in a buffer of
 * its own and the next chunks are appended to it; only bytes past what was
 * handed out are written.
 *
 * That buffer grows with the bytes that actually arrive (doubling, capped at
 * the frame's size), never to the size the prefix claims: a client that
 * announces 100 MiB and sends ten bytes costs a few KiB, and the copies made
 * while growing add up to at most twice the frame.
 *
 * A size below zero or above the maximum is refused before anything is
 * allocated for it; the reader then stops for good (the connection closes).
 */

export class FrameTooLarge extends Error {
  override readonly name = 'FrameTooLarge';
}

const SIZE_PREFIX = 4;
/** The first allocation for a partial frame, so short tails do not allocate per chunk. */
const MIN_PARTIAL = 4096;

export class FrameReader {
  /** The frame being assembled across chunks; its capacity follows what arrived. */
  private partial: Buffer | null = null;
  private partialLength = 0;
  /** Size prefix plus body of the partial frame, once its prefix is in; -1 before. */
  private partialTotal = -1;
  private failed = false;

  constructor(
    /** Changeable between frames: a SASL listener reads small frames until the client has authenticated. */
    public maxFrameBytes: number,
    private readonly onFrame: (frame: Buffer) => void,
  ) {}

  /** Whether a frame has begun and not yet arrived whole. */
  get inProgress(): boolean {
    return this.partial !== null;
  }

  /** The body size the frame in progress claims, or null while its size prefix is incomplete (or none is in progress). */
  get claimedSize(): number | null {
    return this.partial !== null && this.partialTotal >= 0 ? this.partialTotal - SIZE_PREFIX : null;
  }

  /** Bytes of the frame in progress that have arrived (size prefix included). */
  get receivedBytes(): number {
    return this.partial === null ? 0 : this.partialLength;
  }

  /** Bytes held for the frame in progress (its buffer's capacity). */
  get heldBytes(): number {
    return this.partial?.length ?? 0;
  }

  /** Feeds one chunk; throws FrameTooLarge when a size prefix is out of bounds. */
  push(chunk: Buffer): void {
    if (this.failed) return;
    let at = this.partial === null ? 0 : this.continuePartial(chunk);
    if (at < 0) return;
    while (chunk.length - at >= SIZE_PREFIX) {
      const total = SIZE_PREFIX + this.frameSize(chunk, at);
      if (chunk.length - at < total) break;
      this.onFrame(chunk.subarray(at + SIZE_PREFIX, at + total));
      at += total;
    }
    if (at < chunk.length) this.startPartial(chunk, at);
  }

  private startPartial(chunk: Buffer, at: number): void {
    const tail = chunk.length - at;
    this.partialTotal = tail >= SIZE_PREFIX ? SIZE_PREFIX + this.frameSize(chunk, at) : -1;
    this.partial = Buffer.allocUnsafe(this.capacityFor(tail, MIN_PARTIAL));
    this.partialLength = chunk.copy(this.partial, 0, at);
  }

  /**
   * Moves the start of `chunk` into the partial frame. Returns where the rest
   * of the chunk begins, or -1 when the whole chunk went into a frame that is
   * still incomplete.
   */
  private continuePartial(chunk: Buffer): number {
    let at = 0;
    if (this.partialTotal < 0) {
      at = chunk.copy(this.partial!, this.partialLength, 0, Math.min(chunk.length, SIZE_PREFIX - this.partialLength));
      this.partialLength += at;
      if (this.partialLength < SIZE_PREFIX) return -1;
      this.partialTotal = SIZE_PREFIX + this.frameSize(this.partial!, 0);
    }
    const take = Math.min(chunk.length - at, this.partialTotal - this.partialLength);
    this.grow(this.partialLength + take);
    chunk.copy(this.partial!, this.partialLength, at, at + take);
    this.partialLength += take;
    at += take;
    if (this.partialLength < this.partialTotal) return -1;
    const frame = this.partial!.subarray(SIZE_PREFIX, this.partialTotal);
    this.partial = null;
    this.partialLength = 0;
    this.partialTotal = -1;
    this.onFrame(frame);
    return at;
  }

  /** At least `needed` bytes of room, doubling, never past the frame's size. */
  private grow(needed: number): void {
    const current = this.partial!;
    if (current.length >= needed) return;
    const grown = Buffer.allocUnsafe(this.capacityFor(needed, current.length * 2));
    current.copy(grown, 0, 0, this.partialLength);
    this.partial = grown;
  }

  private capacityFor(needed: number, preferred: number): number {
    const capacity = Math.max(needed, preferred);
    return this.partialTotal >= 0 ? Math.min(capacity, this.partialTotal) : capacity;
  }

  private frameSize(buf: Buffer, at: number): number {
    const size = buf.readInt32BE(at);
    if (size < 0 || size > this.maxFrameBytes) {
      this.failed = true;
      this.partial = null;
      throw new FrameTooLarge(
        size < 0 ? `frame size ${size} is negative` : `frame size ${size} exceeds the ${this.maxFrameBytes}-byte maximum`,
      );
    }
    return size;
  }
}

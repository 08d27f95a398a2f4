/**
 * Splits a TCP byte stream into Kafka frames: a 4-byte big-endian size, then
 * that many bytes. Every complete frame in a chunk is handed out in one pass.
 *
 * Frames are views, never copies, and their bytes are never overwritten later:
 * a decoded Produce request keeps `records` as a view into its frame while the
 * core works on it asynchronously. So a partial frame is kept in a buffer of
 * its own, sized from its length prefix once that is known, and the next
 * chunks are appended to it; only bytes past what was handed out are written.
 *
 * A size below zero or above the maximum is refused before anything is
 * allocated for it; the reader then stops for good (the connection closes).
 */

export class FrameTooLarge extends Error {
  override readonly name = 'FrameTooLarge';
}

const SIZE_PREFIX = 4;
/** Room for a partial header or a small frame, so short tails do not allocate per chunk. */
const MIN_PARTIAL = 4096;

export class FrameReader {
  /** The frame being assembled across chunks, sized for the whole frame once its prefix is known. */
  private partial: Buffer | null = null;
  private partialLength = 0;
  private failed = false;

  constructor(
    private readonly maxFrameBytes: number,
    private readonly onFrame: (frame: Buffer) => void,
  ) {}

  /** Feeds one chunk; throws FrameTooLarge when a size prefix is out of bounds. */
  push(chunk: Buffer): void {
    if (this.failed) return;
    let at = this.partial === null ? 0 : this.completePartial(chunk);
    if (at < 0) return;
    while (chunk.length - at >= SIZE_PREFIX) {
      const total = SIZE_PREFIX + this.frameSize(chunk, at);
      if (chunk.length - at < total) break;
      this.onFrame(chunk.subarray(at + SIZE_PREFIX, at + total));
      at += total;
    }
    if (at < chunk.length) {
      const tail = chunk.length - at;
      const total = tail >= SIZE_PREFIX ? SIZE_PREFIX + this.frameSize(chunk, at) : 0;
      this.partial = Buffer.allocUnsafe(Math.max(total, MIN_PARTIAL));
      this.partialLength = chunk.copy(this.partial, 0, at);
    }
  }

  /**
   * Moves the start of `chunk` into the partial frame. Returns where the rest
   * of the chunk begins, or -1 when the whole chunk went into a frame that is
   * still incomplete.
   */
  private completePartial(chunk: Buffer): number {
    let partial = this.partial!;
    let at = 0;
    if (this.partialLength < SIZE_PREFIX) {
      at = chunk.copy(partial, this.partialLength, 0, Math.min(chunk.length, SIZE_PREFIX - this.partialLength));
      this.partialLength += at;
      if (this.partialLength < SIZE_PREFIX) return -1;
    }
    const total = SIZE_PREFIX + this.frameSize(partial, 0);
    if (partial.length < total) {
      const grown = Buffer.allocUnsafe(total);
      partial.copy(grown, 0, 0, this.partialLength);
      this.partial = partial = grown;
    }
    const copied = chunk.copy(partial, this.partialLength, at, Math.min(chunk.length, at + total - this.partialLength));
    this.partialLength += copied;
    at += copied;
    if (this.partialLength < total) return -1;
    this.partial = null;
    this.partialLength = 0;
    this.onFrame(partial.subarray(SIZE_PREFIX, total));
    return at;
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

/**
 * Splits a byte stream into length-prefixed frames: a 4-byte big-endian size,
 * then that many bytes. Kafka frames its requests and responses this way, and
 * the gateway's internal RPC (src/rpc/frames.ts) borrows the same framing, so
 * both read with this one splitter, each with its own limits.
 *
 * - Every complete frame in a chunk is handed out in one pass, as a view into
 *   the chunk: no copy.
 * - A frame that arrives in pieces is kept as the list of pieces that came
 *   (views again) and copied once, into a buffer sized from its length
 *   prefix, when its last byte arrives. So a 100 MiB frame in 1,600 chunks is
 *   copied once, not once per chunk, and what is held while it comes in is
 *   the bytes that actually arrived, never the size the prefix claims: a
 *   client that announces 100 MiB and sends ten bytes holds ten bytes.
 * - Frames handed out are never overwritten later (a decoded Produce request
 *   keeps its records as a view into its frame while the core works on it).
 * - A size outside the limits is refused before anything is kept for it; the
 *   splitter then stops for good (the connection closes).
 */

export class FrameSizeError extends Error {
  override readonly name = 'FrameSizeError';
}

const SIZE_PREFIX = 4;

export interface FrameSplitterOptions {
  /** The smallest frame the stream may carry (the RPC's frames hold at least their kind byte). Default 0. */
  minFrameBytes?: number;
}

export class FrameSplitter {
  /** The start of the frame in progress, as the views that came in; empty when none is in progress. */
  private pieces: Buffer[] = [];
  private pendingBytes = 0;
  /** Size prefix plus body of the frame in progress, once its prefix is in; -1 before. */
  private frameTotal = -1;
  private stopped = false;
  private readonly minFrameBytes: number;

  constructor(
    /** Changeable between frames: a SASL listener and the RPC's handshake read small frames until the peer has authenticated. */
    public maxFrameBytes: number,
    private readonly onFrame: (frame: Buffer) => void,
    options: FrameSplitterOptions = {},
  ) {
    this.minFrameBytes = options.minFrameBytes ?? 0;
  }

  /** Whether a frame has begun and not yet arrived whole. */
  get inProgress(): boolean {
    return this.pendingBytes > 0;
  }

  /** The body size the frame in progress claims, or null while its size prefix is incomplete (or none is in progress). */
  get claimedSize(): number | null {
    return this.frameTotal >= 0 ? this.frameTotal - SIZE_PREFIX : null;
  }

  /** Bytes of the frame in progress that have arrived (size prefix included). */
  get receivedBytes(): number {
    return this.pendingBytes;
  }

  /** Bytes held for the frame in progress: exactly what arrived of it. */
  get heldBytes(): number {
    return this.pendingBytes;
  }

  /** Drops anything pending and ignores whatever is pushed later (the connection is going away). */
  stop(): void {
    this.stopped = true;
    this.pieces = [];
    this.pendingBytes = 0;
    this.frameTotal = -1;
  }

  /** Feeds one chunk; throws FrameSizeError when a size prefix is out of bounds. */
  push(chunk: Buffer): void {
    if (this.stopped) return;
    let at = this.pendingBytes === 0 ? 0 : this.continuePending(chunk);
    if (at < 0) return;
    while (chunk.length - at >= SIZE_PREFIX) {
      const total = SIZE_PREFIX + this.checkedSize(chunk.readInt32BE(at));
      if (chunk.length - at < total) break;
      this.onFrame(chunk.subarray(at + SIZE_PREFIX, at + total));
      if (this.stopped) return;
      at += total;
    }
    if (at < chunk.length) this.hold(chunk.subarray(at));
  }

  private hold(piece: Buffer): void {
    this.pieces.push(piece);
    this.pendingBytes += piece.length;
    if (this.frameTotal < 0 && this.pendingBytes >= SIZE_PREFIX) this.frameTotal = SIZE_PREFIX + this.checkedSize(this.prefixOfPending());
  }

  /**
   * Moves the start of `chunk` into the frame in progress. Returns where the
   * rest of the chunk begins, or -1 when the whole chunk went into a frame
   * that is still incomplete (or the splitter stopped).
   */
  private continuePending(chunk: Buffer): number {
    let at = 0;
    if (this.frameTotal < 0) {
      at = Math.min(chunk.length, SIZE_PREFIX - this.pendingBytes);
      this.hold(chunk.subarray(0, at));
      if (this.frameTotal < 0) return -1;
    }
    const take = Math.min(chunk.length - at, this.frameTotal - this.pendingBytes);
    if (take > 0) {
      this.pieces.push(chunk.subarray(at, at + take));
      this.pendingBytes += take;
      at += take;
    }
    if (this.pendingBytes < this.frameTotal) return -1;
    const frame = this.assemble();
    this.onFrame(frame);
    return this.stopped ? -1 : at;
  }

  /** The frame in progress, whole: one buffer of the size its prefix gave, each piece copied into it once. */
  private assemble(): Buffer {
    const frame = Buffer.allocUnsafe(this.frameTotal - SIZE_PREFIX);
    let skip = SIZE_PREFIX;
    let filled = 0;
    for (const piece of this.pieces) {
      if (skip >= piece.length) {
        skip -= piece.length;
        continue;
      }
      filled += piece.copy(frame, filled, skip);
      skip = 0;
    }
    this.pieces = [];
    this.pendingBytes = 0;
    this.frameTotal = -1;
    return frame;
  }

  /** The size prefix of the frame in progress, which may have come in several pieces. */
  private prefixOfPending(): number {
    const first = this.pieces[0]!;
    if (first.length >= SIZE_PREFIX) return first.readInt32BE(0);
    const prefix = Buffer.allocUnsafe(SIZE_PREFIX);
    let filled = 0;
    for (const piece of this.pieces) {
      filled += piece.copy(prefix, filled, 0, Math.min(piece.length, SIZE_PREFIX - filled));
      if (filled === SIZE_PREFIX) break;
    }
    return prefix.readInt32BE(0);
  }

  private checkedSize(size: number): number {
    if (size < this.minFrameBytes || size > this.maxFrameBytes) {
      this.stop();
      throw new FrameSizeError(
        size > this.maxFrameBytes
          ? `frame size ${size} exceeds the ${this.maxFrameBytes}-byte maximum`
          : size < 0
            ? `frame size ${size} is negative`
            : `frame size ${size} is below the ${this.minFrameBytes}-byte minimum`,
      );
    }
    return size;
  }
}

/**
 * An append-only encoder that produces a list of buffers. Small fields are
 * packed into one growing chunk; byte strings at or above `byRefThreshold` are
 * kept by reference and not copied, so a Fetch response that carries stored
 * record batches is written to the socket without ever being concatenated.
 */
export const BY_REF_THRESHOLD = 512;

const UUID_RE = /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/;

export class Writer {
  private chunks: Buffer[] = [];
  private cur: Buffer;
  private pos = 0;
  private done = 0; // bytes in `chunks`

  constructor(initialSize = 256) {
    this.cur = Buffer.allocUnsafe(initialSize);
  }

  get length(): number {
    return this.done + this.pos;
  }

  private ensure(n: number): void {
    if (this.cur.length - this.pos >= n) return;
    this.seal();
    this.cur = Buffer.allocUnsafe(Math.max(n, this.cur.length * 2, 256));
  }

  private seal(): void {
    if (this.pos > 0) {
      this.chunks.push(this.cur.subarray(0, this.pos));
      this.done += this.pos;
      this.cur = this.cur.subarray(this.pos);
      this.pos = 0;
    }
  }

  bool(v: boolean): void {
    this.ensure(1);
    this.cur[this.pos++] = v ? 1 : 0;
  }

  int8(v: number): void {
    this.ensure(1);
    this.cur.writeInt8(v, this.pos);
    this.pos += 1;
  }

  int16(v: number): void {
    this.ensure(2);
    this.cur.writeInt16BE(v, this.pos);
    this.pos += 2;
  }

  uint16(v: number): void {
    this.ensure(2);
    this.cur.writeUInt16BE(v, this.pos);
    this.pos += 2;
  }

  int32(v: number): void {
    this.ensure(4);
    this.cur.writeInt32BE(v, this.pos);
    this.pos += 4;
  }

  uint32(v: number): void {
    this.ensure(4);
    this.cur.writeUInt32BE(v, this.pos);
    this.pos += 4;
  }

  int64(v: bigint): void {
    this.ensure(8);
    this.cur.writeBigInt64BE(BigInt.asIntN(64, v), this.pos);
    this.pos += 8;
  }

  float64(v: number): void {
    this.ensure(8);
    this.cur.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  uuid(v: string | null): void {
    this.ensure(16);
    if (v === null || v === undefined) {
      this.cur.fill(0, this.pos, this.pos + 16);
    } else {
      if (!UUID_RE.test(v)) throw new TypeError(`"${v}" is not a UUID`);
      this.cur.write(v.replace(/-/g, ''), this.pos, 16, 'hex');
    }
    this.pos += 16;
  }

  uvarint(v: number): void {
    this.ensure(5);
    let u = v >>> 0;
    while (u >= 0x80) {
      this.cur[this.pos++] = (u & 0x7f) | 0x80;
      u >>>= 7;
    }
    this.cur[this.pos++] = u;
  }

  varint(v: number): void {
    this.uvarint((v << 1) ^ (v >> 31));
  }

  varlong(v: bigint | number): void {
    let u = BigInt.asUintN(64, (BigInt(v) << 1n) ^ (BigInt(v) >> 63n));
    this.ensure(10);
    while (u >= 0x80n) {
      this.cur[this.pos++] = Number(u & 0x7fn) | 0x80;
      u >>= 7n;
    }
    this.cur[this.pos++] = Number(u);
  }

  private text(v: string, length: number): void {
    this.ensure(length);
    this.cur.write(v, this.pos, length, 'utf8');
    this.pos += length;
  }

  string(v: string): void {
    const n = Buffer.byteLength(v, 'utf8');
    if (n > 0x7fff) throw new RangeError(`string of ${n} bytes exceeds the 32,767-byte limit of a Kafka string`);
    this.int16(n);
    this.text(v, n);
  }

  nullableString(v: string | null): void {
    if (v === null || v === undefined) return this.int16(-1);
    this.string(v);
  }

  compactString(v: string): void {
    const n = Buffer.byteLength(v, 'utf8');
    this.uvarint(n + 1);
    this.text(v, n);
  }

  compactNullableString(v: string | null): void {
    if (v === null || v === undefined) return this.uvarint(0);
    this.compactString(v);
  }

  /** Raw bytes, no prefix: copied when small, kept by reference when large. */
  raw(v: Uint8Array): void {
    const n = v.length;
    if (n >= BY_REF_THRESHOLD) {
      this.seal();
      this.chunks.push(Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, n));
      this.done += n;
      return;
    }
    this.ensure(n);
    this.cur.set(v, this.pos);
    this.pos += n;
  }

  /** Several buffers written back to back (stored record batches). */
  rawList(list: readonly Uint8Array[]): void {
    for (const b of list) this.raw(b);
  }

  bytes(v: Uint8Array): void {
    this.int32(v.length);
    this.raw(v);
  }

  nullableBytes(v: Uint8Array | null): void {
    if (v === null || v === undefined) return this.int32(-1);
    this.bytes(v);
  }

  compactBytes(v: Uint8Array): void {
    this.uvarint(v.length + 1);
    this.raw(v);
  }

  compactNullableBytes(v: Uint8Array | null): void {
    if (v === null || v === undefined) return this.uvarint(0);
    this.compactBytes(v);
  }

  /** Varint-prefixed bytes inside a record (-1 = null). */
  varintBytes(v: Uint8Array | null): void {
    if (v === null || v === undefined) return this.varint(-1);
    this.varint(v.length);
    this.raw(v);
  }

  /**
   * Reserves four bytes to be filled in later (a size prefix) and returns a
   * function that writes the given value into them.
   */
  reserveInt32(): (value: number) => void {
    this.ensure(4);
    const chunk = this.cur;
    const at = this.pos;
    this.pos += 4;
    return (value: number) => {
      chunk.writeInt32BE(value, at);
    };
  }

  /** The encoded bytes as a list of buffers, in order. The writer is spent. */
  finish(): Buffer[] {
    this.seal();
    return this.chunks;
  }

  /** The encoded bytes as one buffer (copies when there is more than one chunk). */
  toBuffer(): Buffer {
    const chunks = this.finish();
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.done);
  }
}

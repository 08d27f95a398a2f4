import { DecodeError } from './decode-error.js';

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
const HEX: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/**
 * A bounds-checked cursor over one buffer. Every read checks that its bytes are
 * present before touching them, so truncated input surfaces as a DecodeError
 * and a length field can never make the reader allocate more than the input
 * holds: byte strings are returned as views into the input, and array counts
 * are refused when they exceed the bytes left.
 */
export class Reader {
  readonly buf: Buffer;
  pos: number;
  readonly end: number;

  constructor(buf: Buffer, pos = 0, end = buf.length) {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  fail(message: string): never {
    throw new DecodeError(message, this.pos);
  }

  private need(n: number, what: string): number {
    const at = this.pos;
    if (at + n > this.end) {
      throw new DecodeError(`truncated input: ${what} needs ${n} bytes, ${this.end - at} left`, at);
    }
    this.pos = at + n;
    return at;
  }

  skip(n: number): void {
    if (n < 0) this.fail(`cannot skip a negative length ${n}`);
    this.need(n, 'skipped field');
  }

  bool(): boolean {
    return this.buf[this.need(1, 'bool')] !== 0;
  }

  int8(): number {
    return this.buf.readInt8(this.need(1, 'int8'));
  }

  int16(): number {
    return this.buf.readInt16BE(this.need(2, 'int16'));
  }

  uint16(): number {
    return this.buf.readUInt16BE(this.need(2, 'uint16'));
  }

  int32(): number {
    return this.buf.readInt32BE(this.need(4, 'int32'));
  }

  uint32(): number {
    return this.buf.readUInt32BE(this.need(4, 'uint32'));
  }

  int64(): bigint {
    return this.buf.readBigInt64BE(this.need(8, 'int64'));
  }

  float64(): number {
    return this.buf.readDoubleBE(this.need(8, 'float64'));
  }

  uuid(): string {
    const at = this.need(16, 'uuid');
    const b = this.buf;
    let s = '';
    for (let i = 0; i < 16; i++) {
      if (i === 4 || i === 6 || i === 8 || i === 10) s += '-';
      s += HEX[b[at + i]!];
    }
    return s === ZERO_UUID ? ZERO_UUID : s;
  }

  /** Unsigned LEB128, at most 5 bytes (32 bits), as Kafka's unsigned varint. */
  uvarint(): number {
    const b = this.buf;
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      if (this.pos >= this.end) this.fail('truncated input: varint runs past the end');
      const byte = b[this.pos++]!;
      result |= (byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        if (i === 4 && byte > 0x0f) this.fail('varint overflows 32 bits');
        return result >>> 0;
      }
      shift += 7;
    }
    return this.fail('varint longer than 5 bytes');
  }

  /** Zig-zag encoded signed 32-bit varint. */
  varint(): number {
    const u = this.uvarint();
    return (u >>> 1) ^ -(u & 1);
  }

  /** Zig-zag encoded signed 64-bit varint (at most 10 bytes). */
  varlong(): bigint {
    const b = this.buf;
    let result = 0n;
    let shift = 0n;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= this.end) this.fail('truncated input: varlong runs past the end');
      const byte = b[this.pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) {
        // The tenth byte holds bit 63 alone; more would decode to a value no int64 has.
        if (i === 9 && byte > 0x01) this.fail('varlong overflows 64 bits');
        return (result >> 1n) ^ -(result & 1n);
      }
      shift += 7n;
    }
    return this.fail('varlong longer than 10 bytes');
  }

  /** A varlong known to fit a JS number (record offset and timestamp deltas). */
  varlongNumber(): number {
    // Record deltas are small: up to 7 bytes (49 bits) is exact in a double, so
    // skip BigInt for them; only longer encodings take the exact path below.
    const b = this.buf;
    let pos = this.pos;
    let u = 0;
    let scale = 1;
    for (let i = 0; i < 7 && pos < this.end; i++) {
      const byte = b[pos++]!;
      u += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) {
        this.pos = pos;
        return u % 2 === 0 ? u / 2 : -(u + 1) / 2;
      }
      scale *= 128;
    }
    const v = this.varlong();
    if (v > BigInt(Number.MAX_SAFE_INTEGER) || v < BigInt(Number.MIN_SAFE_INTEGER)) {
      this.fail(`varlong ${v} is outside the safe integer range`);
    }
    return Number(v);
  }

  private text(length: number): string {
    const at = this.need(length, 'string');
    return this.buf.toString('utf8', at, at + length);
  }

  private view(length: number): Buffer {
    const at = this.need(length, 'bytes');
    return this.buf.subarray(at, at + length);
  }

  string(): string {
    const n = this.int16();
    if (n < 0) this.fail(`string length ${n} is negative where null is not allowed`);
    return this.text(n);
  }

  nullableString(): string | null {
    const n = this.int16();
    if (n === -1) return null;
    if (n < 0) this.fail(`string length ${n} is invalid`);
    return this.text(n);
  }

  compactString(): string {
    const n = this.uvarint() - 1;
    if (n < 0) this.fail('compact string is null where null is not allowed');
    return this.text(n);
  }

  compactNullableString(): string | null {
    const n = this.uvarint() - 1;
    return n < 0 ? null : this.text(n);
  }

  bytes(): Buffer {
    const n = this.int32();
    if (n < 0) this.fail(`bytes length ${n} is negative where null is not allowed`);
    return this.view(n);
  }

  nullableBytes(): Buffer | null {
    const n = this.int32();
    if (n === -1) return null;
    if (n < 0) this.fail(`bytes length ${n} is invalid`);
    return this.view(n);
  }

  compactBytes(): Buffer {
    const n = this.uvarint() - 1;
    if (n < 0) this.fail('compact bytes are null where null is not allowed');
    return this.view(n);
  }

  compactNullableBytes(): Buffer | null {
    const n = this.uvarint() - 1;
    return n < 0 ? null : this.view(n);
  }

  /** Varint-prefixed bytes inside a record (-1 = null). */
  varintBytes(): Buffer | null {
    const n = this.varint();
    if (n === -1) return null;
    if (n < 0) this.fail(`record field length ${n} is invalid`);
    return this.view(n);
  }

  /** Skips varint-prefixed bytes inside a record (-1 = null) without making a view of them; true when they were null. */
  skipVarintBytes(): boolean {
    const n = this.varint();
    if (n === -1) return true;
    if (n < 0) this.fail(`record field length ${n} is invalid`);
    this.need(n, 'bytes');
    return false;
  }

  /**
   * An array count. Each element takes at least one byte on the wire, so a
   * count above the bytes left is refused before anything is allocated.
   */
  private checkCount(n: number): number {
    if (n > this.end - this.pos) {
      this.fail(`array count ${n} exceeds the ${this.end - this.pos} bytes left`);
    }
    return n;
  }

  arrayLength(): number {
    const n = this.int32();
    if (n < 0) this.fail(`array count ${n} is negative where null is not allowed`);
    return this.checkCount(n);
  }

  /** -1 means null. */
  nullableArrayLength(): number {
    const n = this.int32();
    if (n === -1) return -1;
    if (n < 0) this.fail(`array count ${n} is invalid`);
    return this.checkCount(n);
  }

  compactArrayLength(): number {
    const n = this.uvarint() - 1;
    if (n < 0) this.fail('compact array is null where null is not allowed');
    return this.checkCount(n);
  }

  /** -1 means null. */
  compactNullableArrayLength(): number {
    const n = this.uvarint() - 1;
    return n < 0 ? -1 : this.checkCount(n);
  }

  /** A tagged-field section: count, then (tag, size, bytes) each. Returns the raw fields. */
  taggedFields(): Map<number, Buffer> | null {
    const count = this.checkCount(this.uvarint());
    if (count === 0) return null;
    const fields = new Map<number, Buffer>();
    let lastTag = -1;
    for (let i = 0; i < count; i++) {
      const tag = this.uvarint();
      if (tag <= lastTag) this.fail(`tagged field ${tag} is out of order or repeated`);
      lastTag = tag;
      const size = this.uvarint();
      fields.set(tag, this.view(size));
    }
    return fields;
  }
}

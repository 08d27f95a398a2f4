/**
 * The RPC's value encoding: the core's plain requests and results as tagged
 * binary values. One byte of tag, then the value; lengths and counts are
 * unsigned LEB128 varints. Buffers (record batches, member metadata) travel
 * as their raw bytes and decode as slices of the frame, without a copy.
 *
 *   0 undefined   1 null   2 false   3 true
 *   4 int        zigzag varint (|n| ≤ 2^52, so the arithmetic stays exact)
 *   5 float      IEEE 754 double, big-endian (everything else: -0, NaN, ±Infinity, big numbers)
 *   6 string     varint byte length, UTF-8
 *   7 bytes      varint length, raw bytes
 *   8 array      varint count, values
 *   9 object     varint count, (varint length + UTF-8 key, value) pairs
 *  10 bigint     varint length, decimal digits with an optional leading '-'
 *
 * Anything else (a function, a Map, a class instance) is a programming error
 * on the sending side and throws there.
 */

export const Tag = {
  Undefined: 0,
  Null: 1,
  False: 2,
  True: 3,
  Int: 4,
  Float: 5,
  String: 6,
  Bytes: 7,
  Array: 8,
  Object: 9,
  BigInt: 10,
} as const;

const INT_LIMIT = 2 ** 52;
/** Buffers at least this long are referenced, not copied, into the outgoing frame. */
const ZERO_COPY_BYTES = 512;
const SCRATCH_BYTES = 16 * 1024;

/** Collects a frame's bytes: small fields in a scratch buffer, large Buffers by reference. */
export class ValueWriter {
  private readonly parts: Buffer[] = [];
  private scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
  private start = 0;
  private pos = 0;
  private total = 0;

  /** The bytes written so far, in order, and their total length. */
  finish(): { parts: Buffer[]; length: number } {
    this.flushScratch();
    return { parts: this.parts, length: this.total };
  }

  uint8(n: number): void {
    this.ensure(1);
    this.scratch[this.pos++] = n;
  }

  uint16(n: number): void {
    this.ensure(2);
    this.pos = this.scratch.writeUInt16BE(n, this.pos);
  }

  uint32(n: number): void {
    this.ensure(4);
    this.pos = this.scratch.writeUInt32BE(n, this.pos);
  }

  float64(n: number): void {
    this.ensure(8);
    this.pos = this.scratch.writeDoubleBE(n, this.pos);
  }

  varint(n: number): void {
    this.ensure(8);
    while (n >= 0x80) {
      this.scratch[this.pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    this.scratch[this.pos++] = n;
  }

  raw(bytes: Uint8Array): void {
    if (bytes.length >= ZERO_COPY_BYTES) {
      this.flushScratch();
      this.parts.push(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
      this.total += bytes.length;
      return;
    }
    this.ensure(bytes.length);
    this.scratch.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  text(s: string): void {
    const length = Buffer.byteLength(s);
    this.varint(length);
    if (length >= ZERO_COPY_BYTES) return this.raw(Buffer.from(s, 'utf8'));
    this.ensure(length);
    this.pos += this.scratch.write(s, this.pos, 'utf8');
  }

  value(v: unknown): void {
    switch (typeof v) {
      case 'undefined':
        return this.uint8(Tag.Undefined);
      case 'boolean':
        return this.uint8(v ? Tag.True : Tag.False);
      case 'number':
        if (Number.isInteger(v) && Math.abs(v) <= INT_LIMIT && !Object.is(v, -0)) {
          this.uint8(Tag.Int);
          return this.varint(v >= 0 ? v * 2 : -v * 2 - 1);
        }
        this.uint8(Tag.Float);
        return this.float64(v);
      case 'string':
        this.uint8(Tag.String);
        return this.text(v);
      case 'bigint':
        this.uint8(Tag.BigInt);
        return this.text(v.toString());
      case 'object':
        if (v === null) return this.uint8(Tag.Null);
        if (v instanceof Uint8Array) {
          this.uint8(Tag.Bytes);
          this.varint(v.length);
          return this.raw(v);
        }
        if (Array.isArray(v)) {
          this.uint8(Tag.Array);
          this.varint(v.length);
          for (const item of v) this.value(item);
          return;
        }
        if (isPlainObject(v)) {
          const keys = Object.keys(v);
          this.uint8(Tag.Object);
          this.varint(keys.length);
          for (const key of keys) {
            this.text(key);
            this.value((v as Record<string, unknown>)[key]);
          }
          return;
        }
        throw new TypeError(`The RPC carries plain data only; got a ${(v as object).constructor?.name ?? 'non-plain object'}.`);
      default:
        throw new TypeError(`The RPC carries plain data only; got a ${typeof v}.`);
    }
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.scratch.length) return;
    this.flushScratch();
    if (n > this.scratch.length) this.scratch = Buffer.allocUnsafe(n);
  }

  private flushScratch(): void {
    if (this.pos === this.start) return;
    this.parts.push(this.scratch.subarray(this.start, this.pos));
    this.total += this.pos - this.start;
    // The flushed bytes now belong to the frame: later writes go to fresh memory.
    this.scratch = this.scratch.subarray(this.pos);
    if (this.scratch.length < 64) this.scratch = Buffer.allocUnsafe(SCRATCH_BYTES);
    this.start = 0;
    this.pos = 0;
  }
}

function isPlainObject(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}

export class ValueDecodeError extends Error {
  override readonly name = 'ValueDecodeError';
}

/** Reads values out of one frame; Buffers come out as views of it. */
export class ValueReader {
  constructor(
    private readonly buf: Buffer,
    public pos = 0,
  ) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  uint8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  uint16(): number {
    this.need(2);
    const n = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return n;
  }

  uint32(): number {
    this.need(4);
    const n = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return n;
  }

  bytes(length: number): Buffer {
    this.need(length);
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }

  varint(): number {
    let n = 0;
    let scale = 1;
    for (let i = 0; i < 8; i++) {
      const byte = this.uint8();
      n += (byte & 0x7f) * scale;
      if (byte < 0x80) return n;
      scale *= 0x80;
    }
    throw new ValueDecodeError('A varint runs longer than 8 bytes.');
  }

  text(): string {
    const length = this.varint();
    return this.bytes(length).toString('utf8');
  }

  value(): unknown {
    const tag = this.uint8();
    switch (tag) {
      case Tag.Undefined:
        return undefined;
      case Tag.Null:
        return null;
      case Tag.False:
        return false;
      case Tag.True:
        return true;
      case Tag.Int: {
        const z = this.varint();
        return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
      }
      case Tag.Float: {
        this.need(8);
        const n = this.buf.readDoubleBE(this.pos);
        this.pos += 8;
        return n;
      }
      case Tag.String:
        return this.text();
      case Tag.Bytes:
        return this.bytes(this.varint());
      case Tag.Array: {
        const count = this.count();
        const out: unknown[] = new Array(count);
        for (let i = 0; i < count; i++) out[i] = this.value();
        return out;
      }
      case Tag.Object: {
        const count = this.count();
        const out: Record<string, unknown> = {};
        for (let i = 0; i < count; i++) {
          const key = this.text();
          // A key such as __proto__ must become an own property, never the prototype.
          Object.defineProperty(out, key, { value: this.value(), enumerable: true, writable: true, configurable: true });
        }
        return out;
      }
      case Tag.BigInt: {
        const digits = this.text();
        if (!/^-?\d+$/.test(digits)) throw new ValueDecodeError(`A bigint holds ${JSON.stringify(digits.slice(0, 40))}, not digits.`);
        return BigInt(digits);
      }
      default:
        throw new ValueDecodeError(`Unknown value tag ${tag}.`);
    }
  }

  /** A count of items, each at least one byte: more than the bytes left is a lie that must not allocate. */
  private count(): number {
    const n = this.varint();
    if (n > this.remaining) throw new ValueDecodeError(`A count of ${n} items exceeds the ${this.remaining} bytes left in the frame.`);
    return n;
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new ValueDecodeError(`The frame ends ${this.pos + n - this.buf.length} bytes early.`);
  }
}

export function encodeValue(v: unknown): Buffer {
  const w = new ValueWriter();
  w.value(v);
  const { parts, length } = w.finish();
  return Buffer.concat(parts, length);
}

export function decodeValue(buf: Buffer): unknown {
  const r = new ValueReader(buf);
  const v = r.value();
  if (r.remaining !== 0) throw new ValueDecodeError(`${r.remaining} bytes follow the value.`);
  return v;
}

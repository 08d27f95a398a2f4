import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Reader } from '../../protocol/primitives/reader.js';
import { Writer } from '../../protocol/primitives/writer.js';
import { DecodeError } from '../../protocol/primitives/decode-error.js';
import { readTagged, writeTagged } from '../../protocol/codec/runtime.js';

/** The wire forms of Kafka's primitive types, byte for byte. */

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

function written(write: (w: Writer) => void): string {
  const w = new Writer(4);
  write(w);
  return w.toBuffer().toString('hex');
}

function reader(bytes: string): Reader {
  return new Reader(hex(bytes));
}

const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

describe('varint (zig-zag, 32-bit)', () => {
  const table: [number, string][] = [
    [0, '00'],
    [-1, '01'],
    [1, '02'],
    [-64, '7f'],
    [64, '8001'],
    [300, 'd804'],
    [INT32_MAX, 'feffffff0f'],
    [INT32_MIN, 'ffffffff0f'],
  ];
  it.each(table)('%d is %s', (value, bytes) => {
    expect(written((w) => w.varint(value))).toBe(bytes);
    const r = reader(bytes);
    expect(r.varint()).toBe(value);
    expect(r.remaining).toBe(0);
  });

  it('round-trips every int32', () => {
    fc.assert(fc.property(fc.integer({ min: INT32_MIN, max: INT32_MAX }), (v) => {
      const w = new Writer();
      w.varint(v);
      expect(new Reader(w.toBuffer()).varint()).toBe(v);
    }));
  });

  it('refuses a sixth byte and bits beyond 32', () => {
    expect(() => reader('ffffffffff01').varint()).toThrow(DecodeError);
    expect(() => reader('ffffffff1f').varint()).toThrow(/overflows 32 bits/);
  });
});

describe('unsigned varint', () => {
  const table: [number, string][] = [
    [0, '00'], [1, '01'], [127, '7f'], [128, '8001'], [16384, '808001'], [2 ** 32 - 1, 'ffffffff0f'],
  ];
  it.each(table)('%d is %s', (value, bytes) => {
    expect(written((w) => w.uvarint(value))).toBe(bytes);
    expect(reader(bytes).uvarint()).toBe(value);
  });

  it('a varint that runs off the end, or never ends, is a DecodeError', () => {
    expect(() => reader('8080').uvarint()).toThrow(/runs past the end/);
    expect(() => reader('80'.repeat(40)).uvarint()).toThrow(/longer than 5 bytes/);
  });
});

describe('varlong (zig-zag, 64-bit)', () => {
  const table: [bigint, string][] = [
    [0n, '00'],
    [-1n, '01'],
    [1n, '02'],
    [BigInt(INT32_MAX) + 1n, '8080808010'],
    [INT64_MAX, 'feffffffffffffffff01'],
    [INT64_MIN, 'ffffffffffffffffff01'],
  ];
  it.each(table)('%s is %s', (value, bytes) => {
    expect(written((w) => w.varlong(value))).toBe(bytes);
    const r = reader(bytes);
    expect(r.varlong()).toBe(value);
    expect(r.remaining).toBe(0);
  });

  it('round-trips every int64', () => {
    fc.assert(fc.property(fc.bigInt({ min: INT64_MIN, max: INT64_MAX }), (v) => {
      const w = new Writer();
      w.varlong(v);
      expect(new Reader(w.toBuffer()).varlong()).toBe(v);
    }));
  });

  it('refuses an eleventh byte and bits beyond 64', () => {
    expect(() => reader('ff'.repeat(10) + '01').varlong()).toThrow(DecodeError);
    expect(() => reader('ff'.repeat(9) + '7f').varlong()).toThrow(/overflows 64 bits/);
  });

  it('varlongNumber agrees with varlong for every safe integer, short encodings (its fast path) and long ones alike', () => {
    const same = (v: bigint) => {
      const w = new Writer();
      w.varlong(v);
      const bytes = w.toBuffer();
      const r = new Reader(Buffer.concat([bytes, Buffer.from([0x55])]));
      expect(r.varlongNumber()).toBe(Number(v));
      expect(r.pos).toBe(bytes.length);
    };
    for (const v of [0n, -1n, 1n, -64n, 63n, 64n, -65n, 2n ** 48n - 1n, -(2n ** 48n), 2n ** 48n, -(2n ** 48n) - 1n]) same(v);
    fc.assert(fc.property(fc.bigInt({ min: -(2n ** 53n - 1n), max: 2n ** 53n - 1n }), same));
    fc.assert(fc.property(fc.integer({ min: -1_000_000, max: 1_000_000 }), (n) => same(BigInt(n))));
    expect(() => reader('80808080808080').varlongNumber()).toThrow(/truncated/);
  });

  it('varlongNumber refuses values beyond the safe integer range', () => {
    expect(() => reader('feffffffffffffffff01').varlongNumber()).toThrow(/safe integer range/);
    const r = reader('feffffffffffff1f'); // 2^53 - 1
    expect(r.varlongNumber()).toBe(Number.MAX_SAFE_INTEGER);
  });
});

describe('strings', () => {
  it('classic strings carry an int16 length; null is -1', () => {
    expect(written((w) => w.string('héllo'))).toBe('0006' + Buffer.from('héllo').toString('hex'));
    expect(written((w) => w.string(''))).toBe('0000');
    expect(written((w) => w.nullableString(null))).toBe('ffff');
    expect(reader('ffff').nullableString()).toBeNull();
    expect(reader('0002' + '6869').string()).toBe('hi');
  });

  it('compact strings carry length + 1 as an unsigned varint; null is 0', () => {
    expect(written((w) => w.compactString(''))).toBe('01');
    expect(written((w) => w.compactString('hi'))).toBe('036869');
    expect(written((w) => w.compactNullableString(null))).toBe('00');
    expect(reader('00').compactNullableString()).toBeNull();
    expect(reader('036869').compactString()).toBe('hi');
  });

  it('null where the version forbids it is a DecodeError', () => {
    expect(() => reader('ffff').string()).toThrow(/null is not allowed/);
    expect(() => reader('00').compactString()).toThrow(/null is not allowed/);
    expect(() => reader('fffe').nullableString()).toThrow(DecodeError);
  });

  it('a length beyond the input is a DecodeError', () => {
    expect(() => reader('7fff41').string()).toThrow(/truncated input/);
    expect(() => reader('ffffffff0f41').compactString()).toThrow(/truncated input/);
  });

  it('round-trips any Unicode text in all four forms', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (s) => {
      const w = new Writer();
      w.string(s); w.nullableString(s); w.compactString(s); w.compactNullableString(s);
      const r = new Reader(w.toBuffer());
      expect([r.string(), r.nullableString(), r.compactString(), r.compactNullableString()]).toEqual([s, s, s, s]);
      expect(r.remaining).toBe(0);
    }));
  });

  it('a classic string longer than 32,767 bytes is refused when writing, with the reason', () => {
    expect(() => new Writer().string('x'.repeat(32768))).toThrow(/32,767/);
  });
});

describe('bytes', () => {
  it('classic bytes carry an int32 length; null is -1', () => {
    expect(written((w) => w.bytes(hex('0102')))).toBe('000000020102');
    expect(written((w) => w.nullableBytes(null))).toBe('ffffffff');
    expect(reader('ffffffff').nullableBytes()).toBeNull();
    expect(reader('000000020102').bytes()).toEqual(hex('0102'));
  });

  it('compact bytes carry length + 1; null is 0', () => {
    expect(written((w) => w.compactBytes(hex('0102')))).toBe('030102');
    expect(written((w) => w.compactNullableBytes(null))).toBe('00');
    expect(reader('00').compactNullableBytes()).toBeNull();
    expect(() => reader('00').compactBytes()).toThrow(DecodeError);
  });

  it('decoded bytes are views of the input, never copies', () => {
    const input = hex('00000003aabbcc');
    const view = new Reader(input).bytes();
    expect(view.buffer).toBe(input.buffer);
  });

  it('large byte strings are written by reference, small ones copied', () => {
    const big = Buffer.alloc(4096, 1);
    const w = new Writer();
    w.bytes(big);
    const chunks = w.finish();
    expect(chunks.some((c) => c === big)).toBe(true);
  });

  it('a length beyond the input is a DecodeError', () => {
    expect(() => reader('7fffffff00').bytes()).toThrow(/needs 2147483647 bytes/);
    expect(() => reader('80000000').bytes()).toThrow(DecodeError);
  });
});

describe('uuid', () => {
  it('is 16 bytes, read back as dashed lowercase hex', () => {
    const id = '0123abcd-4567-89ef-0123-456789abcdef';
    expect(written((w) => w.uuid(id))).toBe(id.replace(/-/g, ''));
    expect(reader(id.replace(/-/g, '')).uuid()).toBe(id);
    expect(written((w) => w.uuid('0123ABCD456789EF0123456789ABCDEF'))).toBe(id.replace(/-/g, ''));
  });

  it('null writes the zero uuid', () => {
    expect(written((w) => w.uuid(null))).toBe('00'.repeat(16));
  });

  it('refuses text that is not a uuid', () => {
    expect(() => new Writer().uuid('not-a-uuid')).toThrow(/not a UUID/);
  });
});

describe('fixed-width numbers', () => {
  it('int8 to int64 and unsigned forms are big-endian', () => {
    expect(written((w) => { w.int8(-2); w.int16(-2); w.uint16(65535); w.int32(INT32_MIN); w.uint32(2 ** 32 - 1); w.int64(INT64_MIN); }))
      .toBe('fe' + 'fffe' + 'ffff' + '80000000' + 'ffffffff' + '8000000000000000');
    const r = reader('fe' + 'fffe' + 'ffff' + '80000000' + 'ffffffff' + '8000000000000000');
    expect([r.int8(), r.int16(), r.uint16(), r.int32(), r.uint32(), r.int64()]).toEqual([-2, -2, 65535, INT32_MIN, 2 ** 32 - 1, INT64_MIN]);
  });

  it('float64 is an IEEE 754 double, big-endian', () => {
    expect(written((w) => w.float64(1.5))).toBe('3ff8000000000000');
    expect(written((w) => w.float64(-0))).toBe('8000000000000000');
    expect(reader('7ff8000000000000').float64()).toBeNaN();
    expect(reader('fff0000000000000').float64()).toBe(-Infinity);
    expect(Object.is(reader('8000000000000000').float64(), -0)).toBe(true);
  });

  it('bool reads any non-zero byte as true', () => {
    expect(written((w) => { w.bool(true); w.bool(false); })).toBe('0100');
    expect(reader('02').bool()).toBe(true);
  });

  it('every fixed-width read past the end is a DecodeError', () => {
    for (const read of ['int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'uuid', 'bool'] as const) {
      expect(() => new Reader(Buffer.alloc(0))[read](), read).toThrow(DecodeError);
    }
  });
});

describe('arrays', () => {
  it('counts: classic int32 (-1 null), compact uvarint count + 1 (0 null)', () => {
    expect(reader('00000002' + '0000').arrayLength()).toBe(2);
    expect(reader('ffffffff').nullableArrayLength()).toBe(-1);
    expect(reader('03' + '0000').compactArrayLength()).toBe(2);
    expect(reader('00').compactNullableArrayLength()).toBe(-1);
  });

  it('a count above the bytes left is refused before anything is allocated', () => {
    expect(() => reader('7fffffff00').arrayLength()).toThrow(/array count 2147483647 exceeds the 1 bytes left/);
    expect(() => reader('ffffffff0f').compactArrayLength()).toThrow(DecodeError);
    expect(() => reader('fffffffe').nullableArrayLength()).toThrow(/array count -2/);
    expect(() => reader('ffffffff').arrayLength()).toThrow(/null is not allowed/);
  });
});

describe('tagged-field sections', () => {
  it('an empty section is one zero byte', () => {
    expect(written((w) => writeTagged(w, []))).toBe('00');
  });

  it('writes only fields that differ from their default, in tag order, each with its size', () => {
    const bytes = written((w) => writeTagged(w, [
      [0, 7, 0, (w, v) => w.int32(v as number)],
      [1, -1, -1, (w, v) => w.int32(v as number)],
      [3, 'ab', '', (w, v) => w.compactString(v as string)],
    ]));
    expect(bytes).toBe('02' + '00' + '04' + '00000007' + '03' + '03' + '036162');
  });

  it('reads each field in a sub-reader bounded by its size, and skips unknown tags', () => {
    const seen: [number, number][] = [];
    const r = reader('03' + '00' + '04' + '00000007' + '05' + '02' + 'abcd' + '09' + '01' + '2a' + 'ee');
    readTagged(r, (tag, sub) => { if (tag !== 5) seen.push([tag, tag === 0 ? sub.int32() : sub.int8()]); });
    expect(seen).toEqual([[0, 7], [9, 42]]);
    expect(r.remaining).toBe(1);
  });

  it('a field read past its own size is a DecodeError, not a read of the next field', () => {
    const r = reader('01' + '00' + '02' + '0000' + '0007');
    expect(() => readTagged(r, (_tag, sub) => sub.int32())).toThrow(DecodeError);
  });

  it('refuses repeated or out-of-order tags, oversized fields and absurd counts', () => {
    expect(() => readTagged(reader('02' + '01' + '00' + '00' + '00'), null)).toThrow(/out of order or repeated/);
    expect(() => readTagged(reader('01' + '00' + '7f' + '00'), null)).toThrow(/claims 127 bytes/);
    expect(() => readTagged(reader('ffffffff0f'), null)).toThrow(DecodeError);
  });
});

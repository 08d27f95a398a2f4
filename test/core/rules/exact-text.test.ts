import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exactBytes, textForColumn, textFromExactBytes } from '../../../src/core/rules/exact-text.js';

describe('ids as the exact text sent', () => {
  it('writes a well-formed string as its UTF-8 bytes, so ids already stored keep their bytes', () => {
    for (const text of ['order-1', 'café', '注文', '😀', '']) expect(exactBytes(text).equals(Buffer.from(text, 'utf8'))).toBe(true);
  });

  it('keeps lone surrogates apart from each other and from U+FFFD, where UTF-8 would make them one id', () => {
    const ids = ['x\ud800y', 'x\udbffy', 'x\uFFFDy', 'x\udc00y', 'x\ud800'];
    const bytes = ids.map((id) => exactBytes(id).toString('hex'));
    expect(new Set(bytes).size).toBe(ids.length);
    expect(exactBytes('x\ud800y').toString('hex')).toBe('78eda08079');
    for (const id of ids) expect(textFromExactBytes(exactBytes(id))).toBe(id);
  });

  it('gives every string back from its bytes (property, any UTF-16 code units)', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }), (text) => {
        expect(textFromExactBytes(exactBytes(text))).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads bytes that are not WTF-8 (overlong, beyond U+10FFFF, cut short) as U+FFFD, as a UTF-8 decoder does', () => {
    expect(textFromExactBytes(Buffer.from([0x61, 0xc0, 0x80, 0x62]))).toBe('a\uFFFD\uFFFDb');
    expect(textFromExactBytes(Buffer.from([0xf4, 0x90, 0x80, 0x80]))).toBe('\uFFFD\uFFFD\uFFFD\uFFFD');
    expect(textFromExactBytes(Buffer.from([0x61, 0xe2, 0x82]))).toBe('a\uFFFD\uFFFD');
  });

  it('keeps an id a text column cannot hold (U+0000, a lone surrogate) as its JSON literal, and every other id as is', () => {
    expect(textForColumn('plain id')).toBe('plain id');
    expect(textForColumn('a\u0000b')).toBe('"a\\u0000b"');
    expect(textForColumn('x\ud800y')).toBe('"x\\ud800y"');
    expect(JSON.parse(textForColumn('x\ud800y'))).toBe('x\ud800y');
  });
});

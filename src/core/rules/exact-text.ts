/**
 * Ids as the exact text the caller sent. A JavaScript string is UTF-16 code
 * units and may hold what UTF-8 cannot: a lone surrogate ("x\ud800y"), which
 * Buffer.from(text, 'utf8') turns into U+FFFD, so "x\ud800y", "x\udbffy" and
 * "x\uFFFDy" would become one id. These bytes are WTF-8: UTF-8 itself for
 * every well-formed string (so what is already stored keeps its bytes), with
 * a lone surrogate written as its own three bytes, so different strings
 * always give different bytes and the bytes give the string back.
 */

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** String.prototype.isWellFormed, which the compiler's library target does not declare. */
const isWellFormed = (text: string) => !LONE_SURROGATE.test(text);

export function exactBytes(text: string): Buffer {
  if (isWellFormed(text)) return Buffer.from(text, 'utf8');
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const low = text.charCodeAt(i + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        c = 0x10000 + ((c - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    if (c < 0x80) bytes.push(c);
    else if (c < 0x800) bytes.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else if (c < 0x10000) bytes.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else bytes.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  return Buffer.from(bytes);
}

/** The string exactBytes made; bytes that are not WTF-8 read as U+FFFD, as UTF-8 decoding does. */
export function textFromExactBytes(bytes: Buffer): string {
  // Plain UTF-8 (every id pushed as a well-formed string) decodes as it always has.
  const utf8 = bytes.toString('utf8');
  if (!utf8.includes('\uFFFD')) return utf8;
  let out = '';
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    const need = b < 0x80 ? 0 : b >= 0xc2 && b < 0xe0 ? 1 : b >= 0xe0 && b < 0xf0 ? 2 : b >= 0xf0 && b < 0xf5 ? 3 : -1;
    let c = need === 0 ? b : need === 1 ? b & 0x1f : need === 2 ? b & 0x0f : b & 0x07;
    let ok = need >= 0 && i + need < bytes.length;
    for (let k = 1; ok && k <= need; k++) {
      const next = bytes[i + k]!;
      ok = (next & 0xc0) === 0x80;
      c = (c << 6) | (next & 0x3f);
    }
    // Overlong forms and code points past U+10FFFF are not WTF-8.
    if (ok && ((need === 2 && c < 0x800) || (need === 3 && (c < 0x10000 || c > 0x10ffff)))) ok = false;
    if (!ok) {
      out += '\uFFFD';
      i++;
      continue;
    }
    out += String.fromCodePoint(c);
    i += need + 1;
  }
  return out;
}

/** A text column cannot hold U+0000 or a lone surrogate: such an id is kept there as its JSON string literal. */
export function textForColumn(text: string): string {
  return isWellFormed(text) && !text.includes('\u0000') ? text : JSON.stringify(text);
}

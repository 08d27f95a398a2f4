import { Reader } from '../primitives/reader.js';
import { Writer } from '../primitives/writer.js';

/**
 * The few shared routines generated codecs call: arrays, tagged-field sections
 * and record sets. Everything else in a generated codec is inline.
 */

export const EMPTY = Buffer.alloc(0);

export function readArray<T>(r: Reader, count: number, readItem: (r: Reader) => T): T[] | null {
  if (count < 0) return null;
  const items = new Array<T>(count);
  for (let i = 0; i < count; i++) items[i] = readItem(r);
  return items;
}

export function writeArray<T>(
  w: Writer,
  items: readonly T[] | null | undefined,
  flexible: boolean,
  nullable: boolean,
  fieldName: string,
  writeItem: (w: Writer, item: T) => void,
): void {
  if (items === null || items === undefined) {
    if (!nullable) throw new TypeError(`${fieldName} is null, but this version does not allow a null array`);
    if (flexible) w.uvarint(0);
    else w.int32(-1);
    return;
  }
  if (flexible) w.uvarint(items.length + 1);
  else w.int32(items.length);
  for (let i = 0; i < items.length; i++) writeItem(w, items[i]!);
}

/** Reads a tagged-field section, handing each field's bytes to `readField` in a bounded sub-reader. */
export function readTagged(r: Reader, readField: ((tag: number, r: Reader) => void) | null): void {
  const count = r.uvarint();
  if (count > r.remaining) r.fail(`tagged field count ${count} exceeds the ${r.remaining} bytes left`);
  let lastTag = -1;
  for (let i = 0; i < count; i++) {
    const tag = r.uvarint();
    if (tag <= lastTag) r.fail(`tagged field ${tag} is out of order or repeated`);
    lastTag = tag;
    const size = r.uvarint();
    if (size > r.remaining) r.fail(`tagged field ${tag} claims ${size} bytes, ${r.remaining} left`);
    const start = r.pos;
    r.pos = start + size;
    if (readField) readField(tag, new Reader(r.buf, start, start + size));
  }
}

type TaggedEntry = [tag: number, value: unknown, defaultValue: unknown, write: (w: Writer, v: unknown) => void];

/** Writes the tagged fields whose values differ from their defaults, in tag order. */
export function writeTagged(w: Writer, entries: TaggedEntry[]): void {
  const present: TaggedEntry[] = [];
  for (const e of entries) {
    if (e[1] !== undefined && !sameValue(e[1], e[2])) present.push(e);
  }
  w.uvarint(present.length);
  for (const [tag, value, , write] of present) {
    const inner = new Writer(64);
    write(inner, value);
    const bytes = inner.toBuffer();
    w.uvarint(tag);
    w.uvarint(bytes.length);
    w.raw(bytes);
  }
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'bigint' || typeof b === 'bigint') {
    return (typeof a === 'bigint' || typeof a === 'number') && (typeof b === 'bigint' || typeof b === 'number') && BigInt(a) === BigInt(b);
  }
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => sameValue(x, b[i]));
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    const keys = Object.keys(b);
    return keys.every((k) => sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return false;
}

/**
 * Records go out as one buffer or as a list of stored batches written back to
 * back (kept by reference: Fetch never concatenates them).
 */
export function writeRecords(
  w: Writer,
  records: Uint8Array | readonly Uint8Array[] | null | undefined,
  flexible: boolean,
  nullable: boolean,
): void {
  if (records === null || records === undefined) {
    if (!nullable) throw new TypeError('records are null, but this version does not allow null records');
    if (flexible) w.uvarint(0);
    else w.int32(-1);
    return;
  }
  if (records instanceof Uint8Array) {
    if (flexible) w.uvarint(records.length + 1);
    else w.int32(records.length);
    w.raw(records);
    return;
  }
  let total = 0;
  for (const b of records) total += b.length;
  if (flexible) w.uvarint(total + 1);
  else w.int32(total);
  w.rawList(records);
}

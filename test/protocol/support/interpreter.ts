import { isDeepStrictEqual } from 'node:util';
import { Reader } from '../../../protocol/primitives/reader.js';
import { Writer } from '../../../protocol/primitives/writer.js';
import type { MessageDef } from '../../../protocol/schema/definition.js';
import { defaultOf, layoutOf, type LaidField, type StructLayout } from './layout.js';

/**
 * A codec that walks the definition at run time instead of running generated
 * code. It is the third contestant in the codec benchmark and, being written
 * apart from the generator, a second opinion in the round-trip tests: both
 * must produce the same bytes.
 */

type Message = Record<string, unknown>;

function readPrimitive(r: Reader, type: string, nullable: boolean, flexible: boolean): unknown {
  switch (type) {
    case 'bool': return r.bool();
    case 'int8': return r.int8();
    case 'int16': return r.int16();
    case 'uint16': return r.uint16();
    case 'int32': return r.int32();
    case 'uint32': return r.uint32();
    case 'int64': return r.int64();
    case 'float64': return r.float64();
    case 'uuid': return r.uuid();
    case 'string':
      if (flexible) return nullable ? r.compactNullableString() : r.compactString();
      return nullable ? r.nullableString() : r.string();
    default: // bytes, records
      if (flexible) return nullable ? r.compactNullableBytes() : r.compactBytes();
      return nullable ? r.nullableBytes() : r.bytes();
  }
}

function writePrimitive(w: Writer, type: string, nullable: boolean, flexible: boolean, v: unknown): void {
  switch (type) {
    case 'bool': return w.bool(v as boolean);
    case 'int8': return w.int8(v as number);
    case 'int16': return w.int16(v as number);
    case 'uint16': return w.uint16(v as number);
    case 'int32': return w.int32(v as number);
    case 'uint32': return w.uint32(v as number);
    case 'int64': return w.int64(BigInt(v as bigint));
    case 'float64': return w.float64(v as number);
    case 'uuid': return w.uuid(v as string);
    case 'string':
      if (flexible) return nullable ? w.compactNullableString(v as string | null) : w.compactString(v as string);
      return nullable ? w.nullableString(v as string | null) : w.string(v as string);
    default:
      if (flexible) return nullable ? w.compactNullableBytes(v as Buffer | null) : w.compactBytes(v as Buffer);
      return nullable ? w.nullableBytes(v as Buffer | null) : w.bytes(v as Buffer);
  }
}

function readField(r: Reader, f: LaidField, flexible: boolean): unknown {
  if (f.shape === 'primitive') return readPrimitive(r, f.primitive!, f.nullable, flexible);
  if (f.shape === 'struct') {
    if (f.nullable && r.int8() < 0) return null;
    return readStruct(r, f.struct!);
  }
  let count: number;
  if (flexible) count = f.nullable ? r.compactNullableArrayLength() : r.compactArrayLength();
  else count = f.nullable ? r.nullableArrayLength() : r.arrayLength();
  if (count < 0) return null;
  const items = new Array<unknown>(count);
  for (let i = 0; i < count; i++) {
    items[i] = f.struct ? readStruct(r, f.struct) : readPrimitive(r, f.primitive!, false, flexible);
  }
  return items;
}

function writeField(w: Writer, f: LaidField, flexible: boolean, v: unknown): void {
  if (f.shape === 'primitive') return writePrimitive(w, f.primitive!, f.nullable, flexible, v);
  if (f.shape === 'struct') {
    if (f.nullable) {
      if (v === null) return w.int8(-1);
      w.int8(1);
    }
    return writeStruct(w, f.struct!, v as Message);
  }
  const items = v as unknown[] | null;
  if (items === null) {
    if (flexible) w.uvarint(0);
    else w.int32(-1);
    return;
  }
  if (flexible) w.uvarint(items.length + 1);
  else w.int32(items.length);
  for (const item of items) {
    if (f.struct) writeStruct(w, f.struct, item as Message);
    else writePrimitive(w, f.primitive!, false, flexible, item);
  }
}

interface Plan {
  layout: StructLayout;
  message: MessageDef;
  version: number;
}

const plans = new WeakMap<StructLayout, Plan>();

function readStruct(r: Reader, layout: StructLayout): Message {
  const values: Message = {};
  for (const f of layout.plain) values[f.prop] = readField(r, f, layout.flexible);
  if (layout.flexible) {
    const count = r.uvarint();
    for (let i = 0; i < count; i++) {
      const tag = r.uvarint();
      const size = r.uvarint();
      if (size > r.remaining) r.fail(`tagged field ${tag} claims ${size} bytes, ${r.remaining} left`);
      const f = layout.tagged.find((t) => t.def.tag === tag);
      if (f) values[f.prop] = readField(new Reader(r.buf, r.pos, r.pos + size), f, true);
      r.pos += size;
    }
  }
  const plan = plans.get(layout)!;
  const out: Message = {};
  for (const { prop, def } of layout.all) {
    out[prop] = prop in values ? values[prop] : defaultOf(plan.message, def, plan.version);
  }
  return out;
}

function writeStruct(w: Writer, layout: StructLayout, o: Message): void {
  const plan = plans.get(layout)!;
  for (const f of layout.plain) {
    const v = o[f.prop];
    writeField(w, f, layout.flexible, v === undefined ? defaultOf(plan.message, f.def, plan.version) : v);
  }
  if (!layout.flexible) return;
  const present = layout.tagged.filter((f) => {
    const v = o[f.prop];
    return v !== undefined && !isDeepStrictEqual(v, defaultOf(plan.message, f.def, plan.version));
  });
  w.uvarint(present.length);
  for (const f of present) {
    const inner = new Writer(64);
    writeField(inner, f, true, o[f.prop]);
    const bytes = inner.toBuffer();
    w.uvarint(f.def.tag!);
    w.uvarint(bytes.length);
    w.raw(bytes);
  }
}

function register(layout: StructLayout, message: MessageDef, version: number): void {
  plans.set(layout, { layout, message, version });
  for (const f of [...layout.plain, ...layout.tagged]) if (f.struct) register(f.struct, message, version);
}

export interface InterpretedCodec {
  decode(r: Reader): Message;
  encode(w: Writer, message: Message): void;
}

export function interpretedCodec(message: MessageDef, version: number): InterpretedCodec {
  const layout = layoutOf(message, version);
  register(layout, message, version);
  return {
    decode: (r) => readStruct(r, layout),
    encode: (w, o) => writeStruct(w, layout, o),
  };
}

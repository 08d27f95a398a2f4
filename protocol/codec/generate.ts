import {
  inVersions,
  propertyName,
  type FieldDef,
  type MessageDef,
  type StructDef,
} from '../schema/definition.js';

/**
 * Turns one message definition at one version into the JavaScript source of a
 * decoder and an encoder. The source is straight-line code: one read or write
 * per field, fixed object shapes, no lookups at run time. `compile.ts` turns it
 * into functions once per (message, version); the protocol benchmark also loads
 * the same source ahead of time from a module to compare the two.
 *
 * Generated decoders take a Reader and return a plain object whose keys are the
 * fields' camelCase names; fields absent in that version carry their defaults.
 * Generated encoders take a Writer and such an object; missing properties are
 * written as defaults, so callers give only what their version needs.
 */

const PRIMITIVES = new Set([
  'bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'string', 'bytes', 'uuid', 'records',
]);

const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

interface Context {
  message: MessageDef;
  version: number;
  flexible: boolean;
  /** Struct decoders/encoders emitted so far, by struct path. */
  helpers: string[];
  counter: number;
  /** Constant values (defaults that are objects) referenced by generated code. */
  constants: unknown[];
  /** Helper names by struct identity: inline structs by field, shared structs by type name. */
  names: Map<FieldDef | string, string>;
}

export interface GeneratedSource {
  /** The body of `function (Reader, Writer, constants) { ...; return { decode, encode } }`. */
  body: string;
}

function isArray(type: string): boolean {
  return type.startsWith('[]');
}

function elementType(type: string): string {
  return type.slice(2);
}

function structFields(ctx: Context, field: FieldDef, typeName: string): readonly FieldDef[] {
  if (field.fields) return field.fields;
  const common: StructDef | undefined = ctx.message.commonStructs?.find((s) => s.name === typeName);
  if (!common) throw new Error(`${ctx.message.name}: field ${field.name} refers to unknown struct ${typeName}`);
  return common.fields;
}

function jsLiteral(ctx: Context, value: unknown): string {
  if (value === null) return 'null';
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  ctx.constants.push(value);
  return `K[${ctx.constants.length - 1}]`;
}

/** The value a field takes when its version does not carry it, or when a tagged field is absent. */
function defaultExpression(ctx: Context, field: FieldDef): string {
  if (field.default !== undefined) {
    if (field.type === 'int64' && typeof field.default === 'number') return `${BigInt(field.default)}n`;
    return jsLiteral(ctx, field.default);
  }
  const t = field.type;
  if (isArray(t)) return '[]';
  switch (t) {
    case 'bool': return 'false';
    case 'int8': case 'int16': case 'uint16': case 'int32': case 'uint32': case 'float64': return '0';
    case 'int64': return '0n';
    case 'string': return '""';
    case 'uuid': return JSON.stringify(ZERO_UUID);
    case 'bytes': return 'EMPTY';
    case 'records': return 'null';
    default: {
      // A struct's default is the struct with every field at its default.
      const name = structHelper(ctx, field, t);
      return `${name}.def()`;
    }
  }
}

function primitiveRead(ctx: Context, type: string, nullable: boolean): string {
  const f = ctx.flexible;
  switch (type) {
    case 'bool': return 'r.bool()';
    case 'int8': return 'r.int8()';
    case 'int16': return 'r.int16()';
    case 'uint16': return 'r.uint16()';
    case 'int32': return 'r.int32()';
    case 'uint32': return 'r.uint32()';
    case 'int64': return 'r.int64()';
    case 'float64': return 'r.float64()';
    case 'uuid': return 'r.uuid()';
    case 'string':
      if (f) return nullable ? 'r.compactNullableString()' : 'r.compactString()';
      return nullable ? 'r.nullableString()' : 'r.string()';
    case 'bytes':
    case 'records':
      if (f) return nullable ? 'r.compactNullableBytes()' : 'r.compactBytes()';
      return nullable ? 'r.nullableBytes()' : 'r.bytes()';
    default: throw new Error(`not a primitive: ${type}`);
  }
}

function primitiveWrite(ctx: Context, type: string, nullable: boolean, v: string): string {
  const f = ctx.flexible;
  switch (type) {
    case 'bool': return `w.bool(${v});`;
    case 'int8': return `w.int8(${v});`;
    case 'int16': return `w.int16(${v});`;
    case 'uint16': return `w.uint16(${v});`;
    case 'int32': return `w.int32(${v});`;
    case 'uint32': return `w.uint32(${v});`;
    case 'int64': return `w.int64(typeof ${v} === "bigint" ? ${v} : BigInt(${v}));`;
    case 'float64': return `w.float64(${v});`;
    case 'uuid': return `w.uuid(${v});`;
    case 'string':
      if (f) return nullable ? `w.compactNullableString(${v});` : `w.compactString(${v});`;
      return nullable ? `w.nullableString(${v});` : `w.string(${v});`;
    case 'bytes':
      if (f) return nullable ? `w.compactNullableBytes(${v});` : `w.compactBytes(${v});`;
      return nullable ? `w.nullableBytes(${v});` : `w.bytes(${v});`;
    case 'records':
      // Records may be given as one buffer or as a list of stored batches.
      return `writeRecords(w, ${v}, ${f}, ${nullable});`;
    default: throw new Error(`not a primitive: ${type}`);
  }
}

/** Emits a decoder/encoder pair for a struct and returns its name. */
function structHelper(ctx: Context, field: FieldDef, typeName: string): string {
  const identity: FieldDef | string = field.fields ? field : typeName;
  const known = ctx.names.get(identity);
  if (known) return known;
  const fields = structFields(ctx, field, typeName);
  const name = `S${ctx.counter++}_${typeName}`;
  ctx.names.set(identity, name);
  // Reserve the slot first so recursion (none in Kafka's specs, but cheap to allow) terminates.
  const index = ctx.helpers.length;
  ctx.helpers.push('');
  const decode = structDecodeBody(ctx, fields);
  const encode = structEncodeBody(ctx, fields);
  const defaults = structDefaultBody(ctx, fields);
  ctx.helpers[index] =
    `const ${name} = {\n` +
    `  dec(r) {\n${decode}\n  },\n` +
    `  enc(w, o) {\n${encode}\n  },\n` +
    `  def() {\n${defaults}\n  },\n` +
    `};`;
  return name;
}

function activeFields(ctx: Context, fields: readonly FieldDef[]): { plain: FieldDef[]; tagged: FieldDef[]; absent: FieldDef[] } {
  const plain: FieldDef[] = [];
  const tagged: FieldDef[] = [];
  const absent: FieldDef[] = [];
  for (const f of fields) {
    if (!inVersions(f.versions, ctx.version)) absent.push(f);
    else if (f.tag !== undefined && ctx.flexible && inVersions(f.taggedVersions ?? f.versions, ctx.version)) tagged.push(f);
    else if (f.tag !== undefined) absent.push(f); // a tagged field outside flexible versions is not on the wire
    else plain.push(f);
  }
  return { plain, tagged, absent };
}

function readExpression(ctx: Context, field: FieldDef): string {
  const nullable = inVersions(field.nullableVersions, ctx.version);
  const t = field.type;
  if (isArray(t)) {
    const elem = elementType(t);
    const count = ctx.flexible
      ? (nullable ? 'r.compactNullableArrayLength()' : 'r.compactArrayLength()')
      : (nullable ? 'r.nullableArrayLength()' : 'r.arrayLength()');
    const item = PRIMITIVES.has(elem)
      ? primitiveRead(ctx, elem, false)
      : `${structHelper(ctx, field, elem)}.dec(r)`;
    return `readArray(r, ${count}, (r) => ${item})`;
  }
  if (PRIMITIVES.has(t)) return primitiveRead(ctx, t, nullable);
  const helper = structHelper(ctx, field, t);
  return nullable ? `(r.int8() < 0 ? null : ${helper}.dec(r))` : `${helper}.dec(r)`;
}

function writeStatement(ctx: Context, field: FieldDef, v: string): string {
  const nullable = inVersions(field.nullableVersions, ctx.version);
  const t = field.type;
  if (isArray(t)) {
    const elem = elementType(t);
    const item = PRIMITIVES.has(elem)
      ? primitiveWrite(ctx, elem, false, 'e')
      : `${structHelper(ctx, field, elem)}.enc(w, e);`;
    return `writeArray(w, ${v}, ${ctx.flexible}, ${nullable}, ${JSON.stringify(field.name)}, (w, e) => { ${item} });`;
  }
  if (PRIMITIVES.has(t)) return primitiveWrite(ctx, t, nullable, v);
  const helper = structHelper(ctx, field, t);
  return nullable
    ? `if (${v} === null) w.int8(-1); else { w.int8(1); ${helper}.enc(w, ${v}); }`
    : `${helper}.enc(w, ${v});`;
}

function structDecodeBody(ctx: Context, fields: readonly FieldDef[]): string {
  const { plain, tagged, absent } = activeFields(ctx, fields);
  const lines: string[] = [];
  const locals = new Map<FieldDef, string>();
  fields.forEach((f, i) => locals.set(f, `f${i}`));
  for (const f of plain) lines.push(`    const ${locals.get(f)} = ${readExpression(ctx, f)};`);
  for (const f of absent) lines.push(`    const ${locals.get(f)} = ${defaultExpression(ctx, f)};`);
  if (ctx.flexible) {
    for (const f of tagged) lines.push(`    let ${locals.get(f)} = ${defaultExpression(ctx, f)};`);
    if (tagged.length > 0) {
      const cases = tagged
        .map((f) => `        case ${f.tag}: ${locals.get(f)} = ${readExpression(ctx, f)}; break;`)
        .join('\n');
      lines.push(
        `    readTagged(r, (tag, r) => {\n      switch (tag) {\n${cases}\n      }\n    });`,
      );
    } else {
      lines.push('    readTagged(r, null);');
    }
  }
  const props = fields.map((f) => `${propertyName(f.name)}: ${locals.get(f)}`).join(', ');
  lines.push(`    return { ${props} };`);
  return lines.join('\n');
}

function structEncodeBody(ctx: Context, fields: readonly FieldDef[]): string {
  const { plain, tagged } = activeFields(ctx, fields);
  const lines: string[] = [];
  for (const f of plain) {
    const p = propertyName(f.name);
    lines.push(`    { const v = o.${p} === undefined ? ${defaultExpression(ctx, f)} : o.${p}; ${writeStatement(ctx, f, 'v')} }`);
  }
  if (ctx.flexible) {
    if (tagged.length === 0) {
      lines.push('    w.uvarint(0);');
    } else {
      // A tagged field is written only when it differs from its default.
      const sorted = [...tagged].sort((a, b) => (a.tag ?? 0) - (b.tag ?? 0));
      const entries = sorted.map((f) => {
        const p = propertyName(f.name);
        return `[${f.tag}, o.${p}, ${defaultExpression(ctx, f)}, (w, v) => { ${writeStatement(ctx, f, 'v')} }]`;
      });
      lines.push(`    writeTagged(w, [${entries.join(', ')}]);`);
    }
  }
  return lines.join('\n');
}

function structDefaultBody(ctx: Context, fields: readonly FieldDef[]): string {
  const props = fields.map((f) => `${propertyName(f.name)}: ${defaultExpression(ctx, f)}`).join(', ');
  return `    return { ${props} };`;
}

/** Generates the source of a codec factory for `message` at `version`. */
export function generateCodecSource(message: MessageDef, version: number): GeneratedSource {
  if (!inVersions(message.validVersions, version)) {
    throw new Error(`${message.name} has no version ${version} (valid: ${message.validVersions})`);
  }
  const ctx: Context = {
    message,
    version,
    flexible: inVersions(message.flexibleVersions, version),
    helpers: [],
    counter: 0,
    constants: [],
    names: new Map(),
  };
  const top: FieldDef = { name: message.name, type: message.name, versions: '0+', fields: message.fields };
  const root = structHelper(ctx, top, message.name);
  const body =
    `"use strict";\n` +
    `// ${message.name} v${version}${ctx.flexible ? ' (flexible)' : ''}\n` +
    `${ctx.helpers.join('\n')}\n` +
    `return { decode: (r) => ${root}.dec(r), encode: (w, o) => ${root}.enc(w, o) };`;
  if (ctx.constants.length > 0) throw new Error(`${message.name}: object-valued defaults are not supported`);
  return { body };
}

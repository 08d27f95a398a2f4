import {
  inVersions,
  propertyName,
  type FieldDef,
  type MessageDef,
} from '../../../protocol/schema/definition.js';

/**
 * A message definition resolved at one version: which fields are on the wire
 * (in order), which travel as tagged fields, and which are absent and decode
 * to their defaults. Written from the definition form alone, apart from the
 * codec generator, so tests that walk it check the generator instead of
 * repeating it.
 */

export const PRIMITIVE_TYPES = new Set([
  'bool', 'int8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'float64', 'string', 'bytes', 'uuid', 'records',
]);

export const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

export interface LaidField {
  def: FieldDef;
  /** camelCase property name. */
  prop: string;
  /** 'primitive' (type is the primitive), 'array' (of `element`), or 'struct'. */
  shape: 'primitive' | 'array' | 'struct';
  /** The primitive type, or the array's element primitive; undefined for structs. */
  primitive?: string;
  nullable: boolean;
  /** For structs and arrays of structs. */
  struct?: StructLayout;
}

export interface StructLayout {
  name: string;
  flexible: boolean;
  /** On the wire in definition order. */
  plain: LaidField[];
  /** Tagged fields, sorted by tag. */
  tagged: LaidField[];
  /** Every field in definition order, with its default (what decoding yields when the field is absent). */
  all: { prop: string; field: LaidField | null; def: FieldDef }[];
  defaults: () => Record<string, unknown>;
}

export interface MessageLayout extends StructLayout {
  message: MessageDef;
  version: number;
}

function structFieldsOf(message: MessageDef, field: FieldDef, typeName: string): readonly FieldDef[] {
  if (field.fields) return field.fields;
  const common = message.commonStructs?.find((s) => s.name === typeName);
  if (!common) throw new Error(`${message.name}.${field.name}: no struct ${typeName}`);
  return common.fields;
}

/** The value a field holds when it is not on the wire. */
export function defaultOf(message: MessageDef, field: FieldDef, version: number): unknown {
  const t = field.type;
  if (field.default !== undefined) {
    if (t === 'int64' && field.default !== null) return BigInt(field.default as number | bigint);
    return field.default;
  }
  if (t.startsWith('[]')) return [];
  switch (t) {
    case 'bool': return false;
    case 'int8': case 'int16': case 'uint16': case 'int32': case 'uint32': case 'float64': return 0;
    case 'int64': return 0n;
    case 'string': return '';
    case 'uuid': return ZERO_UUID;
    case 'bytes': return Buffer.alloc(0);
    case 'records': return null;
    default: return layoutStruct(message, t, structFieldsOf(message, field, t), version).defaults();
  }
}

function layField(message: MessageDef, field: FieldDef, version: number): LaidField {
  const nullable = inVersions(field.nullableVersions, version);
  const prop = propertyName(field.name);
  const isArray = field.type.startsWith('[]');
  const base = isArray ? field.type.slice(2) : field.type;
  if (PRIMITIVE_TYPES.has(base)) {
    return { def: field, prop, shape: isArray ? 'array' : 'primitive', primitive: base, nullable };
  }
  const struct = layoutStruct(message, base, structFieldsOf(message, field, base), version);
  return { def: field, prop, shape: isArray ? 'array' : 'struct', nullable, struct };
}

function layoutStruct(message: MessageDef, name: string, fields: readonly FieldDef[], version: number): StructLayout {
  const flexible = inVersions(message.flexibleVersions, version);
  const plain: LaidField[] = [];
  const tagged: LaidField[] = [];
  const all: StructLayout['all'] = [];
  for (const f of fields) {
    let laid: LaidField | null = null;
    if (inVersions(f.versions, version)) {
      if (f.tag === undefined) plain.push((laid = layField(message, f, version)));
      else if (flexible && inVersions(f.taggedVersions ?? f.versions, version)) tagged.push((laid = layField(message, f, version)));
    }
    all.push({ prop: propertyName(f.name), field: laid, def: f });
  }
  tagged.sort((a, b) => a.def.tag! - b.def.tag!);
  const defaults = (): Record<string, unknown> => {
    const o: Record<string, unknown> = {};
    for (const { prop, def } of all) o[prop] = defaultOf(message, def, version);
    return o;
  };
  return { name, flexible, plain, tagged, all, defaults };
}

export function layoutOf(message: MessageDef, version: number): MessageLayout {
  return { ...layoutStruct(message, message.name, message.fields, version), message, version };
}

/** Every version from a range like "0-11". */
export function versionList(min: number, max: number): number[] {
  return Array.from({ length: max - min + 1 }, (_, i) => min + i);
}

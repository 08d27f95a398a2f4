/**
 * The project's declarative form of a Kafka message. One definition per
 * message; codecs are compiled from these and never written by hand.
 *
 * Version ranges use Kafka's notation: "3+", "0-5", "7", or "none".
 * Field names are Kafka's (PascalCase); decoded objects use them in camelCase.
 */

export type PrimitiveType =
  | 'bool' | 'int8' | 'int16' | 'uint16' | 'int32' | 'uint32' | 'int64'
  | 'float64' | 'string' | 'bytes' | 'uuid' | 'records';

export type DefaultValue = string | number | bigint | boolean | null;

export interface FieldDef {
  /** Kafka's field name. */
  name: string;
  /** A primitive, `[]Elem` for arrays, or a struct's type name. */
  type: string;
  versions: string;
  nullableVersions?: string;
  default?: DefaultValue;
  ignorable?: boolean;
  mapKey?: boolean;
  tag?: number;
  taggedVersions?: string;
  /** For struct and array-of-struct fields declared inline. */
  fields?: readonly FieldDef[];
}

export interface StructDef {
  name: string;
  versions: string;
  fields: readonly FieldDef[];
}

export interface MessageDef {
  apiKey: number;
  kind: 'request' | 'response';
  /** Kafka's message name, e.g. "ProduceRequest". */
  name: string;
  /** Every version Kafka defines for the message. */
  validVersions: string;
  flexibleVersions: string;
  fields: readonly FieldDef[];
  commonStructs?: readonly StructDef[];
}

/**
 * One API: its key and both messages, at every version Kafka defines. Which
 * of those versions the gateway serves is its handler's to say
 * (src/gateway/handlers/), in that one place.
 */
export interface ApiDef {
  apiKey: number;
  name: string;
  request: MessageDef;
  response: MessageDef;
}

type FieldOptions = Omit<FieldDef, 'name' | 'type' | 'versions' | 'fields'>;

/**
 * A field. `fields` is given for inline structs (`Type` or `[]Type`). The
 * name, type, options and inner fields keep their literal types, so the
 * message types of ../codec/types.ts are read off the same definition the
 * codecs are compiled from.
 */
export function field<const N extends string, const T extends string, const O extends FieldOptions = {}, const F extends readonly FieldDef[] = never>(
  name: N,
  type: T,
  versions: string,
  options?: O,
  fields?: F,
): { name: N; type: T; versions: string } & ([F] extends [never] ? unknown : { fields: F }) & O {
  const base = { name, type, versions, ...(options ?? ({} as O)) };
  return (fields ? { ...base, fields } : base) as { name: N; type: T; versions: string } & ([F] extends [never] ? unknown : { fields: F }) & O;
}

export function struct<const N extends string, const F extends readonly FieldDef[]>(name: N, versions: string, fields: F): { name: N; versions: string; fields: F } {
  return { name, versions, fields };
}

export interface VersionSpan { min: number; max: number }

/** Parses "3+", "0-5", "7" or "none" (max is Infinity for "N+"). */
export function parseVersions(range: string): VersionSpan | null {
  if (range === 'none') return null;
  const plus = /^(\d+)\+$/.exec(range);
  if (plus) return { min: Number(plus[1]), max: Infinity };
  const span = /^(\d+)-(\d+)$/.exec(range);
  if (span) return { min: Number(span[1]), max: Number(span[2]) };
  if (/^\d+$/.test(range)) return { min: Number(range), max: Number(range) };
  throw new Error(`"${range}" is not a version range (expected N+, N-M, N or none)`);
}

/** Ranges already parsed: every request's header asks of its API's ranges (a few regular expressions each time, uncached). */
const parsedRanges = new Map<string, VersionSpan | null>();

export function inVersions(range: string | undefined, version: number): boolean {
  if (range === undefined) return false;
  let span = parsedRanges.get(range);
  if (span === undefined) parsedRanges.set(range, (span = parseVersions(range)));
  return span !== null && version >= span.min && version <= span.max;
}

/** Kafka's PascalCase field name as the property name of a decoded object. */
export function propertyName(kafkaName: string): string {
  return kafkaName.charAt(0).toLowerCase() + kafkaName.slice(1);
}

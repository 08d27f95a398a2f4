import type { FieldDef, MessageDef, StructDef } from '../schema/definition.js';
import type { Message } from './compile.js';

/**
 * The TypeScript types of decoded and encodable messages, read off the same
 * definitions the codecs are generated from (../messages/*.ts): a field's
 * camelCase name, its primitive, array or struct type, and null where Kafka
 * lets it be null in some version. Nobody writes a message's shape twice.
 *
 * They follow what ./generate.ts builds:
 * - A decoded message has every field, whatever the version: a field its
 *   version lacks (or a tagged field left out) carries its default.
 * - An encodable message may leave any field out: the encoder writes its
 *   default. int64 takes a number or a bigint, bytes any Uint8Array, and
 *   records one buffer or a list of stored batches (written back to back).
 */

interface DecodedPrimitives {
  bool: boolean;
  int8: number;
  int16: number;
  uint16: number;
  int32: number;
  uint32: number;
  int64: bigint;
  float64: number;
  string: string;
  bytes: Buffer;
  uuid: string;
  records: Buffer | null;
}

interface EncodablePrimitives {
  bool: boolean;
  int8: number;
  int16: number;
  uint16: number;
  int32: number;
  uint32: number;
  int64: bigint | number;
  float64: number;
  string: string;
  bytes: Uint8Array;
  uuid: string;
  records: Uint8Array | readonly Uint8Array[] | null;
}

type Side = 'decoded' | 'encodable';
type Primitives<S extends Side> = S extends 'decoded' ? DecodedPrimitives : EncodablePrimitives;

/** A struct's fields: declared inline on the field, or a common struct of the message by name. */
type StructFields<F, Name, Structs> = F extends { fields: infer Inline extends readonly FieldDef[] }
  ? readonly FieldDef[] extends Inline
    ? CommonFields<Name, Structs>
    : Inline
  : CommonFields<Name, Structs>;

type CommonFields<Name, Structs> =
  Extract<Structs, { name: Name }> extends { fields: infer Common extends readonly FieldDef[] }
    ? Common
    : readonly FieldDef[];

type ElementOf<F, T, Structs, S extends Side> = T extends keyof Primitives<S> ? Primitives<S>[T] : Shape<StructFields<F, T, Structs>[number], Structs, S>;

type ValueOf<F extends FieldDef, Structs, S extends Side> =
  | (F['type'] extends `[]${infer E}` ? (S extends 'decoded' ? ElementOf<F, E, Structs, S>[] : readonly ElementOf<F, E, Structs, S>[]) : ElementOf<F, F['type'], Structs, S>)
  | (F extends { nullableVersions: string } ? null : never);

type Shape<F extends FieldDef, Structs, S extends Side> = S extends 'decoded'
  ? { [K in F as Uncapitalize<K['name']>]: ValueOf<K, Structs, S> }
  : { [K in F as Uncapitalize<K['name']>]?: ValueOf<K, Structs, S> };

type StructsOf<M extends MessageDef> = M['commonStructs'] extends readonly StructDef[] ? M['commonStructs'][number] : never;

/** A message definition whose field names are known (not widened to `string`), else the untyped Message. */
type Known<M extends MessageDef, T> = string extends M['fields'][number]['name'] ? Message : T;

/** A message as its codec decodes it. */
export type Decoded<M extends MessageDef> = Known<M, Shape<M['fields'][number], StructsOf<M>, 'decoded'>>;

/** A message as its codec encodes it. */
export type Encodable<M extends MessageDef> = Known<M, Shape<M['fields'][number], StructsOf<M>, 'encodable'>>;

/** What a server reads: an API's request, decoded. */
export type RequestOf<A extends { request: MessageDef }> = Decoded<A['request']>;

/** What a server answers: an API's response, for its encoder. */
export type ResponseOf<A extends { response: MessageDef }> = Encodable<A['response']>;

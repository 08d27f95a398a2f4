import fc from 'fast-check';
import type { MessageDef } from '../../../protocol/schema/definition.js';
import { defaultOf, layoutOf, type LaidField, type StructLayout } from './layout.js';

/**
 * fast-check arbitraries built from a message definition at one version. A
 * generated message holds every field: those on the wire get arbitrary values
 * of their type (null where the version allows it), the rest their defaults,
 * which is exactly what decoding must give back.
 */

const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const uuid = fc.uint8Array({ minLength: 16, maxLength: 16 }).map((b) => {
  const hex = Buffer.from(b).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
});
const text = fc.string({ unit: 'grapheme', maxLength: 12 });
const bytes = fc.uint8Array({ maxLength: 24 }).map((b) => Buffer.from(b));

function primitive(type: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'bool': return fc.boolean();
    case 'int8': return fc.integer({ min: -128, max: 127 });
    case 'int16': return fc.integer({ min: -32768, max: 32767 });
    case 'uint16': return fc.integer({ min: 0, max: 65535 });
    case 'int32': return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
    case 'uint32': return fc.integer({ min: 0, max: 2 ** 32 - 1 });
    case 'int64': return int64;
    case 'float64': return fc.double();
    case 'string': return text;
    case 'bytes': case 'records': return bytes;
    case 'uuid': return uuid;
    default: throw new Error(`no arbitrary for ${type}`);
  }
}

function fieldArbitrary(field: LaidField): fc.Arbitrary<unknown> {
  let value: fc.Arbitrary<unknown>;
  if (field.shape === 'primitive') value = primitive(field.primitive!);
  else if (field.shape === 'struct') value = structArbitrary(field.struct!);
  else {
    const element = field.struct ? structArbitrary(field.struct) : primitive(field.primitive!);
    value = fc.array(element, { maxLength: 3 });
  }
  return field.nullable ? fc.option(value, { nil: null, freq: 4 }) : value;
}

function structArbitrary(layout: StructLayout): fc.Arbitrary<Record<string, unknown>> {
  const shape: Record<string, fc.Arbitrary<unknown>> = {};
  for (const { prop, field } of layout.all) {
    if (field) shape[prop] = fieldArbitrary(field);
  }
  const defaults = layout.defaults;
  return fc.record(shape).map((values) => ({ ...defaults(), ...values }));
}

export function messageArbitrary(message: MessageDef, version: number): fc.Arbitrary<Record<string, unknown>> {
  return structArbitrary(layoutOf(message, version));
}

export { defaultOf };

import type { MessageDef } from '../../../protocol/schema/definition.js';
import { layoutOf, type LaidField, type StructLayout } from './layout.js';

/**
 * A deterministic, realistic message for one definition and version: every
 * leaf gets a value no other leaf has (so a field read from the wrong place
 * shows), every array two elements, every third nullable string null. Fields
 * absent at the version hold their defaults, as decoding yields them.
 */

export interface SampleOptions {
  /** 'none' puts 0 in every error code field (clients' parse steps throw on errors); 'distinct' puts real codes there. */
  errors: 'none' | 'distinct';
  /** Whether tagged fields get values (and so go on the wire) or keep their defaults. */
  tagged: boolean;
  /** The bytes of every `records` field (a valid batch); null where the version allows it when absent. */
  records?: Buffer;
}

const ERROR_CODES = [3, 6, 15, 16, 25, 27, 29, 35, 41, 47, 58, 87];

export function sampleMessage(message: MessageDef, version: number, options: SampleOptions): Record<string, unknown> {
  let n = 0;
  const next = (): number => ++n;

  function primitive(field: LaidField, type: string, nullable: boolean): unknown {
    const i = next();
    if (field.def.name.endsWith('ErrorCode')) return options.errors === 'none' ? 0 : ERROR_CODES[i % ERROR_CODES.length];
    // An error message goes with an error; clients read a message beside code 0 as an error too.
    if (field.def.name.endsWith('ErrorMessage') && nullable && options.errors === 'none') return null;
    switch (type) {
      case 'bool': return i % 2 === 0;
      case 'int8': return 1 + (i % 100);
      case 'int16': return 100 + i;
      case 'uint16': return 200 + i;
      case 'int32': case 'uint32': return 100_000 + i * 7;
      case 'int64': return 1_000_000_000_000n + BigInt(i);
      case 'float64': return i + 0.5;
      case 'string': return nullable && i % 3 === 0 ? null : `s${i}`;
      case 'bytes': return Buffer.from(`bytes-${i}`);
      case 'records': return options.records ?? (nullable ? null : Buffer.alloc(0));
      case 'uuid': return `${i.toString(16).padStart(8, '0')}-1111-4222-8333-${i.toString(16).padStart(12, '0')}`;
      default: throw new Error(`no sample for ${type}`);
    }
  }

  function value(field: LaidField): unknown {
    if (field.shape === 'primitive') return primitive(field, field.primitive!, field.nullable);
    if (field.shape === 'struct') return struct(field.struct!);
    return [0, 1].map(() => (field.struct ? struct(field.struct) : primitive(field, field.primitive!, false)));
  }

  function struct(layout: StructLayout): Record<string, unknown> {
    const o = layout.defaults();
    for (const f of layout.plain) o[f.prop] = value(f);
    if (options.tagged) for (const f of layout.tagged) o[f.prop] = value(f);
    return o;
  }

  return struct(layoutOf(message, version));
}

import { ErrorCode } from '../../protocol/error-codes.js';

/**
 * Kafka's config values as its ConfigDef reads them: the codes configs are
 * described with, the error a wrong value raises, each value type's parsing
 * and normalizing, and the checks on a normalized value.
 */

/** Kafka's ConfigResource types (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs). */
export const ResourceType = { TOPIC: 2, BROKER: 4 } as const;

/** Kafka's ConfigSource values. */
export const ConfigSource = { DYNAMIC_TOPIC_CONFIG: 1, DYNAMIC_BROKER_CONFIG: 2, DYNAMIC_DEFAULT_BROKER_CONFIG: 3, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5 } as const;

/** Kafka's ConfigType values (DescribeConfigs v3+). */
export const ConfigType = { BOOLEAN: 1, STRING: 2, INT: 3, SHORT: 4, LONG: 5, DOUBLE: 6, LIST: 7 } as const;

/** IncrementalAlterConfigs operations. */
export const ConfigOperation = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

/** A config request a user got wrong: the Kafka error code for it and a sentence saying what to do. */
export class TopicConfigError extends Error {
  override readonly name = 'TopicConfigError';
  constructor(
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** An INVALID_CONFIG refusal with the sentence that says what to fix. */
export const invalid = (message: string) => new TopicConfigError(ErrorCode.INVALID_CONFIG, message);

// ─── Values: parsing as Kafka's ConfigDef does ────────────────────────────────

const LONG_MIN = -(2n ** 63n);
export const LONG_MAX = 2n ** 63n - 1n;
const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;

/** Why a value is refused, without the "Invalid value ... for configuration ..." that wraps it. */
export class ValueProblem extends Error {}

function parseInteger(raw: string, min: bigint, max: bigint, typeName: string): bigint {
  const text = raw.trim();
  if (!/^[+-]?\d+$/.test(text)) throw new ValueProblem(`Not a number of type ${typeName}`);
  const n = BigInt(text);
  if (n < min || n > max) throw new ValueProblem(`Not a number of type ${typeName}`);
  return n;
}

/** Java's Double.toString for the values a ratio takes, so described values read as Kafka's. */
function javaDouble(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e7) return n.toFixed(1);
  const abs = Math.abs(n);
  if (abs >= 1e-3 && abs < 1e7) return String(n);
  const [mantissa, exponent] = n.toExponential().split('e');
  return `${mantissa!.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

export function parseList(raw: string): string[] {
  const text = raw.trim();
  return text === '' ? [] : text.split(/\s*,\s*/);
}

/** A key's type: how a value is read and how Kafka writes it back. */
export interface ValueType {
  code: number;
  /** The value as Kafka shows it, or a ValueProblem. */
  normalize(raw: string): string;
}

export const INT: ValueType = { code: ConfigType.INT, normalize: (raw) => String(parseInteger(raw, INT_MIN, INT_MAX, 'INT')) };
export const LONG: ValueType = { code: ConfigType.LONG, normalize: (raw) => String(parseInteger(raw, LONG_MIN, LONG_MAX, 'LONG')) };
export const STRING: ValueType = { code: ConfigType.STRING, normalize: (raw) => raw.trim() };
export const LIST: ValueType = { code: ConfigType.LIST, normalize: (raw) => parseList(raw).join(',') };
export const BOOLEAN: ValueType = {
  code: ConfigType.BOOLEAN,
  normalize(raw) {
    const text = raw.trim().toLowerCase();
    if (text !== 'true' && text !== 'false') throw new ValueProblem('Expected value to be either true or false');
    return text;
  },
};
export const DOUBLE: ValueType = {
  code: ConfigType.DOUBLE,
  normalize(raw) {
    const text = raw.trim();
    const n = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dDfF]?$/.test(text) ? Number(text.replace(/[dDfF]$/, '')) : NaN;
    if (!Number.isFinite(n)) throw new ValueProblem('Not a number of type DOUBLE');
    return javaDouble(n);
  },
};

/** A check on a normalized value: null when fine, else what is wrong. */
export type Check = (value: string) => string | null;

export const atLeast = (min: bigint): Check => (v) => (BigInt(v) >= min ? null : `Value must be at least ${min}`);
export const between = (min: bigint, max: bigint): Check => (v) => (BigInt(v) < min ? `Value must be at least ${min}` : BigInt(v) > max ? `Value must be no more than ${max}` : null);
export const ratio: Check = (v) => (Number(v) < 0 ? 'Value must be at least 0' : Number(v) > 1 ? 'Value must be no more than 1' : null);
export const oneOf = (...allowed: string[]): Check => (v) => (allowed.includes(v) ? null : `String must be one of: ${allowed.join(', ')}`);
export const eachOneOf = (...allowed: string[]): Check => (v) => (parseList(v).every((item) => allowed.includes(item)) ? null : `String must be one of: ${allowed.join(', ')}`);
/** gzip's levels: 1 to 9, or -1 for the codec's own default. */
export const gzipLevel: Check = (v) => (v === '-1' || (BigInt(v) >= 1n && BigInt(v) <= 9n) ? null : 'Value must be between 1 and 9 or equal to -1');
export const throttledReplicas: Check = (v) => {
  const items = parseList(v);
  if (items.length === 0 || (items.length === 1 && items[0] === '*') || items.every((i) => /^\d+:\d+$/.test(i))) return null;
  return "it must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...";
};

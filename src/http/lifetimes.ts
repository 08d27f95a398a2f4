import type { Lifetime } from '../core/core.js';
import { HttpError } from './errors.js';

/**
 * How long a KV entry or a once marker lives, as HTTP callers write it:
 * `ttl` as a number of seconds or a string with a unit ('500ms', '90s',
 * '30m', '12h', '7d'; a bare number string is seconds), or `forever: true`.
 * The core takes milliseconds ({ ttlMs }) or { forever: true }.
 */

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?$/;

/** JSON-schema fragment for the two lifetime fields; routes spread it into their properties. */
export const LIFETIME_PROPERTIES = {
  ttl: { anyOf: [{ type: 'number', exclusiveMinimum: 0 }, { type: 'string', minLength: 1, maxLength: 32 }] },
  forever: { type: 'boolean' },
} as const;

export interface LifetimeFields {
  ttl?: number | string;
  forever?: boolean;
}

export function parseDurationMs(ttl: number | string, field: string): number {
  if (typeof ttl === 'number') return Math.round(ttl * 1000);
  const match = DURATION.exec(ttl.trim());
  if (!match) {
    throw new HttpError(400, 'invalid_argument', `${field} ${JSON.stringify(ttl)} is not a duration; write seconds (3600) or a number with a unit: '500ms', '90s', '30m', '12h', '7d'.`);
  }
  return Math.round(Number(match[1]) * UNIT_MS[match[2] ?? 's']!);
}

/**
 * The lifetime the fields ask for; undefined when neither is given (a KV
 * write then lives forever, an incr keeps the entry's expiry).
 */
export function lifetimeOf(fields: LifetimeFields, field: string): Lifetime | undefined {
  if (fields.ttl !== undefined && fields.forever !== undefined) {
    throw new HttpError(400, 'invalid_argument', `${field} gives both ttl and forever; give one of them.`);
  }
  if (fields.forever === true) return { forever: true };
  if (fields.forever === false) {
    throw new HttpError(400, 'invalid_argument', `${field}.forever can only be true; to make an entry expire, give a ttl instead.`);
  }
  if (fields.ttl === undefined) return undefined;
  const ttlMs = parseDurationMs(fields.ttl, `${field}.ttl`);
  if (ttlMs < 1) throw new HttpError(400, 'invalid_argument', `${field}.ttl must be at least one millisecond.`);
  return { ttlMs };
}

/** A once marker must say how long it lives. */
export function requiredLifetimeOf(fields: LifetimeFields, field: string): Lifetime {
  const lifetime = lifetimeOf(fields, field);
  if (!lifetime) {
    throw new HttpError(400, 'invalid_argument', `${field} needs a ttl ('7d', '30m', or seconds) or forever: true, so the marker's lifetime is a choice you made.`);
  }
  return lifetime;
}

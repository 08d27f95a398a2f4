import { randomBytes } from 'node:crypto';

/**
 * Answers as JSON, with one addition to JSON.stringify: a bigint (a KV
 * counter past 2^53-1, kept exact by the core) is written as its exact
 * digits, a plain JSON number, rather than failing the answer. Readers that
 * parse numbers as doubles round it as they would any large number; readers
 * that keep big integers get every digit.
 *
 * The bigint goes through JSON.stringify as a marked string and the marks are
 * then replaced by the digits. The mark carries a random nonce per answer,
 * so no string a client stored can be mistaken for one.
 */
export function serializeJson(payload: unknown): string {
  let nonce: string | null = null;
  const text = JSON.stringify(payload, (_key, value: unknown) => {
    if (typeof value !== 'bigint') return value;
    nonce ??= randomBytes(8).toString('hex');
    return `bigint:${nonce}:${value}`;
  });
  return nonce === null ? text : text.replace(new RegExp(`"bigint:${nonce}:(-?\\d+)"`, 'g'), '$1');
}

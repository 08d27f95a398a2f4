import { CoreError } from '../errors.js';
import { requirePartitionCount } from './arguments.js';

/**
 * Naming rules for everything a caller names: queues (Kafka topics), native
 * partition names, consumer groups and KV namespaces and keys. Both engines
 * call these before touching storage, so a bad name fails the whole call and
 * nothing is written.
 */

/** Kafka's topic rule, so every queue is reachable as a topic and the other way round. */
const QUEUE_NAME = /^[A-Za-z0-9._-]+$/;
export const MAX_QUEUE_NAME_LENGTH = 249;
export const MAX_PARTITION_NAME_LENGTH = 255;
export const MAX_GROUP_NAME_BYTES = 32_767; // a Kafka STRING's int16 length
export const MAX_KV_NAMESPACE_LENGTH = 255;
export const MAX_KV_KEY_BYTES = 1024;
/** The partition a native push goes to when it names none. */
export const DEFAULT_PARTITION_NAME = 'Default';

const KV_NAMESPACE = /^[A-Za-z0-9._:-]+$/;
// Control characters would make names unprintable in logs and ambiguous over HTTP.
const CONTROL = /[\u0000-\u001f\u007f]/;
// Bidirectional controls make a name display as another one (a Trojan Source look-alike).
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

function describe(value: unknown): string {
  return typeof value === 'string' ? JSON.stringify(value) : `a ${value === null ? 'null' : typeof value}`;
}

export function validateQueueName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new CoreError('invalid_name', `A queue name must be a non-empty string; got ${describe(name)}.`);
  }
  if (name.length > MAX_QUEUE_NAME_LENGTH) {
    throw new CoreError('invalid_name', `Queue name "${name.slice(0, 40)}…" is ${name.length} characters long; the limit is ${MAX_QUEUE_NAME_LENGTH}.`);
  }
  if (name === '.' || name === '..') {
    throw new CoreError('invalid_name', `Queue name "${name}" is reserved; choose another name.`);
  }
  if (!QUEUE_NAME.test(name)) {
    throw new CoreError('invalid_name', `Queue name ${JSON.stringify(name)} may only contain ASCII letters, digits, '.', '_' and '-'.`);
  }
  return name;
}

export function validatePartitionName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new CoreError('invalid_name', `A partition name must be a non-empty string; got ${describe(name)}.`);
  }
  if (name.length > MAX_PARTITION_NAME_LENGTH) {
    throw new CoreError('invalid_name', `Partition name "${name.slice(0, 40)}…" is ${name.length} characters long; the limit is ${MAX_PARTITION_NAME_LENGTH}.`);
  }
  if (CONTROL.test(name)) {
    throw new CoreError('invalid_name', `Partition name ${JSON.stringify(name)} contains control characters; use printable characters only.`);
  }
  if (BIDI_CONTROL.test(name)) {
    throw new CoreError('invalid_name', `Partition name ${JSON.stringify(name)} contains a bidirectional text control (U+${codePointOf(name, BIDI_CONTROL)}), which makes it display as a different name; remove it.`);
  }
  if (LONE_SURROGATE.test(name)) {
    throw new CoreError('invalid_name', `Partition name ${JSON.stringify(name)} contains a lone UTF-16 surrogate, which no UTF-8 store or client can hold; send well-formed Unicode.`);
  }
  return name;
}

function codePointOf(name: string, pattern: RegExp): string {
  return name.match(pattern)![0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
}

export function validateGroupName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) {
    throw new CoreError('invalid_name', `A consumer group name must be a non-empty string; got ${describe(name)}.`);
  }
  if (Buffer.byteLength(name, 'utf8') > MAX_GROUP_NAME_BYTES) {
    throw new CoreError('invalid_name', `Consumer group name is longer than ${MAX_GROUP_NAME_BYTES} bytes; choose a shorter name.`);
  }
  if (CONTROL.test(name)) {
    throw new CoreError('invalid_name', `Consumer group name ${JSON.stringify(name)} contains control characters; use printable characters only.`);
  }
  return name;
}

export function validateKvNamespace(ns: unknown): string {
  if (typeof ns !== 'string' || ns.length === 0) {
    throw new CoreError('invalid_name', `A KV namespace must be a non-empty string; got ${describe(ns)}.`);
  }
  if (ns.length > MAX_KV_NAMESPACE_LENGTH) {
    throw new CoreError('invalid_name', `KV namespace "${ns.slice(0, 40)}…" is ${ns.length} characters long; the limit is ${MAX_KV_NAMESPACE_LENGTH}.`);
  }
  if (!KV_NAMESPACE.test(ns)) {
    throw new CoreError('invalid_name', `KV namespace ${JSON.stringify(ns)} may only contain ASCII letters, digits, '.', '_', ':' and '-'.`);
  }
  return ns;
}

export function validateKvKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new CoreError('invalid_name', `A KV key must be a non-empty string; got ${describe(key)}.`);
  }
  if (Buffer.byteLength(key, 'utf8') > MAX_KV_KEY_BYTES) {
    throw new CoreError('invalid_name', `KV key "${key.slice(0, 40)}…" is longer than ${MAX_KV_KEY_BYTES} bytes; use a shorter key (a hash of it, for example).`);
  }
  return key;
}

/** A KV prefix may be empty (everything in the namespace) but is otherwise a key. */
export function validateKvPrefix(prefix: unknown): string {
  if (prefix === '') return '';
  if (typeof prefix !== 'string') {
    throw new CoreError('invalid_name', `A KV prefix must be a string; got ${describe(prefix)}.`);
  }
  return validateKvKey(prefix);
}

/**
 * The partition names of a new queue: the caller's, each valid and distinct,
 * one per partition; else Kafka's numbering "0".."N-1".
 */
export function newQueuePartitionNames(req: { partitions: unknown; partitionNames?: unknown }): string[] {
  const count = requirePartitionCount(req.partitions);
  if (req.partitionNames === undefined) return Array.from({ length: count }, (_, i) => String(i));
  if (!Array.isArray(req.partitionNames) || req.partitionNames.length !== count) {
    throw new CoreError('invalid_argument', `partitionNames must list one name for each of the ${count} partitions; got ${describe(req.partitionNames)}.`);
  }
  const names = req.partitionNames.map(validatePartitionName);
  if (new Set(names).size !== names.length) {
    throw new CoreError('invalid_argument', `partitionNames must be distinct; ${JSON.stringify(names)} repeats a name.`);
  }
  return names;
}

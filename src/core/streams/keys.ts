import { CoreError } from '../errors.js';
import type { StreamsPartition } from '../core.js';
import { validateQueueName } from '../rules/names.js';

/**
 * Where Queen streams keep what they store: in the core's KV store, so that a
 * cycle's state writes commit in the same native transaction as its acks and
 * its output pushes, on every engine, with no storage of their own. One
 * namespace; a unit separator (never in a queue name) splits the key's parts.
 *
 *   q␟<name>                              the query's registration (QueryRecord)
 *   i␟<queryId>                           its id, pointing back at the name
 *   s␟<queryId>␟<queue>/<partition>␟<key>  a state row: { v: value, at: epoch ms }
 *   c␟<queryId>␟<queue>/<partition>␟<group>␟<offset>  a committed cycle's marker
 */
export const STREAMS_NAMESPACE = 'queen.streams';
const SEP = '\u001f';

/** A committed cycle's marker outlives any retry of it. */
export const CYCLE_MARKER_TTL_MS = 7 * 24 * 3600 * 1000;

export interface QueryRecord {
  queryId: string;
  name: string;
  sourceQueue: string;
  sinkQueue: string | null;
  configHash: string;
}

/** A stored state row. */
export interface StoredState {
  v: unknown;
  at: number;
}

export const queryKey = (name: string) => `q${SEP}${name}`;
export const queryIdKey = (queryId: string) => `i${SEP}${queryId}`;
export const queryStatePrefix = (queryId: string) => `s${SEP}${queryId}${SEP}`;
export const shardPrefix = (queryId: string, source: StreamsPartition) => `${queryStatePrefix(queryId)}${source.queue}/${source.partition}${SEP}`;
export const cycleMarkerKey = (queryId: string, source: StreamsPartition, group: string, offset: number) =>
  `c${SEP}${queryId}${SEP}${source.queue}/${source.partition}${SEP}${group}${SEP}${offset}`;

export function requireText(value: unknown, field: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new CoreError('invalid_argument', `${field} must be a non-empty string; got ${JSON.stringify(value) ?? 'nothing'}.`);
  }
  return value;
}

export function checkSource(source: unknown): StreamsPartition {
  const s = source as StreamsPartition | undefined;
  validateQueueName(s?.queue);
  return { queue: s!.queue, partition: requireText(s!.partition, 'source.partition') };
}

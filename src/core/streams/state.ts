import type { Core, KvEntry, StreamsStateGetRequest, StreamsStateRow } from '../core.js';
import { requireArray, requireFiniteNumber } from '../rules/arguments.js';
import type { FlushGuard } from './flush-guard.js';
import { checkSource, requireText, shardPrefix, STREAMS_NAMESPACE as ns, type StoredState } from './keys.js';

/** Most state rows one read answers (the KV store's largest prefix page). */
const MAX_ROWS = 10_000;

/**
 * A query's state rows on one source partition, by key: the keys asked for,
 * those under a prefix, and (the idle flush) those whose window ended at or
 * before a time. Every filter given applies.
 */
export async function getState(core: Core, guard: FlushGuard, req: StreamsStateGetRequest): Promise<StreamsStateRow[]> {
  const prefix = shardPrefix(requireText(req?.queryId, 'queryId'), checkSource(req.source));
  const keys = req.keys === undefined || req.keys === null ? [] : requireArray<string>(req.keys, 'keys').map((k, i) => requireText(k, `keys[${i}]`));
  const keyPrefix = req.keyPrefix ?? '';
  const ripe = req.ripeAtOrBefore === undefined || req.ripeAtOrBefore === null ? null : requireFiniteNumber(req.ripeAtOrBefore, 'ripeAtOrBefore');
  if (ripe !== null) guard.noteRead(prefix, 'flush');
  else if (keys.length === 0 && keyPrefix === '') {
    // A flush committing now deletes windows this read would otherwise see, and the main loop add to.
    await guard.flushCommitted(prefix);
    guard.noteRead(prefix, 'main');
  }
  const entries: KvEntry[] = keys.length > 0
    ? (await core.kvGetMany({ ns, keys: keys.map((k) => prefix + k) })).filter((e): e is KvEntry => e !== null)
    : await core.kvGetPrefix({ ns, prefix: prefix + keyPrefix, limit: MAX_ROWS });
  const rows = entries
    .map((e) => ({ key: e.key.slice(prefix.length), stored: e.value as StoredState }))
    .filter(({ key }) => key.startsWith(keyPrefix))
    .filter(({ stored }) => ripe === null || windowEndOf(stored.v) <= ripe)
    .map(({ key, stored }) => ({ key, value: stored.v, updatedAt: stored.at }));
  return rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** A window's end (a number in its state value), or +Infinity when it has none. */
function windowEndOf(value: unknown): number {
  const end = (value as { windowEnd?: unknown } | null)?.windowEnd;
  return typeof end === 'number' ? end : Number.POSITIVE_INFINITY;
}

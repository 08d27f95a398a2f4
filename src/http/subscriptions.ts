import { createHash } from 'node:crypto';
import type { Core } from '../core/core.js';
import { HttpError } from './errors.js';

/**
 * Queen's subscription modes: where a consumer group starts on a queue it
 * has never read. `all` (the default) starts at the beginning; `new` (and
 * `new-only`, or subscriptionFrom=now) starts at the messages pushed after
 * the group's first pop; subscriptionFrom=<ISO time> starts at that time.
 * The group's start time is fixed at its first pop on the queue and kept in
 * the core's KV store (namespace `queen.subscriptions`), so a partition the
 * group meets later starts at the same time, as Queen's do. Starting means
 * committing the group's position at the first message at or after that
 * time, on each partition where the group has no position yet. A mode
 * Queen does not name (`from_beginning`) is `all`, as Queen reads it: its
 * clients send their own spellings and expect history, not a refusal.
 */

const SUBSCRIPTIONS_NAMESPACE = 'queen.subscriptions';
const SKIP_HISTORY_MODES = new Set(['new', 'new-only']);

/** The start time the pop asks for: null for `all`. */
function requestedStart(mode: string | undefined, from: string | undefined, now: number): number | null {
  if (from !== undefined && from !== '' && from !== 'now') {
    const at = Date.parse(from);
    if (Number.isNaN(at)) throw new HttpError(400, 'invalid_request', `subscriptionFrom ${JSON.stringify(from)} is neither "now" nor a time in ISO 8601 (2024-01-15T10:30:00Z).`);
    return at;
  }
  if (from === 'now' || (mode !== undefined && SKIP_HISTORY_MODES.has(mode))) return now;
  return null;
}

/** Positions the group on the queue's partitions it has not read yet, when its subscription asks to skip history. */
export async function applySubscription(core: Core, queue: string, group: string, mode: string | undefined, from: string | undefined): Promise<void> {
  const asked = requestedStart(mode, from, Date.now());
  if (asked === null) return;
  const info = await core.describeQueue({ name: queue }).catch(() => null);
  if (!info) return;
  const key = `${queue}/${createHash('sha256').update(group, 'utf8').digest('base64url')}`;
  const claim = await core.kvPutIfAbsent({ ns: SUBSCRIPTIONS_NAMESPACE, key, value: { startsAt: asked }, lifetime: { forever: true } });
  const startsAt = (claim.entry?.value as { startsAt?: number } | undefined)?.startsAt ?? asked;
  const partitions = info.partitions.map((p) => ({ queue, partition: p.index }));
  const { offsets } = await core.fetchOffsets({ group, partitions });
  const unread = partitions.filter((_, i) => (offsets[i]?.offset ?? -1) < 0);
  if (unread.length === 0) return;
  const starts = await Promise.all(
    unread.map(async (p) => {
      const found = await core.offsetForTimestamp({ ...p, timestamp: startsAt, isolation: 'read_uncommitted' });
      if (found.offset >= 0) return found.offset;
      // Nothing at or after the start time yet: the group starts at the end.
      const { partitions: ends } = await core.offsets({ partitions: [p] });
      return ends[0]!.highWatermark;
    }),
  );
  await core.commitOffsets({ group, offsets: unread.map((p, i) => ({ ...p, offset: starts[i]!, leaderEpoch: -1, metadata: null })) });
}

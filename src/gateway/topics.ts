import { isCoreError, type QueueInfo, validateQueueName } from '../core/index.js';
import { KAFKA_QUEUE_CONFIG } from '../topic-configs/index.js';
import type { HandlerContext } from './handler.js';

/**
 * Topics as the gateway sees them: a topic is a queue of the same name. Shared
 * by every handler that names topics, so the name rule, the queue settings of
 * gateway-created topics and the topic-id lookup exist once.
 */

/** The all-zero UUID Kafka sends when a request names topics rather than ids. */
export const ZERO_UUID = '00000000-0000-0000-0000-000000000000';

/** Why a topic name breaks Kafka's rule (1-249 of `[A-Za-z0-9._-]`, not "." or ".."), or null when it is fine. */
export function topicNameProblem(name: string | null | undefined): string | null {
  try {
    validateQueueName(name);
    return null;
  } catch (e) {
    if (isCoreError(e)) return e.message;
    throw e;
  }
}

/** Names given more than once in one request (CreateTopics, CreatePartitions and the alter-config APIs answer each such entry INVALID_REQUEST). */
export function repeatedNames(names: readonly string[]): Set<string> {
  const seen = new Set<string>();
  return new Set(names.filter((name) => seen.has(name) || !seen.add(name)));
}

/** Creates a topic with the gateway's defaults, or returns it when it already exists. */
export function createTopicIfMissing(ctx: HandlerContext, name: string, partitions = ctx.settings.defaultPartitions): Promise<QueueInfo> {
  return ctx.core.createQueue({ name, partitions, config: { ...KAFKA_QUEUE_CONFIG }, ifNotExists: true });
}

/** Looks several topics up at once; a missing topic, or a name no topic can have, maps to null. */
export async function describeTopics(ctx: HandlerContext, names: Iterable<string>): Promise<Map<string, QueueInfo | null>> {
  const unique = [...new Set(names)];
  const found = await Promise.all(unique.map((name) => (topicNameProblem(name) === null ? ctx.core.describeQueue({ name }) : null)));
  return new Map(unique.map((name, i) => [name, found[i] ?? null]));
}

const TOPIC_IDS = 'topics.namesById';

/**
 * Topic names for topic ids (Fetch v13+, Metadata v10+ by id). Ids never get
 * reused, so a name once learned stays right until the topic is deleted; a
 * miss refreshes the whole map from the core once. Unknown ids are absent.
 */
export async function topicNamesById(ctx: HandlerContext, ids: Iterable<string>): Promise<Map<string, string>> {
  let cache = ctx.shared.get(TOPIC_IDS) as Map<string, string> | undefined;
  if (!cache) ctx.shared.set(TOPIC_IDS, (cache = new Map()));
  const wanted = [...new Set(ids)];
  if (wanted.some((id) => !cache.has(id))) {
    const queues = await ctx.core.listQueues();
    cache.clear();
    for (const q of queues) cache.set(q.id, q.name);
  }
  const names = new Map<string, string>();
  for (const id of wanted) {
    const name = cache.get(id);
    if (name !== undefined) names.set(id, name);
  }
  return names;
}

/** Drops the id cache after a topic is deleted, so its id cannot resolve to a later topic of the same name. */
export function forgetTopicIds(ctx: HandlerContext): void {
  ctx.shared.delete(TOPIC_IDS);
}

import { createHash, randomInt } from 'node:crypto';
import type { PartitionInfo } from '../core.js';
import { CoreError } from '../errors.js';
import { exactBytes } from './exact-text.js';
import { DEFAULT_PARTITION_NAME } from './names.js';

/**
 * Native pushes into a Kafka topic (a queue with fixedPartitionCount: the
 * gateway sets it on the topics it creates). Its producers rely on its
 * partition count: a keyed producer writes key k to partition hash(k) mod N,
 * and one more partition moves every key. So a push that names no partition
 * (or Queen's "Default", which a topic does not have) goes to one of the
 * topic's partitions, chosen by a hash of its transactionId, so a retry lands
 * where the first attempt did and is deduplicated there; a push naming a
 * partition the topic lacks is refused. Other queues grow a partition for
 * each new name, as Queen's do.
 */

/** The queues whose partitions a push's routing needs: those of items that name no partition of their own. */
export function queuesToRoute(items: unknown): string[] {
  if (!Array.isArray(items)) return [];
  const names = new Set<string>();
  for (const item of items as Record<string, unknown>[]) if (isPush(item)) names.add(item['queue'] as string);
  return [...names];
}

function isPush(item: Record<string, unknown> | null): boolean {
  return typeof item === 'object' && item !== null && typeof item['queue'] === 'string' && (item['op'] === undefined || item['op'] === 'push');
}

/**
 * The items (or transaction operations) with each push into a topic given
 * its partition; `fixedPartitionsOf` answers a queue's partitions when its
 * count is fixed, else undefined. Anything malformed passes through
 * untouched: the request checks that follow refuse it with their own sentences.
 */
export function routePushItems<T>(items: T, fixedPartitionsOf: (queue: string) => readonly PartitionInfo[] | undefined): T {
  if (!Array.isArray(items)) return items;
  return items.map((item: Record<string, unknown>) => {
    if (!isPush(item)) return item;
    const queue = item['queue'] as string;
    const partitions = fixedPartitionsOf(queue);
    if (!partitions || partitions.length === 0) return item;
    const named = item['partition'];
    if (named !== undefined && named !== DEFAULT_PARTITION_NAME) {
      if (typeof named === 'string' && !partitions.some((p) => p.name === named)) {
        throw new CoreError(
          'invalid_argument',
          `Queue "${queue}" is a Kafka topic with ${partitions.length} partitions ("0" to "${partitions.length - 1}"); a push cannot add partition ${JSON.stringify(named)}, because a new partition would move every keyed Kafka producer's records. Name one of its partitions, or none.`,
        );
      }
      return item;
    }
    const id = item['transactionId'];
    const index = typeof id === 'string' ? createHash('sha256').update(exactBytes(id)).digest().readUInt32BE(0) % partitions.length : randomInt(partitions.length);
    return { ...item, partition: String(index) };
  }) as T;
}

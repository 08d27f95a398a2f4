/**
 * Queen's `maxSize`: a queue holds at most this many messages not yet taken
 * in queue mode. A push that would pass it fails the items for that queue
 * (answered `failed` with a sentence, the rest of the request is pushed), as
 * Queen answers it. Like Queen's, the check is made before the write and is
 * not atomic with other pushes: two pushes at once may each fit alone and
 * pass the cap together by their sizes. The caps come from ./queue-policies.ts.
 */
import type { Core, PushItem } from '../core/core.js';
import { QUEUE_MODE_GROUP } from './acks.js';
import { queuePolicies } from './queue-policies.js';

/** The items refused for their queue's cap, by index, each with the sentence it is answered with. */
export async function overCapacity(core: Core, items: readonly PushItem[]): Promise<Map<number, string>> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(item.queue, (counts.get(item.queue) ?? 0) + 1);
  const maxSizes = await capsOf(core, [...counts.keys()]);
  const refusedQueues = new Map<string, string>();
  for (const [queue, maxSize] of maxSizes) {
    if (maxSize <= 0) continue;
    const depth = await depthOf(core, queue);
    const batch = counts.get(queue)!;
    if (depth + batch > maxSize) refusedQueues.set(queue, `Queue '${queue}' would exceed max capacity (${maxSize}). Current: ${depth}, Batch: ${batch}`);
  }
  const refused = new Map<number, string>();
  items.forEach((item, i) => {
    const why = refusedQueues.get(item.queue);
    if (why) refused.set(i, why);
  });
  return refused;
}

async function capsOf(core: Core, queues: string[]): Promise<Map<string, number>> {
  const policies = await queuePolicies(core, queues);
  return new Map(queues.map((q) => [q, policies.get(q)?.maxSize ?? 0]));
}

/** Messages of the queue that queue-mode consumers have not taken yet. */
async function depthOf(core: Core, queue: string): Promise<number> {
  const info = await core.describeQueue({ name: queue });
  if (!info) return 0;
  const partitions = info.partitions.map((p) => ({ queue, partition: p.index }));
  const [{ partitions: ends }, { offsets }] = await Promise.all([core.offsets({ partitions }), core.fetchOffsets({ group: QUEUE_MODE_GROUP, partitions })]);
  const taken = new Map(offsets.map((o) => [o.partition, o.offset]));
  return ends.reduce((sum, end) => (end.error ? sum : sum + Math.max(0, end.highWatermark - Math.max(taken.get(end.partition) ?? 0, end.logStartOffset))), 0);
}

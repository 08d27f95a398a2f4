import type { Core, PushItem, PushResult } from '../core/core.js';
import { DEFAULT_PARTITION_NAME } from '../core/index.js';
import { isCoreError } from '../core/errors.js';

/**
 * Queen creates a queue, with the partition it is pushed to, on the first
 * push (its own first example relies on it). The core refuses a push to a
 * queue that does not exist and writes nothing, so the queues are created
 * then and the call made again; a push to queues that exist costs nothing
 * extra. A queue made here starts with the one partition the first item
 * names ("Default" when it names none), as Queen's do.
 */
export async function withQueuesCreated<T>(core: Core, targets: readonly Pick<PushItem, 'queue' | 'partition'>[], call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (e) {
    if (!isCoreError(e) || e.code !== 'unknown_queue' || targets.length === 0) throw e;
  }
  const firstPartition = new Map<string, string>();
  for (const t of targets) if (!firstPartition.has(t.queue)) firstPartition.set(t.queue, t.partition ?? DEFAULT_PARTITION_NAME);
  const created: string[] = [];
  for (const [name, partition] of firstPartition) {
    if (await core.describeQueue({ name })) continue;
    await core.createQueue({ name, partitions: 1, partitionNames: [partition], ifNotExists: true });
    created.push(name);
  }
  try {
    return await call();
  } catch (e) {
    // Refused for another reason (a payload too large for the new queue): a refused push leaves nothing behind.
    for (const name of created) await core.deleteQueue({ name }).catch(() => {});
    throw e;
  }
}

export function pushCreatingQueues(core: Core, items: PushItem[]): Promise<PushResult> {
  return withQueuesCreated(core, items, () => core.push({ items }));
}

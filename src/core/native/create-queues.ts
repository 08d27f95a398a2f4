import type { Core } from '../core.js';
import { CoreError, isCoreError } from '../errors.js';
import { DEFAULT_PARTITION_NAME } from '../rules/names.js';

/**
 * A push's `createQueues` option: Queen creates a queue, with the partition
 * it is pushed to, on the first push (its own first example relies on it).
 * The push is decided as always; refused only because a queue does not
 * exist (which writes nothing), the queues it names that are missing are
 * created and the push made again, so a push to queues that exist costs
 * nothing extra. A queue made here starts with the one partition the first
 * item naming it names ("Default" when it names none), as Queen's do; if the
 * second attempt is refused for another reason (a payload too large for the
 * new queue), the queues made for it are deleted, so a refused push leaves
 * nothing behind.
 */

type Queues = Pick<Core, 'describeQueue' | 'createQueue' | 'deleteQueue'>;

export function checkCreateQueues(value: unknown): boolean {
  if (value !== undefined && typeof value !== 'boolean') throw new CoreError('invalid_argument', `createQueues must be true or false; got ${JSON.stringify(value)}.`);
  return value === true;
}

/** Runs `push`; when a queue `items` (push items or transaction operations) name was missing, creates the missing ones and runs it again. */
export async function pushCreatingQueues<T>(queues: Queues, items: unknown, push: () => Promise<T>): Promise<T> {
  try {
    return await push();
  } catch (e) {
    if (!isCoreError(e) || e.code !== 'unknown_queue') throw e;
    // The missing queue is not one pushed to (an ack's): nothing to create.
    if (firstPartitions(items).size === 0) throw e;
  }
  const created: string[] = [];
  try {
    for (const [name, partition] of firstPartitions(items)) {
      if (await queues.describeQueue({ name })) continue;
      await queues.createQueue({ name, partitions: 1, partitionNames: [partition], ifNotExists: true });
      created.push(name);
    }
    return await push();
  } catch (e) {
    for (const name of created) await queues.deleteQueue({ name }).catch(() => {});
    throw e;
  }
}

/** Each pushed-to queue with the partition its first push names. The plan checked every item before the core answered unknown_queue. */
function firstPartitions(items: unknown): Map<string, string> {
  const first = new Map<string, string>();
  for (const item of items as { op?: string; queue: string; partition?: string }[]) {
    if (item.op !== undefined && item.op !== 'push') continue;
    if (!first.has(item.queue)) first.set(item.queue, item.partition ?? DEFAULT_PARTITION_NAME);
  }
  return first;
}

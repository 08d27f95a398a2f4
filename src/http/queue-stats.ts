import type { Core, QueueInfo } from '../core/core.js';
import { DEAD_LETTERS_NAMESPACE, QUEUE_MODE_GROUP } from './acks.js';
import { iso } from './answers.js';
import { partitionIdOf } from './partition-ids.js';
import { readMetadata, type QueenMetadata } from './queue-options.js';

/**
 * Queen's counts for queues, as its resource listings show them: per
 * partition the offsets and the messages total, pending (past the
 * queue-mode group's position), completed and in the dead-letter queue;
 * per queue the totals. Shared by the listings, the overview and the
 * namespace and task summaries (./routes/queues.ts).
 */

/** At most this many dead letters are looked at per listing (the core's KV listing limit). */
export const DEAD_LETTER_SCAN = 10_000;

export interface MessageCounts {
  total: number;
  pending: number;
  processing: number;
  completed: number;
  failed: number;
  deadLetter: number;
}

const noMessages = (): MessageCounts => ({ total: 0, pending: 0, processing: 0, completed: 0, failed: 0, deadLetter: 0 });

/** Per partition: offsets, and Queen's counts as the queue-mode group sees them. */
export async function partitionStats(core: Core, queue: QueueInfo) {
  const deadLetters = await deadLettersByPartition(core, queue.name);
  const refs = queue.partitions.map((p) => ({ queue: queue.name, partition: p.index }));
  const [{ partitions: ends }, { offsets }] = await Promise.all([core.offsets({ partitions: refs }), core.fetchOffsets({ group: QUEUE_MODE_GROUP, partitions: refs })]);
  return queue.partitions.map((p, i) => {
    const end = ends[i]!;
    const position = Math.min(end.highWatermark, Math.max(offsets[i]?.offset ?? 0, end.logStartOffset));
    const total = end.highWatermark - end.logStartOffset;
    const stats: MessageCounts = { total, pending: end.highWatermark - position, processing: 0, completed: position - end.logStartOffset, failed: 0, deadLetter: deadLetters.get(p.name) ?? 0 };
    return {
      id: partitionIdOf(queue.name, p.name),
      name: p.name,
      index: p.index,
      createdAt: iso(queue.createdAt),
      logStartOffset: end.logStartOffset,
      highWatermark: end.highWatermark,
      stats,
    };
  });
}

async function deadLettersByPartition(core: Core, queue: string): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const entry of await core.kvGetPrefix({ ns: DEAD_LETTERS_NAMESPACE, prefix: `${queue}/`, limit: DEAD_LETTER_SCAN })) {
    const partition = (entry.value as { partition?: string }).partition ?? '';
    counts.set(partition, (counts.get(partition) ?? 0) + 1);
  }
  return counts;
}

/** The sum of several counts (a queue's partitions, or every queue). */
export function sumOf(counts: Iterable<MessageCounts>): MessageCounts {
  const totals = noMessages();
  for (const c of counts) for (const k of Object.keys(totals) as (keyof MessageCounts)[]) totals[k] += c[k];
  return totals;
}

export interface QueueStats {
  queue: QueueInfo;
  metadata: QueenMetadata;
  partitions: Awaited<ReturnType<typeof partitionStats>>;
  totals: MessageCounts;
}

/** One queue with its metadata, partitions' counts and totals. */
export async function queueStats(core: Core, queue: QueueInfo, metadata: QueenMetadata): Promise<QueueStats> {
  const partitions = await partitionStats(core, queue);
  return { queue, metadata, partitions, totals: sumOf(partitions.map((p) => p.stats)) };
}

/** Every queue's stats. */
export async function allQueueStats(core: Core): Promise<QueueStats[]> {
  const queues = await core.listQueues();
  const metadata = await readMetadata(core, queues.map((q) => q.name));
  return Promise.all(queues.map((q, i) => queueStats(core, q, metadata[i]!)));
}

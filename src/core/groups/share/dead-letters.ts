/**
 * Where a share group's failed records go: Queen's dead-letter queue. A
 * record a member REJECTs, or whose deliveries reach
 * share.delivery.count.limit, is archived by the share group (never delivered
 * to it again) and written to the dead-letter queue in the entry Queen's HTTP
 * API writes for a message whose retries ran out (src/http/acks.ts: KV
 * namespace `queen.dlq`, one key per queue, partition, offset and group), so
 * Queen's dead-letter listings and the console show it beside native ones.
 *
 * Written after the archive, in a step of its own: a crash between the two
 * loses the dead letter, never the archive (the record stays in the log).
 */
import type { Engine } from '../../engine.js';
import { DEAD_LETTERS_NAMESPACE, messageKey } from '../../rules/dead-letters.js';
import { decodeStoredBatch, toQueenMessage } from '../../rules/native-records.js';
import type { FailedSink } from './partition-state.js';

const READ_BYTES = 1 << 20;

/** Long because it reads, decodes and writes in one pass over the failed records' batches. */
export async function writeDeadLetters(engine: Engine, group: string, queue: string, partitionIndex: number, failed: FailedSink): Promise<void> {
  if (failed.length === 0) return;
  const info = await engine.queues.describe({ name: queue });
  const partition = info?.partitions.find((p) => p.index === partitionIndex);
  if (info === null || partition === undefined) return;
  const wanted = new Map(failed.map((f) => [f.offset, f]));
  let offset = Math.min(...wanted.keys());
  const last = Math.max(...wanted.keys());
  while (offset <= last && wanted.size > 0) {
    const read = await engine.log.read({ partitions: [{ queue, partition: partitionIndex, fetchOffset: offset, maxBytes: READ_BYTES }], minBytes: 0, maxWaitMs: 0, maxBytes: READ_BYTES, isolation: 'read_uncommitted' });
    const got = read.partitions[0];
    if (got === undefined || got.error !== null || got.batches.length === 0) return;
    for (const batch of got.batches) {
      for (const record of decodeStoredBatch(batch, READ_BYTES * 16)) {
        const failure = wanted.get(record.offset);
        offset = Math.max(offset, record.offset + 1);
        if (failure === undefined) continue;
        wanted.delete(record.offset);
        const message = toQueenMessage(record, { queue, queueId: info.id, partition: partition.name, partitionIndex });
        const now = new Date().toISOString();
        await engine.kv.put({
          ns: DEAD_LETTERS_NAMESPACE,
          key: messageKey(queue, partitionIndex, record.offset, group),
          lifetime: { forever: true },
          value: {
            id: message.messageId, transactionId: message.transactionId, partitionId: Buffer.from(`${queue}/${partition.name}`, 'utf8').toString('base64url'),
            queue, partition: partition.name, partitionIndex, offset: record.offset, consumerGroup: group,
            errorMessage: failure.reason === 'rejected' ? 'Rejected by a share group member (REJECT)' : `Delivered ${failure.deliveryCount} times, the share group's share.delivery.count.limit`,
            retryCount: Math.max(0, failure.deliveryCount - 1), data: message.payload, createdAt: new Date(message.timestamp).toISOString(), failedAt: now,
          },
        });
      }
    }
  }
}

/**
 * Queen's dead-letter queue as the core's KV store keeps it: one entry per
 * message and group in namespace `queen.dlq`. Written by the HTTP API's acks
 * (src/http/acks.ts, when a message's retries run out) and by share groups
 * (../groups/share/dead-letters.ts, for records rejected or out of
 * deliveries), so both land in one list.
 */
import { createHash } from 'node:crypto';

export const DEAD_LETTERS_NAMESPACE = 'queen.dlq';

/** One key per message and group (a group name can be 32 KiB; a KV key 1 KiB): the queue, partition index, offset and a hash of the group. */
export function messageKey(queue: string, partitionIndex: number, offset: number, group: string): string {
  const hash = createHash('sha256').update(group, 'utf8').digest('base64url');
  return `${queue}/${String(partitionIndex).padStart(5, '0')}/${String(offset).padStart(16, '0')}/${hash}`;
}

import { createHash, randomUUID } from 'node:crypto';
import { formatUuid } from '../../ids/uuidv7.js';

/**
 * Message ids. A natively pushed message gets a fresh UUIDv7 (src/ids/uuidv7.ts).
 *
 * A record produced over Kafka carries no id, and storing one per record would
 * mean decoding every batch on append. Its id is instead derived from where it
 * lies: a name-based UUID (RFC 9562 version 5) of "partition:offset" in the
 * queue's id as namespace. Every engine and every reader derives the same id
 * for the same record, and the id of a record never changes.
 */

export { mintUuidV7 as mintMessageId, uuidV7Time as messageIdTime } from '../../ids/uuidv7.js';

/** A queue's stable id (Kafka's topic id). */
export function mintQueueId(): string {
  return randomUUID();
}

export function kafkaRecordMessageId(queueId: string, partitionIndex: number, offset: number): string {
  const namespace = Buffer.from(queueId.replace(/-/g, ''), 'hex');
  const digest = createHash('sha1').update(namespace).update(`${partitionIndex}:${offset}`).digest();
  const bytes = digest.subarray(0, 16);
  bytes[6] = 0x50 | (bytes[6]! & 0x0f);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  return formatUuid(bytes);
}

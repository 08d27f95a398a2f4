import { createHash, randomBytes, randomUUID } from 'node:crypto';

/**
 * Message ids. A natively pushed message gets a fresh UUIDv7 (RFC 9562): the
 * first 48 bits are the Unix time in ms, so ids sort by when they were minted.
 * Within one millisecond a counter in rand_a keeps ids from one process
 * increasing.
 *
 * A record produced over Kafka carries no id, and storing one per record would
 * mean decoding every batch on append. Its id is instead derived from where it
 * lies: a name-based UUID (RFC 9562 version 5) of "partition:offset" in the
 * queue's id as namespace. Every engine and every reader derives the same id
 * for the same record, and the id of a record never changes.
 */

let lastMs = -1;
let counter = 0;

function format(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export function mintMessageId(nowMs: number = Date.now()): string {
  const bytes = randomBytes(16);
  if (nowMs === lastMs) {
    counter = (counter + 1) & 0xfff;
  } else {
    lastMs = nowMs;
    counter = bytes.readUInt16BE(6) & 0x7ff; // start low so the counter rarely overflows within a ms
  }
  bytes.writeUIntBE(nowMs, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  return format(bytes);
}

/** The ms timestamp a UUIDv7 was minted at. */
export function messageIdTime(id: string): number {
  return parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

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
  return format(bytes);
}

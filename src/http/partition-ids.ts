import { HttpError } from './errors.js';

/**
 * Queen hands every popped message a `partitionId`, and acks name the message
 * by it and the message's transactionId. Here the id is the queue and
 * partition names, base64url-encoded: opaque to clients, and turned back into
 * names without a lookup, so the gateway keeps no table of ids and any
 * gateway in front of the core can take the ack. (Queen's own ids are UUIDs;
 * its clients only carry them back, never parse them.)
 */

// Queue names follow Kafka's rule ([A-Za-z0-9._-]), so the first "/" ends the queue name.
export function partitionIdOf(queue: string, partition: string): string {
  return Buffer.from(`${queue}/${partition}`, 'utf8').toString('base64url');
}

export function parsePartitionId(partitionId: string, field = 'partitionId'): { queue: string; partition: string } {
  const text = /^[A-Za-z0-9_-]+$/.test(partitionId) ? Buffer.from(partitionId, 'base64url').toString('utf8') : '';
  const slash = text.indexOf('/');
  if (slash <= 0 || slash === text.length - 1 || partitionIdOf(text.slice(0, slash), text.slice(slash + 1)) !== partitionId) {
    throw new HttpError(400, 'invalid_request', `${field} ${JSON.stringify(partitionId)} is not a partition id this server handed out; send back the partitionId of the popped message.`);
  }
  return { queue: text.slice(0, slash), partition: text.slice(slash + 1) };
}

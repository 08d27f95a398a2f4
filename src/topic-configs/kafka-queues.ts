import type { QueueConfig } from '../core/index.js';

/**
 * Queues made for Kafka topics (the gateway's auto-create and CreateTopics,
 * the bridge's copies) turn the native dedup window off: a Kafka record has
 * no transaction id, so the check could only answer no; the idempotent
 * producer's sequence numbers do that job.
 */
export const KAFKA_QUEUE_CONFIG: Readonly<Partial<QueueConfig>> = Object.freeze({ dedupWindowSeconds: 0, fixedPartitionCount: true });

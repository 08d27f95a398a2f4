import type { KvEntry, Lease, PushItem, PushItemResult, QueenMessage, QueueConfig, QueueInfo, UnreadableRange } from '../core/core.js';
import { partitionIdOf } from './partition-ids.js';

/**
 * The JSON the HTTP API answers with, built from the core's results, in
 * Queen's own shapes so Queen's clients read them unchanged: push results in
 * snake_case (message_id, transaction_id), popped messages in camelCase
 * (transactionId, partitionId, leaseId, data). Fields Queen has no name for
 * (a message's Kafka offset, key and headers) are added beside Queen's; keys
 * and header values are bytes, so they travel as base64.
 */

export const iso = (ms: number): string => new Date(ms).toISOString();

export function pushItemAnswer(item: PushItemResult, index: number, traceId: string | null = null) {
  return {
    index,
    status: item.status,
    transaction_id: item.transactionId,
    message_id: item.messageId,
    partition_id: partitionIdOf(item.queue, item.partition),
    trace_id: traceId,
    queueName: item.queue,
    queue: item.queue,
    partition: item.partition,
    partition_index: item.partitionIndex,
    offset: item.offset,
  };
}

/** A push item refused on its own (its queue's maxSize), as Queen answers it; the rest of the request is pushed. */
export function failedItemAnswer(item: PushItem, index: number, error: string) {
  return { index, status: 'failed' as const, transaction_id: item.transactionId ?? null, error, queueName: item.queue, queue: item.queue, partition: item.partition ?? 'Default' };
}

export function leaseAnswer(lease: Lease) {
  return {
    id: lease.id,
    queue: lease.queue,
    partition: lease.partition,
    partitionId: partitionIdOf(lease.queue, lease.partition),
    consumerGroup: lease.consumerGroup,
    owner: lease.owner,
    deadline: lease.deadline,
    expiresAt: iso(lease.deadline),
  };
}

/** A popped message carries its partitionId, lease and group, so a client can ack it from the message alone. */
export function messageAnswer(message: QueenMessage, lease: Lease | null, retryCount: number) {
  return {
    id: message.messageId,
    transactionId: message.transactionId,
    traceId: message.traceId,
    data: message.payload,
    producerSub: null,
    createdAt: iso(message.timestamp),
    queue: message.queue,
    partition: message.partition,
    partitionId: partitionIdOf(message.queue, message.partition),
    leaseId: lease?.id ?? null,
    consumerGroup: lease?.consumerGroup ?? null,
    retryCount,
    offset: message.offset,
    partitionIndex: message.partitionIndex,
    timestamp: message.timestamp,
    keyBase64: message.key === null ? null : message.key.toString('base64'),
    headers: message.headers.map((h) => ({ key: h.key, valueBase64: h.value === null ? null : h.value.toString('base64') })),
  };
}

/** Offsets a pop passed over because their stored batch cannot be read, and why. */
export function unreadableAnswer(range: UnreadableRange) {
  return { partition: range.partition, from_offset: range.fromOffset, to_offset: range.toOffset, reason: range.reason };
}

export function kvEntryAnswer(entry: KvEntry) {
  return { ns: entry.ns, key: entry.key, value: entry.value, version: entry.version, expires_at: entry.expiresAt };
}

export function queueConfigAnswer(config: QueueConfig) {
  return {
    dedup_window_seconds: config.dedupWindowSeconds,
    lease_time: config.leaseMs / 1000,
    lease_ms: config.leaseMs,
    retention_seconds: config.retentionMs < 0 ? -1 : config.retentionMs / 1000,
    retention_bytes: config.retentionBytes,
    max_message_bytes: config.maxMessageBytes,
    timestamp_type: config.timestampType,
  };
}

export function queueAnswer(queue: QueueInfo) {
  return {
    name: queue.name,
    id: queue.id,
    created_at: queue.createdAt,
    config: queueConfigAnswer(queue.config),
    partitions: queue.partitions.map((p) => ({ name: p.name, index: p.index })),
  };
}

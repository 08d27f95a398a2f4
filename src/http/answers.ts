import type { KvEntry, Lease, PushItemResult, QueenMessage, QueueConfig, QueueInfo, UnreadableRange } from '../core/core.js';

/**
 * The JSON the HTTP API answers with, built from the core's results. Answers
 * use snake_case, as Queen's do (message_id, transaction_id); requests use
 * Queen's camelCase (transactionId, consumerGroup). Kafka keys and header
 * values are bytes, so they travel as base64.
 */

export function pushItemAnswer(item: PushItemResult) {
  return {
    status: item.status,
    message_id: item.messageId,
    transaction_id: item.transactionId,
    queue: item.queue,
    partition: item.partition,
    partition_index: item.partitionIndex,
    offset: item.offset,
  };
}

export function leaseAnswer(lease: Lease) {
  return {
    id: lease.id,
    queue: lease.queue,
    partition: lease.partition,
    consumer_group: lease.consumerGroup,
    owner: lease.owner,
    deadline: lease.deadline,
  };
}

/** A popped message carries its lease and group, so a client can ack it from the message alone. */
export function messageAnswer(message: QueenMessage, lease: Lease | null) {
  return {
    queue: message.queue,
    partition: message.partition,
    partition_index: message.partitionIndex,
    offset: message.offset,
    message_id: message.messageId,
    transaction_id: message.transactionId,
    payload: message.payload,
    key_base64: message.key === null ? null : message.key.toString('base64'),
    headers: message.headers.map((h) => ({ key: h.key, value_base64: h.value === null ? null : h.value.toString('base64') })),
    timestamp: message.timestamp,
    consumer_group: lease?.consumerGroup ?? null,
    lease_id: lease?.id ?? null,
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

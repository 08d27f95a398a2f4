import type { KvEntry, Lease, Message, PushOutcome } from './types.js';

/** The HTTP API's answers (Queen's shapes: push results in snake_case, messages in camelCase), as the client types them. */

export interface PushItemJson {
  status: 'queued' | 'duplicate';
  message_id: string;
  transaction_id: string;
  queue: string;
  partition: string;
  partition_index: number;
  offset: number;
}

export interface MessageJson {
  id: string;
  transactionId: string;
  traceId: string | null;
  data: unknown;
  queue: string;
  partition: string;
  partitionId: string;
  partitionIndex: number;
  offset: number;
  keyBase64: string | null;
  headers: { key: string; valueBase64: string | null }[];
  timestamp: number;
  consumerGroup: string | null;
  leaseId: string | null;
  retryCount: number;
}

export interface LeaseJson {
  id: string;
  queue: string;
  partition: string;
  consumerGroup: string;
  owner: string;
  deadline: number;
}

export interface KvEntryJson {
  ns: string;
  key: string;
  value: unknown;
  version: number;
  expires_at: number | null;
}

export const fromPushItem = (item: PushItemJson): PushOutcome => ({
  status: item.status,
  messageId: item.message_id,
  transactionId: item.transaction_id,
  queue: item.queue,
  partition: item.partition,
  partitionIndex: item.partition_index,
  offset: item.offset,
});

export const fromMessage = (m: MessageJson): Message => ({
  queue: m.queue,
  partition: m.partition,
  partitionId: m.partitionId,
  partitionIndex: m.partitionIndex,
  offset: m.offset,
  messageId: m.id,
  transactionId: m.transactionId,
  traceId: m.traceId,
  data: m.data,
  key: m.keyBase64 === null ? null : Buffer.from(m.keyBase64, 'base64'),
  headers: m.headers.map((h) => ({ key: h.key, value: h.valueBase64 === null ? null : Buffer.from(h.valueBase64, 'base64') })),
  timestamp: m.timestamp,
  consumerGroup: m.consumerGroup,
  leaseId: m.leaseId,
  retryCount: m.retryCount,
});

export const fromLease = (l: LeaseJson): Lease => ({ id: l.id, queue: l.queue, partition: l.partition, consumerGroup: l.consumerGroup, owner: l.owner, deadline: l.deadline });

export const fromKvEntry = (e: KvEntryJson): KvEntry => ({ ns: e.ns, key: e.key, value: e.value, version: e.version, expiresAt: e.expires_at });

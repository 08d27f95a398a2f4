import type { KvEntry, Lease, Message, PushOutcome } from './types.js';

/** The HTTP API's snake_case answers, as the client types them. */

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
  queue: string;
  partition: string;
  partition_index: number;
  offset: number;
  message_id: string;
  transaction_id: string;
  payload: unknown;
  key_base64: string | null;
  headers: { key: string; value_base64: string | null }[];
  timestamp: number;
  consumer_group: string | null;
  lease_id: string | null;
}

export interface LeaseJson {
  id: string;
  queue: string;
  partition: string;
  consumer_group: string;
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
  partitionIndex: m.partition_index,
  offset: m.offset,
  messageId: m.message_id,
  transactionId: m.transaction_id,
  data: m.payload,
  key: m.key_base64 === null ? null : Buffer.from(m.key_base64, 'base64'),
  headers: m.headers.map((h) => ({ key: h.key, value: h.value_base64 === null ? null : Buffer.from(h.value_base64, 'base64') })),
  timestamp: m.timestamp,
  consumerGroup: m.consumer_group,
  leaseId: m.lease_id,
});

export const fromLease = (l: LeaseJson): Lease => ({ id: l.id, queue: l.queue, partition: l.partition, consumerGroup: l.consumer_group, owner: l.owner, deadline: l.deadline });

export const fromKvEntry = (e: KvEntryJson): KvEntry => ({ ns: e.ns, key: e.key, value: e.value, version: e.version, expiresAt: e.expires_at });

/** The client's view of Queen: camelCase, payloads as `data`, Kafka keys and header values as Buffers. */

export type Ttl = number | string;

/** How long a KV entry or once marker lives: ttl ('7d', '30m', '90s', or seconds) or forever. */
export type LifetimeOptions = { ttl: Ttl; forever?: never } | { forever: true; ttl?: never };

export interface PushInput {
  /** Derive it from the work (order-9137-paid), never from the attempt; minted (UUIDv7) when absent. */
  transactionId?: string;
  data: unknown;
}

export interface PushOutcome {
  status: 'queued' | 'duplicate';
  /** For a duplicate, the original message's id. */
  messageId: string;
  transactionId: string;
  queue: string;
  partition: string;
  partitionIndex: number;
  /** For a duplicate, the original message's offset. */
  offset: number;
}

export interface Lease {
  id: string;
  queue: string;
  partition: string;
  consumerGroup: string;
  owner: string;
  deadline: number;
}

export interface Message {
  queue: string;
  partition: string;
  partitionIndex: number;
  offset: number;
  messageId: string;
  transactionId: string;
  data: unknown;
  key: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  timestamp: number;
  /** The group and lease it was popped under, so ack(message) needs nothing else. */
  consumerGroup: string | null;
  leaseId: string | null;
}

export interface PopOptions {
  consumerGroup: string;
  batch?: number;
  /** Long-poll: wait for a message up to timeoutMs (default 30 s). */
  wait?: boolean;
  timeoutMs?: number;
  /** The worker holding the lease; default one per request. */
  owner?: string;
  leaseMs?: number;
  signal?: AbortSignal;
}

export interface AckOptions {
  consumerGroup?: string;
  /** The seed's spelling of consumerGroup. */
  group?: string;
}

export interface KvEntry {
  ns: string;
  key: string;
  value: unknown;
  version: number;
  expiresAt: number | null;
}

export interface QueueOptions {
  dedupWindowSeconds?: number;
  /** Seconds. */
  leaseTime?: number;
  /** Seconds; -1 keeps records forever. */
  retentionSeconds?: number;
  retentionBytes?: number;
  maxMessageBytes?: number;
}

export type TransactionOutcome =
  | { success: true; results: unknown[] }
  | { success: false; reason: 'kv_precondition'; failedIndex: number; failedItem: number | null; message: string };

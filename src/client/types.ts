/** The client's view of Queen: camelCase, payloads as `data`, Kafka keys and header values as Buffers. */
import type { KvEntry, Lease, PushItemResult, QueenMessage } from '../core/core.js';

/** The client speaks the core's shapes where they are the same (types only: nothing of the core is loaded). */
export type { KvEntry, Lease };

export type Ttl = number | string;

/** How long a KV entry or once marker lives: ttl ('7d', '30m', '90s', or seconds) or forever. */
export type LifetimeOptions = { ttl: Ttl; forever?: never } | { forever: true; ttl?: never };

export interface PushInput {
  /** Derive it from the work (order-9137-paid), never from the attempt; minted (UUIDv7) when absent. */
  transactionId?: string;
  data: unknown;
}

export type PushOutcome = PushItemResult;

export interface Message extends Omit<QueenMessage, 'payload'> {
  data: unknown;
  /** Queen's name for the partition, which acks send back. */
  partitionId: string;
  /** The group and lease it was popped under, so ack(message) needs nothing else. */
  consumerGroup: string | null;
  leaseId: string | null;
  /** How many times the group acked it `failed` before this delivery. */
  retryCount: number;
}

export interface PopOptions {
  /** Absent: Queen's queue mode (each message to one consumer). */
  consumerGroup?: string;
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
  | { success: false; reason: 'kv_precondition' | 'not_acked'; failedIndex: number; failedItem: number | null; message: string };

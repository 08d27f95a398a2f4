/** The Core interface (../core.ts), Queen's native push, pop, ack and transactions: requests and results, plain data. */
import type { Lifetime } from './kv.js';

export interface PushItem {
  queue: string;
  /** A partition name; default "Default". A new name gets the next free index. */
  partition?: string;
  /** At most 65,535 bytes. When absent the message id is used, so nothing dedups. */
  transactionId?: string;
  /** Any JSON value; stored as the record's value. */
  payload: unknown;
  /** Queen's trace id, kept with the message (at most 255 characters). */
  traceId?: string;
}

export interface PushRequest {
  items: PushItem[];
  /** Create a queue that does not exist, with the partition its first item names, instead of refusing the push (Queen's HTTP push). */
  createQueues?: boolean;
}

export interface PushItemResult {
  status: 'queued' | 'duplicate';
  /** UUIDv7; for a duplicate, the original message's id. */
  messageId: string;
  transactionId: string;
  queue: string;
  partition: string;
  partitionIndex: number;
  /** For a duplicate, the original message's offset. */
  offset: number;
}

export interface PushResult {
  items: PushItemResult[];
}

export interface PopRequest {
  queue: string;
  /** A partition name; absent means any partition whose lease is free. */
  partition?: string;
  consumerGroup: string;
  /** Who holds the lease (a worker id). */
  owner: string;
  batch: number;
  /** Long-poll: wait up to this long for a message. 0 returns at once. */
  waitMs: number;
  /** Lease length; default the queue's leaseMs. */
  leaseMs?: number;
}

export interface QueenMessage {
  queue: string;
  partition: string;
  partitionIndex: number;
  offset: number;
  messageId: string;
  transactionId: string;
  /** The trace id it was pushed with, or null. */
  traceId: string | null;
  payload: unknown;
  /** Kafka record key and headers, when the message came from Kafka. */
  key: Buffer | null;
  headers: { key: string; value: Buffer | null }[];
  timestamp: number;
}

export interface Lease {
  id: string;
  queue: string;
  partition: string;
  consumerGroup: string;
  owner: string;
  /** Epoch ms. */
  deadline: number;
}

export interface PopResult {
  messages: QueenMessage[];
  /** Null when nothing was popped. */
  lease: Lease | null;
  /**
   * Stored batches this pop could not read (written by an older version, or
   * damaged on disk): the group's position moved past them, so the records
   * after them flow. Absent when there were none.
   */
  unreadable?: UnreadableRange[];
}

/** Offsets [fromOffset, toOffset) of a partition that no reader can decode, and why. */
export interface UnreadableRange {
  partition: string;
  fromOffset: number;
  toOffset: number;
  reason: string;
}

export interface AckRequest {
  queue: string;
  partition: string;
  consumerGroup: string;
  offset: number;
  status: 'completed' | 'failed';
  /** The lease the message was popped under; required to be current when given. */
  leaseId?: string;
}

export interface RenewLeaseRequest {
  leaseId: string;
  extendMs: number;
}

export type TransactionOperation =
  /**
   * ifStored: what an id the partition already stores does to the
   * transaction: 'rollback' (the default: nothing is written, reason
   * `duplicate`) or 'answer' (the item is answered `duplicate`, as a plain
   * push answers it, and the rest commits).
   */
  | ({ op: 'push'; ifStored?: 'rollback' | 'answer' } & PushItem)
  /**
   * required: the transaction rolls back (reason `not_acked`) unless the
   * group's lease holds the offset when the transaction starts; without it an
   * ack that does not apply answers `acked: false` and the rest commits.
   */
  | ({ op: 'ack'; required?: boolean } & AckRequest)
  | { op: 'kv.put'; ns: string; key: string; value: unknown; lifetime?: Lifetime; expectedVersion?: number; required?: boolean }
  | { op: 'kv.putIfAbsent'; ns: string; key: string; value: unknown; lifetime?: Lifetime; required?: boolean }
  | { op: 'kv.delete'; ns: string; key: string }
  | { op: 'kv.incr'; ns: string; key: string; by: number; lifetime?: Lifetime }
  | { op: 'once'; ns: string; key: string; lifetime: Lifetime };

export interface TransactionRequest {
  operations: TransactionOperation[];
  /** As a push's: a pushed-to queue that does not exist is created. */
  createQueues?: boolean;
}

export type TransactionResult =
  | { success: true; results: unknown[] }
  | { success: false; reason: 'duplicate' | 'kv_precondition' | 'not_acked'; failedIndex: number; message: string };

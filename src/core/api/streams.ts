/** The Core interface (../core.ts), Queen streams: windowed queries' registrations, state and cycles: requests and results, plain data. */
import type { PushItem, PushItemResult } from './native.js';

/** A queue's partition, by names: the shard a streaming query keeps its state in. */
export interface StreamsPartition {
  queue: string;
  partition: string;
}

export interface StreamsRegisterRequest {
  /** The user's query id (Queen's `name`), e.g. "orders.per_minute". */
  name: string;
  sourceQueue: string;
  sinkQueue: string | null;
  /** A fingerprint of the client's operator chain. */
  configHash: string;
  /** Consent to drop the query's state when configHash changed. */
  reset: boolean;
}

export type StreamsRegisterResult =
  | { success: true; queryId: string; name: string; configHash: string; fresh: boolean; reset: boolean }
  | { success: false; queryId: string; name: string; error: string };

export type StreamsStateOp = { type: 'upsert'; key: string; value: unknown } | { type: 'delete'; key: string };

export interface StreamsCycleAck {
  /** The last message of the cycle; every offset of the group's lease up to it is acked. */
  offset: number;
  /** The lease it was popped under; required to be current when given. */
  leaseId?: string;
  /** How many messages the cycle consumed, ending with this one: where its batch began when the group has no position yet. */
  count?: number;
  /**
   * When the cycle failed this message (Queen's ack status `failed` or
   * `dlq`): its entry in Queen's dead-letter queue (KV namespace `queen.dlq`,
   * keyed by the message and group), written with the acks. The group still
   * moves past it and the lease is released, whatever releaseLease says.
   */
  deadLetter?: unknown;
}

export interface StreamsCycleRequest {
  queryId: string;
  source: StreamsPartition;
  consumerGroup: string;
  stateOps: StreamsStateOp[];
  pushItems: PushItem[];
  ack: StreamsCycleAck | null;
  /** True: the rest of the lease is handed back; false (a gate's partial ack): it stays until it expires. */
  releaseLease: boolean;
}

export interface StreamsCycleResult {
  success: boolean;
  stateOpsApplied: number;
  pushResults: PushItemResult[];
  /** Null when the cycle acked nothing. */
  ack: { acked: number; leaseReleased: boolean; deadLettered: boolean } | null;
  /** True when this exact cycle (same query, partition, group and acked offset) had committed before: nothing was applied again. */
  replayed: boolean;
  /**
   * True when a flush (a cycle without an ack that deletes state) was read
   * from state a main-loop cycle of the same partition has changed or is
   * changing: nothing was applied, and its windows are closed by a later one.
   */
  skipped?: boolean;
  /** Present when success is false: nothing was applied. */
  error?: string;
}

export interface StreamsStateGetRequest {
  queryId: string;
  source: StreamsPartition;
  /** Only these keys (empty or absent: every key). */
  keys?: string[];
  keyPrefix?: string;
  /** Epoch ms: only rows whose value's numeric windowEnd is at or before it (the idle flush). */
  ripeAtOrBefore?: number;
}

export interface StreamsStateRow {
  key: string;
  value: unknown;
  /** Epoch ms of the cycle that wrote it. */
  updatedAt: number;
}

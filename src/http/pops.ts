import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import type { Core, PopResult, UnreadableRange } from '../core/core.js';
import { isCoreError } from '../core/errors.js';
import type { HttpMetrics } from '../operations/registry.js';
import { QUEUE_MODE_GROUP, retryCounts } from './acks.js';
import type { PayloadCipher } from './payload-cipher.js';
import { leaseAnswer, messageAnswer, unreadableAnswer } from './answers.js';
import { partitionIdOf } from './partition-ids.js';
import { applySubscription } from './subscriptions.js';

/**
 * A pop as Queen's clients make it (GET /api/v1/pop/...: ./routes/consume.ts
 * tells the behaviour): a long-poll for the first messages, then more
 * partitions while the batch has room, each under its own lease; messages
 * handed back at once when the HTTP client went away meanwhile.
 */

export interface PopQuery {
  consumerGroup?: string;
  owner?: string;
  batch: number;
  wait: boolean;
  timeout: number;
  leaseMs?: number;
  autoAck: boolean;
  partitions?: number;
  subscriptionMode?: string;
  subscriptionFrom?: string;
}

/** A long-poll on a queue that does not exist yet, or whose messages are delayed or window-buffered, looks again this often. */
const RECHECK_MS = 500;
/** How long a long-poll waits before answering nothing during pop maintenance. */
const PAUSED_WAIT_MS = 1_000;

/** What every pop route is given. */
export interface PopRoute {
  core: Core;
  metrics: HttpMetrics;
  stopping: AbortSignal;
  /** Whether pop maintenance is on (./maintenance.ts). */
  paused(): Promise<boolean>;
  /** Opens sealed payloads (./payload-cipher.ts); null without a key. */
  payloads: PayloadCipher | null;
}

/** One pop in progress: what it pops, for whom, and whether its HTTP client is still there. */
interface PopCall {
  core: Core;
  payloads: PayloadCipher | null;
  queue: string;
  partition: string | undefined;
  query: PopQuery;
  group: string;
  owner: string;
  /** Stored batches the core passed over on the way, from every core pop of this call. */
  unreadable: UnreadableRange[];
  /** Aborted when the client goes away or the server begins to close: the long-poll answers now, with what it has. */
  signal: AbortSignal;
  clientGone(): boolean;
  /** Aborted when the server begins to close. */
  stopping: AbortSignal;
}

/** The pop's answer, or null when the client went away (its messages were handed back). */
export async function pop(route: PopRoute, queue: string, partition: string | undefined, query: PopQuery, raw: ServerResponse, log: FastifyBaseLogger) {
  const { core, metrics, stopping } = route;
  const group = query.consumerGroup ?? QUEUE_MODE_GROUP;
  const call: PopCall = { core, queue, partition, query, group, owner: query.owner ?? `http-${randomUUID()}`, unreadable: [], stopping, payloads: route.payloads, ...watchClient(raw, stopping) };
  if (await route.paused()) {
    // Pop maintenance: no messages; a long-poll waits a little so its client does not spin.
    if (query.wait) await sleep(Math.min(query.timeout, PAUSED_WAIT_MS), undefined, { signal: call.signal }).catch(() => {});
    return popAnswer(call, [], metrics);
  }
  await applySubscription(core, queue, group, query.subscriptionMode, query.subscriptionFrom);
  const claims = await claimMorePartitions(call, await longPoll(call));
  if (call.clientGone()) {
    await handBack(call, claims);
    return null;
  }
  for (const range of call.unreadable) {
    log.warn({ queue, group, ...range }, 'pop passed over a stored batch that cannot be read');
  }
  if (query.autoAck) await ackAll(call, claims);
  return popAnswer(call, claims, metrics);
}

/** Cancels the core call when the HTTP client goes away before its answer is written. */
function watchClient(raw: ServerResponse, stopping: AbortSignal): { signal: AbortSignal; clientGone(): boolean } {
  const cancel = new AbortController();
  let gone = false;
  raw.once('close', () => {
    if (raw.writableFinished) return;
    gone = true;
    cancel.abort();
  });
  return { signal: AbortSignal.any([cancel.signal, stopping]), clientGone: () => gone };
}

const leaseOf = (query: PopQuery) => (query.leaseMs === undefined ? {} : { leaseMs: query.leaseMs });

/** Pops until messages come, the wait is over, or the client is gone. */
async function longPoll(call: PopCall): Promise<PopResult> {
  const deadline = Date.now() + (call.query.wait ? call.query.timeout : 0);
  let result: PopResult = { messages: [], lease: null };
  for (;;) {
    const remaining = Math.max(0, deadline - Date.now());
    const attempt = await popOnce(call, remaining);
    if (attempt.result) result = attempt.result;
    if (result.messages.length > 0 || !attempt.recheck || call.clientGone() || call.stopping.aborted || Date.now() >= deadline) return result;
  }
}

/** One core pop; `recheck` when waiting longer could still find messages that no append will wake the poll for. */
async function popOnce(call: PopCall, remaining: number): Promise<{ result: PopResult | null; recheck: boolean }> {
  const { core, queue, partition, query } = call;
  try {
    const config = query.wait ? (await core.describeQueue({ name: queue }))?.config : undefined;
    const delayed = (config?.delayedProcessingMs ?? 0) > 0 || (config?.windowBufferMs ?? 0) > 0;
    const result = await core.pop(
      {
        queue,
        ...(partition === undefined ? {} : { partition }),
        consumerGroup: call.group,
        owner: call.owner,
        batch: query.batch,
        // Delayed messages come due without an append to wake the poll: look again now and then.
        waitMs: delayed ? Math.min(remaining, RECHECK_MS) : remaining,
        ...leaseOf(query),
      },
      { signal: call.signal },
    );
    call.unreadable.push(...(result.unreadable ?? []));
    return { result, recheck: delayed };
  } catch (e) {
    if (!isCoreError(e) || (e.code !== 'unknown_queue' && e.code !== 'unknown_partition')) throw e;
    // Nothing to pop yet; a long-poll waits for the first push to create it.
    if (remaining > 0) await sleep(Math.min(remaining, RECHECK_MS), undefined, { signal: call.signal }).catch(() => {});
    return { result: null, recheck: true };
  }
}

/** Queen's multi-partition pop: more partitions' messages, while the batch has room. */
async function claimMorePartitions(call: PopCall, first: PopResult): Promise<PopResult[]> {
  const { core, queue, query } = call;
  const claims: PopResult[] = first.messages.length > 0 ? [first] : [];
  let room = query.batch - first.messages.length;
  while (call.partition === undefined && claims.length > 0 && claims.length < (query.partitions ?? 1) && room > 0 && !call.clientGone()) {
    const more = await core.pop({ queue, consumerGroup: call.group, owner: call.owner, batch: room, waitMs: 0, ...leaseOf(query) });
    call.unreadable.push(...(more.unreadable ?? []));
    if (more.messages.length === 0) break;
    claims.push(more);
    room -= more.messages.length;
  }
  return claims;
}

/** Nobody will see these messages: hand them back now rather than after the lease runs out. */
async function handBack(call: PopCall, claims: PopResult[]): Promise<void> {
  for (const claim of claims) {
    const first = claim.messages[0]!;
    await call.core.ack({ queue: call.queue, partition: first.partition, consumerGroup: call.group, offset: first.offset, status: 'failed', leaseId: claim.lease!.id }).catch(() => {});
  }
}

async function ackAll(call: PopCall, claims: PopResult[]): Promise<void> {
  for (const claim of claims) {
    for (const m of claim.messages) {
      await call.core.ack({ queue: call.queue, partition: m.partition, consumerGroup: call.group, offset: m.offset, status: 'completed', leaseId: claim.lease!.id });
    }
  }
}

async function popAnswer(call: PopCall, claims: PopResult[], metrics: HttpMetrics) {
  const { queue, partition, group, query } = call;
  const popped = claims.flatMap((claim) => claim.messages.map((message) => ({ message, lease: query.autoAck ? null : claim.lease })));
  const counts = await retryCounts(call.core, group, popped.map((p) => p.message));
  if (popped.length > 0) metrics.popped.add({ queue }, popped.length);
  const first = popped[0];
  return {
    success: true,
    queue,
    partition: first?.message.partition ?? partition ?? null,
    partitionId: first ? partitionIdOf(queue, first.message.partition) : null,
    leaseId: first ? (first.lease?.id ?? '') : null,
    consumerGroup: group,
    partitionsClaimed: claims.length,
    messages: popped.map((p, i) => ({
      ...messageAnswer(p.message, p.lease, counts[i]!),
      ...(call.payloads ? { data: call.payloads.open(p.message.payload) } : {}),
      consumerGroup: group,
    })),
    lease: first?.lease ? leaseAnswer(first.lease) : null,
    ...(call.unreadable.length > 0 ? { unreadable: call.unreadable.map(unreadableAnswer) } : {}),
  };
}

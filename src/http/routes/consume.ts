/**
 * Consuming, as Queen's clients do it: pop, ack (one or a batch), lease
 * renewal.
 *
 * GET /api/v1/pop/queue/:queue[/partition/:partition] pops up to `batch`
 * messages and takes the partition's lease for them (owner, deadline).
 * Without `consumerGroup` it pops in Queen's queue mode (the group
 * "__QUEUE_MODE__": each message goes to one consumer); with one, each group
 * gets every message. With wait=true it long-polls up to `timeout` ms, also
 * on a queue that does not exist yet (Queen's consumers start before the
 * first push). When the HTTP client goes away mid-poll the core call is
 * cancelled, and should the core have handed out messages at that instant,
 * their lease is released at once so they are delivered again. The group's
 * position is the same one a Kafka consumer group of that name commits to.
 * subscriptionMode (all, new, new-only) and subscriptionFrom (now, or a
 * time) say where a group that never read the queue starts (../subscriptions.ts).
 *
 * POST /api/v1/ack and /api/v1/ack/batch ack by transactionId and
 * partitionId (../acks.ts: retries and the dead-letter queue).
 * POST /api/v1/lease/:leaseId/extend pushes the lease's deadline out by
 * `seconds` (default 60).
 *
 * A stored batch that cannot be read (written by an older version, or
 * damaged on disk; Produce refuses such batches) never stops a pop: the core
 * moves the group past it and the answer lists it under `unreadable`, with its
 * offsets and the reason, beside the readable messages; it is logged as a
 * warning too. The answer is still 200: the pop did its job.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { PopResult, UnreadableRange } from '../../core/core.js';
import { isCoreError } from '../../core/errors.js';
import { applyAck, locateMessages, planAck, QUEUE_MODE_GROUP, retryCounts, type AckAnswer, type AckTarget, type QueenAckStatus } from '../acks.js';
import type { FastifyBaseLogger, FastifyRequest } from 'fastify';
import { leaseAnswer, messageAnswer, unreadableAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { IDEMPOTENT_EFFECT, progressMarker, progressOfFirstAttempt } from '../idempotency.js';
import { partitionIdOf } from '../partition-ids.js';
import { applySubscription } from '../subscriptions.js';
import { NAME } from '../schemas.js';

interface PopQuery {
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

const MAX_WAIT_MS = 300_000;
/** A long-poll on a queue that does not exist yet, or whose messages are delayed or window-buffered, looks again this often. */
const RECHECK_MS = 500;

const POP_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    consumerGroup: NAME,
    owner: NAME,
    batch: { type: 'integer', minimum: 1, maximum: 10_000, default: 1 },
    wait: { type: 'boolean', default: false },
    timeout: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS, default: 30_000 },
    leaseMs: { type: 'integer', minimum: 1 },
    autoAck: { type: 'boolean', default: false },
    // Queen's multi-partition pop: up to this many partitions, each under its own lease.
    partitions: { type: 'integer', minimum: 1, maximum: 1_000 },
    subscriptionMode: { type: 'string' },
    subscriptionFrom: { type: 'string' },
  },
} as const;

const NULLABLE_STRING = { type: ['string', 'null'] } as const;
const STATUS = { type: 'string', enum: ['completed', 'success', 'failed', 'dlq', 'retry'] } as const;

const ACK_ITEM = {
  transactionId: NAME,
  partitionId: NAME,
  queue: NAME,
  partition: NAME,
  offset: { type: 'integer', minimum: 0 },
  status: STATUS,
  leaseId: NULLABLE_STRING,
  error: NULLABLE_STRING,
} as const;

interface AckItem extends AckTarget {
  status?: QueenAckStatus;
  leaseId?: string | null;
  error?: string | null;
  consumerGroup?: string | null;
}

export function registerConsumeRoutes({ app, core, metrics, stopping }: HttpApiContext): void {
  const pop = async (queue: string, partition: string | undefined, query: PopQuery, raw: ServerResponse, log: FastifyBaseLogger) => {
    const group = query.consumerGroup ?? QUEUE_MODE_GROUP;
    await applySubscription(core, queue, group, query.subscriptionMode, query.subscriptionFrom);
    const owner = query.owner ?? `http-${randomUUID()}`;
    // Stored batches the core passed over on the way (see above), from every pop call below.
    const unreadable: UnreadableRange[] = [];
    const cancel = new AbortController();
    let clientGone = false;
    raw.once('close', () => {
      if (raw.writableFinished) return;
      clientGone = true;
      cancel.abort();
    });
    // The client going, or the server closing: either ends the long-poll now, answered with what it has.
    const wake = AbortSignal.any([cancel.signal, stopping]);
    const deadline = Date.now() + (query.wait ? query.timeout : 0);
    let result: PopResult = { messages: [], lease: null };
    for (;;) {
      const remaining = Math.max(0, deadline - Date.now());
      let recheck = false;
      try {
        const config = query.wait ? (await core.describeQueue({ name: queue }))?.config : undefined;
        const delayed = (config?.delayedProcessingMs ?? 0) > 0 || (config?.windowBufferMs ?? 0) > 0;
        result = await core.pop(
          {
            queue,
            ...(partition === undefined ? {} : { partition }),
            consumerGroup: group,
            owner,
            batch: query.batch,
            // Delayed messages come due without an append to wake the poll: look again now and then.
            waitMs: delayed ? Math.min(remaining, RECHECK_MS) : remaining,
            ...(query.leaseMs === undefined ? {} : { leaseMs: query.leaseMs }),
          },
          { signal: wake },
        );
        unreadable.push(...(result.unreadable ?? []));
        recheck = delayed;
      } catch (e) {
        if (!isCoreError(e) || (e.code !== 'unknown_queue' && e.code !== 'unknown_partition')) throw e;
        // Nothing to pop yet; a long-poll waits for the first push to create it.
        if (remaining > 0) await sleep(Math.min(remaining, RECHECK_MS), undefined, { signal: wake }).catch(() => {});
        recheck = true;
      }
      if (result.messages.length > 0 || !recheck || clientGone || stopping.aborted || Date.now() >= deadline) break;
    }
    // Queen's multi-partition pop: more partitions' messages, while the batch has room.
    const claims: PopResult[] = result.messages.length > 0 ? [result] : [];
    let room = query.batch - result.messages.length;
    while (partition === undefined && claims.length > 0 && claims.length < (query.partitions ?? 1) && room > 0 && !clientGone) {
      const more = await core.pop({ queue, consumerGroup: group, owner, batch: room, waitMs: 0, ...(query.leaseMs === undefined ? {} : { leaseMs: query.leaseMs }) });
      unreadable.push(...(more.unreadable ?? []));
      if (more.messages.length === 0) break;
      claims.push(more);
      room -= more.messages.length;
    }
    if (clientGone) {
      // Nobody will see these messages: hand them back now rather than after the lease runs out.
      for (const claim of claims) {
        const first = claim.messages[0]!;
        await core.ack({ queue, partition: first.partition, consumerGroup: group, offset: first.offset, status: 'failed', leaseId: claim.lease!.id }).catch(() => {});
      }
      return null;
    }
    for (const range of unreadable) {
      log.warn({ queue, group, ...range }, 'pop passed over a stored batch that cannot be read');
    }
    if (query.autoAck) {
      for (const claim of claims) {
        for (const m of claim.messages) await core.ack({ queue, partition: m.partition, consumerGroup: group, offset: m.offset, status: 'completed', leaseId: claim.lease!.id });
      }
    }
    const popped = claims.flatMap((claim) => claim.messages.map((message) => ({ message, lease: query.autoAck ? null : claim.lease })));
    const counts = await retryCounts(core, group, popped.map((p) => p.message));
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
      messages: popped.map((p, i) => ({ ...messageAnswer(p.message, p.lease, counts[i]!), consumerGroup: group })),
      lease: first?.lease ? leaseAnswer(first.lease) : null,
      ...(unreadable.length > 0 ? { unreadable: unreadable.map(unreadableAnswer) } : {}),
    };
  };

  app.get<{ Params: { queue: string }; Querystring: PopQuery }>(
    '/api/v1/pop/queue/:queue',
    { schema: { params: { type: 'object', required: ['queue'], properties: { queue: NAME } }, querystring: POP_QUERY } },
    async (request, reply) => pop(request.params.queue, undefined, request.query, reply.raw, request.log),
  );

  app.get<{ Params: { queue: string; partition: string }; Querystring: PopQuery }>(
    '/api/v1/pop/queue/:queue/partition/:partition',
    { schema: { params: { type: 'object', required: ['queue', 'partition'], properties: { queue: NAME, partition: NAME } }, querystring: POP_QUERY } },
    async (request, reply) => pop(request.params.queue, request.params.partition, request.query, reply.raw, request.log),
  );

  /**
   * Acks in the order given; each answers for itself, as Queen's do, and each
   * is one core transaction. Under an Idempotency-Key every ack's transaction
   * also records the answers so far in the key's ledger entry, so a repeat of
   * a batch that stopped part way (or whose answer was lost) answers the acks
   * that ran as they were and runs only the rest.
   */
  const acknowledge = async (request: FastifyRequest, items: AckItem[], group: string, field: string) => {
    const answers = progressOfFirstAttempt(request).slice(0, items.length) as AckAnswer[];
    const rest = items.slice(answers.length);
    const located = await locateMessages(core, group, rest, field);
    const now = Date.now();
    for (const [j, item] of rest.entries()) {
      const i = answers.length;
      const found = located[j] ?? null;
      const status = item.status ?? 'completed';
      const plan = found ? await planAck(core, found, { status, consumerGroup: group, ...(item.leaseId ? { leaseId: item.leaseId } : {}), error: item.error ?? null }, now) : null;
      const answer = await applyAck(core, i, found, plan, item.transactionId ?? null, (applied) => {
        const marker = progressMarker(request, [...answers, applied]);
        return marker ? [marker] : [];
      });
      if (answer.success) metrics.acked.add({ queue: answer.queueName!, status: answer.dlq ? 'dlq' : status === 'success' ? 'completed' : status });
      answers.push(answer);
    }
    return answers;
  };

  app.post<{ Body: AckItem }>(
    '/api/v1/ack',
    { schema: { body: { type: 'object', additionalProperties: false, properties: { ...ACK_ITEM, consumerGroup: NULLABLE_STRING } } } },
    async (request) => acknowledge(request, [request.body], request.body.consumerGroup ?? QUEUE_MODE_GROUP, 'body'),
  );

  app.post<{ Body: { acknowledgments: AckItem[]; consumerGroup?: string | null } }>(
    '/api/v1/ack/batch',
    {
      schema: {
        body: {
          type: 'object',
          required: ['acknowledgments'],
          additionalProperties: false,
          properties: {
            acknowledgments: { type: 'array', maxItems: 10_000, items: { type: 'object', additionalProperties: false, properties: ACK_ITEM } },
            consumerGroup: NULLABLE_STRING,
          },
        },
      },
    },
    async (request) => acknowledge(request, request.body.acknowledgments, request.body.consumerGroup ?? QUEUE_MODE_GROUP, 'body.acknowledgments'),
  );

  app.post<{ Params: { leaseId: string }; Body: { seconds?: number; extendMs?: number } | undefined }>(
    '/api/v1/lease/:leaseId/extend',
    {
      // A renewal sets the deadline to now plus the extension: running it again is the same effect.
      config: IDEMPOTENT_EFFECT,
      schema: {
        params: { type: 'object', required: ['leaseId'], properties: { leaseId: NAME } },
        body: {
          type: ['object', 'null'],
          additionalProperties: false,
          properties: { seconds: { type: 'number', exclusiveMinimum: 0 }, extendMs: { type: 'integer', minimum: 1 } },
        },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      const extendMs = body.extendMs ?? Math.round((body.seconds ?? 60) * 1000);
      const lease = await core.renewLease({ leaseId: request.params.leaseId, extendMs });
      return [{ index: 0, leaseId: lease.id, success: true, error: null, expiresAt: new Date(lease.deadline).toISOString(), lease: leaseAnswer(lease) }];
    },
  );
}


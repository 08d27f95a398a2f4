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
import type { FastifyRequest } from 'fastify';
import type { Core } from '../../core/core.js';
import type { HttpMetrics } from '../../operations/registry.js';
import { applyAck, applyAcksTogether, locateMessages, planAck, QUEUE_MODE_GROUP, type AckAnswer, type AckPlan, type AckTarget, type LocatedMessage, type QueenAckStatus } from '../acks.js';
import { leaseAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { IDEMPOTENT_EFFECT, progressMarker, progressOfFirstAttempt } from '../idempotency.js';
import { renewLeases } from '../shared-leases.js';
import { pop, type PopQuery, type PopRoute } from '../pops.js';
import { NAME } from '../schemas.js';

const MAX_WAIT_MS = 300_000;

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

const ACK_BATCH_BODY = {
  type: 'object',
  required: ['acknowledgments'],
  additionalProperties: false,
  properties: {
    acknowledgments: { type: 'array', maxItems: 10_000, items: { type: 'object', additionalProperties: false, properties: ACK_ITEM } },
    consumerGroup: NULLABLE_STRING,
  },
} as const;

const LEASE_EXTEND_SCHEMA = {
  params: { type: 'object', required: ['leaseId'], properties: { leaseId: NAME } },
  body: {
    type: ['object', 'null'],
    additionalProperties: false,
    properties: { seconds: { type: 'number', exclusiveMinimum: 0 }, extendMs: { type: 'integer', minimum: 1 } },
  },
} as const;

export function registerConsumeRoutes({ app, core, metrics, stopping, maintenance, payloads }: HttpApiContext): void {
  const route: PopRoute = { core, metrics, stopping, paused: async () => (await maintenance.modes()).pop, payloads };
  app.get<{ Params: { queue: string }; Querystring: PopQuery }>(
    '/api/v1/pop/queue/:queue',
    { schema: { params: { type: 'object', required: ['queue'], properties: { queue: NAME } }, querystring: POP_QUERY } },
    async (request, reply) => pop(route, request.params.queue, undefined, request.query, reply.raw, request.log),
  );

  app.get<{ Params: { queue: string; partition: string }; Querystring: PopQuery }>(
    '/api/v1/pop/queue/:queue/partition/:partition',
    { schema: { params: { type: 'object', required: ['queue', 'partition'], properties: { queue: NAME, partition: NAME } }, querystring: POP_QUERY } },
    async (request, reply) => pop(route, request.params.queue, request.params.partition, request.query, reply.raw, request.log),
  );

  app.post<{ Body: AckItem }>(
    '/api/v1/ack',
    { schema: { body: { type: 'object', additionalProperties: false, properties: { ...ACK_ITEM, consumerGroup: NULLABLE_STRING } } } },
    async (request) => acknowledge(core, metrics, request, [request.body], request.body.consumerGroup ?? QUEUE_MODE_GROUP, 'body'),
  );

  app.post<{ Body: { acknowledgments: AckItem[]; consumerGroup?: string | null } }>(
    '/api/v1/ack/batch',
    { schema: { body: ACK_BATCH_BODY } },
    async (request) => acknowledge(core, metrics, request, request.body.acknowledgments, request.body.consumerGroup ?? QUEUE_MODE_GROUP, 'body.acknowledgments'),
  );

  // A renewal sets the deadline to now plus the extension: running it again is the same effect.
  app.post<{ Params: { leaseId: string }; Body: { seconds?: number; extendMs?: number } | undefined }>(
    '/api/v1/lease/:leaseId/extend',
    { config: IDEMPOTENT_EFFECT, schema: LEASE_EXTEND_SCHEMA },
    async (request) => extendLease(core, request.params.leaseId, request.body ?? {}),
  );
}

/**
 * Whether a batch's acks can share one core transaction and still answer as
 * if each ran alone: each names a different message, and on each partition
 * only the last may end the group's lease (a `failed` or `retry` ack hands
 * the lease back; an ack after it on the partition would find it gone).
 */
function actIndependently(found: readonly LocatedMessage[], items: readonly AckItem[]): boolean {
  const messages = new Set<string>();
  const lastOnPartition = new Map<string, number>();
  found.forEach((f, j) => lastOnPartition.set(JSON.stringify([f.queue.name, f.message.partition]), j));
  return found.every((f, j) => {
    const message = JSON.stringify([f.queue.name, f.message.partition, f.message.offset]);
    if (messages.has(message)) return false;
    messages.add(message);
    const endsLease = items[j]!.status === 'failed' || items[j]!.status === 'retry';
    return !endsLease || lastOnPartition.get(JSON.stringify([f.queue.name, f.message.partition])) === j;
  });
}

/**
 * Acks in the order given; each answers for itself, as Queen's do. The batch
 * is first tried as one core transaction (../acks.ts applyAcksTogether: one
 * database transaction for a hundred acks); when one of them does not apply,
 * nothing of it was written and each ack runs as its own core transaction.
 * Under an Idempotency-Key every ack's transaction also records the answers
 * so far in the key's ledger entry, so a repeat of a batch that stopped part
 * way (or whose answer was lost) answers the acks that ran as they were and
 * runs only the rest.
 */
async function acknowledge(core: Core, metrics: HttpMetrics, request: FastifyRequest, items: AckItem[], group: string, field: string): Promise<AckAnswer[]> {
  const answers = progressOfFirstAttempt(request).slice(0, items.length) as AckAnswer[];
  const rest = items.slice(answers.length);
  const located = await locateMessages(core, group, rest, field);
  const now = Date.now();
  const planOf = (item: AckItem, found: LocatedMessage) =>
    planAck(core, found, { status: item.status ?? 'completed', consumerGroup: group, ...(item.leaseId ? { leaseId: item.leaseId } : {}), error: item.error ?? null }, now);
  const count = (answer: AckAnswer, item: AckItem) => {
    const status = item.status ?? 'completed';
    if (answer.success) metrics.acked.add({ queue: answer.queueName!, status: answer.dlq ? 'dlq' : status === 'success' ? 'completed' : status });
  };
  const found = located.every((f) => f !== null) ? (located as LocatedMessage[]) : null;
  if (rest.length > 1 && found && actIndependently(found, rest)) {
    const plans: AckPlan[] = [];
    for (const [j, item] of rest.entries()) plans.push(await planOf(item, found[j]!));
    const together = await applyAcksTogether(core, answers.length, found, plans, (applied) => {
      const marker = progressMarker(request, [...answers, ...applied]);
      return marker ? [marker] : [];
    });
    if (together) {
      together.forEach((answer, j) => count(answer, rest[j]!));
      return [...answers, ...together];
    }
  }
  for (const [j, item] of rest.entries()) {
    const i = answers.length;
    const found = located[j] ?? null;
    const plan = found ? await planOf(item, found) : null;
    const answer = await applyAck(core, i, found, plan, item.transactionId ?? null, (applied) => {
      const marker = progressMarker(request, [...answers, applied]);
      return marker ? [marker] : [];
    });
    count(answer, item);
    answers.push(answer);
  }
  return answers;
}

async function extendLease(core: Core, leaseId: string, body: { seconds?: number; extendMs?: number }) {
  const extendMs = body.extendMs ?? Math.round((body.seconds ?? 60) * 1000);
  const lease = await renewLeases(core, leaseId, extendMs, Date.now());
  return [{ index: 0, leaseId: lease.id, success: true, error: null, expiresAt: new Date(lease.deadline).toISOString(), lease: leaseAnswer(lease) }];
}

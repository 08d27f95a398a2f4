/**
 * Consuming: pop, ack, lease renewal.
 *
 * GET /api/v1/pop/queue/:queue[/partition/:partition] pops up to `batch`
 * messages for a consumer group and takes the partition's lease for them
 * (owner, deadline). With wait=true it long-polls up to `timeout` ms. When
 * the HTTP client goes away mid-poll the core call is cancelled, and should
 * the core have handed out messages at that instant, their lease is released
 * at once (acked failed) so they are delivered again instead of waiting out
 * the lease. The group's position is the same one a Kafka consumer group of
 * that name commits to.
 *
 * POST /api/v1/ack acks one message completed (the group moves past it) or
 * failed (the lease ends; it and what follows are delivered again).
 *
 * A stored batch that cannot be read (written by an older version, or
 * damaged on disk; Produce refuses such batches) never stops a pop: the core
 * moves the group past it and the answer lists it under `unreadable`, with its
 * offsets and the reason, beside the readable messages; it is logged as a
 * warning too. The answer is still 200: the pop did its job.
 * POST /api/v1/lease/:leaseId/extend pushes the lease's deadline out.
 */
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { AckRequest, PopResult } from '../../core/core.js';
import type { FastifyBaseLogger } from 'fastify';
import { leaseAnswer, messageAnswer, unreadableAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { ACK_FIELDS, ACK_REQUIRED, NAME } from '../schemas.js';

interface PopQuery {
  consumerGroup: string;
  owner?: string;
  batch: number;
  wait: boolean;
  timeout: number;
  leaseMs?: number;
}

const MAX_WAIT_MS = 300_000;

const POP_QUERY = {
  type: 'object',
  required: ['consumerGroup'],
  additionalProperties: false,
  properties: {
    consumerGroup: NAME,
    owner: NAME,
    batch: { type: 'integer', minimum: 1, maximum: 10_000, default: 1 },
    wait: { type: 'boolean', default: false },
    timeout: { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS, default: 30_000 },
    leaseMs: { type: 'integer', minimum: 1 },
  },
} as const;

export function registerConsumeRoutes({ app, core, metrics }: HttpApiContext): void {
  const pop = async (queue: string, partition: string | undefined, query: PopQuery, raw: ServerResponse, log: FastifyBaseLogger) => {
    const cancel = new AbortController();
    let clientGone = false;
    raw.once('close', () => {
      if (raw.writableFinished) return;
      clientGone = true;
      cancel.abort();
    });
    const result: PopResult = await core.pop(
      {
        queue,
        ...(partition === undefined ? {} : { partition }),
        consumerGroup: query.consumerGroup,
        owner: query.owner ?? `http-${randomUUID()}`,
        batch: query.batch,
        waitMs: query.wait ? query.timeout : 0,
        ...(query.leaseMs === undefined ? {} : { leaseMs: query.leaseMs }),
      },
      { signal: cancel.signal },
    );
    if (clientGone && result.lease && result.messages.length > 0) {
      // Nobody will see these messages: hand them back now rather than after the lease runs out.
      const first = result.messages[0]!;
      await core.ack({ queue, partition: first.partition, consumerGroup: query.consumerGroup, offset: first.offset, status: 'failed', leaseId: result.lease.id }).catch(() => {});
      return null;
    }
    if (result.messages.length > 0) metrics.popped.add({ queue }, result.messages.length);
    const unreadable = result.unreadable ?? [];
    for (const range of unreadable) {
      log.warn({ queue, group: query.consumerGroup, ...range }, 'pop passed over a stored batch that cannot be read');
    }
    return {
      messages: result.messages.map((m) => messageAnswer(m, result.lease)),
      lease: result.lease ? leaseAnswer(result.lease) : null,
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

  app.post<{ Body: AckRequest }>(
    '/api/v1/ack',
    { schema: { body: { type: 'object', required: ACK_REQUIRED, additionalProperties: false, properties: ACK_FIELDS } } },
    async (request) => {
      const { acked } = await core.ack(request.body);
      if (acked) metrics.acked.add({ queue: request.body.queue, status: request.body.status });
      return { acked };
    },
  );

  app.post<{ Params: { leaseId: string }; Body: { extendMs: number } }>(
    '/api/v1/lease/:leaseId/extend',
    {
      schema: {
        params: { type: 'object', required: ['leaseId'], properties: { leaseId: NAME } },
        body: { type: 'object', required: ['extendMs'], additionalProperties: false, properties: { extendMs: { type: 'integer', minimum: 1 } } },
      },
    },
    async (request) => ({ lease: leaseAnswer(await core.renewLease({ leaseId: request.params.leaseId, extendMs: request.body.extendMs })) }),
  );
}

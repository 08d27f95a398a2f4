/**
 * POST /api/v1/push: Queen's push. Each item names its queue, optionally a
 * partition (default "Default") and a transactionId, and carries a JSON
 * payload; a queue or partition that does not exist yet is created (../pushes.ts).
 * The answer is HTTP 201 with Queen's bare array, one result per item in
 * order: `queued`, or `duplicate` with the original message_id (and offset)
 * when the partition already stores the id inside the queue's dedup window
 * (or an earlier item of the same request carries it). A bad item fails the
 * whole request and nothing is written.
 */
import type { PushItem } from '../../core/core.js';
import { pushItemAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { pushCreatingQueues } from '../pushes.js';
import { PUSH_ITEMS, toPushItems, type HttpPushItem } from '../schemas.js';

export function registerPushRoutes({ app, core, metrics }: HttpApiContext): void {
  app.post<{ Body: { items: HttpPushItem[] } }>(
    '/api/v1/push',
    { schema: { body: { type: 'object', required: ['items'], additionalProperties: false, properties: { items: PUSH_ITEMS } } } },
    async (request, reply) => {
      const items: PushItem[] = toPushItems(request.body.items);
      const { items: results } = await pushCreatingQueues(core, items);
      for (const item of results) metrics.pushed.add({ queue: item.queue, status: item.status });
      return reply.status(201).send(results.map((r, i) => pushItemAnswer(r, i, request.body.items[i]!.traceId ?? null)));
    },
  );
}

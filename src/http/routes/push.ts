/**
 * POST /api/v1/push: native pushes. Each item names its queue, optionally a
 * partition (default "Default") and a transactionId, and carries a JSON
 * payload. The answer is HTTP 201 with one result per item, in order:
 * `queued`, or `duplicate` with the original message_id and offset when the
 * partition already stores the id inside the queue's dedup window (or an
 * earlier item of the same request carries it). A bad item fails the whole
 * request and nothing is written.
 */
import type { PushItem } from '../../core/core.js';
import { pushItemAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { PUSH_ITEMS } from '../schemas.js';

interface PushBody {
  items: PushItem[];
}

export function registerPushRoutes({ app, core, metrics }: HttpApiContext): void {
  app.post<{ Body: PushBody }>(
    '/api/v1/push',
    { schema: { body: { type: 'object', required: ['items'], additionalProperties: false, properties: { items: PUSH_ITEMS } } } },
    async (request, reply) => {
      const { items } = await core.push({ items: request.body.items });
      for (const item of items) metrics.pushed.add({ queue: item.queue, status: item.status });
      return reply.status(201).send({ items: items.map(pushItemAnswer) });
    },
  );
}

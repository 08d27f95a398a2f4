/**
 * POST /api/v1/push: Queen's push. Each item names its queue, optionally a
 * partition (default "Default") and a transactionId, and carries a JSON
 * payload; a queue or partition that does not exist yet is created (../pushes.ts).
 * The answer is HTTP 201 with Queen's bare array, one result per item in
 * order: `queued`, or `duplicate` with the original message_id (and offset)
 * when the partition already stores the id inside the queue's dedup window
 * (or an earlier item of the same request carries it). A bad item fails the
 * whole request and nothing is written. No items is answered 201 `[]`, as
 * Queen answers it. Items for a queue whose `maxSize` they would pass are
 * answered `failed` with a sentence and the rest is pushed (../capacity.ts).
 *
 * With an Idempotency-Key the push is one core transaction that also writes
 * the key's ledger entry, so a retry after a lost answer never pushes twice.
 * Its items say ifStored: 'answer', so an id the partition already stores is
 * answered `duplicate` inside the transaction, exactly as a plain push
 * answers it, instead of rolling the push back.
 */
import type { FastifyRequest } from 'fastify';
import type { Core, PushItem, PushItemResult } from '../../core/core.js';
import { failedItemAnswer, pushItemAnswer } from '../answers.js';
import { overCapacity } from '../capacity.js';
import { sealPayloads } from '../queue-policies.js';
import type { HttpApiContext } from '../context.js';
import { idempotencyMarker } from '../idempotency.js';
import { pushCreatingQueues, withQueuesCreated } from '../pushes.js';
import { PUSH_ITEMS_OR_NONE, toPushItems, type HttpPushItem } from '../schemas.js';

export function registerPushRoutes({ app, core, metrics, maintenance, payloads }: HttpApiContext): void {
  app.post<{ Body: { items: HttpPushItem[] } }>(
    '/api/v1/push',
    { schema: { body: { type: 'object', required: ['items'], additionalProperties: false, properties: { items: PUSH_ITEMS_OR_NONE } } } },
    async (request, reply) => {
      if (request.body.items.length === 0) return reply.status(201).send([]);
      const items: PushItem[] = await sealPayloads(core, payloads, toPushItems(request.body.items));
      if ((await maintenance.modes()).push) return reply.status(201).send(await maintenance.buffer(items));
      const refused = await overCapacity(core, items);
      const accepted = items.filter((_, i) => !refused.has(i));
      const results = accepted.length > 0 ? await pushWithLedger(core, request, accepted) : [];
      for (const item of results) metrics.pushed.add({ queue: item.queue, status: item.status });
      let next = 0;
      return reply.status(201).send(
        items.map((item, i) => {
          const why = refused.get(i);
          if (why) return failedItemAnswer(item, i, why);
          return pushItemAnswer(results[next++]!, i, request.body.items[i]!.traceId ?? null);
        }),
      );
    },
  );
}

async function pushWithLedger(core: Core, request: FastifyRequest, items: PushItem[]): Promise<PushItemResult[]> {
  const marker = idempotencyMarker(request);
  if (!marker) return (await pushCreatingQueues(core, items)).items;
  const operations = [...items.map((item) => ({ op: 'push' as const, ifStored: 'answer' as const, ...item })), marker];
  const outcome = await withQueuesCreated(core, items, () => core.transaction({ operations }));
  // Nothing in it can roll back: stored ids are answered, and the marker's put has no precondition.
  if (!outcome.success) throw new Error(`A push transaction rolled back for ${outcome.reason}: ${outcome.message}`);
  return outcome.results.slice(0, items.length) as PushItemResult[];
}

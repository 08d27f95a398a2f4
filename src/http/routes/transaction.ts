/**
 * POST /api/v1/transaction: pushes, acks and KV operations (once included),
 * all or nothing, judged in the core's order: every operation validated
 * (a bad one is a 4xx and nothing is written), pushes checked before KV,
 * KV before acks, then everything applied together. A push to a queue that does not exist
 * yet creates it, as POST /api/v1/push does.
 *
 * A rollback is an answer, not an error: HTTP 200 with success: false, the
 * reason (`duplicate`: a push carries an id its partition already stores;
 * `kv_precondition`: a once gate was lost, or a required putIfAbsent or a
 * versioned put did not hold; `not_acked`: an ack names a message the group
 * does not hold under a live lease, so nothing the step produced commits
 * without its input being acked), failed_index (the operation in this request),
 * for a push operation failed_item (the item within it), and `error`, the
 * sentence Queen's clients read.
 *
 * An ack operation names its message as POST /api/v1/ack does (Queen's
 * transactionId and partitionId, or queue, partition and offset) and follows
 * the same retry and dead-letter rules (../acks.ts). Queen's clients send
 * `requiredLeases` beside the operations; it is accepted, and the leases an
 * ack names through its own leaseId are the ones checked.
 *
 * A push operation carries `items` as POST /api/v1/push does; the core sees
 * one operation per item, so indexes are mapped back to this request's.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Core, KvEntry, PushItemResult, TransactionOperation, TransactionResult } from '../../core/core.js';
import type { HttpMetrics } from '../../operations/registry.js';
import { locateMessages, NOT_FOUND, planAck, QUEUE_MODE_GROUP, type AckTarget, type QueenAckStatus } from '../acks.js';
import { kvEntryAnswer, pushItemAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { HttpError } from '../errors.js';
import { lifetimeOf, requiredLifetimeOf, type LifetimeFields } from '../lifetimes.js';
import { idempotencyMarker } from '../idempotency.js';
import { withQueuesCreated } from '../pushes.js';
import type { PayloadCipher } from '../payload-cipher.js';
import { sealPayloads } from '../queue-policies.js';
import { LIFETIME_PROPERTIES, NAME, PUSH_ITEMS, toPushItems, type HttpPushItem } from '../schemas.js';

type AckOperation = { type: 'ack'; status?: QueenAckStatus; consumerGroup?: string | null; leaseId?: string | null; error?: string | null } & AckTarget;

type HttpOperation =
  | { type: 'push'; items: HttpPushItem[] }
  | AckOperation
  | ({ type: 'kv.put'; ns: string; key: string; value: unknown; expectedVersion?: number; required?: boolean } & LifetimeFields)
  | ({ type: 'kv.putIfAbsent'; ns: string; key: string; value: unknown; required?: boolean } & LifetimeFields)
  | { type: 'kv.delete'; ns: string; key: string }
  | ({ type: 'kv.incr'; ns: string; key: string; by?: number } & LifetimeFields)
  | ({ type: 'once'; ns: string; key: string } & LifetimeFields);

const operation = (type: string, required: readonly string[], properties: Record<string, unknown>) => ({
  type: 'object',
  required: ['type', ...required],
  additionalProperties: false,
  properties: { type: { const: type }, ...properties },
});

const KV = { ns: NAME, key: NAME };

const OPERATION_SCHEMAS = [
  operation('push', ['items'], { items: PUSH_ITEMS }),
  operation('ack', [], {
    transactionId: NAME,
    partitionId: NAME,
    queue: NAME,
    partition: NAME,
    offset: { type: 'integer', minimum: 0 },
    status: { type: 'string', enum: ['completed', 'success', 'failed', 'dlq', 'retry'] },
    consumerGroup: { type: ['string', 'null'] },
    leaseId: { type: ['string', 'null'] },
    error: { type: ['string', 'null'] },
  }),
  operation('kv.put', ['ns', 'key', 'value'], { ...KV, value: {}, expectedVersion: { type: 'integer', minimum: 0 }, required: { type: 'boolean' }, ...LIFETIME_PROPERTIES }),
  operation('kv.putIfAbsent', ['ns', 'key', 'value'], { ...KV, value: {}, required: { type: 'boolean' }, ...LIFETIME_PROPERTIES }),
  operation('kv.delete', ['ns', 'key'], KV),
  operation('kv.incr', ['ns', 'key'], { ...KV, by: { type: 'number' }, ...LIFETIME_PROPERTIES }),
  operation('once', ['ns', 'key'], { ...KV, ...LIFETIME_PROPERTIES }),
];

const TRANSACTION_BODY = {
  type: 'object',
  required: ['operations'],
  additionalProperties: false,
  properties: {
    operations: {
      type: 'array',
      minItems: 1,
      maxItems: 10_000,
      items: { type: 'object', required: ['type'], discriminator: { propertyName: 'type' }, oneOf: OPERATION_SCHEMAS },
    },
    requiredLeases: { type: 'array', items: { type: 'string' } },
  },
} as const;

/** Where a core operation came from in the HTTP request. */
interface Origin {
  index: number;
  item: number | null;
}

async function toCoreOperations(core: Core, payloads: PayloadCipher | null, operations: HttpOperation[]): Promise<{ ops: TransactionOperation[]; origins: Origin[] }> {
  const ops: TransactionOperation[] = [];
  const origins: Origin[] = [];
  const now = Date.now();
  for (const [index, op] of operations.entries()) {
    const field = `operations[${index}]`;
    const add = (coreOp: TransactionOperation, item: number | null = null) => {
      ops.push(coreOp);
      origins.push({ index, item });
    };
    switch (op.type) {
      case 'push':
        (await sealPayloads(core, payloads, toPushItems(op.items))).forEach((item, i) => add({ op: 'push', ...item }, i));
        break;
      case 'ack': {
        const group = op.consumerGroup ?? QUEUE_MODE_GROUP;
        const [found] = await locateMessages(core, group, [op], field);
        if (!found) throw new HttpError(404, 'not_found', `${field}: ${NOT_FOUND}`);
        const plan = await planAck(core, found, { status: op.status ?? 'completed', consumerGroup: group, ...(op.leaseId ? { leaseId: op.leaseId } : {}), error: op.error ?? null }, now);
        // The ack's own result comes first; the retry count and dead letter ride along.
        for (const coreOp of plan.operations) add(coreOp);
        break;
      }
      case 'kv.put': {
        const lifetime = lifetimeOf(op, field);
        add({
          op: 'kv.put', ns: op.ns, key: op.key, value: op.value,
          ...(lifetime ? { lifetime } : {}),
          ...(op.expectedVersion === undefined ? {} : { expectedVersion: op.expectedVersion }),
          ...(op.required === undefined ? {} : { required: op.required }),
        });
        break;
      }
      case 'kv.putIfAbsent': {
        const lifetime = lifetimeOf(op, field);
        add({ op: 'kv.putIfAbsent', ns: op.ns, key: op.key, value: op.value, ...(lifetime ? { lifetime } : {}), ...(op.required === undefined ? {} : { required: op.required }) });
        break;
      }
      case 'kv.delete':
        add({ op: 'kv.delete', ns: op.ns, key: op.key });
        break;
      case 'kv.incr': {
        const lifetime = lifetimeOf(op, field);
        add({ op: 'kv.incr', ns: op.ns, key: op.key, by: op.by ?? 1, ...(lifetime ? { lifetime } : {}) });
        break;
      }
      case 'once':
        add({ op: 'once', ns: op.ns, key: op.key, lifetime: requiredLifetimeOf(op, field) });
        break;
    }
  }
  return { ops, origins };
}

/** The core names its own operation indexes in sentences; name this request's instead. */
function renameIndexes(message: string, origins: Origin[]): string {
  const name = (i: number) => {
    const origin = origins[i];
    if (!origin) return String(i);
    return origin.item === null ? String(origin.index) : `${origin.index} (item ${origin.item})`;
  };
  return message
    .replace(/^Operation (\d+)/, (_, i: string) => `Operation ${name(Number(i))}`)
    .replace(/operations\[(\d+)\]/g, (_, i: string) => {
      const origin = origins[Number(i)];
      return !origin ? `operations[${i}]` : origin.item === null ? `operations[${origin.index}]` : `operations[${origin.index}].items[${origin.item}]`;
    });
}

function resultAnswer(op: HttpOperation, results: unknown[]): unknown {
  switch (op.type) {
    case 'push':
      return {
        items: (results as (PushItemResult & { duplicate: boolean })[]).map((r, i) => ({ ...pushItemAnswer(r, i), duplicate: r.duplicate })),
      };
    case 'kv.put':
    case 'kv.putIfAbsent': {
      const put = results[0] as { applied: boolean; entry: KvEntry | null };
      return { applied: put.applied, entry: put.entry ? kvEntryAnswer(put.entry) : null };
    }
    case 'kv.incr':
      return { entry: kvEntryAnswer(results[0] as KvEntry) };
    default:
      return results[0];
  }
}

type TransactionBody = { operations: HttpOperation[]; requiredLeases?: string[] };

export function registerTransactionRoutes({ app, core, metrics, payloads }: HttpApiContext): void {
  app.post<{ Body: TransactionBody }>('/api/v1/transaction', { schema: { body: TRANSACTION_BODY } }, async (request) => transact(core, metrics, payloads, request));
}

async function transact(core: Core, metrics: HttpMetrics, payloads: PayloadCipher | null, request: FastifyRequest<{ Body: TransactionBody }>) {
  const operations = request.body.operations;
  const { ops, origins } = await toCoreOperations(core, payloads, operations);
  // An Idempotency-Key's ledger entry commits with the effect, or not at all.
  const marker = idempotencyMarker(request);
  if (marker) ops.push(marker);
  const pushes = ops.flatMap((op) => (op.op === 'push' ? [op] : []));
  let outcome;
  try {
    outcome = await withQueuesCreated(core, pushes, () => core.transaction({ operations: ops }));
  } catch (e) {
    if (e instanceof Error && 'code' in e) e.message = renameIndexes(e.message, origins);
    throw e;
  }
  const transactionId = randomUUID();
  if (!outcome.success) {
    metrics.rollbacks.add({ reason: outcome.reason });
    return { transactionId, ...rollbackAnswer(outcome, origins) };
  }
  const perOperation: unknown[][] = operations.map(() => []);
  outcome.results.forEach((result, i) => origins[i] && perOperation[origins[i]!.index]!.push(result));
  countEffects(metrics, operations, perOperation, (i) => ops[origins.findIndex((o) => o.index === i)]);
  return { transactionId, success: true, results: operations.map((op, i) => resultAnswer(op, perOperation[i]!)) };
}

/** A rollback as Queen answers it: the reason, and the operation (and push item) that caused it, in this request's numbering. */
function rollbackAnswer(outcome: Extract<TransactionResult, { success: false }>, origins: Origin[]) {
  const origin = origins[outcome.failedIndex] ?? { index: outcome.failedIndex, item: null };
  const message = renameIndexes(outcome.message, origins);
  return {
    success: false,
    reason: outcome.reason,
    failed_index: origin.index,
    ...(origin.item === null ? {} : { failed_item: origin.item }),
    message,
    error: message,
  };
}

/** Counts the committed pushes and acks; `firstCoreOperation` gives an operation's first core operation (an ack's own). */
function countEffects(metrics: HttpMetrics, operations: HttpOperation[], perOperation: unknown[][], firstCoreOperation: (i: number) => TransactionOperation | undefined): void {
  operations.forEach((op, i) => {
    if (op.type === 'push') {
      for (const r of perOperation[i] as PushItemResult[]) metrics.pushed.add({ queue: r.queue, status: r.status });
    } else if (op.type === 'ack' && (perOperation[i]![0] as { acked?: boolean } | undefined)?.acked) {
      const ack = firstCoreOperation(i) as { queue: string; status: string };
      metrics.acked.add({ queue: ack.queue, status: ack.status });
    }
  });
}

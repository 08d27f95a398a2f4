/**
 * POST /api/v1/transaction: pushes, acks and KV operations (once included),
 * all or nothing, judged in the core's order: every operation validated
 * (a bad one is a 4xx and nothing is written), pushes checked before KV,
 * then everything applied together.
 *
 * A rollback is an answer, not an error: HTTP 200 with success: false, the
 * reason (`duplicate`: a push carries an id its partition already stores;
 * `kv_precondition`: a once gate was lost, or a required putIfAbsent or a
 * versioned put did not hold), failed_index (the operation in this request)
 * and, for a push operation, failed_item (the item within it).
 *
 * A push operation carries `items` as POST /api/v1/push does; the core sees
 * one operation per item, so indexes are mapped back to this request's.
 */
import type { TransactionOperation } from '../../core/core.js';
import { kvEntryAnswer, pushItemAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { lifetimeOf, requiredLifetimeOf, type LifetimeFields } from '../lifetimes.js';
import { ACK_FIELDS, ACK_REQUIRED, LIFETIME_PROPERTIES, NAME, PUSH_ITEMS } from '../schemas.js';
import type { KvEntry, PushItem, PushItemResult } from '../../core/core.js';

type HttpOperation =
  | { type: 'push'; items: PushItem[] }
  | ({ type: 'ack' } & Omit<Extract<TransactionOperation, { op: 'ack' }>, 'op'>)
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
  operation('ack', ACK_REQUIRED, ACK_FIELDS),
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
  },
} as const;

/** Where a core operation came from in the HTTP request. */
interface Origin {
  index: number;
  item: number | null;
}

function toCoreOperations(operations: HttpOperation[]): { ops: TransactionOperation[]; origins: Origin[] } {
  const ops: TransactionOperation[] = [];
  const origins: Origin[] = [];
  operations.forEach((op, index) => {
    const field = `operations[${index}]`;
    const add = (coreOp: TransactionOperation, item: number | null = null) => {
      ops.push(coreOp);
      origins.push({ index, item });
    };
    switch (op.type) {
      case 'push':
        op.items.forEach((item, i) => add({ op: 'push', ...item }, i));
        break;
      case 'ack': {
        const { type: _type, ...ack } = op;
        add({ op: 'ack', ...ack });
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
  });
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
        items: (results as (PushItemResult & { duplicate: boolean })[]).map((r) => ({ ...pushItemAnswer(r), duplicate: r.duplicate })),
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

export function registerTransactionRoutes({ app, core, metrics }: HttpApiContext): void {
  app.post<{ Body: { operations: HttpOperation[] } }>('/api/v1/transaction', { schema: { body: TRANSACTION_BODY } }, async (request) => {
    const operations = request.body.operations;
    const { ops, origins } = toCoreOperations(operations);
    let outcome;
    try {
      outcome = await core.transaction({ operations: ops });
    } catch (e) {
      if (e instanceof Error && 'code' in e) e.message = renameIndexes(e.message, origins);
      throw e;
    }
    if (!outcome.success) {
      metrics.rollbacks.add({ reason: outcome.reason });
      const origin = origins[outcome.failedIndex] ?? { index: outcome.failedIndex, item: null };
      return {
        success: false,
        reason: outcome.reason,
        failed_index: origin.index,
        ...(origin.item === null ? {} : { failed_item: origin.item }),
        message: renameIndexes(outcome.message, origins),
      };
    }
    const perOperation: unknown[][] = operations.map(() => []);
    outcome.results.forEach((result, i) => perOperation[origins[i]!.index]!.push(result));
    operations.forEach((op, i) => {
      if (op.type === 'push') {
        for (const r of perOperation[i] as PushItemResult[]) metrics.pushed.add({ queue: r.queue, status: r.status });
      } else if (op.type === 'ack' && (perOperation[i]![0] as { acked?: boolean } | undefined)?.acked) {
        metrics.acked.add({ queue: op.queue, status: op.status });
      }
    });
    return { success: true, results: operations.map((op, i) => resultAnswer(op, perOperation[i]!)) };
  });
}

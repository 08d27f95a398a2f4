/**
 * Queen streams, /streams/v1/*: the server side of the windowed queries
 * Queen's clients run (their SDKs pop, window and aggregate; the server keeps
 * each query's registration and per-partition state, and commits a cycle's
 * state, output and acks at once). Request and response shapes are Queen's
 * (snake_case); the semantics are the core's (src/core/streams/).
 *
 *   POST /streams/v1/queries    { name, source_queue, sink_queue?, config_hash, reset? }
 *        → { success, query_id, name, config_hash, fresh, reset }; 409 when config_hash changed without reset
 *   POST /streams/v1/cycle      { query_id, partition_id, consumer_group?, state_ops?, push_items?, ack?, release_lease? }
 *        → { success, query_id, partition_id, state_ops_applied, push_results, ack_result, replayed }; a cycle that could not commit is 200 with success: false;
 *        an ack with status failed or dlq sends its message to the dead-letter queue (ack_result.dlq)
 *   POST /streams/v1/state/get  { query_id, partition_id, keys?, key_prefix?, ripe_at_or_before? } → { success, rows: [{ key, value, updated_at }] }
 *
 * A source partition is named by the partitionId its messages were popped
 * with; the acked message by its transactionId there, as POST /api/v1/ack does.
 */
import type { Core, StreamsCycleAck, StreamsCycleResult } from '../../core/core.js';
import { deadLetterEntry, locateMessages, QUEUE_MODE_GROUP, type LocatedMessage } from '../acks.js';
import { cluster, topic, type RouteAccess } from '../access.js';
import { iso, pushItemAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { parsePartitionId } from '../partition-ids.js';
import type { PayloadCipher } from '../payload-cipher.js';
import { sealPayloads } from '../queue-policies.js';
import { leaseOfPartition } from '../shared-leases.js';
import { NAME, PUSH_ITEMS_OR_NONE, toPushItems, type HttpPushItem } from '../schemas.js';

const STATE_OP = {
  type: 'object',
  required: ['type', 'key'],
  properties: { type: { type: 'string', enum: ['upsert', 'delete'] }, key: NAME, value: {} },
} as const;

const REGISTER_BODY = {
  type: 'object',
  required: ['name', 'source_queue', 'config_hash'],
  properties: { name: NAME, source_queue: NAME, sink_queue: { type: ['string', 'null'] }, config_hash: NAME, reset: { type: 'boolean' } },
} as const;

const CYCLE_BODY = {
  type: 'object',
  required: ['query_id', 'partition_id'],
  properties: {
    query_id: { type: 'string' },
    partition_id: { type: 'string' },
    consumer_group: { type: ['string', 'null'] },
    state_ops: { type: ['array', 'null'], items: STATE_OP },
    push_items: { ...PUSH_ITEMS_OR_NONE, type: ['array', 'null'] },
    ack: {
      type: ['object', 'null'],
      required: ['transactionId'],
      // Any status: one Queen does not name is a cycle that fails (200, success: false), as Queen answers it.
      properties: { transactionId: NAME, leaseId: { type: ['string', 'null'] }, status: { type: ['string', 'null'] }, count: { type: 'integer' }, error: { type: ['string', 'null'] } },
    },
    release_lease: { type: 'boolean' },
  },
} as const;

const STATE_GET_BODY = {
  type: 'object',
  required: ['query_id', 'partition_id'],
  properties: {
    query_id: { type: 'string' }, partition_id: { type: 'string' },
    keys: { type: ['array', 'null'], items: { type: 'string' } }, key_prefix: { type: ['string', 'null'] }, ripe_at_or_before: { type: ['number', 'null'] },
  },
} as const;

type RegisterBody = { name: string; source_queue: string; sink_queue?: string | null; config_hash: string; reset?: boolean };
type StateOpBody = { type: 'upsert' | 'delete'; key: string; value?: unknown };
type AckBody = { transactionId: string; leaseId?: string | null; status?: string | null; count?: number; error?: string | null };
type CycleBody = {
  query_id: string; partition_id: string; consumer_group?: string | null;
  state_ops?: StateOpBody[] | null; push_items?: HttpPushItem[] | null; ack?: AckBody | null; release_lease?: boolean;
};
// Go's client sends an empty list as null.
type StateGetBody = { query_id: string; partition_id: string; keys?: string[] | null; key_prefix?: string | null; ripe_at_or_before?: number | null };
type Body = Record<string, unknown> | undefined;

const sourceQueueOf = (body: Body): unknown => {
  try {
    return typeof body?.partition_id === 'string' ? parsePartitionId(body.partition_id).queue : undefined;
  } catch {
    return undefined; // the route refuses it with its own sentence
  }
};

/** A query reads its source and writes its sink; a cycle also reads its group and writes where it pushes. */
const ACCESS: Record<'register' | 'cycle' | 'state', RouteAccess> = {
  register: { needs: (body) => [...topic('READ', body?.source_queue), ...(body?.sink_queue ? topic('WRITE', body.sink_queue) : [])] },
  cycle: {
    needs: (body) => [
      ...topic('READ', sourceQueueOf(body)),
      ...(typeof body?.consumer_group === 'string' && body.consumer_group !== '' ? [{ operation: 'READ' as const, type: 'GROUP' as const, name: body.consumer_group }] : []),
      ...((body?.push_items as Record<string, unknown>[] | undefined) ?? []).flatMap((i) => topic('WRITE', i.queue)),
    ],
  },
  state: { needs: (body) => (sourceQueueOf(body) === undefined ? [cluster('DESCRIBE')] : topic('READ', sourceQueueOf(body))) },
};

export function registerStreamsRoutes({ app, core, payloads }: HttpApiContext): void {
  app.post<{ Body: RegisterBody }>('/streams/v1/queries', { schema: { body: REGISTER_BODY }, config: ACCESS.register }, async (request, reply) => {
    const answer = await registerQuery(core, request.body);
    if (!answer.success) reply.code(409);
    return answer;
  });
  app.post<{ Body: CycleBody }>('/streams/v1/cycle', { schema: { body: CYCLE_BODY }, config: ACCESS.cycle }, async (request) => cycle(core, payloads, request.body));
  app.post<{ Body: StateGetBody }>('/streams/v1/state/get', { schema: { body: STATE_GET_BODY }, config: ACCESS.state }, async (request) => stateGet(core, request.body));
}

async function registerQuery(core: Core, body: RegisterBody) {
  const result = await core.streamsRegisterQuery({ name: body.name, sourceQueue: body.source_queue, sinkQueue: body.sink_queue ?? null, configHash: body.config_hash, reset: body.reset === true });
  if (!result.success) return { success: false, query_id: result.queryId, name: result.name, error: result.error };
  return { success: true, query_id: result.queryId, name: result.name, config_hash: result.configHash, fresh: result.fresh, reset: result.reset };
}

async function cycle(core: Core, payloads: PayloadCipher | null, body: CycleBody) {
  const source = parsePartitionId(body.partition_id, 'partition_id');
  const group = body.consumer_group || QUEUE_MODE_GROUP;
  const head = { query_id: body.query_id, partition_id: body.partition_id };
  let ack: StreamsCycleAck | null = null;
  if (body.ack) {
    const [found] = await locateMessages(core, group, [{ transactionId: body.ack.transactionId, partitionId: body.partition_id }], 'ack');
    if (!found) return notApplied(head, `ack: no message with transactionId ${JSON.stringify(body.ack.transactionId)} in this partition for group "${group}".`);
    const status = body.ack.status ?? 'completed';
    if (!ACK_STATUSES.has(status)) return notApplied(head, `Unknown ack.status: ${status} (a cycle acks with "completed", "success", "failed" or "dlq").`);
    const leaseId = body.ack.leaseId ? await leaseOfPartition(core, body.ack.leaseId, source.partition) : undefined;
    ack = {
      offset: found.message.offset, ...(leaseId ? { leaseId } : {}), ...(body.ack.count && body.ack.count > 0 ? { count: body.ack.count } : {}),
      ...(status === 'failed' || status === 'dlq' ? { deadLetter: cycleDeadLetter(found, group, body.ack.error) } : {}),
    };
  }
  const pushItems = await sealPayloads(core, payloads, toPushItems(body.push_items ?? []));
  const result = await core.streamsCycle({
    queryId: body.query_id, source, consumerGroup: group, ack, pushItems, releaseLease: body.release_lease !== false,
    stateOps: (body.state_ops ?? []).map((op) => (op.type === 'delete' ? { type: 'delete', key: op.key } : { type: 'upsert', key: op.key, value: op.value ?? {} })),
  });
  return {
    ...head,
    success: result.success,
    state_ops_applied: result.stateOpsApplied,
    push_results: result.pushResults.map((r, i) => pushItemAnswer(r, i)),
    ack_result: result.ack ? ackResult(result.ack, body.ack?.count) : null,
    replayed: result.replayed,
    ...(result.skipped ? { skipped: true } : {}),
    ...(result.error === undefined ? {} : { error: result.error }),
  };
}

const ACK_STATUSES = new Set(['completed', 'success', 'failed', 'dlq']);

const notApplied = (head: { query_id: string; partition_id: string }, error: string) => ({ ...head, success: false, state_ops_applied: 0, push_results: [], ack_result: null, error });

/** A failed cycle's message goes to the dead-letter queue with the client's error, as Queen's cycle puts it there. */
const cycleDeadLetter = (found: LocatedMessage, group: string, error: string | null | undefined) =>
  deadLetterEntry(found, group, error || 'Streaming cycle reported failure', 0, Date.now());

/** Queen's ack_result: a dead-lettered ack counts no message consumed and reports lease_released false (Queen's shape), though the lease is released. */
function ackResult(ack: NonNullable<StreamsCycleResult['ack']>, count: number | undefined) {
  if (ack.deadLettered) return { success: true, count: 0, lease_released: false, dlq: true };
  return { success: true, count: count ?? ack.acked, lease_released: ack.leaseReleased, dlq: false };
}

async function stateGet(core: Core, body: StateGetBody) {
  const { rows } = await core.streamsStateGet({
    queryId: body.query_id, source: parsePartitionId(body.partition_id, 'partition_id'),
    ...(body.keys ? { keys: body.keys } : {}), ...(body.key_prefix ? { keyPrefix: body.key_prefix } : {}),
    ...(typeof body.ripe_at_or_before === 'number' ? { ripeAtOrBefore: body.ripe_at_or_before } : {}),
  });
  return { success: true, rows: rows.map((r) => ({ key: r.key, value: r.value, updated_at: iso(r.updatedAt) })) };
}

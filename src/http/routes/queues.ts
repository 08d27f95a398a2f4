/**
 * Queue configuration and resource listings, in Queen's shapes.
 *
 * POST /api/v1/configure creates a queue (Queen's: one partition named
 * "Default"; with the core's `partitions: N`, Kafka's "0".."N-1") or changes
 * an existing one's options (../queue-options.ts). Queues Kafka clients
 * created are configured the same way.
 *
 * GET /api/v1/resources/queues[/:queue] lists queues, and one queue's
 * partitions with their offsets and counts (../queue-stats.ts); DELETE
 * removes a queue (Queen answers 200 with existed: false for one that is not
 * there). GET /api/v1/resources/overview, /namespaces and /tasks summarise
 * them. GET /api/v1/dlq lists dead letters (../acks.ts). Consumer groups are
 * listed by ./consumer-groups.ts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Core, QueueInfo } from '../../core/core.js';
import { DEAD_LETTERS_NAMESPACE, RETRIES_NAMESPACE } from '../acks.js';
import { iso, queueAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { HttpError } from '../errors.js';
import { IDEMPOTENT_EFFECT, noteBeforeEffect, noteOfFirstAttempt } from '../idempotency.js';
import { partitionIdOf } from '../partition-ids.js';
import { allQueueStats, DEAD_LETTER_SCAN, queueStats, sumOf } from '../queue-stats.js';
import type { PayloadCipher } from '../payload-cipher.js';
import { forgetQueuePolicies } from '../queue-policies.js';
import { coreConfigOf, METADATA_NAMESPACE, metadataOf, QUEEN_OPTIONS_SCHEMA, queenOptionsAnswer, readMetadata, type QueenMetadata, type QueenOptions } from '../queue-options.js';
import { NAME } from '../schemas.js';

const CONFIGURE_BODY = {
  type: 'object',
  required: ['queue'],
  additionalProperties: false,
  properties: {
    // The empty name is answered apart (unnamedQueue below).
    queue: { ...NAME, minLength: 0 },
    namespace: { type: ['string', 'null'] },
    task: { type: ['string', 'null'] },
    partitions: { type: 'integer', minimum: 1 },
    options: QUEEN_OPTIONS_SCHEMA,
  },
} as const;

interface ConfigureBody {
  queue: string;
  namespace?: string | null;
  task?: string | null;
  partitions?: number;
  options?: QueenOptions;
}

const QUEUE_PARAMS = { type: 'object', required: ['queue'], properties: { queue: NAME } } as const;

interface DeadLetterQuery {
  queue?: string;
  consumerGroup?: string;
  partition?: string;
  from?: string;
  to?: string;
  limit: number;
  offset: number;
}

const DEAD_LETTER_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    queue: NAME,
    consumerGroup: NAME,
    partition: NAME,
    from: { type: 'string' },
    to: { type: 'string' },
    limit: { type: 'integer', minimum: 1, maximum: DEAD_LETTER_SCAN, default: 100 },
    offset: { type: 'integer', minimum: 0, default: 0 },
  },
} as const;

export function registerQueueRoutes({ app, core, payloads }: HttpApiContext): void {
  // Configure creates if absent and sets what it names: running it again changes nothing.
  app.post<{ Body: ConfigureBody }>('/api/v1/configure', { schema: { body: CONFIGURE_BODY }, config: IDEMPOTENT_EFFECT }, async (request, reply) => configure(core, payloads, request, reply));
  app.get('/api/v1/resources/queues', { schema: {} }, async () => listQueues(core));
  app.get<{ Params: { queue: string } }>('/api/v1/resources/queues/:queue', { schema: { params: QUEUE_PARAMS } }, async (request) => describeQueue(core, request.params.queue));
  // A queue deleted already is answered as deleted (existed: false): running it again deletes nothing more.
  app.delete<{ Params: { queue: string } }>('/api/v1/resources/queues/:queue', { schema: { params: QUEUE_PARAMS }, config: IDEMPOTENT_EFFECT }, async (request) => deleteQueue(core, request));
  app.get('/api/v1/resources/overview', { schema: {} }, async () => overview(core));
  app.get('/api/v1/resources/namespaces', { schema: {} }, async () => summaryBy(core, 'namespace'));
  app.get('/api/v1/resources/tasks', { schema: {} }, async () => summaryBy(core, 'task'));
  app.get<{ Querystring: DeadLetterQuery }>('/api/v1/dlq', { schema: { querystring: DEAD_LETTER_QUERY } }, async (request) => deadLetters(core, payloads, request.query));
}

async function configure(core: Core, payloads: PayloadCipher | null, request: FastifyRequest<{ Body: ConfigureBody }>, reply: FastifyReply) {
  const { queue: name, partitions, options = {} } = request.body;
  if (name === '') return reply.status(200).send(unnamedQueue(request.body));
  if (options.encryptionEnabled === true && !payloads) {
    throw new HttpError(400, 'invalid_config', `Queue "${name}" cannot encrypt its payloads: this server has no encryption key. Start it with --encryption-key (or QUEEN_ENCRYPTION_KEY), 64 hex characters, e.g. from openssl rand -hex 32.`);
  }
  const config = coreConfigOf(options);
  const existing = await core.describeQueue({ name });
  let queue: QueueInfo;
  if (existing) {
    if (partitions !== undefined && partitions !== existing.partitions.length) {
      throw new HttpError(409, 'queue_exists', `Queue "${name}" exists with ${existing.partitions.length} partitions; configure changes options only (push to a new partition name to add one).`);
    }
    queue = Object.keys(config).length === 0 ? existing : await core.alterQueue({ name, config });
  } else {
    queue = await core.createQueue({ name, partitions: partitions ?? 1, ...(partitions === undefined ? { partitionNames: ['Default'] } : {}), config, ifNotExists: true });
  }
  const [previous] = await readMetadata(core, [name]);
  const metadata: QueenMetadata = { ...previous, ...metadataOf(options, request.body.namespace, request.body.task) };
  if (JSON.stringify(metadata) !== JSON.stringify(previous)) await core.kvPut({ ns: METADATA_NAMESPACE, key: name, value: metadata });
  forgetQueuePolicies(core, name);
  return reply.status(existing ? 200 : 201).send({
    configured: true,
    created: !existing,
    queue: name,
    queueId: queue.id,
    partitionId: partitionIdOf(name, queue.partitions[0]!.name),
    namespace: metadata.namespace ?? null,
    task: metadata.task ?? null,
    options: queenOptionsAnswer(queue.config, metadata),
    partitions: queue.partitions.map((p) => ({ name: p.name, index: p.index })),
  });
}

/**
 * Queen creates a queue named by the empty string; every queue here is also
 * a Kafka topic, and Kafka forbids that name. Configure answers as Queen
 * does (`configured: true`, so a client's `queue('').create()` goes on) but
 * creates nothing: `created: false`, no id, no partitions, and a push or pop
 * naming the empty queue is refused (400) as before.
 */
function unnamedQueue(body: ConfigureBody) {
  return { configured: true, created: false, queue: '', queueId: null, partitionId: null, namespace: body.namespace ?? null, task: body.task ?? null, options: body.options ?? {}, partitions: [] };
}

async function listQueues(core: Core) {
  return {
    queues: (await allQueueStats(core)).map(({ queue, metadata, partitions, totals }) => ({
      id: queue.id,
      name: queue.name,
      namespace: metadata.namespace ?? null,
      task: metadata.task ?? null,
      createdAt: iso(queue.createdAt),
      partitions: partitions.length,
      messages: { total: totals.total, pending: totals.pending, processing: totals.processing },
      config: queueAnswer(queue).config,
    })),
  };
}

async function describeQueue(core: Core, name: string) {
  const queue = await core.describeQueue({ name });
  if (!queue) throw new HttpError(404, 'unknown_queue', `Queue "${name}" does not exist; create it with POST /api/v1/configure, or push to it.`);
  const [metadata] = await readMetadata(core, [queue.name]);
  const { partitions, totals } = await queueStats(core, queue, metadata!);
  return {
    id: queue.id,
    name: queue.name,
    namespace: metadata!.namespace ?? null,
    task: metadata!.task ?? null,
    createdAt: iso(queue.createdAt),
    partitions,
    totals,
    options: queenOptionsAnswer(queue.config, metadata!),
    config: queueAnswer(queue).config,
  };
}

async function deleteQueue(core: Core, request: FastifyRequest<{ Params: { queue: string } }>) {
  const name = request.params.queue;
  const found = await core.describeQueue({ name });
  // A repeat under the key deletes the queue its first attempt named, never one of the same name created since.
  const first = noteOfFirstAttempt(request) as { queueId?: string } | undefined;
  if (found && first?.queueId !== undefined && first.queueId !== found.id) return { deleted: true, queue: name, existed: false };
  const existed = found !== null;
  if (found) {
    await noteBeforeEffect(core, request, { queueId: found.id });
    await core.deleteQueue({ name });
  }
  // Queen's bookkeeping for the queue goes with it.
  await core.kvDelete({ ns: METADATA_NAMESPACE, key: name });
  for (const ns of [DEAD_LETTERS_NAMESPACE, RETRIES_NAMESPACE]) {
    for (const entry of await core.kvGetPrefix({ ns, prefix: `${name}/`, limit: DEAD_LETTER_SCAN })) await core.kvDelete({ ns, key: entry.key });
  }
  return { deleted: true, queue: name, existed };
}

async function overview(core: Core) {
  const all = await allQueueStats(core);
  return {
    queues: all.length,
    partitions: all.reduce((n, q) => n + q.partitions.length, 0),
    namespaces: new Set(all.map((q) => q.metadata.namespace).filter(Boolean)).size,
    tasks: new Set(all.map((q) => q.metadata.task).filter(Boolean)).size,
    messages: sumOf(all.map((q) => q.totals)),
    timestamp: new Date().toISOString(),
  };
}

/** Queues summarised by their namespace or task, each name once, in name order. */
async function summaryBy(core: Core, key: 'namespace' | 'task') {
  const summaries = new Map<string, { queues: number; partitions: number; total: number; pending: number }>();
  for (const { metadata, partitions, totals } of await allQueueStats(core)) {
    const name = metadata[key];
    if (!name) continue;
    const s = summaries.get(name) ?? { queues: 0, partitions: 0, total: 0, pending: 0 };
    s.queues++;
    s.partitions += partitions.length;
    s.total += totals.total;
    s.pending += totals.pending;
    summaries.set(name, s);
  }
  return {
    [`${key}s`]: [...summaries].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, s]) => ({ [key]: name, queues: s.queues, partitions: s.partitions, messages: { total: s.total, pending: s.pending } })),
  };
}

/** Dead letters, newest first, filtered by group, partition and failure time. */
async function deadLetters(core: Core, payloads: PayloadCipher | null, query: DeadLetterQuery) {
  const { queue, consumerGroup, partition, from, to, limit, offset } = query;
  const since = from === undefined ? null : Date.parse(from);
  const until = to === undefined ? null : Date.parse(to);
  if (Number.isNaN(since) || Number.isNaN(until)) throw new HttpError(400, 'invalid_request', 'from and to must be dates or times in ISO 8601 (2024-01-15 or 2024-01-15T10:30:00Z).');
  const entries = await core.kvGetPrefix({ ns: DEAD_LETTERS_NAMESPACE, prefix: queue === undefined ? '' : `${queue}/`, limit: DEAD_LETTER_SCAN });
  const letters = entries
    .map((e) => e.value as { consumerGroup: string; partition: string; failedAt: string; data: unknown })
    .map((l) => (payloads ? { ...l, data: payloads.open(l.data) } : l))
    .filter((l) => (consumerGroup === undefined || l.consumerGroup === consumerGroup) && (partition === undefined || l.partition === partition))
    .filter((l) => (since === null || Date.parse(l.failedAt) >= since!) && (until === null || Date.parse(l.failedAt) <= until!))
    .sort((a, b) => (a.failedAt < b.failedAt ? 1 : a.failedAt > b.failedAt ? -1 : 0));
  return { messages: letters.slice(offset, offset + limit), total: letters.length, limit, offset, pagination: { limit, offset } };
}

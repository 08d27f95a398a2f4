/**
 * Queen's view of the same queues: namespace and task, the native settings
 * (lease, retry limit, delayed processing, dedup window), what the queue-mode
 * group has still to take, and the dead-letter queue Queen moves a message
 * to when its retries run out. Queues the principal may DESCRIBE; their
 * dead letters, which carry payloads, need READ (as a pop would).
 */
import type { FastifyRequest } from 'fastify';
import type { Core } from '../../core/core.js';
import { permits, topic } from '../access.js';
import { DEAD_LETTERS_NAMESPACE, QUEUE_MODE_GROUP } from '../acks.js';
import { readMetadata } from '../queue-options.js';
import { NAME } from '../schemas.js';
import { consoleAccess, onTopic, type ConsoleContext } from './context.js';
import { describedTopic } from './topics.js';

/** Dead letters looked at per queue (the core's KV listing limit). */
const DEAD_LETTER_SCAN = 10_000;

const deadLettersOf = async (core: Core, queue: string) => (await core.kvGetPrefix({ ns: DEAD_LETTERS_NAMESPACE, prefix: `${queue}/`, limit: DEAD_LETTER_SCAN })).map((e) => e.value as Record<string, unknown>);

async function listQueues(core: Core, request: FastifyRequest) {
  const queues = (await core.listQueues()).filter((q) => permits(request, onTopic('DESCRIBE', q.name))).sort((a, b) => (a.name < b.name ? -1 : 1));
  const metadata = await readMetadata(core, queues.map((q) => q.name));
  return Promise.all(
    queues.map(async (q, i) => {
      const refs = q.partitions.map((p) => ({ queue: q.name, partition: p.index }));
      const [{ partitions: ends }, { offsets }] = await Promise.all([core.offsets({ partitions: refs }), core.fetchOffsets({ group: QUEUE_MODE_GROUP, partitions: refs })]);
      const pending = ends.reduce((n, end, j) => n + Math.max(0, end.highWatermark - Math.max(offsets[j]?.offset ?? 0, end.logStartOffset)), 0);
      return {
        name: q.name,
        namespace: metadata[i]!.namespace ?? null,
        task: metadata[i]!.task ?? null,
        partitions: q.partitions.map((p) => p.name),
        total: ends.reduce((n, end) => n + end.highWatermark - end.logStartOffset, 0),
        pending,
        deadLetters: (await deadLettersOf(core, q.name)).length,
        leaseMs: q.config.leaseMs,
        retryLimit: q.config.retryLimit,
        delayedProcessingMs: q.config.delayedProcessingMs,
        dedupWindowSeconds: q.config.dedupWindowSeconds,
      };
    }),
  );
}

async function deadLetters({ core }: ConsoleContext, request: FastifyRequest<{ Params: { queue: string } }>) {
  const queue = await describedTopic(core, request.params.queue);
  const letters = await deadLettersOf(core, queue.name);
  return letters
    .map((l) => ({ partition: l.partition, offset: l.offset, consumerGroup: l.consumerGroup, errorMessage: l.errorMessage, retryCount: l.retryCount, failedAt: l.failedAt, data: l.data }))
    .sort((a, b) => (String(a.failedAt) < String(b.failedAt) ? 1 : -1));
}

export function registerConsoleQueueRoutes(context: ConsoleContext): void {
  const { app, core } = context;
  app.get('/console/api/queues', { schema: {}, config: consoleAccess(() => []) }, (request) => listQueues(core, request));
  app.get<{ Params: { queue: string } }>(
    '/console/api/queues/:queue/dead-letters',
    { schema: { params: { type: 'object', required: ['queue'], properties: { queue: NAME } } }, config: consoleAccess((_b, p) => topic('READ', p.queue)) },
    (request) => deadLetters(context, request),
  );
}

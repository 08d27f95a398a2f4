/**
 * Queue configuration and resource listings, in Queen's shapes.
 *
 * POST /api/v1/configure creates a queue (Queen's: one partition named
 * "Default"; with the core's `partitions: N`, Kafka's "0".."N-1") or changes
 * an existing one's options (../queue-options.ts). Queues Kafka clients
 * created are configured the same way.
 *
 * GET /api/v1/resources/queues[/:queue] lists queues, and one queue's
 * partitions with their offsets and counts; DELETE removes a queue (Queen
 * answers 200 with existed: false for one that is not there).
 * GET /api/v1/resources/overview, /namespaces and /tasks summarise them.
 * GET /api/v1/consumer-groups lists groups per queue as Queen does;
 * GET /api/v1/resources/consumer-groups lists every group (Kafka's and
 * Queen's are one) with its committed position and lag per partition.
 * GET /api/v1/dlq lists dead letters (../acks.ts).
 */
import type { QueueInfo } from '../../core/core.js';
import { DEAD_LETTERS_NAMESPACE, QUEUE_MODE_GROUP, RETRIES_NAMESPACE } from '../acks.js';
import { iso, queueAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { HttpError } from '../errors.js';
import { IDEMPOTENT_EFFECT, noteBeforeEffect, noteOfFirstAttempt } from '../idempotency.js';
import { partitionIdOf } from '../partition-ids.js';
import { coreConfigOf, METADATA_NAMESPACE, metadataOf, QUEEN_OPTIONS_SCHEMA, queenOptionsAnswer, readMetadata, type QueenMetadata, type QueenOptions } from '../queue-options.js';
import { NAME } from '../schemas.js';

const CONFIGURE_BODY = {
  type: 'object',
  required: ['queue'],
  additionalProperties: false,
  properties: {
    queue: NAME,
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

/** At most this many dead letters are looked at per listing (the core's KV listing limit). */
const DEAD_LETTER_SCAN = 10_000;

export function registerQueueRoutes({ app, core }: HttpApiContext): void {
  // Configure creates if absent and sets what it names: running it again changes nothing.
  app.post<{ Body: ConfigureBody }>('/api/v1/configure', { schema: { body: CONFIGURE_BODY }, config: IDEMPOTENT_EFFECT }, async (request, reply) => {
    const { queue: name, partitions, options = {} } = request.body;
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
  });

  /** Per partition: offsets, and Queen's counts as the queue-mode group sees them. */
  const partitionStats = async (queue: QueueInfo, deadLetters: Map<string, number>) => {
    const refs = queue.partitions.map((p) => ({ queue: queue.name, partition: p.index }));
    const [{ partitions: ends }, { offsets }] = await Promise.all([core.offsets({ partitions: refs }), core.fetchOffsets({ group: QUEUE_MODE_GROUP, partitions: refs })]);
    return queue.partitions.map((p, i) => {
      const end = ends[i]!;
      const position = Math.min(end.highWatermark, Math.max(offsets[i]?.offset ?? 0, end.logStartOffset));
      const total = end.highWatermark - end.logStartOffset;
      return {
        id: partitionIdOf(queue.name, p.name),
        name: p.name,
        index: p.index,
        createdAt: iso(queue.createdAt),
        logStartOffset: end.logStartOffset,
        highWatermark: end.highWatermark,
        stats: { total, pending: end.highWatermark - position, processing: 0, completed: position - end.logStartOffset, failed: 0, deadLetter: deadLetters.get(p.name) ?? 0 },
      };
    });
  };

  const deadLettersByPartition = async (queue: string) => {
    const counts = new Map<string, number>();
    for (const entry of await core.kvGetPrefix({ ns: DEAD_LETTERS_NAMESPACE, prefix: `${queue}/`, limit: DEAD_LETTER_SCAN })) {
      const partition = (entry.value as { partition?: string }).partition ?? '';
      counts.set(partition, (counts.get(partition) ?? 0) + 1);
    }
    return counts;
  };

  const totalsOf = (partitions: Awaited<ReturnType<typeof partitionStats>>) => {
    const totals = { total: 0, pending: 0, processing: 0, completed: 0, failed: 0, deadLetter: 0 };
    for (const p of partitions) for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += p.stats[k];
    return totals;
  };

  const describeAll = async () => {
    const queues = await core.listQueues();
    const metadata = await readMetadata(core, queues.map((q) => q.name));
    return Promise.all(
      queues.map(async (q, i) => {
        const partitions = await partitionStats(q, await deadLettersByPartition(q.name));
        return { queue: q, metadata: metadata[i]!, partitions, totals: totalsOf(partitions) };
      }),
    );
  };

  app.get('/api/v1/resources/queues', { schema: {} }, async () => ({
    queues: (await describeAll()).map(({ queue, metadata, partitions, totals }) => ({
      id: queue.id,
      name: queue.name,
      namespace: metadata.namespace ?? null,
      task: metadata.task ?? null,
      createdAt: iso(queue.createdAt),
      partitions: partitions.length,
      messages: { total: totals.total, pending: totals.pending, processing: totals.processing },
      config: queueAnswer(queue).config,
    })),
  }));

  const queueParams = { type: 'object', required: ['queue'], properties: { queue: NAME } } as const;

  app.get<{ Params: { queue: string } }>('/api/v1/resources/queues/:queue', { schema: { params: queueParams } }, async (request) => {
    const queue = await core.describeQueue({ name: request.params.queue });
    if (!queue) throw new HttpError(404, 'unknown_queue', `Queue "${request.params.queue}" does not exist; create it with POST /api/v1/configure, or push to it.`);
    const [metadata] = await readMetadata(core, [queue.name]);
    const partitions = await partitionStats(queue, await deadLettersByPartition(queue.name));
    return {
      id: queue.id,
      name: queue.name,
      namespace: metadata!.namespace ?? null,
      task: metadata!.task ?? null,
      createdAt: iso(queue.createdAt),
      partitions,
      totals: totalsOf(partitions),
      options: queenOptionsAnswer(queue.config, metadata!),
      config: queueAnswer(queue).config,
    };
  });

  // A queue deleted already is answered as deleted (existed: false): running it again deletes nothing more.
  app.delete<{ Params: { queue: string } }>('/api/v1/resources/queues/:queue', { schema: { params: queueParams }, config: IDEMPOTENT_EFFECT }, async (request) => {
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
  });

  app.get('/api/v1/resources/overview', { schema: {} }, async () => {
    const all = await describeAll();
    const messages = { total: 0, pending: 0, processing: 0, completed: 0, failed: 0, deadLetter: 0 };
    for (const { totals } of all) for (const k of Object.keys(messages) as (keyof typeof messages)[]) messages[k] += totals[k];
    return {
      queues: all.length,
      partitions: all.reduce((n, q) => n + q.partitions.length, 0),
      namespaces: new Set(all.map((q) => q.metadata.namespace).filter(Boolean)).size,
      tasks: new Set(all.map((q) => q.metadata.task).filter(Boolean)).size,
      messages,
      timestamp: new Date().toISOString(),
    };
  });

  const byMetadata = (key: 'namespace' | 'task') => async () => {
    const groups = new Map<string, { queues: number; partitions: number; total: number; pending: number }>();
    for (const { metadata, partitions, totals } of await describeAll()) {
      const name = metadata[key];
      if (!name) continue;
      const g = groups.get(name) ?? { queues: 0, partitions: 0, total: 0, pending: 0 };
      g.queues++;
      g.partitions += partitions.length;
      g.total += totals.total;
      g.pending += totals.pending;
      groups.set(name, g);
    }
    return {
      [`${key}s`]: [...groups].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, g]) => ({ [key]: name, queues: g.queues, partitions: g.partitions, messages: { total: g.total, pending: g.pending } })),
    };
  };
  app.get('/api/v1/resources/namespaces', { schema: {} }, byMetadata('namespace'));
  app.get('/api/v1/resources/tasks', { schema: {} }, byMetadata('task'));

  app.get<{ Querystring: { queue?: string; consumerGroup?: string; partition?: string; from?: string; to?: string; limit: number; offset: number } }>(
    '/api/v1/dlq',
    {
      schema: {
        querystring: {
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
        },
      },
    },
    async (request) => {
      const { queue, consumerGroup, partition, from, to, limit, offset } = request.query;
      const since = from === undefined ? null : Date.parse(from);
      const until = to === undefined ? null : Date.parse(to);
      if (Number.isNaN(since) || Number.isNaN(until)) throw new HttpError(400, 'invalid_request', 'from and to must be dates or times in ISO 8601 (2024-01-15 or 2024-01-15T10:30:00Z).');
      const entries = await core.kvGetPrefix({ ns: DEAD_LETTERS_NAMESPACE, prefix: queue === undefined ? '' : `${queue}/`, limit: DEAD_LETTER_SCAN });
      const letters = entries
        .map((e) => e.value as { consumerGroup: string; partition: string; failedAt: string })
        .filter((l) => (consumerGroup === undefined || l.consumerGroup === consumerGroup) && (partition === undefined || l.partition === partition))
        .filter((l) => (since === null || Date.parse(l.failedAt) >= since!) && (until === null || Date.parse(l.failedAt) <= until!))
        .sort((a, b) => (a.failedAt < b.failedAt ? 1 : a.failedAt > b.failedAt ? -1 : 0));
      return { messages: letters.slice(offset, offset + limit), total: letters.length, limit, offset, pagination: { limit, offset } };
    },
  );

  app.get('/api/v1/consumer-groups', { schema: {} }, async () => {
    const { groups } = await core.listGroups();
    const rows = [];
    for (const { group } of groups) {
      const { offsets } = await core.fetchOffsets({ group, partitions: null });
      const { partitions: ends } = await core.offsets({ partitions: offsets.map(({ queue, partition }) => ({ queue, partition })) });
      const byQueue = new Map<string, { members: number; lag: number; withLag: number }>();
      offsets.forEach((o, i) => {
        const end = ends[i]!;
        const lag = end.error ? 0 : Math.max(0, end.highWatermark - Math.max(o.offset, end.logStartOffset));
        const q = byQueue.get(o.queue) ?? { members: 0, lag: 0, withLag: 0 };
        q.members++;
        q.lag += lag;
        if (lag > 0) q.withLag++;
        byQueue.set(o.queue, q);
      });
      for (const [queue, q] of byQueue) {
        rows.push({ name: group, topics: [queue], queueName: queue, members: q.members, partitionsWithLag: q.withLag, totalLag: q.lag, maxTimeLag: null, state: q.lag > 0 ? 'Lagging' : 'Stable', subscriptionMode: 'all', subscriptionTimestamp: null, subscriptionCreatedAt: null });
      }
    }
    return rows;
  });

  app.get('/api/v1/resources/consumer-groups', { schema: {} }, async () => {
    const { groups } = await core.listGroups();
    const names = new Map<string, Map<number, string>>();
    const queueNames = async (queue: string) => {
      let byIndex = names.get(queue);
      if (!byIndex) {
        const info = await core.describeQueue({ name: queue });
        byIndex = new Map(info?.partitions.map((p) => [p.index, p.name]) ?? []);
        names.set(queue, byIndex);
      }
      return byIndex;
    };
    return {
      consumer_groups: await Promise.all(
        groups.map(async ({ group }) => {
          const { offsets } = await core.fetchOffsets({ group, partitions: null });
          const { partitions: ends } = await core.offsets({ partitions: offsets.map(({ queue, partition }) => ({ queue, partition })) });
          const partitions = await Promise.all(
            offsets.map(async (o, i) => {
              const end = ends[i]!;
              const position = Math.max(o.offset, end.logStartOffset);
              return {
                queue: o.queue,
                partition: (await queueNames(o.queue)).get(o.partition) ?? String(o.partition),
                partition_index: o.partition,
                offset: o.offset,
                high_watermark: end.highWatermark,
                lag: end.error ? null : Math.max(0, end.highWatermark - position),
              };
            }),
          );
          return { name: group, lag: partitions.reduce((n, p) => n + (p.lag ?? 0), 0), partitions };
        }),
      ),
    };
  });
}

/**
 * Queue configuration and resource listings.
 *
 * POST /api/v1/configure creates a queue (with `partitions`, default 1) or
 * changes an existing one's options: dedupWindowSeconds (0 turns the dedup
 * check off), leaseTime (seconds), retentionSeconds (-1 keeps records
 * forever), retentionBytes, maxMessageBytes. Queues Kafka clients created
 * are configured the same way.
 *
 * GET /api/v1/resources/queues[/:queue] lists queues, and one queue's
 * partitions with their offsets; DELETE removes a queue.
 * GET /api/v1/resources/consumer-groups lists every group (Kafka's and
 * Queen's are one) with its committed position and lag per partition.
 */
import type { QueueConfig, QueueInfo } from '../../core/core.js';
import { queueAnswer } from '../answers.js';
import type { HttpApiContext } from '../context.js';
import { HttpError } from '../errors.js';
import { NAME } from '../schemas.js';

interface ConfigureOptions {
  dedupWindowSeconds?: number;
  leaseTime?: number;
  retentionSeconds?: number;
  retentionBytes?: number;
  maxMessageBytes?: number;
}

const CONFIGURE_BODY = {
  type: 'object',
  required: ['queue'],
  additionalProperties: false,
  properties: {
    queue: NAME,
    partitions: { type: 'integer', minimum: 1 },
    options: {
      type: 'object',
      additionalProperties: false,
      properties: {
        dedupWindowSeconds: { type: 'integer', minimum: 0 },
        leaseTime: { type: 'number', exclusiveMinimum: 0 },
        retentionSeconds: { type: 'number', minimum: -1 },
        retentionBytes: { type: 'integer', minimum: -1 },
        maxMessageBytes: { type: 'integer', minimum: 1 },
      },
    },
  },
} as const;

function toQueueConfig(options: ConfigureOptions): Partial<QueueConfig> {
  const config: Partial<QueueConfig> = {};
  if (options.dedupWindowSeconds !== undefined) config.dedupWindowSeconds = options.dedupWindowSeconds;
  if (options.leaseTime !== undefined) config.leaseMs = Math.max(1, Math.round(options.leaseTime * 1000));
  if (options.retentionSeconds !== undefined) config.retentionMs = options.retentionSeconds < 0 ? -1 : Math.round(options.retentionSeconds * 1000);
  if (options.retentionBytes !== undefined) config.retentionBytes = options.retentionBytes;
  if (options.maxMessageBytes !== undefined) config.maxMessageBytes = options.maxMessageBytes;
  return config;
}

export function registerQueueRoutes({ app, core }: HttpApiContext): void {
  app.post<{ Body: { queue: string; partitions?: number; options?: ConfigureOptions } }>(
    '/api/v1/configure',
    { schema: { body: CONFIGURE_BODY } },
    async (request, reply) => {
      const { queue: name, partitions, options = {} } = request.body;
      const config = toQueueConfig(options);
      const existing = await core.describeQueue({ name });
      if (existing) {
        if (partitions !== undefined && partitions !== existing.partitions.length) {
          throw new HttpError(409, 'queue_exists', `Queue "${name}" exists with ${existing.partitions.length} partitions; configure changes options only (push to a new partition name to add one).`);
        }
        const altered = Object.keys(config).length === 0 ? existing : await core.alterQueue({ name, config });
        return reply.status(200).send({ created: false, queue: queueAnswer(altered) });
      }
      const created = await core.createQueue({ name, partitions: partitions ?? 1, config, ifNotExists: true });
      return reply.status(201).send({ created: true, queue: queueAnswer(created) });
    },
  );

  const partitionsWithOffsets = async (queue: QueueInfo) => {
    const { partitions } = await core.offsets({ partitions: queue.partitions.map((p) => ({ queue: queue.name, partition: p.index })) });
    return queue.partitions.map((p, i) => {
      const o = partitions[i]!;
      return { name: p.name, index: p.index, log_start_offset: o.logStartOffset, high_watermark: o.highWatermark, messages: o.highWatermark - o.logStartOffset };
    });
  };

  app.get('/api/v1/resources/queues', { schema: {} }, async () => {
    const queues = await core.listQueues();
    return {
      queues: await Promise.all(
        queues.map(async (q) => {
          const partitions = await partitionsWithOffsets(q);
          return { ...queueAnswer(q), messages: partitions.reduce((n, p) => n + p.messages, 0) };
        }),
      ),
    };
  });

  const queueParams = { type: 'object', required: ['queue'], properties: { queue: NAME } } as const;

  app.get<{ Params: { queue: string } }>('/api/v1/resources/queues/:queue', { schema: { params: queueParams } }, async (request) => {
    const queue = await core.describeQueue({ name: request.params.queue });
    if (!queue) throw new HttpError(404, 'unknown_queue', `Queue "${request.params.queue}" does not exist; create it with POST /api/v1/configure.`);
    const partitions = await partitionsWithOffsets(queue);
    return { ...queueAnswer(queue), partitions, messages: partitions.reduce((n, p) => n + p.messages, 0) };
  });

  app.delete<{ Params: { queue: string } }>('/api/v1/resources/queues/:queue', { schema: { params: queueParams } }, async (request) => {
    await core.deleteQueue({ name: request.params.queue });
    return { deleted: true };
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

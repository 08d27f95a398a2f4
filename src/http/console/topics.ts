/**
 * Topics as the console lists and changes them, each route checked as its
 * Kafka counterpart is: the listing shows the topics the principal may
 * DESCRIBE (Metadata), one topic needs DESCRIBE and shows its configs with
 * DESCRIBE_CONFIGS (DescribeConfigs), creating needs CREATE on the cluster
 * or the topic (CreateTopics), deleting DELETE on the topic (DeleteTopics).
 */
import type { FastifyRequest } from 'fastify';
import { MAX_PARTITIONS, type Core, type QueueInfo } from '../../core/index.js';
import { cluster, demandOneOf, permits, topic } from '../access.js';
import { HttpError } from '../errors.js';
import { NAME } from '../schemas.js';
import { consoleAccess as access, onTopic, type ConsoleContext } from './context.js';

const TOPIC_PARAMS = { type: 'object', required: ['topic'], properties: { topic: NAME } } as const;

export async function describedTopic(core: Core, name: string): Promise<QueueInfo> {
  const queue = await core.describeQueue({ name });
  if (!queue) throw new HttpError(404, 'unknown_queue', `Topic "${name}" does not exist (it may have been deleted); pick one from the topic list.`);
  return queue;
}

const refsOf = (queue: QueueInfo) => queue.partitions.map((p) => ({ queue: queue.name, partition: p.index }));

async function listTopics(core: Core, request: FastifyRequest) {
  const queues = (await core.listQueues()).filter((q) => permits(request, onTopic('DESCRIBE', q.name)));
  const { partitions: ends } = await core.offsets({ partitions: queues.flatMap(refsOf) });
  const records = new Map<string, number>();
  for (const end of ends) if (!end.error) records.set(end.queue, (records.get(end.queue) ?? 0) + end.highWatermark - end.logStartOffset);
  return queues
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((q) => ({
      name: q.name,
      id: q.id,
      partitions: q.partitions.length,
      records: records.get(q.name) ?? 0,
      compacted: q.config.compaction !== null,
      kafkaCreated: q.config.fixedPartitionCount,
      createdAt: q.createdAt,
    }));
}

async function describeTopic({ core, sources }: ConsoleContext, request: FastifyRequest<{ Params: { topic: string } }>) {
  const queue = await describedTopic(core, request.params.topic);
  // Stored bytes as DescribeLogDirs answers them: the core keeps the count, nothing is read.
  const [{ partitions: ends }, { partitions: sizes }] = await Promise.all([core.offsets({ partitions: refsOf(queue) }), core.partitionSizes({ partitions: refsOf(queue) })]);
  const partitions = queue.partitions.map((p, i) => {
    const end = ends[i]!;
    const size = sizes[i]!;
    return { index: p.index, name: p.name, logStartOffset: end.logStartOffset, highWatermark: end.highWatermark, lastStableOffset: end.lastStableOffset, bytes: Math.max(0, size.bytes), bytesExact: size.error === null };
  });
  const configs = permits(request, onTopic('DESCRIBE_CONFIGS', queue.name)) ? sources.describeTopicConfigs(queue.config) : null;
  return { name: queue.name, id: queue.id, createdAt: queue.createdAt, partitions, configs };
}

interface CreateBody {
  name: string;
  partitions?: number;
  configs?: Record<string, string>;
}

const CREATE_BODY = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: NAME,
    partitions: { type: 'integer', minimum: 1, maximum: MAX_PARTITIONS },
    configs: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

async function createTopic({ core, sources }: ConsoleContext, request: FastifyRequest<{ Body: CreateBody }>) {
  const { name, partitions = sources.defaultPartitions, configs = {} } = request.body;
  demandOneOf(request, [cluster('CREATE'), ...topic('CREATE', name)]);
  const planned = sources.newTopicConfig(Object.entries(configs).map(([key, value]) => ({ name: key, value })));
  if ('problem' in planned) throw new HttpError(400, 'invalid_config', planned.problem);
  if (await core.describeQueue({ name })) throw new HttpError(409, 'queue_exists', `Topic "${name}" already exists; pick another name, or delete it first.`);
  const queue = await core.createQueue({ name, partitions, config: planned.config });
  request.log.info({ topic: name, partitions }, 'topic created from the console');
  return { created: true, name: queue.name, id: queue.id, partitions: queue.partitions.length };
}

async function deleteTopic({ core }: ConsoleContext, request: FastifyRequest<{ Params: { topic: string } }>) {
  const queue = await describedTopic(core, request.params.topic);
  await core.deleteQueue({ name: queue.name });
  request.log.info({ topic: queue.name, topicId: queue.id }, 'topic deleted from the console');
  return { deleted: true, name: queue.name, id: queue.id };
}


export function registerConsoleTopicRoutes(context: ConsoleContext): void {
  const { app, core } = context;
  app.get('/console/api/topics', { schema: {}, config: access(() => []) }, (request) => listTopics(core, request));
  app.get<{ Params: { topic: string } }>('/console/api/topics/:topic', { schema: { params: TOPIC_PARAMS }, config: access((_b, p) => topic('DESCRIBE', p.topic)) }, (request) =>
    describeTopic(context, request),
  );
  // CREATE on the cluster or on the topic: checked in the handler, as one of two.
  app.post<{ Body: CreateBody }>('/console/api/topics', { schema: { body: CREATE_BODY }, config: access(() => []) }, (request) => createTopic(context, request));
  app.delete<{ Params: { topic: string } }>('/console/api/topics/:topic', { schema: { params: TOPIC_PARAMS }, config: access((_b, p) => topic('DELETE', p.topic)) }, (request) =>
    deleteTopic(context, request),
  );
}

/**
 * The message browser: one partition's records from an offset or from a
 * time, as Kafka's console consumer would fetch them (READ on the topic).
 * Keys, values and header values go out as base64: they are bytes, and the
 * page decides how to show them (text, JSON or hex), always as text.
 */
import type { FastifyRequest } from 'fastify';
import { topic } from '../access.js';
import { HttpError } from '../errors.js';
import { NAME } from '../schemas.js';
import { consoleAccess, type ConsoleContext } from './context.js';
import { browseRecords } from './log.js';
import { describedTopic } from './topics.js';

/** Record bytes one page reads at most (the first batch whatever its size). */
const PAGE_BYTES = 4 * 1024 * 1024;

interface BrowseQuery {
  offset?: number;
  timestamp?: number;
  limit: number;
}

const BROWSE_QUERY = {
  type: 'object',
  additionalProperties: false,
  properties: {
    offset: { type: 'integer', minimum: 0 },
    timestamp: { type: 'integer', minimum: 0 },
    limit: { type: 'integer', minimum: 1, maximum: 500, default: 50 },
  },
} as const;

const PARAMS = { type: 'object', required: ['topic', 'partition'], properties: { topic: NAME, partition: { type: 'string', pattern: '^[0-9]+$' } } } as const;

type BrowseRequest = FastifyRequest<{ Params: { topic: string; partition: string }; Querystring: BrowseQuery }>;

async function browse({ core }: ConsoleContext, request: BrowseRequest) {
  const { offset, timestamp, limit } = request.query;
  if (offset !== undefined && timestamp !== undefined) throw new HttpError(400, 'invalid_request', 'Give an offset or a timestamp to read from, not both.');
  const queue = await describedTopic(core, request.params.topic);
  const partition = Number(request.params.partition);
  if (!queue.partitions.some((p) => p.index === partition)) {
    throw new HttpError(404, 'unknown_partition', `Topic "${queue.name}" has no partition ${partition}; it has partitions 0 to ${queue.partitions.length - 1}.`);
  }
  const ref = { queue: queue.name, partition };
  let from = offset ?? 0;
  if (timestamp !== undefined) {
    const found = await core.offsetForTimestamp({ ...ref, timestamp, isolation: 'read_uncommitted' });
    // No record at or after that time: start at the end, where the next one will be.
    from = found.offset >= 0 ? found.offset : Number.MAX_SAFE_INTEGER;
  }
  const [ends] = (await core.offsets({ partitions: [ref] })).partitions;
  from = Math.min(Math.max(from, ends!.logStartOffset), ends!.highWatermark);
  const page = await browseRecords(core, ref, from, limit, PAGE_BYTES);
  const last = page.records.at(-1);
  return { topic: queue.name, partition, from, next: last ? last.offset + 1 : from, ...page };
}

export function registerConsoleMessageRoutes(context: ConsoleContext): void {
  context.app.get<{ Params: { topic: string; partition: string }; Querystring: BrowseQuery }>(
    '/console/api/topics/:topic/partitions/:partition/messages',
    { schema: { params: PARAMS, querystring: BROWSE_QUERY }, config: consoleAccess((_b, p) => topic('READ', p.topic)) },
    (request) => browse(context, request),
  );
}

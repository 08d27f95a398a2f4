/**
 * Queen's consumer-group administration: deleting a group (everywhere or on
 * one queue) and moving its position on a queue (to the end, or to a time).
 *
 * A Queen group and a Kafka group are one thing here, so these are Kafka's
 * admin operations under Queen's routes and answers: deleting is
 * DeleteGroups (or OffsetDelete for one queue), seeking is an offset commit
 * from outside the group. As Kafka refuses both while the group has live
 * Kafka members, so do these (409 group_not_empty); Queen's HTTP consumers
 * hold no membership, only leases, and an ack of a message popped before a
 * seek still counts once it arrives.
 */
import type { Core } from '../../core/core.js';
import type { HttpApiContext } from '../context.js';
import { HttpError } from '../errors.js';

const GROUP = { type: 'object', required: ['group'], properties: { group: { type: 'string', minLength: 1 } } } as const;
const GROUP_QUEUE = { type: 'object', required: ['group', 'queue'], properties: { group: { type: 'string', minLength: 1 }, queue: { type: 'string', minLength: 1 } } } as const;
const DELETE_QUERY = { type: 'object', properties: { deleteMetadata: { type: 'boolean' } } } as const;
const SEEK_BODY = { type: 'object', properties: { toEnd: { type: 'boolean' }, timestamp: { type: 'string' } } } as const;

export function registerConsumerGroupAdminRoutes({ app, core }: HttpApiContext): void {
  app.delete<{ Params: { group: string }; Querystring: { deleteMetadata?: boolean } }>(
    '/api/v1/consumer-groups/:group',
    { schema: { params: GROUP, querystring: DELETE_QUERY } },
    async (request) => deleteGroup(core, request.params.group, request.query.deleteMetadata ?? true),
  );
  app.delete<{ Params: { group: string; queue: string }; Querystring: { deleteMetadata?: boolean } }>(
    '/api/v1/consumer-groups/:group/queues/:queue',
    { schema: { params: GROUP_QUEUE, querystring: DELETE_QUERY } },
    async (request) => deleteGroupOnQueue(core, request.params.group, request.params.queue, request.query.deleteMetadata ?? true),
  );
  app.post<{ Params: { group: string; queue: string }; Body: { toEnd?: boolean; timestamp?: string } | undefined }>(
    '/api/v1/consumer-groups/:group/queues/:queue/seek',
    { schema: { params: GROUP_QUEUE, body: SEEK_BODY } },
    async (request) => seekQueue(core, request.params.group, request.params.queue, request.body ?? {}),
  );
  app.post<{ Params: { group: string; queue: string; partition: string } }>(
    '/api/v1/consumer-groups/:group/queues/:queue/partitions/:partition/seek',
    { schema: { params: { ...GROUP_QUEUE, required: ['group', 'queue', 'partition'], properties: { ...GROUP_QUEUE.properties, partition: { type: 'string', minLength: 1 } } } } },
    async (request) => seekPartitionToEnd(core, request.params),
  );
}

function refusedWhileMembers(group: string, what: string): HttpError {
  return new HttpError(409, 'group_not_empty', `Consumer group "${group}" has live Kafka members; stop them before you ${what}, as Kafka refuses it too.`);
}

async function deleteGroup(core: Core, group: string, deleteMetadata: boolean) {
  const { offsets } = await core.fetchOffsets({ group, partitions: null });
  const [result] = (await core.deleteGroups({ groups: [group] })).groups;
  if (result?.error === 'non_empty_group') throw refusedWhileMembers(group, 'delete the group');
  if (result?.error && result.error !== 'group_id_not_found') throw groupError(result.error);
  return { success: true, consumerGroup: group, deletedPartitions: result?.error ? 0 : offsets.length, metadataDeleted: deleteMetadata };
}

async function deleteGroupOnQueue(core: Core, group: string, queue: string, deleteMetadata: boolean) {
  const { offsets } = await core.fetchOffsets({ group, partitions: null });
  const partitions = offsets.filter((o) => o.queue === queue).map(({ partition }) => ({ queue, partition }));
  let deleted = 0;
  if (partitions.length > 0) {
    const result = await core.deleteGroupOffsets({ group, partitions });
    if (result.error && result.error !== 'group_id_not_found') throw groupError(result.error);
    if (result.partitions.some((p) => p.error === 'group_subscribed_to_topic')) throw refusedWhileMembers(group, `delete its position on queue "${queue}"`);
    deleted = result.partitions.filter((p) => p.error === null).length;
  }
  return { success: true, consumerGroup: group, queueName: queue, deletedPartitions: deleted, metadataDeleted: deleteMetadata };
}

/**
 * Queen moves the position of every partition the group has one on: to the
 * end, or to just after the last message at or before the time (the start
 * when none is that old).
 */
async function seekQueue(core: Core, group: string, queue: string, body: { toEnd?: boolean; timestamp?: string }) {
  const toEnd = body.toEnd === true;
  const at = body.timestamp ? Date.parse(body.timestamp) : NaN;
  if (!toEnd && !body.timestamp) throw new HttpError(400, 'invalid_request', "Must specify either 'toEnd': true or 'timestamp'.");
  if (!toEnd && Number.isNaN(at)) throw new HttpError(400, 'invalid_request', `timestamp ${JSON.stringify(body.timestamp)} is not a time; give an ISO 8601 time such as 2026-01-01T00:00:00Z.`);
  const { offsets } = await core.fetchOffsets({ group, partitions: null });
  const partitions = offsets.filter((o) => o.queue === queue).map(({ partition }) => ({ queue, partition }));
  const targets = toEnd ? await endsOf(core, partitions) : await afterTime(core, partitions, at);
  await commitFromOutside(core, group, targets, 'seek');
  return { success: true, consumerGroup: group, queueName: queue, seekToEnd: toEnd, targetTimestamp: toEnd ? null : new Date(at).toISOString(), partitionsUpdated: targets.length };
}

async function seekPartitionToEnd(core: Core, params: { group: string; queue: string; partition: string }) {
  const info = await core.describeQueue({ name: params.queue });
  if (!info) throw new HttpError(404, 'unknown_queue', `Queue "${params.queue}" does not exist.`);
  const partition = info.partitions.find((p) => p.name === params.partition);
  if (!partition) throw new HttpError(404, 'unknown_partition', `Queue "${params.queue}" has no partition "${params.partition}".`);
  const targets = await endsOf(core, [{ queue: params.queue, partition: partition.index }]);
  await commitFromOutside(core, params.group, targets, 'seek');
  return { success: true, consumerGroup: params.group, queueName: params.queue, partitionName: params.partition, partitionsUpdated: targets.length };
}

type Target = { queue: string; partition: number; offset: number };

async function endsOf(core: Core, partitions: { queue: string; partition: number }[]): Promise<Target[]> {
  if (partitions.length === 0) return [];
  const { partitions: ends } = await core.offsets({ partitions });
  return ends.filter((e) => !e.error).map((e) => ({ queue: e.queue, partition: e.partition, offset: e.highWatermark }));
}

/** The first offset after every message at or before the time: Kafka's offset for the next millisecond. */
async function afterTime(core: Core, partitions: { queue: string; partition: number }[], at: number): Promise<Target[]> {
  if (partitions.length === 0) return [];
  const { partitions: ends } = await core.offsets({ partitions });
  return Promise.all(
    partitions.map(async (p, i) => {
      const found = await core.offsetForTimestamp({ ...p, timestamp: at + 1, isolation: 'read_committed' });
      const end = ends[i]!;
      return { ...p, offset: found.offset >= 0 ? found.offset : end.error ? 0 : end.highWatermark };
    }),
  );
}

async function commitFromOutside(core: Core, group: string, targets: Target[], what: string): Promise<void> {
  if (targets.length === 0) return;
  const { error } = await core.commitGroupOffsets({
    group,
    generationId: -1,
    memberId: '',
    groupInstanceId: null,
    offsets: targets.map((t) => ({ ...t, leaderEpoch: -1, metadata: null })),
  });
  if (error === 'unknown_member_id' || error === 'rebalance_in_progress' || error === 'illegal_generation') throw refusedWhileMembers(group, what);
  if (error) throw groupError(error);
}

function groupError(error: string): HttpError {
  if (error === 'not_coordinator' || error === 'coordinator_not_available' || error === 'coordinator_load_in_progress') {
    return new HttpError(503, 'not_coordinator', `Another gateway coordinates this group just now (${error}); retry shortly.`);
  }
  return new HttpError(409, 'group_not_empty', `The group refused the change: ${error}.`);
}

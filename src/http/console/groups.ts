/**
 * Consumer groups: the listing (ListGroups: the groups the principal may
 * DESCRIBE), one group with its members, their assignments and the lag of
 * every partition it has an offset for (DescribeGroups and OffsetFetch:
 * DESCRIBE on the group, partitions of topics it may DESCRIBE), and the
 * offset reset (kafka-consumer-groups --reset-offsets, an OffsetCommit from
 * outside the group: READ on the group and the topic). The core refuses the
 * reset while the group has members, as Kafka's coordinator does.
 *
 * The group type column is Kafka 4's: classic groups (JoinGroup and
 * SyncGroup) and KIP-848 consumer groups (ConsumerGroupHeartbeat), whose
 * state and members come from the consumer group coordinator.
 */
import type { FastifyRequest } from 'fastify';
import { Reader } from '../../../protocol/primitives/reader.js';
import type { Core, GroupDescription } from '../../core/index.js';
import { permits, topic, type Need } from '../access.js';
import { HttpError } from '../errors.js';
import { NAME } from '../schemas.js';
import { consoleAccess, onGroup, onTopic, type ConsoleContext } from './context.js';
import { describedTopic } from './topics.js';

/** The group a route names in its path, when it names one. */
const groupNamed = (operation: 'DESCRIBE' | 'READ', name: unknown): Need[] => (typeof name === 'string' ? [onGroup(operation, name)] : []);

/** Topics and partitions a consumer-protocol member was assigned (ConsumerProtocolAssignment); empty when it is not that protocol's. */
export function assignedPartitions(assignment: Buffer): { topic: string; partitions: number[] }[] {
  if (assignment.length < 2) return [];
  try {
    const r = new Reader(assignment);
    r.int16(); // version: the topics come first in every version
    const topics = [];
    for (let i = r.arrayLength(); i > 0; i--) {
      const name = r.string();
      const partitions = [];
      for (let j = r.arrayLength(); j > 0; j--) partitions.push(r.int32());
      topics.push({ topic: name, partitions });
    }
    return topics;
  } catch {
    return [];
  }
}

/** Committed offset, log end and lag of each partition the group has an offset for. */
async function lagOf(core: Core, group: string) {
  const offsets = (await core.fetchOffsets({ group, partitions: null })).offsets.sort((a, b) => (a.queue === b.queue ? a.partition - b.partition : a.queue < b.queue ? -1 : 1));
  const { partitions: ends } = await core.offsets({ partitions: offsets.map(({ queue, partition }) => ({ queue, partition })) });
  return offsets.map((o, i) => {
    const end = ends[i]!;
    return {
      topic: o.queue,
      partition: o.partition,
      committed: o.offset,
      logEndOffset: end.error ? null : end.highWatermark,
      lag: end.error ? null : Math.max(0, end.highWatermark - Math.max(o.offset, end.logStartOffset)),
    };
  });
}

async function listGroups(core: Core, request: FastifyRequest) {
  const [{ groups: live }, { groups: withOffsets }] = await Promise.all([core.listGroupStates({}), core.listGroups()]);
  const names = [...new Set([...live.map((g) => g.group), ...withOffsets.map((g) => g.group)])].filter((name) => permits(request, onGroup('DESCRIBE', name))).sort();
  const { groups: described } = await core.describeGroups({ groups: names });
  return Promise.all(
    described.map(async (d) => {
      const lag = await lagOf(core, d.group);
      const listed = live.find((g) => g.group === d.group);
      const protocolType = d.protocolType || (listed ?? withOffsets.find((g) => g.group === d.group)!).protocolType;
      const common = { group: d.group, protocolType, topics: [...new Set(lag.map((l) => l.topic))], lag: lag.reduce((n, l) => n + (l.lag ?? 0), 0) };
      // A KIP-848 group answers Dead to DescribeGroups, as Kafka's does: its listing has the state, its own description the members.
      if (listed?.groupType === 'consumer') {
        const [consumer] = (await core.consumerGroupDescribe({ groups: [d.group] })).groups;
        return { ...common, type: 'consumer', state: listed.state, members: consumer?.members.length ?? 0 };
      }
      return { ...common, type: 'classic', state: listed ? d.state : 'Empty', members: d.members.length };
    }),
  );
}

function membersOf(description: GroupDescription) {
  return description.members.map((m) => ({
    memberId: m.memberId,
    groupInstanceId: m.groupInstanceId,
    clientId: m.clientId,
    clientHost: m.clientHost,
    assignment: description.protocolType === 'consumer' ? assignedPartitions(m.assignment) : [],
  }));
}

/** A KIP-848 consumer group as the console shows it: its members with what each is assigned. */
async function showConsumerGroup(core: Core, name: string, request: FastifyRequest) {
  const [{ groups: [description] }, lag] = await Promise.all([core.consumerGroupDescribe({ groups: [name] }), lagOf(core, name)]);
  const members = description!.members.map((m) => ({
    memberId: m.memberId,
    groupInstanceId: m.instanceId,
    clientId: m.clientId,
    clientHost: m.clientHost,
    assignment: m.assignment.map((a) => ({ topic: a.topicName, partitions: a.partitions })),
  }));
  const owner = (t: string, p: number) => members.find((m) => m.assignment.some((a) => a.topic === t && a.partitions.includes(p)))?.memberId ?? null;
  return {
    group: name,
    type: 'consumer',
    state: description!.state,
    protocolType: 'consumer',
    protocol: description!.assignorName,
    generationId: description!.groupEpoch,
    members,
    partitions: lag.filter((l) => permits(request, onTopic('DESCRIBE', l.topic))).map((l) => ({ ...l, member: owner(l.topic, l.partition) })),
  };
}

async function showGroup({ core }: ConsoleContext, request: FastifyRequest<{ Params: { group: string } }>) {
  const name = request.params.group;
  const [consumer] = (await core.consumerGroupDescribe({ groups: [name] })).groups;
  if (consumer && consumer.error === null) return showConsumerGroup(core, name, request);
  const [{ groups: [description] }, lag] = await Promise.all([core.describeGroups({ groups: [name] }), lagOf(core, name)]);
  if (description!.state === 'Dead' && lag.length === 0) throw new HttpError(404, 'not_found', `Consumer group "${name}" does not exist (no members, no committed offsets).`);
  const members = membersOf(description!);
  const owner = (t: string, p: number) => members.find((m) => m.assignment.some((a) => a.topic === t && a.partitions.includes(p)))?.memberId ?? null;
  return {
    group: name,
    type: 'classic',
    state: description!.state === 'Dead' ? 'Empty' : description!.state,
    protocolType: description!.protocolType,
    protocol: description!.protocolName,
    generationId: description!.generationId,
    members,
    partitions: lag.filter((l) => permits(request, onTopic('DESCRIBE', l.topic))).map((l) => ({ ...l, member: owner(l.topic, l.partition) })),
  };
}

interface ResetBody {
  topic: string;
  to: 'earliest' | 'latest' | 'offset';
  offset?: number;
}

const RESET_BODY = {
  type: 'object',
  required: ['topic', 'to'],
  additionalProperties: false,
  properties: { topic: NAME, to: { enum: ['earliest', 'latest', 'offset'] }, offset: { type: 'integer', minimum: 0 } },
} as const;

/** The offset each partition of the topic is reset to: its log start, its end, or the one given within them (Kafka's tool clamps alike). */
async function resetTargets(core: Core, topicName: string, body: ResetBody) {
  const queue = await describedTopic(core, topicName);
  const { partitions } = await core.offsets({ partitions: queue.partitions.map((p) => ({ queue: queue.name, partition: p.index })) });
  return partitions.map((end) => {
    const wanted = body.to === 'earliest' ? end.logStartOffset : body.to === 'latest' ? end.highWatermark : body.offset!;
    return { queue: queue.name, partition: end.partition, offset: Math.min(Math.max(wanted, end.logStartOffset), end.highWatermark), leaderEpoch: -1, metadata: null };
  });
}

async function resetOffsets({ core }: ConsoleContext, request: FastifyRequest<{ Params: { group: string }; Body: ResetBody }>) {
  const { group } = request.params;
  if (request.body.to === 'offset' && request.body.offset === undefined) throw new HttpError(400, 'invalid_request', 'A reset to an offset needs the offset: give "offset".');
  const offsets = await resetTargets(core, request.body.topic, request.body);
  const { error } = await core.commitGroupOffsets({ group, generationId: -1, memberId: '', groupInstanceId: null, offsets });
  if (error === 'unknown_member_id' || error === 'rebalance_in_progress' || error === 'illegal_generation') {
    throw new HttpError(409, 'group_not_empty', `Consumer group "${group}" has active members; stop its consumers first: offsets can only be reset while the group is inactive, as in Kafka.`);
  }
  if (error) throw new HttpError(503, 'unavailable', `The group's coordinator did not take the reset (${error}); try again in a moment.`);
  request.log.info({ group, topic: request.body.topic, to: request.body.to }, 'group offsets reset from the console');
  return { reset: true, group, offsets: offsets.map((o) => ({ topic: o.queue, partition: o.partition, offset: o.offset })) };
}

const GROUP_PARAMS = { type: 'object', required: ['group'], properties: { group: NAME } } as const;

export function registerConsoleGroupRoutes(context: ConsoleContext): void {
  const { app, core } = context;
  app.get('/console/api/groups', { schema: {}, config: consoleAccess(() => []) }, (request) => listGroups(core, request));
  app.get<{ Params: { group: string } }>('/console/api/groups/:group', { schema: { params: GROUP_PARAMS }, config: consoleAccess((_b, p) => groupNamed('DESCRIBE', p.group)) }, (request) =>
    showGroup(context, request),
  );
  app.post<{ Params: { group: string }; Body: ResetBody }>(
    '/console/api/groups/:group/reset',
    { schema: { params: GROUP_PARAMS, body: RESET_BODY }, config: consoleAccess((body, p) => [...groupNamed('READ', p.group), ...topic('READ', body?.topic)]) },
    (request) => resetOffsets(context, request),
  );
}

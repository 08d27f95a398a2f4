/**
 * Streams group scenarios (KIP-1071), driven raw so each step is one request
 * both brokers answer: a member joins with a word count's topology (split,
 * repartition, count with a changelogged store) and heartbeats until its
 * internal topics exist and it runs every task; the errors Kafka answers;
 * a second group whose source topic is missing; and the group as
 * StreamsGroupDescribe, ListGroups (v5, with type) and DescribeGroups see it;
 * then the internal topics as Metadata and DescribeConfigs show them.
 *
 * Member ids are the client's, fixed, so the same on both. Epochs are
 * observed relative to the member's first answered one.
 */
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import type { RawConnection } from '../../support/raw-connection.js';
import { code, type Scenario } from '../harness.js';
import { awaitCoordinator, awaitLed, createTopicRaw, openRaw } from '../observe.js';

const MEMBER = '0000005a-0000-4000-8000-000000000001';
/** COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR. */
const RETRIABLE = new Set([14, 15, 16]);

const info = (name: string, configs: Record<string, string> = {}) => ({ name, partitions: 0, replicationFactor: -1, topicConfigs: Object.entries(configs).map(([key, value]) => ({ key, value })) });

function topology(app: string, input: string): Message {
  return {
    epoch: 0,
    subtopologies: [
      { subtopologyId: '0', sourceTopics: [input], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [`${app}-repartition`], repartitionSourceTopics: [], copartitionGroups: [] },
      { subtopologyId: '1', sourceTopics: [], sourceTopicRegex: [], stateChangelogTopics: [info(`${app}-counts-changelog`, { 'cleanup.policy': 'compact' })], repartitionSinkTopics: [], repartitionSourceTopics: [info(`${app}-repartition`)], copartitionGroups: [] },
    ],
  };
}

function request(group: string, memberEpoch: number, more: Partial<Message> = {}): Message {
  const joining = memberEpoch === 0;
  return {
    groupId: group, memberId: MEMBER, memberEpoch, endpointInformationEpoch: 0, instanceId: null, rackId: null,
    rebalanceTimeoutMs: joining ? 30_000 : -1, topology: null,
    activeTasks: joining ? [] : null, standbyTasks: joining ? [] : null, warmupTasks: joining ? [] : null,
    processId: joining ? '0000005a-0000-4000-8000-0000000000ff' : null, userEndpoint: null, clientTags: null, taskOffsets: null, taskEndOffsets: null, shutdownApplication: false,
    ...more,
  };
}

const heartbeat = (raw: RawConnection, req: Message) => raw.request(ApiKey.StreamsGroupHeartbeat, 1, req);

async function heartbeatUntil(raw: RawConnection, req: () => Message, accept: (a: Message) => boolean): Promise<Message> {
  let last: Message | null = null;
  for (let i = 0; i < 80; i++) {
    last = await heartbeat(raw, req());
    if (accept(last)) return last;
    await new Promise((r) => setTimeout(r, 250));
  }
  return last!;
}

const taskCount = (tasks: Message[] | null) => (tasks === null ? null : tasks.reduce((n, t) => n + (t.partitions as number[]).length, 0));

function view(a: Message, rel: (e: number) => number = (e) => e): Record<string, unknown> {
  return {
    error: code(a.errorCode),
    // Epochs in sentences as steps from the first one, as the epochs themselves.
    errorMessage: typeof a.errorMessage === 'string' ? a.errorMessage.replace(/\((\d+)\)/g, (_, e: string) => `(${rel(Number(e))})`) : a.errorMessage,
    memberEpoch: rel(a.memberEpoch),
    heartbeatIntervalMs: a.heartbeatIntervalMs,
    status: a.status === null ? null : (a.status as Message[]).map((s) => s.statusCode),
    activeTasks: taskCount(a.activeTasks),
    standbyTasks: taskCount(a.standbyTasks),
    warmupTasks: taskCount(a.warmupTasks),
  };
}

const twoSubtopologies: Scenario = {
  name: 'streams group (KIP-1071): a member runs a word count topology; errors; describe and list; internal topics',
  async run(ctx) {
    const input = 'diff-streams-in';
    const group = 'diff-streams-app';
    const raw = await openRaw(ctx);
    try {
      const created = await createTopicRaw(raw, input, 2);
      if (created.errorCode !== 0) throw new Error(`creating ${input} on ${ctx.target.name} answered ${code(created.errorCode)}`);
      await awaitLed(raw, input, 2);
      await awaitCoordinator(raw, group);
      const steps: Record<string, unknown> = {};
      steps.noTopology = view(await heartbeat(raw, request(group, 0)));
      steps.noRebalanceTimeout = view(await heartbeat(raw, request(group, 0, { topology: topology(group, input), rebalanceTimeoutMs: -1 })));

      // Kafka may still be loading the coordinator; it also holds a new group's first assignment back for its
      // initial rebalance delay (3 s), telling the member ASSIGNMENT_DELAYED.
      const joined = await heartbeatUntil(raw, () => request(group, 0, { topology: topology(group, input) }), (a) => !RETRIABLE.has(a.errorCode));
      const rel = (e: number) => (e > 0 ? e - joined.memberEpoch + 1 : e);
      // Kafka creates the internal topics in the background: heartbeat until the member runs every task.
      let owned = (joined.activeTasks as Message[] | null) ?? [];
      let epoch = joined.memberEpoch;
      const running = await heartbeatUntil(raw, () => request(group, epoch, { activeTasks: owned, standbyTasks: [], warmupTasks: [] }), (a) => {
        if (a.errorCode === 0) epoch = a.memberEpoch;
        if (a.activeTasks !== null) owned = a.activeTasks as Message[];
        return a.errorCode !== 0 || taskCount(owned) === 4;
      });
      steps.joinError = code(joined.errorCode);
      steps.runsEveryTask = taskCount(owned);
      steps.steady = view(await heartbeat(raw, request(group, running.memberEpoch, { activeTasks: owned, standbyTasks: [], warmupTasks: [] })), rel);
      steps.steadyStatus = running.status;
      steps.unknownMember = view(await heartbeat(raw, { ...request(group, 1), memberId: 'nobody' }));
      steps.taskTypesTogether = view(await heartbeat(raw, request(group, running.memberEpoch, { activeTasks: owned })));
      steps.fencedEpoch = view(await heartbeat(raw, request(group, running.memberEpoch + 5, { activeTasks: owned, standbyTasks: [], warmupTasks: [] })), (e) => (e > 0 ? e - running.memberEpoch : e));

      const missingGroup = `${group}-missing`;
      await awaitCoordinator(raw, missingGroup);
      const missingStatus = (a: Message) => ((a.status as Message[] | null) ?? []).filter((s) => s.statusCode === 1);
      const missing = await heartbeatUntil(raw, () => request(missingGroup, 0, { topology: topology(missingGroup, 'diff-streams-absent') }), (a) => !RETRIABLE.has(a.errorCode) && missingStatus(a).length > 0);
      steps.missingSource = { error: code(missing.errorCode), activeTasks: taskCount(missing.activeTasks), status: missingStatus(missing).map((s) => [s.statusCode, s.statusDetail]) };
      await heartbeat(raw, request(missingGroup, -1));

      const described = await raw.request(ApiKey.StreamsGroupDescribe, 0, { groupIds: [group, 'diff-streams-none'], includeAuthorizedOperations: false });
      steps.describe = (described.groups as Message[]).map((g) => ({
        error: code(g.errorCode),
        errorMessage: g.errorMessage,
        state: g.groupState,
        groupEpoch: rel(g.groupEpoch),
        topology: g.topology && (g.topology.subtopologies as Message[]).map((s) => ({ id: s.subtopologyId, sources: s.sourceTopics, sinks: s.repartitionSinkTopics, changelogs: (s.stateChangelogTopics as Message[]).map((t) => t.name), repartitions: (s.repartitionSourceTopics as Message[]).map((t) => t.name) })),
        members: (g.members as Message[]).map((m) => ({ memberId: m.memberId, memberEpoch: rel(m.memberEpoch), processId: m.processId, topologyEpoch: m.topologyEpoch, active: taskCount(m.assignment.activeTasks), target: taskCount(m.targetAssignment.activeTasks) })),
      }));
      const listed = await raw.request(ApiKey.ListGroups, 5, { statesFilter: [], typesFilter: ['streams'] });
      steps.list = (listed.groups as Message[]).filter((g) => g.groupId === group).map((g) => ({ protocolType: g.protocolType, state: g.groupState, type: g.groupType }));
      const describedClassic = await raw.request(ApiKey.DescribeGroups, 5, { groups: [group], includeAuthorizedOperations: false });
      steps.describeGroups = (describedClassic.groups as Message[]).map((g) => ({ error: code(g.errorCode), state: g.groupState, protocolType: g.protocolType, members: (g.members as Message[]).length }));

      const metadata = await raw.request(ApiKey.Metadata, 12, { topics: [{ topicId: null, name: `${group}-repartition` }, { topicId: null, name: `${group}-counts-changelog` }], allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      steps.internalTopics = (metadata.topics as Message[]).map((t) => ({ name: t.name, error: code(t.errorCode), partitions: (t.partitions as Message[]).length }));
      const configs = await raw.request(ApiKey.DescribeConfigs, 4, { resources: [{ resourceType: 2, resourceName: `${group}-counts-changelog`, configurationKeys: ['cleanup.policy'] }], includeSynonyms: false, includeDocumentation: false });
      steps.changelogPolicy = (configs.results[0].configs as Message[]).map((c) => c.value);

      steps.leaves = view(await heartbeat(raw, request(group, -1)), rel);
      const emptied = await raw.request(ApiKey.StreamsGroupDescribe, 0, { groupIds: [group], includeAuthorizedOperations: false });
      steps.describeEmpty = (emptied.groups as Message[]).map((g) => ({ error: code(g.errorCode), state: g.groupState, members: (g.members as Message[]).length }));
      return steps;
    } finally {
      raw.destroy();
    }
  },
};

export const STREAMS_GROUP_SCENARIOS: Scenario[] = [twoSubtopologies];

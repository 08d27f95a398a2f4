import { afterEach, describe, expect, it } from 'vitest';
import type { TopicMetadata } from '../../../src/core/groups/consumer/types.js';
import { StreamsGroupCoordinator } from '../../../src/core/groups/streams/coordinator.js';
import { configureTopology } from '../../../src/core/groups/streams/topology.js';
import { STREAMS_STATUS, type StreamsGroupHeartbeatRequest, type TaskIds, type Topology } from '../../../src/core/groups/streams/types.js';

/**
 * The streams group coordinator (KIP-1071) on its own: a topology checked
 * against the topics (missing sources, internal topics to create, repartition
 * counts, copartitioning), tasks assigned sticky and even, revoked before they
 * move, epochs, leaving, and the errors Kafka answers.
 */

const info = (name: string, partitions = 0, configs: [string, string][] = []) => ({ name, partitions, replicationFactor: 0, topicConfigs: configs.map(([key, value]) => ({ key, value })) });

/** A word count's topology: split (reads `input`, writes the repartition topic), count (reads it, keeps a changelogged store). */
const wordCount = (app: string, input = 'input'): Topology => ({
  epoch: 0,
  subtopologies: [
    { subtopologyId: '0', sourceTopics: [input], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [`${app}-repartition`], repartitionSourceTopics: [], copartitionGroups: [] },
    {
      subtopologyId: '1', sourceTopics: [], sourceTopicRegex: [], repartitionSinkTopics: [],
      stateChangelogTopics: [info(`${app}-counts-changelog`, 0, [['cleanup.policy', 'compact']])],
      repartitionSourceTopics: [info(`${app}-repartition`)],
      copartitionGroups: [],
    },
  ],
});

let coordinator: StreamsGroupCoordinator;
afterEach(() => coordinator?.close());

function request(memberId: string, memberEpoch: number, more: Partial<StreamsGroupHeartbeatRequest> = {}): StreamsGroupHeartbeatRequest {
  return {
    group: 'app', memberId, memberEpoch, endpointInformationEpoch: 0, instanceId: null, rackId: null,
    rebalanceTimeoutMs: memberEpoch === 0 ? 30_000 : -1,
    topology: memberEpoch === 0 ? wordCount('app') : null,
    activeTasks: memberEpoch === 0 ? [] : null, standbyTasks: memberEpoch === 0 ? [] : null, warmupTasks: memberEpoch === 0 ? [] : null,
    processId: `process-${memberId}`, userEndpoint: null, clientTags: null, shutdownApplication: false, clientId: memberId, clientHost: '/127.0.0.1',
    // Kafka's clients send the three task lists together.
    ...(more.activeTasks ? { standbyTasks: [], warmupTasks: [] } : {}),
    ...more,
  };
}

const count = (tasks: TaskIds[] | null) => (tasks ?? []).reduce((n, t) => n + t.partitions.length, 0);

describe('a streams group topology against the topics', () => {
  it('names missing source topics, then the internal topics to create with their partitions and configs, then runs one task per partition', () => {
    const topology = wordCount('app');
    expect(configureTopology(topology, []).status).toEqual([{ statusCode: STREAMS_STATUS.MISSING_SOURCE_TOPICS, statusDetail: 'Source topics input are missing.' }]);
    const input: TopicMetadata = { name: 'input', id: 'i', partitions: 3 };
    const missing = configureTopology(topology, [input]);
    expect(missing.status.map((s) => s.statusCode)).toEqual([STREAMS_STATUS.MISSING_INTERNAL_TOPICS]);
    expect(missing.toCreate).toEqual([
      { name: 'app-repartition', partitions: 3, configs: [] },
      { name: 'app-counts-changelog', partitions: 3, configs: [{ key: 'cleanup.policy', value: 'compact' }] },
    ]);
    const ready = configureTopology(topology, [input, { name: 'app-repartition', id: 'r', partitions: 3 }, { name: 'app-counts-changelog', id: 'c', partitions: 3 }]);
    expect(ready.status).toEqual([]);
    expect(Object.fromEntries(ready.taskCounts)).toEqual({ '0': 3, '1': 3 });
    const wrong = configureTopology(topology, [input, { name: 'app-repartition', id: 'r', partitions: 2 }, { name: 'app-counts-changelog', id: 'c', partitions: 3 }]);
    expect(wrong.status.map((s) => s.statusCode)).toEqual([STREAMS_STATUS.INCORRECTLY_PARTITIONED_TOPICS]);
  });

  it('refuses copartitioned source topics of different partition counts', () => {
    const topology: Topology = { epoch: 0, subtopologies: [{ subtopologyId: '0', sourceTopics: ['a', 'b'], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [], repartitionSourceTopics: [], copartitionGroups: [{ sourceTopics: [0, 1], sourceTopicRegex: [], repartitionSourceTopics: [] }] }] };
    const status = configureTopology(topology, [{ name: 'a', id: 'a', partitions: 2 }, { name: 'b', id: 'b', partitions: 3 }]).status;
    expect(status).toEqual([{ statusCode: STREAMS_STATUS.INCORRECTLY_PARTITIONED_TOPICS, statusDetail: 'Following topics do not have the same number of partitions: [a, b]' }]);
  });
});

describe('the streams group coordinator', () => {
  const topics: TopicMetadata[] = [
    { name: 'input', id: 'i', partitions: 2 },
    { name: 'app-repartition', id: 'r', partitions: 2 },
    { name: 'app-counts-changelog', id: 'c', partitions: 2 },
  ];

  it('gives a lone member every task, then revokes half before the second member gets them, and takes them back when it leaves', () => {
    coordinator = new StreamsGroupCoordinator({ initialRebalanceDelayMs: 0 });
    const a0 = coordinator.heartbeat(request('a', 0), topics);
    expect(a0).toMatchObject({ error: null, memberEpoch: 1, status: [], standbyTasks: [], warmupTasks: [], heartbeatIntervalMs: 5000 });
    expect(a0.activeTasks).toEqual([{ subtopologyId: '0', partitions: [0, 1] }, { subtopologyId: '1', partitions: [0, 1] }]);
    expect(coordinator.describe(['app'])[0]!.state).toBe('Stable');

    const b0 = coordinator.heartbeat(request('b', 0), topics);
    expect([b0.memberEpoch, count(b0.activeTasks)]).toEqual([2, 0]);
    expect(coordinator.describe(['app'])[0]!.state).toBe('Reconciling');
    // a gives two tasks up at its old epoch; b waits for them.
    const a1 = coordinator.heartbeat(request('a', 1, { activeTasks: a0.activeTasks }), topics);
    expect([a1.memberEpoch, count(a1.activeTasks)]).toEqual([1, 2]);
    const a2 = coordinator.heartbeat(request('a', 1, { activeTasks: a1.activeTasks }), topics);
    expect(a2.memberEpoch).toBe(2);
    const b1 = coordinator.heartbeat(request('b', 2, { activeTasks: [] }), topics);
    expect(count(b1.activeTasks)).toBe(2);
    const described = coordinator.describe(['app'])[0]!;
    expect(described).toMatchObject({ state: 'Stable', groupEpoch: 2, assignmentEpoch: 2 });
    expect(described.members.map((m) => [m.memberId, m.processId, count(m.assignment.activeTasks)])).toEqual([['a', 'process-a', 2], ['b', 'process-b', 2]]);

    expect(coordinator.heartbeat(request('b', -1), topics).error).toBeNull();
    const back = coordinator.heartbeat(request('a', 2, { activeTasks: a1.activeTasks }), topics);
    expect([back.memberEpoch, count(back.activeTasks)]).toEqual([3, 4]);
  });

  it("waits Kafka's initial rebalance delay before a new group's first tasks, telling members ASSIGNMENT_DELAYED meanwhile", async () => {
    coordinator = new StreamsGroupCoordinator({ initialRebalanceDelayMs: 300 });
    const early = coordinator.heartbeat(request('a', 0), topics);
    expect(early).toMatchObject({ error: null, memberEpoch: 1, activeTasks: [] });
    expect(early.status).toEqual([{ statusCode: STREAMS_STATUS.ASSIGNMENT_DELAYED, statusDetail: 'Assignment delayed due to the configured initial rebalance delay.' }]);
    await new Promise((r) => setTimeout(r, 400));
    const later = coordinator.heartbeat(request('a', 1, { activeTasks: [], standbyTasks: [], warmupTasks: [] }), topics);
    expect([later.memberEpoch, later.status, count(later.activeTasks)]).toEqual([2, [], 4]);
  });

  it('refuses task lists given apart: all three or none', () => {
    coordinator = new StreamsGroupCoordinator({ initialRebalanceDelayMs: 0 });
    coordinator.heartbeat(request('a', 0), topics);
    expect(coordinator.heartbeat(request('a', 1, { activeTasks: [], standbyTasks: null }), topics)).toMatchObject({ error: 'invalid_request', errorMessage: 'If one task-type is non-null, all must be non-null.' });
  });

  it('tells members the group is not ready while a source topic is missing, and assigns nothing', () => {
    coordinator = new StreamsGroupCoordinator({ initialRebalanceDelayMs: 0 });
    const answer = coordinator.heartbeat(request('a', 0), []);
    expect(answer.status).toEqual([{ statusCode: STREAMS_STATUS.MISSING_SOURCE_TOPICS, statusDetail: 'Source topics input are missing.' }]);
    expect(answer.activeTasks).toEqual([]);
    expect(coordinator.describe(['app'])[0]!.state).toBe('NotReady');
  });

  it('answers Kafka\'s errors: a join without topology or process, an unknown member, a fenced epoch, a newer topology while others run it', () => {
    coordinator = new StreamsGroupCoordinator({ initialRebalanceDelayMs: 0 });
    expect(coordinator.heartbeat(request('a', 0, { topology: null }), topics)).toMatchObject({ error: 'invalid_request', errorMessage: 'Topology must be non-null when (re-)joining.' });
    expect(coordinator.heartbeat(request('a', 0, { rebalanceTimeoutMs: -1 }), topics)).toMatchObject({ error: 'invalid_request', errorMessage: 'RebalanceTimeoutMs must be provided in first request.' });
    expect(coordinator.heartbeat(request('', 0), topics)).toMatchObject({ error: 'invalid_request', errorMessage: "MemberId can't be empty." });
    expect(coordinator.heartbeat(request('a', 3), topics).error).toBe('unknown_member_id');
    coordinator.heartbeat(request('a', 0), topics);
    expect(coordinator.heartbeat(request('a', 5, { activeTasks: [] }), topics).error).toBe('fenced_member_epoch');
    expect(coordinator.heartbeat(request('b', 0, { topology: { ...wordCount('app'), epoch: 1 } }), topics).error).toBe('streams_invalid_topology_epoch');
    const twice = { epoch: 0, subtopologies: [wordCount('app').subtopologies[0]!, wordCount('app').subtopologies[0]!] };
    expect(coordinator.heartbeat(request('c', 0, { topology: twice }), topics).error).toBe('streams_invalid_topology');
  });

  it('checks a commit by a member at its epoch, and one from outside only while the group is empty', () => {
    coordinator = new StreamsGroupCoordinator({ initialRebalanceDelayMs: 0 });
    const a = coordinator.heartbeat(request('a', 0), topics);
    expect(coordinator.checkMember('app', 'a', a.memberEpoch)).toBeNull();
    expect(coordinator.checkMember('app', 'a', a.memberEpoch - 1)).toBe('stale_member_epoch');
    expect(coordinator.checkMember('app', 'x', 1)).toBe('unknown_member_id');
    expect(coordinator.checkMember('app', '', -1)).toBe('unknown_member_id');
    coordinator.heartbeat(request('a', -1), topics);
    expect(coordinator.checkMember('app', '', -1)).toBeNull();
  });
});

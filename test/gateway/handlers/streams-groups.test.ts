/**
 * Streams groups (KIP-1071) through the handlers, called in process
 * (./in-process.ts): StreamsGroupHeartbeat at both versions served (a join
 * creates the topology's internal topics, a changelog compacted, and is
 * given every task), StreamsGroupDescribe, and what the group's other APIs
 * answer for a streams group: ListGroups with its type filter, OffsetCommit
 * v9 with member epochs, DeleteGroups, a classic JoinGroup and a KIP-848
 * member refused, and ApiVersions' streams.version feature.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { subscription } from '../../support/consumer-protocol.js';
import { InProcessGateway, named, versionEnds } from './in-process.js';

let gw: InProcessGateway;

beforeAll(async () => {
  gw = await InProcessGateway.open({ groups: { initialRebalanceDelayMs: 0 } });
  await gw.core.createQueue({ name: 'lines', partitions: 2, config: { dedupWindowSeconds: 0 } });
});
afterAll(() => gw.close());

let groupCount = 0;
const newGroup = (label: string) => `${label}-${++groupCount}`;
const info = (name: string, configs: [string, string][] = []) => ({ name, partitions: 0, replicationFactor: -1, topicConfigs: configs.map(([key, value]) => ({ key, value })) });

/** A word count's topology, as Kafka Streams sends it. */
const topology = (app: string) => ({
  epoch: 0,
  subtopologies: [
    { subtopologyId: '0', sourceTopics: ['lines'], sourceTopicRegex: [], stateChangelogTopics: [], repartitionSinkTopics: [`${app}-repartition`], repartitionSourceTopics: [], copartitionGroups: [] },
    { subtopologyId: '1', sourceTopics: [], sourceTopicRegex: [], stateChangelogTopics: [info(`${app}-counts-changelog`, [['cleanup.policy', 'compact']])], repartitionSinkTopics: [], repartitionSourceTopics: [info(`${app}-repartition`)], copartitionGroups: [] },
  ],
});

function heartbeat(group: string, memberId: string, memberEpoch: number, more: Partial<Message> = {}, version = 1): Promise<Message> {
  const joining = memberEpoch === 0;
  return gw.answer(ApiKey.StreamsGroupHeartbeat, version, {
    groupId: group, memberId, memberEpoch, endpointInformationEpoch: 0, instanceId: null, rackId: null,
    rebalanceTimeoutMs: joining ? 30_000 : -1,
    topology: joining ? topology(group) : null,
    activeTasks: joining ? [] : null, standbyTasks: joining ? [] : null, warmupTasks: joining ? [] : null,
    processId: joining ? `process-${memberId}` : null, userEndpoint: null, clientTags: null, taskOffsets: null, taskEndOffsets: null, shutdownApplication: false,
    ...more,
  });
}

describe('StreamsGroupHeartbeat', () => {
  it.each(versionEnds(ApiKey.StreamsGroupHeartbeat))('v%i: a joining member has the internal topics created (the changelog compacted) and is given every task', async (version) => {
    const group = newGroup(`join-v${version}`);
    const answer = await heartbeat(group, 'member-a', 0, {}, version);
    expect(named(answer.errorCode)).toBe('NONE');
    // Epoch 1 joined a group not ready (its internal topics missing); their creation moved the group to epoch 2, the one answered.
    expect(answer).toMatchObject({ memberId: 'member-a', memberEpoch: 2, heartbeatIntervalMs: 5000, status: [], standbyTasks: [], warmupTasks: [] });
    expect(answer.activeTasks).toEqual([{ subtopologyId: '0', partitions: [0, 1] }, { subtopologyId: '1', partitions: [0, 1] }]);
    const created = await gw.core.describeQueue({ name: `${group}-counts-changelog` });
    expect([created?.partitions.length, created?.config.topicConfigs['cleanup.policy']]).toEqual([2, 'compact']);
    expect((await gw.core.describeQueue({ name: `${group}-repartition` }))?.partitions.length).toBe(2);
  });

  it('tells a member MISSING_SOURCE_TOPICS while its input does not exist, and gives no task', async () => {
    const group = newGroup('missing');
    const answer = await heartbeat(group, 'member-a', 0, { topology: { epoch: 0, subtopologies: [{ ...topology(group).subtopologies[0]!, sourceTopics: ['absent'] }] } });
    expect(answer.status).toEqual([{ statusCode: 1, statusDetail: 'Source topics absent are missing.' }]);
    expect(answer.activeTasks).toEqual([]);
  });

  it("answers Kafka's INVALID_REQUEST sentences and STREAMS_INVALID_TOPOLOGY_EPOCH", async () => {
    const group = newGroup('errors');
    const missing = await heartbeat(group, 'member-a', 0, { topology: null });
    expect([named(missing.errorCode), missing.errorMessage]).toEqual(['INVALID_REQUEST', 'Topology must be non-null when (re-)joining.']);
    await heartbeat(group, 'member-a', 0);
    const newer = await heartbeat(group, 'member-b', 0, { topology: { ...topology(group), epoch: 1 } });
    expect(named(newer.errorCode)).toBe('STREAMS_INVALID_TOPOLOGY_EPOCH');
    const fenced = await heartbeat(group, 'member-a', 7, { activeTasks: [], standbyTasks: [], warmupTasks: [] });
    expect([named(fenced.errorCode), fenced.memberId, fenced.memberEpoch]).toEqual(['FENCED_MEMBER_EPOCH', '', 0]);
    const apart = await heartbeat(group, 'member-a', 7, { activeTasks: [] });
    expect([named(apart.errorCode), apart.errorMessage]).toEqual(['INVALID_REQUEST', 'If one task-type is non-null, all must be non-null.']);
  });
});

describe("a streams group's other APIs", () => {
  it('StreamsGroupDescribe shows the topology and each member with its process and tasks; an unknown group is GROUP_ID_NOT_FOUND', async () => {
    const group = newGroup('describe');
    await heartbeat(group, 'member-a', 0);
    for (const version of versionEnds(ApiKey.StreamsGroupDescribe)) {
      const response = await gw.answer(ApiKey.StreamsGroupDescribe, version, { groupIds: [group, 'no-such-group'], includeAuthorizedOperations: false, includeTopologyDescription: false });
      const [described, unknown] = response.groups;
      expect(described).toMatchObject({ errorCode: 0, groupState: 'Stable', groupEpoch: 2, assignmentEpoch: 2, topology: { epoch: 0 } });
      expect(described.topology.subtopologies.map((s: Message) => s.subtopologyId)).toEqual(['0', '1']);
      expect(described.members).toHaveLength(1);
      expect(described.members[0]).toMatchObject({ memberId: 'member-a', memberEpoch: 2, processId: 'process-member-a', topologyEpoch: 0, isClassic: false });
      expect(described.members[0].assignment.activeTasks).toEqual([{ subtopologyId: '0', partitions: [0, 1] }, { subtopologyId: '1', partitions: [0, 1] }]);
      expect([named(unknown.errorCode), unknown.errorMessage]).toEqual(['GROUP_ID_NOT_FOUND', 'Group no-such-group not found.']);
    }
  });

  it('ListGroups v5 lists it as type "streams" and filters by it', async () => {
    const group = newGroup('listed');
    await heartbeat(group, 'member-a', 0);
    const list = async (typesFilter: string[]) => (await gw.answer(ApiKey.ListGroups, 5, { statesFilter: [], typesFilter })).groups.filter((g: Message) => g.groupId === group);
    expect(await list([])).toEqual([{ groupId: group, protocolType: 'streams', groupState: 'Stable', groupType: 'streams' }]);
    expect(await list(['streams'])).toHaveLength(1);
    expect(await list(['consumer'])).toEqual([]);
  });

  it('OffsetCommit v9 takes a member at its epoch only; DeleteGroups refuses the group until its member left', async () => {
    const group = newGroup('commit');
    const { memberEpoch } = await heartbeat(group, 'member-a', 0);
    const commit = (memberId: string, epoch: number) =>
      gw.answer(ApiKey.OffsetCommit, 9, {
        groupId: group, generationIdOrMemberEpoch: epoch, memberId, groupInstanceId: null, retentionTimeMs: -1,
        topics: [{ name: 'lines', partitions: [{ partitionIndex: 0, committedOffset: 5, committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
    const codeOf = (r: Message) => named(r.topics[0].partitions[0].errorCode);
    expect(codeOf(await commit('member-a', memberEpoch))).toBe('NONE');
    expect(codeOf(await commit('member-a', memberEpoch - 1))).toBe('STALE_MEMBER_EPOCH');
    expect(codeOf(await commit('stranger', memberEpoch))).toBe('UNKNOWN_MEMBER_ID');
    const remove = async () => named((await gw.answer(ApiKey.DeleteGroups, 2, { groupsNames: [group] })).results[0].errorCode);
    expect(await remove()).toBe('NON_EMPTY_GROUP');
    expect((await heartbeat(group, 'member-a', -1)).memberEpoch).toBe(-1);
    expect(await remove()).toBe('NONE');
  });

  it('refuses a classic member and a KIP-848 member while it has members', async () => {
    const group = newGroup('kinds');
    await heartbeat(group, 'member-a', 0);
    const joined = await gw.answer(ApiKey.JoinGroup, 9, {
      groupId: group, sessionTimeoutMs: 30_000, rebalanceTimeoutMs: 30_000, memberId: 'classic', groupInstanceId: null, protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: subscription('lines') }], reason: null,
    });
    expect(named(joined.errorCode)).toBe('INCONSISTENT_GROUP_PROTOCOL');
    const consumer = await gw.answer(ApiKey.ConsumerGroupHeartbeat, 1, {
      groupId: group, memberId: 'kip848', memberEpoch: 0, instanceId: null, rackId: null, rebalanceTimeoutMs: 30_000, subscribedTopicNames: ['lines'], subscribedTopicRegex: null, serverAssignor: null, topicPartitions: [],
    });
    expect([named(consumer.errorCode), consumer.errorMessage]).toEqual(['GROUP_ID_NOT_FOUND', `Group ${group} is not a consumer group.`]);
  });

  it('ApiVersions advertises both keys at 0-1 and finalizes streams.version at level 1', async () => {
    const response = await gw.answer(ApiKey.ApiVersions, 4, { clientSoftwareName: 'test', clientSoftwareVersion: '1.0' });
    const keys = new Map(response.apiKeys.map((k: Message) => [k.apiKey, [k.minVersion, k.maxVersion]]));
    expect(keys.get(ApiKey.StreamsGroupHeartbeat)).toEqual([0, 1]);
    expect(keys.get(ApiKey.StreamsGroupDescribe)).toEqual([0, 1]);
    expect(response.finalizedFeatures).toContainEqual({ name: 'streams.version', minVersionLevel: 1, maxVersionLevel: 1 });
    expect(response.supportedFeatures).toContainEqual({ name: 'streams.version', minVersion: 0, maxVersion: 1 });
  });
});

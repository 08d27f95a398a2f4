/**
 * KIP-848 consumer groups through the handlers, called in process
 * (./in-process.ts): ConsumerGroupHeartbeat and ConsumerGroupDescribe at the
 * versions served, and what the group's other APIs answer for a consumer
 * group: ListGroups with its type filter and states, DescribeGroups,
 * OffsetCommit and OffsetFetch with member epochs, DeleteGroups, a classic
 * JoinGroup, and ApiVersions' group.version feature.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKey } from '../../../protocol/api-keys.js';
import type { Message } from '../../../protocol/codec/compile.js';
import { subscription } from '../../support/consumer-protocol.js';
import { InProcessGateway, named, versionEnds } from './in-process.js';

let gw: InProcessGateway;
let ordersId: string;

beforeAll(async () => {
  gw = await InProcessGateway.open({ groups: { initialRebalanceDelayMs: 0 } });
  ordersId = (await gw.core.createQueue({ name: 'orders', partitions: 3, config: { dedupWindowSeconds: 0 } })).id;
});
afterAll(() => gw.close());

let groupCount = 0;
const newGroup = (label: string) => `${label}-${++groupCount}`;

function heartbeat(group: string, memberId: string, memberEpoch: number, more: Partial<Message> = {}, version = 1): Promise<Message> {
  const joining = memberEpoch === 0;
  return gw.answer(ApiKey.ConsumerGroupHeartbeat, version, {
    groupId: group,
    memberId,
    memberEpoch,
    instanceId: null,
    rackId: null,
    rebalanceTimeoutMs: joining ? 30_000 : -1,
    subscribedTopicNames: joining ? ['orders'] : null,
    subscribedTopicRegex: null,
    serverAssignor: null,
    topicPartitions: joining ? [] : null,
    ...more,
  });
}

async function describeConsumerGroup(group: string): Promise<Message> {
  const response = await gw.answer(ApiKey.ConsumerGroupDescribe, 0, { groupIds: [group], includeAuthorizedOperations: false });
  return response.groups[0];
}

describe('ConsumerGroupHeartbeat', () => {
  it.each(versionEnds(ApiKey.ConsumerGroupHeartbeat))('v%i: a joining member gets epoch 1, every partition by topic id, and the heartbeat interval', async (version) => {
    const group = newGroup('join');
    const joined = await heartbeat(group, version === 0 ? '' : 'member-a', 0, {}, version);
    expect(named(joined.errorCode)).toBe('NONE');
    expect(joined.memberId).toMatch(version === 0 ? /^[0-9a-f-]{36}$/ : /^member-a$/);
    expect(joined.memberEpoch).toBe(1);
    expect(joined.heartbeatIntervalMs).toBe(5000);
    expect(joined.assignment.topicPartitions).toEqual([{ topicId: ordersId, partitions: [0, 1, 2] }]);
    const again = await heartbeat(group, joined.memberId, 1, {}, version);
    expect(again.assignment).toBeNull();
  });

  it('answers INVALID_REQUEST with the sentence that says what was missing', async () => {
    const refused = await heartbeat(newGroup('invalid'), 'member-a', 0, { rebalanceTimeoutMs: -1 });
    expect(named(refused.errorCode)).toBe('INVALID_REQUEST');
    expect(refused.errorMessage).toBe('RebalanceTimeoutMs must be provided in first request.');
  });

  it('answers UNKNOWN_MEMBER_ID and FENCED_MEMBER_EPOCH to members out of date', async () => {
    const group = newGroup('fenced');
    await heartbeat(group, 'member-a', 0);
    expect(named((await heartbeat(group, 'stranger', 1)).errorCode)).toBe('UNKNOWN_MEMBER_ID');
    expect(named((await heartbeat(group, 'member-a', 5)).errorCode)).toBe('FENCED_MEMBER_EPOCH');
  });
});

describe("a consumer group through the group's other APIs", () => {
  it('ConsumerGroupDescribe shows the group; an unknown group and a classic group answer GROUP_ID_NOT_FOUND', async () => {
    const group = newGroup('describe');
    await heartbeat(group, 'member-a', 0, { serverAssignor: 'range' });
    const described = await describeConsumerGroup(group);
    expect(described).toMatchObject({ errorCode: 0, groupState: 'Stable', groupEpoch: 1, assignmentEpoch: 1, assignorName: 'range' });
    expect(described.members.map((m: Message) => [m.memberId, m.memberEpoch, m.subscribedTopicNames, m.assignment.topicPartitions])).toEqual([
      ['member-a', 1, ['orders'], [{ topicId: ordersId, topicName: 'orders', partitions: [0, 1, 2] }]],
    ]);
    const unknown = await describeConsumerGroup(newGroup('nobody'));
    expect([named(unknown.errorCode), unknown.errorMessage]).toEqual(['GROUP_ID_NOT_FOUND', `Group nobody-${groupCount} not found.`]);

    const classic = newGroup('classic');
    const join = { groupId: classic, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', groupInstanceId: null, protocolType: 'consumer', protocols: [{ name: 'range', metadata: subscription('orders') }], reason: null };
    // JoinGroup v3: no member id round trip first.
    expect(named((await gw.answer(ApiKey.JoinGroup, 3, join)).errorCode)).toBe('NONE');
    const notConsumer = await describeConsumerGroup(classic);
    expect([named(notConsumer.errorCode), notConsumer.errorMessage]).toEqual(['GROUP_ID_NOT_FOUND', `Group ${classic} is not a consumer group.`]);
    // And a consumer group with members takes no classic member.
    expect(named((await gw.answer(ApiKey.JoinGroup, 3, { ...join, groupId: group })).errorCode)).toBe('INCONSISTENT_GROUP_PROTOCOL');
  });

  it('ListGroups v5 lists it as type "consumer" with its state, and filters by type and state', async () => {
    const group = newGroup('listed');
    await heartbeat(group, 'member-a', 0);
    const list = async (typesFilter: string[], statesFilter: string[] = []) =>
      (await gw.answer(ApiKey.ListGroups, 5, { statesFilter, typesFilter })).groups.filter((g: Message) => g.groupId === group);
    expect(await list([])).toEqual([{ groupId: group, protocolType: 'consumer', groupState: 'Stable', groupType: 'consumer' }]);
    expect(await list(['Consumer'], ['stable'])).toHaveLength(1);
    expect(await list(['classic'])).toEqual([]);
    expect(await list([], ['Empty'])).toEqual([]);
  });

  it('DescribeGroups answers a consumer group Dead, as Kafka 4.4 does before v6', async () => {
    const group = newGroup('dead');
    await heartbeat(group, 'member-a', 0);
    const response = await gw.answer(ApiKey.DescribeGroups, 5, { groups: [group], includeAuthorizedOperations: false });
    expect(response.groups[0]).toMatchObject({ errorCode: 0, groupState: 'Dead', members: [] });
  });

  it('OffsetCommit and OffsetFetch v9 check the member epoch: STALE_MEMBER_EPOCH for another, UNKNOWN_MEMBER_ID for a stranger', async () => {
    const group = newGroup('commit');
    await heartbeat(group, 'member-a', 0);
    const commit = (memberId: string, epoch: number) =>
      gw.answer(ApiKey.OffsetCommit, 9, {
        groupId: group, generationIdOrMemberEpoch: epoch, memberId, groupInstanceId: null, retentionTimeMs: -1,
        topics: [{ name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 5, committedLeaderEpoch: -1, committedMetadata: null }] }],
      });
    const codeOf = (r: Message) => named(r.topics[0].partitions[0].errorCode);
    expect(codeOf(await commit('member-a', 1))).toBe('NONE');
    expect(codeOf(await commit('member-a', 0))).toBe('STALE_MEMBER_EPOCH');
    expect(codeOf(await commit('stranger', 1))).toBe('UNKNOWN_MEMBER_ID');
    const fetch = (memberId: string | null, memberEpoch: number) =>
      gw.answer(ApiKey.OffsetFetch, 9, { groups: [{ groupId: group, memberId, memberEpoch, topics: [{ name: 'orders', partitionIndexes: [0] }] }], requireStable: false });
    const fetched = await fetch('member-a', 1);
    expect(fetched.groups[0].topics[0].partitions[0].committedOffset).toBe(5n);
    expect(named((await fetch('member-a', 3)).groups[0].errorCode)).toBe('STALE_MEMBER_EPOCH');
    expect(named((await fetch(null, -1)).groups[0].errorCode)).toBe('NONE');
  });

  it('DeleteGroups refuses a consumer group with members and deletes it once they left', async () => {
    const group = newGroup('delete');
    await heartbeat(group, 'member-a', 0);
    const remove = async () => named((await gw.answer(ApiKey.DeleteGroups, 2, { groupsNames: [group] })).results[0].errorCode);
    expect(await remove()).toBe('NON_EMPTY_GROUP');
    expect((await heartbeat(group, 'member-a', -1)).memberEpoch).toBe(-1);
    expect(await remove()).toBe('NONE');
    expect(named((await describeConsumerGroup(group)).errorCode)).toBe('GROUP_ID_NOT_FOUND');
  });

  it('ApiVersions advertises both keys and finalizes group.version at level 1', async () => {
    const response = await gw.answer(ApiKey.ApiVersions, 4, { clientSoftwareName: 'test', clientSoftwareVersion: '1.0' });
    const keys = new Map(response.apiKeys.map((k: Message) => [k.apiKey, [k.minVersion, k.maxVersion]]));
    expect(keys.get(ApiKey.ConsumerGroupHeartbeat)).toEqual([0, 1]);
    expect(keys.get(ApiKey.ConsumerGroupDescribe)).toEqual([0, 0]);
    expect(response.finalizedFeatures).toContainEqual({ name: 'group.version', minVersionLevel: 1, maxVersionLevel: 1 });
    expect(response.supportedFeatures).toContainEqual({ name: 'group.version', minVersion: 0, maxVersion: 1 });
  });
});

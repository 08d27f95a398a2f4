import type { Core } from '../core.js';
import type { Engine } from '../engine.js';
import type { FindCoordinatorsResult, GroupDescription, GroupError, GroupListing, OffsetDeletePartitionResult } from '../groups/types.js';
import { storedGroupState } from '../groups/consumer/persistence.js';
import { storedStreamsGroupState } from '../groups/streams/persistence.js';
import type { GroupParts } from './groups.js';

/**
 * The front's group administration: FindCoordinator's answer (this node
 * when it holds or takes the lease, else the holder), and describing,
 * listing and deleting groups and their offsets across the classic, KIP-848
 * and share coordinators, the groups other cores coordinate (as they last
 * stored them) and those known only by their committed offsets.
 */
export class GroupAdminCalls<E extends Engine> {
  constructor(private readonly parts: GroupParts<E>) {}

  async findCoordinators(req: Parameters<Core['findCoordinators']>[0]) {
    const reachable = Array.isArray(req?.reachable) ? req.reachable : null;
    const node = this.parts.coordination.nodeId;
    const coordinators: FindCoordinatorsResult['coordinators'] = [];
    for (const key of req.keys) {
      if (typeof key !== 'string' || key === '') {
        coordinators.push({ key, owner: node });
      } else if (req.kind === 'transaction') {
        const taken = await this.parts.coordination.take('transaction', key, reachable);
        coordinators.push({ key, owner: taken.held ? node : taken.owner });
      } else {
        const held = await this.parts.groups.own(key, reachable);
        coordinators.push({ key, owner: 'error' in held ? held.owner ?? null : node });
      }
    }
    return { node, coordinators };
  }

  async describeGroups(req: { groups: string[] }) {
    const elsewhere = new Set<string>();
    for (const group of req.groups) if ('error' in (await this.parts.groups.own(group))) elsewhere.add(group);
    const described: GroupDescription[] = this.parts.coordinator
      .describe(req.groups)
      .map((d) => (elsewhere.has(d.group) ? { ...d, error: 'not_coordinator' as const } : d));
    // A group known only by its committed offsets is Empty, not Dead, with no
    // protocol type: Kafka's "simple" group of commits made from outside a group.
    const withOffsets = await this.parts.storage.groupsWithOffsets();
    const simple = (d: GroupDescription) => d.state === 'Dead' && withOffsets.has(d.group) && !this.parts.consumerGroups.isConsumerGroup(d.group) && !this.parts.streamsGroups.isStreamsGroup(d.group);
    return { groups: described.map((d) => (simple(d) ? { ...d, state: 'Empty' as const, protocolType: '', generationId: 0 } : d)) };
  }

  async listGroupStates(req: Parameters<Core['listGroupStates']>[0]) {
    const { coordinator, consumerGroups, shareGroups, streamsGroups, coordination } = this.parts;
    const live = new Map<string, GroupListing>(coordinator.list().map((g) => [g.group, g]));
    for (const { group, state } of consumerGroups.list()) live.set(group, { group, protocolType: 'consumer', state, groupType: 'consumer' });
    for (const { group, state } of await shareGroups.listWithStored()) live.set(group, { group, protocolType: 'share', state, groupType: 'share' });
    for (const { group, state } of streamsGroups.list()) live.set(group, { group, protocolType: 'streams', state, groupType: 'streams' });
    // Groups other cores coordinate, as they last stored them.
    for (const { group, stored } of await coordination.storedGroupStates('streams')) {
      if (!live.has(group) && stored.members.length > 0) live.set(group, { group, protocolType: 'streams', state: storedStreamsGroupState(stored), groupType: 'streams' });
    }
    for (const { group, stored } of await coordination.storedGroupStates('consumer')) {
      if (!live.has(group) && stored.members.length > 0) live.set(group, { group, protocolType: 'consumer', state: storedGroupState(stored), groupType: 'consumer' });
    }
    for (const { group, stored } of await coordination.storedGroupStates('classic')) {
      if (!live.has(group)) live.set(group, { group, protocolType: stored.protocolType ?? '', state: stored.state });
    }
    for (const group of await this.parts.storage.groupsWithOffsets()) {
      if (!live.has(group)) live.set(group, { group, protocolType: '', state: 'Empty' });
    }
    const wanted = req.states && req.states.length > 0 ? new Set<string>(req.states) : null;
    return { groups: [...live.values()].filter((g) => !wanted || wanted.has(g.state)) };
  }

  async deleteGroups(req: { groups: string[] }) {
    const withOffsets = await this.parts.storage.groupsWithOffsets();
    const results: { group: string; error: GroupError | null }[] = [];
    for (const group of req.groups) results.push({ group, error: await this.deleteGroup(group, withOffsets) });
    return { groups: results };
  }

  /** Deletes one group of any kind, with its offsets; answers why not. */
  private async deleteGroup(group: string, withOffsets: Set<string>): Promise<GroupError | null> {
    const { groups, coordinator, consumerGroups, shareGroups, streamsGroups, storage } = this.parts;
    if ('error' in (await groups.own(group))) return 'not_coordinator';
    if (coordinator.hasMembers(group) || consumerGroups.hasMembers(group) || shareGroups.hasMembers(group) || streamsGroups.hasMembers(group)) return 'non_empty_group';
    if (shareGroups.isShareGroup(group) || (await shareGroups.hasState(group))) {
      await shareGroups.deleteOffsets(group, null);
      shareGroups.drop(group);
      return null;
    }
    if (!withOffsets.has(group) && !coordinator.knows(group) && !consumerGroups.isConsumerGroup(group) && !streamsGroups.isStreamsGroup(group)) return 'group_id_not_found';
    const { offsets } = await storage.fetchOffsets({ group, partitions: null });
    if (offsets.length > 0) await storage.deleteOffsets({ group, partitions: offsets.map(({ queue, partition }) => ({ queue, partition })) });
    // A store of the group still on its way would land after the delete below and bring the group back.
    await coordinator.remove(group);
    await groups.forgetStreamsGroup(group);
    await groups.forgetConsumerGroup(group);
    await this.parts.coordination.deleteGroupState('classic', group);
    await groups.release(group);
    return null;
  }

  async deleteGroupOffsets(req: Parameters<Core['deleteGroupOffsets']>[0]) {
    const { groups, coordinator, consumerGroups, streamsGroups, storage } = this.parts;
    const held = await groups.own(req?.group);
    if ('error' in held) return { error: held.error, partitions: [] };
    const withOffsets = await storage.groupsWithOffsets();
    if (!withOffsets.has(req.group) && !coordinator.knows(req.group) && !consumerGroups.isConsumerGroup(req.group)) {
      return { error: 'group_id_not_found' as const, partitions: [] };
    }
    const subscribed = coordinator.hasMembers(req.group)
      ? coordinator.subscribedTopics(req.group)
      : streamsGroups.hasMembers(req.group)
        ? streamsGroups.sourceTopics(req.group)
        : consumerGroups.subscribedTopicNames(req.group, await this.parts.topicMetadata());
    const partitions: OffsetDeletePartitionResult[] = req.partitions.map((p) => ({ ...p, error: subscribed.has(p.queue) ? 'group_subscribed_to_topic' : null }));
    const deletable = partitions.filter((p) => p.error === null).map(({ queue, partition }) => ({ queue, partition }));
    if (deletable.length > 0) await storage.deleteOffsets({ group: req.group, partitions: deletable });
    return { error: null, partitions };
  }
}

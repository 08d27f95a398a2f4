import type { CallOptions, Core } from '../core.js';
import type { Engine } from '../engine.js';
import { isCoreError } from '../errors.js';
import type { LeasedGroups } from '../coordination/leased-groups.js';
import type { CoordinationStore } from '../coordination/leases.js';
import { joinError, syncError, type GroupCoordinator } from '../groups/coordinator.js';
import type { GroupError } from '../groups/types.js';
import type { ConsumerGroupCoordinator } from '../groups/consumer/coordinator.js';
import type { ConsumerGroupDescription, ConsumerGroupError, ConsumerGroupHeartbeatResult, TopicMetadata } from '../groups/consumer/types.js';
import { upgradedClassicGroup, type ClassicMembers } from '../groups/consumer/classic-members.js';
import type { ShareGroups } from '../groups/share/service.js';
import type { StreamsGroupCoordinator } from '../groups/streams/coordinator.js';
import { LEAVE_EPOCH } from '../groups/consumer/types.js';
import type { StorageCalls } from './storage.js';

/** What the front's group calls work with: the coordinators under their leases, and the storage calls for offsets. */
export interface GroupParts<E extends Engine> {
  groups: LeasedGroups;
  coordinator: GroupCoordinator;
  /** KIP-848 consumer groups, beside the classic ones under the same leases. */
  consumerGroups: ConsumerGroupCoordinator;
  /** Kafka Streams groups (KIP-1071), under the same leases. */
  streamsGroups: StreamsGroupCoordinator;
  /** Classic members of consumer groups (KIP-848's migration): their JoinGroup, SyncGroup, Heartbeat and LeaveGroup. */
  classicMembers: ClassicMembers;
  /** Share groups (KIP-932): membership in the core, records' locks in the engine. */
  shareGroups: ShareGroups;
  coordination: CoordinationStore;
  /** Whether the engine is shared (commits carry their lease to be checked). */
  shared: boolean;
  storage: StorageCalls<E>;
  /** Every topic as subscriptions are resolved against it. */
  topicMetadata(): Promise<TopicMetadata[]>;
}

/**
 * The front's group membership calls, classic and KIP-848: each is served
 * only under the group's lease (../coordination/leased-groups.ts); a classic
 * member of a consumer group is the consumer group's (KIP-848's migration),
 * and what a call changed in a consumer group is stored under the lease
 * before it is answered.
 */
export class GroupCalls<E extends Engine> {
  constructor(private readonly parts: GroupParts<E>) {}

  async joinGroup(req: Parameters<Core['joinGroup']>[0], options?: CallOptions) {
    const { groups, consumerGroups, streamsGroups, classicMembers, coordinator } = this.parts;
    const held = await groups.own(req?.group);
    if ('error' in held) return joinError(held.error, req.memberId);
    if (streamsGroups.hasMembers(req.group)) return joinError('inconsistent_group_protocol', req.memberId);
    if (streamsGroups.isStreamsGroup(req.group)) await groups.forgetStreamsGroup(req.group);
    // A consumer group with members takes a classic member as one of its own (KIP-848's migration, as Kafka 4 does); an empty one becomes classic.
    if (consumerGroups.hasMembers(req.group)) {
      const joined = classicMembers.join(req, await this.parts.topicMetadata());
      return (await groups.saveConsumerGroup(req.group)) ? joined : joinError('not_coordinator', req.memberId);
    }
    if (consumerGroups.isConsumerGroup(req.group)) await groups.forgetConsumerGroup(req.group);
    return coordinator.join(req, options?.signal);
  }

  async syncGroup(req: Parameters<Core['syncGroup']>[0], options?: CallOptions) {
    const { groups, classicMembers } = this.parts;
    const held = await groups.own(req?.group);
    if ('error' in held) return syncError(held.error);
    if (classicMembers.isClassicMember(req.group, req.memberId)) {
      const synced = classicMembers.sync(req, await this.parts.topicMetadata());
      return (await groups.saveConsumerGroup(req.group)) ? synced : syncError('not_coordinator');
    }
    return this.parts.coordinator.sync(req, options?.signal);
  }

  async heartbeat(req: Parameters<Core['heartbeat']>[0]) {
    const { groups, classicMembers } = this.parts;
    const held = await groups.own(req?.group);
    if ('error' in held) return { error: held.error };
    if (classicMembers.isClassicMember(req.group, req.memberId)) {
      const answer = classicMembers.heartbeat(req, await this.parts.topicMetadata());
      return (await groups.saveConsumerGroup(req.group)) ? answer : { error: 'not_coordinator' as const };
    }
    return this.parts.coordinator.heartbeat(req);
  }

  async leaveGroup(req: Parameters<Core['leaveGroup']>[0]) {
    const { groups, classicMembers } = this.parts;
    const held = await groups.own(req?.group);
    if ('error' in held) return { error: held.error, members: [] };
    if (req.members.length > 0 && req.members.every((m) => classicMembers.isClassicMember(req.group, m.memberId))) {
      const left = classicMembers.leave(req, await this.parts.topicMetadata());
      return (await groups.saveConsumerGroup(req.group)) ? left : { error: 'not_coordinator' as const, members: [] };
    }
    return this.parts.coordinator.leave(req);
  }

  async commitGroupOffsets(req: Parameters<Core['commitGroupOffsets']>[0]) {
    const { groups, consumerGroups, streamsGroups, coordinator } = this.parts;
    const held = await groups.own(req?.group);
    if ('error' in held) return { error: held.error };
    const error = consumerGroups.isConsumerGroup(req.group)
      ? consumerGroups.checkMember(req.group, req.memberId, req.generationId)
      : streamsGroups.isStreamsGroup(req.group)
        ? streamsGroups.checkMember(req.group, req.memberId, req.generationId)
        : coordinator.checkCommit(req);
    if (error) return { error: commitError(error) };
    try {
      const fence = this.parts.shared ? { fence: { owner: this.parts.coordination.nodeId, epoch: held.epoch } } : {};
      await this.parts.storage.commitOffsets({ group: req.group, offsets: req.offsets, ...fence });
    } catch (e) {
      // Another node took the group while this one decided: the commit is refused whole, as Kafka's stale coordinator's would be.
      if (isCoreError(e) && e.code === 'not_coordinator') {
        groups.lost(req.group);
        return { error: 'not_coordinator' as const };
      }
      throw e;
    }
    return { error: null };
  }

  // ─── KIP-848 consumer groups (../groups/consumer) ──────────────────────────

  async consumerGroupHeartbeat(req: Parameters<Core['consumerGroupHeartbeat']>[0]): Promise<ConsumerGroupHeartbeatResult> {
    const { groups, consumerGroups, streamsGroups, coordinator } = this.parts;
    const failed = (error: ConsumerGroupError, errorMessage: string | null = null) => ({ error, errorMessage, memberId: req.memberId, memberEpoch: 0, heartbeatIntervalMs: 0, assignment: null });
    const held = await groups.own(req?.group);
    if ('error' in held) return failed(held.error);
    if (streamsGroups.hasMembers(req.group)) return failed('group_id_not_found', `Group ${req.group} is not a consumer group.`);
    if (streamsGroups.isStreamsGroup(req.group)) await groups.forgetStreamsGroup(req.group);
    const topics = await this.parts.topicMetadata();
    if (coordinator.hasMembers(req.group)) {
      // KIP-848's online upgrade: a Stable classic group of the consumer protocol becomes a consumer group, its members classic members of it.
      const upgraded = upgradedClassicGroup(coordinator.snapshot(req.group)!, topics);
      if (upgraded === null) return failed('group_id_not_found', `Group ${req.group} is not a consumer group: it has members of the classic protocol.`);
      void coordinator.remove(req.group);
      consumerGroups.drop(req.group);
      consumerGroups.restore(req.group, upgraded);
    }
    // An empty classic group becomes a consumer group, as Kafka converts it.
    if (coordinator.knows(req.group)) void coordinator.remove(req.group);
    const result = consumerGroups.heartbeat(req, topics);
    // The last member of the consumer protocol left and classic members remain: the group becomes classic again (KIP-848's downgrade).
    if (req.memberEpoch === LEAVE_EPOCH && result.error === null && (await groups.downgradeIfClassic(req.group))) return result;
    // What the heartbeat changed is stored under the group's lease before it is answered, as Kafka writes it before answering.
    if (!(await groups.saveConsumerGroup(req.group))) return failed('not_coordinator');
    return result;
  }

  async consumerGroupDescribe(req: { groups: string[] }): Promise<{ groups: ConsumerGroupDescription[] }> {
    const topics = await this.parts.topicMetadata();
    const groups: ConsumerGroupDescription[] = [];
    for (const group of req.groups) {
      const held = await this.parts.groups.own(group);
      const [described] = this.parts.consumerGroups.describe([group], topics);
      if ('error' in held) groups.push({ ...described!, error: held.error, errorMessage: null });
      else if (!this.parts.consumerGroups.isConsumerGroup(group) && this.parts.coordinator.knows(group)) {
        groups.push({ ...described!, errorMessage: `Group ${group} is not a consumer group.` });
      } else groups.push(described!);
    }
    return { groups };
  }

  async checkOffsetFetchMember(req: { group: string; memberId: string; memberEpoch: number }) {
    const held = await this.parts.groups.own(req?.group);
    if ('error' in held) return { error: held.error };
    if (this.parts.streamsGroups.isStreamsGroup(req.group)) return { error: this.parts.streamsGroups.checkMember(req.group, req.memberId, req.memberEpoch) };
    if (!this.parts.consumerGroups.isConsumerGroup(req.group)) return { error: null };
    return { error: this.parts.consumerGroups.checkMember(req.group, req.memberId, req.memberEpoch) };
  }
}

/** A consumer group's refusal of a commit, in the classic commit's terms (both answer OffsetCommit). */
function commitError(error: GroupError | ConsumerGroupError): GroupError {
  return error === 'fenced_member_epoch' ? 'stale_member_epoch' : (error as GroupError);
}

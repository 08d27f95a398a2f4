import type { TopicMetadata } from '../consumer/types.js';
import type { StreamsGroupCoordinator } from './coordinator.js';
import type { StreamsGroupApi, StreamsGroupDescription, StreamsGroupError, StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResult } from './types.js';

/**
 * The core's streams group calls (KIP-1071), under the group's lease like
 * every group call: a group of another kind with members refuses a streams
 * member (GROUP_ID_NOT_FOUND, as Kafka answers a group of another type); an
 * empty group of another kind is forgotten and becomes a streams group.
 */
export class StreamsGroupCalls implements StreamsGroupApi {
  constructor(
    private readonly coordinator: StreamsGroupCoordinator,
    private readonly own: (group: string) => Promise<{ error: StreamsGroupError } | object>,
    private readonly topics: () => Promise<TopicMetadata[]>,
    /** Whether a group of another kind has members under this id (it cannot become a streams group). */
    private readonly otherKindWithMembers: (group: string) => boolean,
    /** Forgets an empty group of another kind under this id. */
    private readonly forgetOtherKind: (group: string) => Promise<void>,
    /** Stores the group under its lease; false when another node holds it now. */
    private readonly save: (group: string) => Promise<boolean>,
  ) {}

  async streamsGroupHeartbeat(req: StreamsGroupHeartbeatRequest): Promise<StreamsGroupHeartbeatResult> {
    const held = await this.own(req?.group);
    if ('error' in held) return this.refused(req, held.error, null);
    if (!this.coordinator.isStreamsGroup(req.group)) {
      if (this.otherKindWithMembers(req.group)) return this.refused(req, 'group_id_not_found', `Group ${req.group} is not a streams group.`);
      await this.forgetOtherKind(req.group);
    }
    const result = this.coordinator.heartbeat(req, await this.topics());
    // What the heartbeat changed is stored under the group's lease before it is answered, as Kafka writes it before answering.
    if (!(await this.save(req.group))) return this.refused(req, 'not_coordinator', null);
    return result;
  }

  async streamsGroupDescribe(req: { groups: string[] }): Promise<{ groups: StreamsGroupDescription[] }> {
    const groups: StreamsGroupDescription[] = [];
    for (const group of req.groups) {
      const held = await this.own(group);
      const [described] = this.coordinator.describe([group]);
      if ('error' in held) groups.push({ ...described!, error: held.error, errorMessage: null });
      else if (!this.coordinator.isStreamsGroup(group) && this.otherKindWithMembers(group)) groups.push({ ...described!, errorMessage: `Group ${group} is not a streams group.` });
      else groups.push(described!);
    }
    return { groups };
  }

  private refused(req: StreamsGroupHeartbeatRequest, error: StreamsGroupError, errorMessage: string | null): StreamsGroupHeartbeatResult {
    return {
      error, errorMessage, memberId: req.memberId, memberEpoch: 0, heartbeatIntervalMs: 0, acceptableRecoveryLag: -1, taskOffsetIntervalMs: 0, status: [],
      activeTasks: null, standbyTasks: null, warmupTasks: null, endpointInformationEpoch: 0, partitionsByUserEndpoint: null, internalTopicsToCreate: [],
    };
  }
}

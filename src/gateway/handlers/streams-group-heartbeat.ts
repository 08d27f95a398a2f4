// StreamsGroupHeartbeat: Kafka Streams' group protocol (KIP-1071). A member
// joins with epoch 0 and its application's topology, heartbeats at its epoch
// with the tasks it owns, and is answered its epoch, its tasks when they
// changed, and the group's status (missing source topics, internal topics
// being created, a topology behind the group's, an application shutdown).
// The coordinator (src/core/groups/streams) decides; this handler only
// creates the internal topics the topology needs.
//
// Choices:
// - Internal topics (changelogs, repartition topics) that do not exist are
//   created here, as CreateTopics creates a topic with the configs the
//   topology sends (a changelog compacted), and the heartbeat is asked again
//   at once, so the member's first answer already has its tasks. Kafka's
//   coordinator creates them in the background and answers
//   MISSING_INTERNAL_TOPICS meanwhile; a creation that fails leaves that
//   status in the answer and is tried again at the next heartbeat.
// - Errors carry Kafka's sentences in ErrorMessage.
// - The client host is the connection's remote address, `/127.0.0.1`.
//
// Versions: 0-1, as Kafka 4.4. v1 answers TopologyDescriptionRequired false:
// the topology description (StreamsGroupTopologyDescriptionUpdate) is not
// asked for.
//
// ACLs: READ on the group, else GROUP_AUTHORIZATION_FAILED; internal topics
// are created by the gateway on the group's behalf, as Kafka's broker does.
import { StreamsGroupHeartbeat } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import { DENIED_CODE } from '../../access/acl-operations.js';
import { KAFKA_QUEUE_CONFIG, topicConfigFromEntries } from '../../topic-configs/index.js';
import type { StreamsGroupHeartbeatRequest, StreamsGroupHeartbeatResult } from '../../core/index.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { streamsGroupErrorCode } from '../kafka-errors.js';

function refused(errorCode: number, errorMessage: string | null = null, memberId = '') {
  return {
    throttleTimeMs: 0, errorCode, errorMessage, memberId, memberEpoch: 0, heartbeatIntervalMs: 0, acceptableRecoveryLagLegacy: 0, taskOffsetIntervalMs: 0,
    acceptableRecoveryLag: -1n, status: [], activeTasks: null, standbyTasks: null, warmupTasks: null, topologyDescriptionRequired: false, endpointInformationEpoch: 0,
    partitionsByUserEndpoint: null,
  };
}

const keyValues = (kvs: readonly { key: string; value: string }[] | null | undefined) => kvs?.map((kv) => ({ key: kv.key, value: kv.value })) ?? null;
const tasks = (t: readonly { subtopologyId: string; partitions: number[] }[] | null | undefined) => t?.map((x) => ({ subtopologyId: x.subtopologyId, partitions: x.partitions })) ?? null;

function coreRequest(request: RequestOf<typeof StreamsGroupHeartbeat>, ctx: HandlerContext): StreamsGroupHeartbeatRequest {
  const topology = request.topology;
  return {
    group: request.groupId,
    memberId: request.memberId,
    memberEpoch: request.memberEpoch,
    endpointInformationEpoch: request.endpointInformationEpoch,
    instanceId: request.instanceId ?? null,
    rackId: request.rackId ?? null,
    rebalanceTimeoutMs: request.rebalanceTimeoutMs,
    topology: topology
      ? {
          epoch: topology.epoch,
          subtopologies: topology.subtopologies.map((s) => ({
            subtopologyId: s.subtopologyId,
            sourceTopics: s.sourceTopics,
            sourceTopicRegex: s.sourceTopicRegex,
            stateChangelogTopics: s.stateChangelogTopics.map((t) => ({ name: t.name, partitions: t.partitions, replicationFactor: t.replicationFactor, topicConfigs: keyValues(t.topicConfigs)! })),
            repartitionSinkTopics: s.repartitionSinkTopics,
            repartitionSourceTopics: s.repartitionSourceTopics.map((t) => ({ name: t.name, partitions: t.partitions, replicationFactor: t.replicationFactor, topicConfigs: keyValues(t.topicConfigs)! })),
            copartitionGroups: s.copartitionGroups.map((g) => ({ sourceTopics: g.sourceTopics, sourceTopicRegex: g.sourceTopicRegex, repartitionSourceTopics: g.repartitionSourceTopics })),
          })),
        }
      : null,
    activeTasks: tasks(request.activeTasks),
    standbyTasks: tasks(request.standbyTasks),
    warmupTasks: tasks(request.warmupTasks),
    processId: request.processId ?? null,
    userEndpoint: request.userEndpoint ? { host: request.userEndpoint.host, port: request.userEndpoint.port } : null,
    clientTags: keyValues(request.clientTags),
    shutdownApplication: request.shutdownApplication,
    clientId: ctx.header.clientId ?? '',
    clientHost: `/${ctx.connection.remoteHost}`,
  };
}

/** Creates the internal topics the coordinator asked for; true when any was created (or found created meanwhile). */
async function createInternalTopics(result: StreamsGroupHeartbeatResult, ctx: HandlerContext): Promise<boolean> {
  let created = false;
  for (const topic of result.internalTopicsToCreate) {
    try {
      const config = { ...KAFKA_QUEUE_CONFIG, ...topicConfigFromEntries(topic.configs.map((c) => ({ name: c.key, value: c.value }))) };
      await ctx.core.createQueue({ name: topic.name, partitions: topic.partitions, config, ifNotExists: true });
      ctx.log.info({ topic: topic.name, partitions: topic.partitions }, 'streams group internal topic created');
      created = true;
    } catch (e) {
      ctx.log.warn({ topic: topic.name, err: e }, 'streams group internal topic not created');
    }
  }
  return created;
}

export const streamsGroupHeartbeat: ApiHandler<typeof StreamsGroupHeartbeat> = {
  api: StreamsGroupHeartbeat,
  versions: '0-1',
  async handle(request, ctx) {
    if (!ctx.access.allows('READ', 'GROUP', request.groupId)) return refused(DENIED_CODE.GROUP);
    const asked = coreRequest(request, ctx);
    let result = await ctx.core.streamsGroupHeartbeat(asked);
    if (result.error === null && result.internalTopicsToCreate.length > 0 && (await createInternalTopics(result, ctx))) {
      result = await ctx.core.streamsGroupHeartbeat(asked);
    }
    // Kafka answers a refusal with an empty member id.
    if (result.error !== null) return refused(streamsGroupErrorCode(result.error), result.errorMessage);
    return {
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      memberId: result.memberId,
      memberEpoch: result.memberEpoch,
      heartbeatIntervalMs: result.heartbeatIntervalMs,
      acceptableRecoveryLagLegacy: result.acceptableRecoveryLag,
      taskOffsetIntervalMs: result.taskOffsetIntervalMs,
      acceptableRecoveryLag: BigInt(result.acceptableRecoveryLag),
      status: result.status,
      activeTasks: result.activeTasks,
      standbyTasks: result.standbyTasks,
      warmupTasks: result.warmupTasks,
      topologyDescriptionRequired: false,
      endpointInformationEpoch: result.endpointInformationEpoch,
      partitionsByUserEndpoint: result.partitionsByUserEndpoint,
    };
  },
  unavailable: (_request, errorCode) => refused(errorCode),
};

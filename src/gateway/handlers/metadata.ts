// Metadata: tells a client the brokers, the topics and who leads each partition.
//
// The brokers are the live gateways (one, this gateway, without a cluster);
// partition leadership is spread over them by a stable hash, every one of
// them is a replica and in sync, leader epoch 0, and the lowest node id is
// the controller (../brokers.ts says why). Any gateway accepts any partition.
//
// Choices:
// - Topics named but missing are created when both the gateway allows it
//   (--auto-create-topics) and the request does (AllowAutoTopicCreation, v4+;
//   always allowed before), with the default partition count; they answer at
//   once with their partitions, since creation here is synchronous (Kafka
//   answers LEADER_NOT_AVAILABLE first). Otherwise UNKNOWN_TOPIC_OR_PARTITION.
// - A name that breaks Kafka's rule answers INVALID_TOPIC_EXCEPTION and is
//   never created.
// - v10+ topics asked for by id only: an unknown id answers UNKNOWN_TOPIC_ID
//   with a null name.
// - Topics = null (v1+), or an empty list in v0, means every topic.
// - ACLs, as Kafka's broker applies them: a topic the principal may not
//   DESCRIBE is left out of an "every topic" answer; asked for by name it
//   answers TOPIC_AUTHORIZATION_FAILED whether or not it exists, and by id
//   UNKNOWN_TOPIC_ID, so nothing leaks. Auto-creating a topic needs CREATE on
//   the cluster or on the topic; without it, TOPIC_AUTHORIZATION_FAILED.
// - Authorized operations, when asked for (v8+), are what the principal may
//   do on each topic and on the cluster.
// - Topics asked for by an id no topic has come first in the answer, then
//   the rest in the order asked, as Kafka lists them.
// - When the store is not answering, topics asked for by name answer
//   LEADER_NOT_AVAILABLE (clients wait and ask again); a request for every
//   topic has no per-topic answer to give, so its connection closes and the
//   client reconnects.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { Metadata } from '../../../protocol/messages/index.js';
import { isCoreError, type QueueInfo } from '../../core/index.js';
import { authorizedOperations, CLUSTER_NAME, DENIED_CODE } from '../../access/acl-operations.js';
import { clusterOperations } from '../../access/authorizer.js';
import type { ApiHandler, BrokerAddress, HandlerContext } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';
import { controllerOf, listedBrokers, partitionLeadership } from '../brokers.js';
import { createTopicIfMissing, describeTopics, topicNameProblem, topicNamesById, ZERO_UUID } from '../topics.js';

interface TopicAnswer {
  errorCode: number;
  name: string | null;
  topicId: string;
  isInternal: boolean;
  partitions: object[];
}

function describedTopic(queue: QueueInfo, brokerIds: readonly number[]): TopicAnswer {
  return {
    errorCode: NONE,
    name: queue.name,
    topicId: queue.id,
    isInternal: false,
    partitions: [...queue.partitions]
      .sort((a, b) => a.index - b.index)
      .map((p) => partitionLeadership(brokerIds, queue.name, p.index)),
  };
}

function missingTopic(name: string | null, topicId: string, errorCode: number): TopicAnswer {
  return { errorCode, name, topicId, isInternal: false, partitions: [] };
}

async function answerNamedTopic(ctx: HandlerContext, brokerIds: readonly number[], name: string, queue: QueueInfo | null, mayCreate: boolean): Promise<TopicAnswer> {
  if (!ctx.access.allows('DESCRIBE', 'TOPIC', name)) return missingTopic(name, ZERO_UUID, DENIED_CODE.TOPIC);
  if (queue) return describedTopic(queue, brokerIds);
  if (topicNameProblem(name) !== null) return missingTopic(name, ZERO_UUID, ErrorCode.INVALID_TOPIC_EXCEPTION);
  if (!mayCreate) return missingTopic(name, ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
  if (!ctx.access.allows('CREATE', 'CLUSTER', CLUSTER_NAME) && !ctx.access.allows('CREATE', 'TOPIC', name)) return missingTopic(name, ZERO_UUID, DENIED_CODE.TOPIC);
  try {
    const created = await createTopicIfMissing(ctx, name);
    ctx.log.info({ topic: name, partitions: created.partitions.length }, 'topic auto-created');
    return describedTopic(created, brokerIds);
  } catch (e) {
    return missingTopic(name, ZERO_UUID, kafkaErrorOf(e).errorCode);
  }
}

export const metadata: ApiHandler<typeof Metadata> = {
  api: Metadata,
  versions: '0-12',
  async handle(request, ctx) {
    const version = ctx.header.apiVersion;
    const brokers = listedBrokers(ctx);
    const brokerIds = brokers.map((b) => b.nodeId);
    const asked: { name: string | null; topicId?: string }[] | null = request.topics;
    const everyTopic = asked === null || (version === 0 && asked.length === 0);

    let topics: TopicAnswer[];
    if (everyTopic) {
      const queues = await ctx.core.listQueues();
      topics = queues
        .filter((q) => ctx.access.allows('DESCRIBE', 'TOPIC', q.name))
        .sort((a, b) => a.name.localeCompare(b.name))
        .map((q) => describedTopic(q, brokerIds));
    } else {
      const mayCreate = ctx.settings.autoCreateTopics && (version < 4 || request.allowAutoTopicCreation !== false);
      const idsOnly = asked.filter((t) => t.name === null || t.name === undefined).map((t) => t.topicId ?? ZERO_UUID);
      const namesById = idsOnly.length > 0 ? await topicNamesById(ctx, idsOnly) : new Map<string, string>();
      const names = asked.map((t) => t.name ?? namesById.get(t.topicId ?? ZERO_UUID) ?? null);
      let found: Map<string, QueueInfo | null>;
      try {
        found = await describeTopics(ctx, names.filter((n): n is string => n !== null && topicNameProblem(n) === null));
      } catch (e) {
        // The store is not answering: LEADER_NOT_AVAILABLE is what every client
        // waits out and asks again for, rather than dropping the topic.
        if (!isCoreError(e) || e.code !== 'unavailable') throw e;
        return metadataAnswer(ctx, request, brokers, asked.map((t, i) => missingTopic(names[i] ?? null, t.topicId ?? ZERO_UUID, ErrorCode.LEADER_NOT_AVAILABLE)));
      }
      const answered = await Promise.all(
        asked.map((t, i) => {
          const name = names[i]!;
          const byIdHidden = (t.name === null || t.name === undefined) && name !== null && !ctx.access.allows('DESCRIBE', 'TOPIC', name);
          if (name === null || byIdHidden) return missingTopic(null, t.topicId ?? ZERO_UUID, ErrorCode.UNKNOWN_TOPIC_ID);
          // A topic asked for by id is answered as it is; only names trigger auto-create.
          return answerNamedTopic(ctx, brokerIds, name, found.get(name) ?? null, mayCreate && t.name !== null && t.name !== undefined);
        }),
      );
      topics = [...answered.filter((t) => t.errorCode === ErrorCode.UNKNOWN_TOPIC_ID), ...answered.filter((t) => t.errorCode !== ErrorCode.UNKNOWN_TOPIC_ID)];
    }

    return metadataAnswer(ctx, request, brokers, topics);
  },
};

function metadataAnswer(ctx: HandlerContext, request: { includeTopicAuthorizedOperations?: boolean; includeClusterAuthorizedOperations?: boolean }, brokers: readonly BrokerAddress[], topics: TopicAnswer[]) {
  const version = ctx.header.apiVersion;
  const topicOperations = (t: TopicAnswer) =>
    authorizedOperations(version >= 8 && request.includeTopicAuthorizedOperations === true, t.name !== null ? ctx.access.operations('TOPIC', t.name) : 0);
  // v10-11 requests may name a topic by id alone, but their responses cannot
  // carry a null name (nullable from v12): an unknown id answers "" there.
  const nullableNames = ctx.header.apiVersion >= 12;
  return {
    throttleTimeMs: 0,
    brokers: brokers.map((b) => ({ nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack })),
    clusterId: ctx.settings.clusterId,
    controllerId: controllerOf(brokers),
    topics: topics.map((t) => ({ ...t, name: nullableNames || t.name !== null ? t.name : '', topicAuthorizedOperations: topicOperations(t) })),
    clusterAuthorizedOperations: authorizedOperations(version >= 8 && version <= 10 && request.includeClusterAuthorizedOperations === true, clusterOperations(ctx.access)),
  };
}

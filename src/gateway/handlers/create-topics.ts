// CreateTopics: creates topics, each a queue of the same name with partitions
// "0".."N-1" and Queen's native dedup window off (DESIGN.md, "Mapping").
//
// Choices:
// - Names follow Kafka's rule; a bad one answers INVALID_TOPIC_EXCEPTION.
//   A name given twice in one request answers INVALID_REQUEST, once: the
//   answer is keyed by topic name, as Kafka's is.
// - NumPartitions -1 means the gateway's default (--default-partitions);
//   otherwise 1 up to the core's limit, else INVALID_PARTITIONS.
// - Any replication factor of 1 or more (or -1) is accepted: copies on
//   brokers are not how this gateway keeps data durable (the core is), so a
//   tool asking for 3 gets its topic. Every partition is listed with one
//   replica, this gateway, and the answer says replication factor 1: what
//   Metadata will list. 0 and below -1 answer INVALID_REPLICATION_FACTOR.
// - Manual assignments are taken when they name only this gateway's node id
//   (../replica-assignments.ts); NumPartitions and ReplicationFactor must
//   then be -1 (INVALID_REQUEST otherwise), as in Kafka.
// - Configs go through src/topic-configs/: every Kafka topic key; unknown
//   keys and bad values answer INVALID_CONFIG.
// - ValidateOnly (v1+) checks everything, including that the topic does not
//   exist yet, and creates nothing.
// - ACLs, as Kafka's: CREATE on the cluster, or else on each topic (a topic
//   without it answers TOPIC_AUTHORIZATION_FAILED before anything else is
//   said of it, its existence included); the configs of the answer need
//   DESCRIBE_CONFIGS on the topic, else they are left out with
//   TopicConfigErrorCode TOPIC_AUTHORIZATION_FAILED.
//
// Versions: error messages from v1; from v5 the answer carries the partition
// count, replication factor and the topic's configs (also for ValidateOnly,
// as Kafka does); topic ids from v7.
import { ErrorCode } from '../../../protocol/error-codes.js';
import { CreateTopics } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import { DEFAULT_QUEUE_CONFIG, MAX_PARTITIONS, type QueueConfig, type QueueInfo } from '../../core/index.js';
import { CLUSTER_NAME, DENIED_CODE } from '../../access/acl-operations.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';
import { listedBrokers } from '../brokers.js';
import { checkNewTopicAssignments, ReplicaAssignmentError } from '../replica-assignments.js';
import { describeTopicConfig, KAFKA_QUEUE_CONFIG, topicConfigErrorOf, topicConfigFromEntries } from '../../topic-configs/index.js';
import { describeTopics, repeatedNames, topicNameProblem, ZERO_UUID } from '../topics.js';

type CreatableTopic = RequestOf<typeof CreateTopics>['topics'][number];

class Refusal {
  constructor(
    readonly errorCode: number,
    readonly errorMessage: string,
  ) {}
}

/** The topic's partition count and config, or why it cannot be created as asked. */
function plan(topic: CreatableTopic, ctx: HandlerContext, duplicated: boolean): { partitions: number; config: Partial<QueueConfig> } | Refusal {
  const nameProblem = topicNameProblem(topic.name);
  if (nameProblem !== null) return new Refusal(ErrorCode.INVALID_TOPIC_EXCEPTION, nameProblem);
  if (duplicated) {
    return new Refusal(ErrorCode.INVALID_REQUEST, `Topic '${topic.name}' appears more than once in this request; name each topic once.`);
  }
  let partitions: number;
  if (topic.assignments.length > 0) {
    if (topic.numPartitions !== -1) {
      return new Refusal(ErrorCode.INVALID_REQUEST, 'A manual partition assignment was given, but numPartitions was not set to -1; give one or the other.');
    }
    if (topic.replicationFactor !== -1) {
      return new Refusal(ErrorCode.INVALID_REQUEST, 'A manual partition assignment was given, but replicationFactor was not set to -1; give one or the other.');
    }
    try {
      partitions = checkNewTopicAssignments(topic.assignments, listedBrokers(ctx).map((b) => b.nodeId));
    } catch (e) {
      if (e instanceof ReplicaAssignmentError) return new Refusal(e.errorCode, e.message);
      throw e;
    }
  } else {
    partitions = topic.numPartitions === -1 ? ctx.settings.defaultPartitions : topic.numPartitions;
    if (topic.replicationFactor === 0 || topic.replicationFactor < -1) {
      return new Refusal(ErrorCode.INVALID_REPLICATION_FACTOR, `Replication factor ${topic.replicationFactor} is not valid: it must be larger than 0, or -1 to use the default value.`);
    }
  }
  if (!Number.isInteger(partitions) || partitions < 1 || partitions > MAX_PARTITIONS) {
    return new Refusal(
      ErrorCode.INVALID_PARTITIONS,
      `Number of partitions ${topic.numPartitions} is not valid: give 1 to ${MAX_PARTITIONS}, or -1 for the gateway's default (${ctx.settings.defaultPartitions}).`,
    );
  }
  try {
    return { partitions, config: { ...KAFKA_QUEUE_CONFIG, ...topicConfigFromEntries(topic.configs) } };
  } catch (e) {
    const { errorCode, errorMessage } = topicConfigErrorOf(e);
    return new Refusal(errorCode, errorMessage);
  }
}

function alreadyExists(name: string): Refusal {
  return new Refusal(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`);
}

/**
 * The configs a v5+ answer lists: every key as DescribeConfigs would, except
 * that a key given in the request shows the text as given (" delete ",
 * "TRUE"), as Kafka's answer does; DescribeConfigs shows it normalized.
 */
function answeredConfigs(config: QueueConfig, given: CreatableTopic['configs']) {
  const asGiven = new Map(given.filter((c) => c.value !== null).map((c) => [c.name, c.value]));
  return describeTopicConfig(config).map((c) => (asGiven.has(c.name) ? { ...c, value: asGiven.get(c.name)! } : c));
}

function answer(ctx: HandlerContext, name: string, outcome: Refusal | { queue: QueueInfo | null; partitions: number; config: QueueConfig; given: CreatableTopic['configs'] }) {
  if (outcome instanceof Refusal) {
    return { name, topicId: ZERO_UUID, errorCode: outcome.errorCode, errorMessage: outcome.errorMessage, numPartitions: -1, replicationFactor: -1, configs: null };
  }
  return {
    name,
    topicId: outcome.queue?.id ?? ZERO_UUID,
    errorCode: NONE,
    errorMessage: null,
    numPartitions: outcome.partitions,
    replicationFactor: 1,
    ...(ctx.access.allows('DESCRIBE_CONFIGS', 'TOPIC', name)
      ? { configs: answeredConfigs(outcome.config, outcome.given) }
      : { configs: [], topicConfigErrorCode: DENIED_CODE.TOPIC }),
  };
}

export const createTopics: ApiHandler<typeof CreateTopics> = {
  api: CreateTopics,
  versions: '0-7',
  async handle(request, ctx) {
    const asked: CreatableTopic[] = request.topics;
    const repeated = repeatedNames(asked.map((t) => t.name));
    const clusterWide = ctx.access.allows('CREATE', 'CLUSTER', CLUSTER_NAME);
    const plans = asked.map((t) =>
      !repeated.has(t.name) && !clusterWide && !ctx.access.allows('CREATE', 'TOPIC', t.name)
        ? new Refusal(DENIED_CODE.TOPIC, `Not authorized to create topic '${t.name}': it needs CREATE on the cluster or on the topic.`)
        : plan(t, ctx, repeated.has(t.name)),
    );
    const existing = await describeTopics(ctx, asked.filter((_, i) => !(plans[i] instanceof Refusal)).map((t) => t.name));

    const topics = await Promise.all(
      asked.map(async (t, i) => {
        const planned = plans[i]!;
        if (planned instanceof Refusal) return answer(ctx, t.name, planned);
        if (existing.get(t.name)) return answer(ctx, t.name, alreadyExists(t.name));
        const config = { ...DEFAULT_QUEUE_CONFIG, ...planned.config };
        if (request.validateOnly) return answer(ctx, t.name, { queue: null, partitions: planned.partitions, config, given: t.configs });
        try {
          const queue = await ctx.core.createQueue({ name: t.name, partitions: planned.partitions, config: planned.config });
          ctx.log.info({ topic: t.name, partitions: planned.partitions }, 'topic created');
          return answer(ctx, t.name, { queue, partitions: queue.partitions.length, config: queue.config, given: t.configs });
        } catch (e) {
          // Another client may have created it since the lookup above.
          const { errorCode, errorMessage } = kafkaErrorOf(e);
          return answer(ctx, t.name, errorCode === ErrorCode.TOPIC_ALREADY_EXISTS ? alreadyExists(t.name) : new Refusal(errorCode, errorMessage));
        }
      }),
    );
    // One answer per name: a repeated name's first entry speaks for it.
    return { throttleTimeMs: 0, topics: topics.filter((t, i) => asked.findIndex((a) => a.name === t.name) === i) };
  },
};

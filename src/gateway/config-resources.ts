/**
 * Config resources (a topic, the broker) as the config APIs see them: who may
 * describe or alter a resource's configs (DescribeConfigs, AlterConfigs,
 * IncrementalAlterConfigs), and the per-resource loop the two alter APIs
 * share; they differ only in how a resource's entries become a change.
 */
import { ErrorCode } from '../../protocol/error-codes.js';
import type { QueueConfig } from '../core/index.js';
import { CLUSTER_NAME, DENIED_CODE } from '../access/acl-operations.js';
import type { HandlerContext } from './handler.js';
import { kafkaErrorOf, NONE } from './kafka-errors.js';
import { ResourceType, topicConfigErrorOf } from '../topic-configs/index.js';
import { repeatedNames, topicNameProblem } from './topics.js';

export interface AlterableResource<Entry> {
  resourceType: number;
  resourceName: string;
  configs: Entry[];
}

/** The settings a resource's entries ask for, given the topic's current config; throws TopicConfigError. */
export type ConfigChangeFor<Entry> = (current: QueueConfig, entries: Entry[]) => Partial<QueueConfig>;

/**
 * The refusal when the principal may not describe or alter a config
 * resource's configs: a topic's need the operation on the topic, the
 * broker's on the cluster, as Kafka's. Null when allowed (or the type has no
 * configs here, which the caller refuses on its own).
 */
export function configsDenied(ctx: HandlerContext, operation: 'DESCRIBE_CONFIGS' | 'ALTER_CONFIGS', resourceType: number, resourceName: string): { errorCode: number; errorMessage: string } | null {
  if (resourceType === ResourceType.TOPIC && !ctx.access.allows(operation, 'TOPIC', resourceName)) {
    return { errorCode: DENIED_CODE.TOPIC, errorMessage: `Not authorized to ${operation} of topic '${resourceName}'.` };
  }
  if (resourceType === ResourceType.BROKER && !ctx.access.allows(operation, 'CLUSTER', CLUSTER_NAME)) {
    return { errorCode: DENIED_CODE.CLUSTER, errorMessage: `Not authorized to ${operation} of the broker: it needs ${operation} on the cluster.` };
  }
  return null;
}

async function alterResource<Entry>(
  ctx: HandlerContext,
  resource: AlterableResource<Entry>,
  repeated: boolean,
  validateOnly: boolean,
  changeFor: ConfigChangeFor<Entry>,
) {
  const { resourceType, resourceName } = resource;
  const refuse = (errorCode: number, errorMessage: string) => ({ errorCode, errorMessage, resourceType, resourceName });
  if (repeated) return refuse(ErrorCode.INVALID_REQUEST, `Resource '${resourceName}' appears more than once in this request; name each resource once.`);
  const denied = configsDenied(ctx, 'ALTER_CONFIGS', resourceType, resourceName);
  if (denied) return refuse(denied.errorCode, denied.errorMessage);
  if (resourceType === ResourceType.BROKER) {
    return refuse(ErrorCode.INVALID_REQUEST, 'Broker configs are fixed when the gateway starts (flags and environment variables); they cannot be altered through Kafka.');
  }
  if (resourceType !== ResourceType.TOPIC) {
    return refuse(ErrorCode.INVALID_REQUEST, `Resource type ${resourceType} has no alterable configs here; alter TOPIC (2) configs.`);
  }
  const nameProblem = topicNameProblem(resourceName);
  if (nameProblem !== null) return refuse(ErrorCode.INVALID_TOPIC_EXCEPTION, nameProblem);
  try {
    const queue = await ctx.core.describeQueue({ name: resourceName });
    if (!queue) return refuse(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${resourceName}' does not exist.`);
    let change: Partial<QueueConfig>;
    try {
      change = changeFor(queue.config, resource.configs);
    } catch (e) {
      const { errorCode, errorMessage } = topicConfigErrorOf(e);
      return refuse(errorCode, errorMessage);
    }
    if (!validateOnly && Object.keys(change).length > 0) {
      await ctx.core.alterQueue({ name: resourceName, config: change });
      ctx.log.info({ topic: resourceName, config: change }, 'topic config altered');
    }
    return { errorCode: NONE, errorMessage: null, resourceType, resourceName };
  } catch (e) {
    const { errorCode, errorMessage } = kafkaErrorOf(e);
    return refuse(errorCode, errorMessage);
  }
}

/** AlterConfigs' and IncrementalAlterConfigs' answer: each resource altered (or checked) on its own. */
export async function alterResources<Entry>(
  ctx: HandlerContext,
  resources: AlterableResource<Entry>[],
  validateOnly: boolean,
  changeFor: ConfigChangeFor<Entry>,
) {
  const repeated = repeatedNames(resources.map((r) => `${r.resourceType}:${r.resourceName}`));
  const responses = await Promise.all(
    resources.map((r) => alterResource(ctx, r, repeated.has(`${r.resourceType}:${r.resourceName}`), validateOnly, changeFor)),
  );
  return { throttleTimeMs: 0, responses };
}

// DescribeConfigs: reads topic configs (from the queue's settings, through
// src/topic-configs/) and this gateway's broker configs.
//
// Choices:
// - TOPIC: every Kafka topic config (src/topic-configs/), a value set on
//   the topic as DYNAMIC_TOPIC_CONFIG, else Kafka's default as
//   DEFAULT_CONFIG, with Kafka's synonyms; and the read-only
//   queen.dedup.window.seconds.
// - BROKER (name "" or this gateway's node id): a fixed set, all read-only:
//   broker.id, node.id, num.partitions and auto.create.topics.enable (from
//   the gateway's settings), default.replication.factor=1,
//   delete.topic.enable=true, and the broker-wide keys behind every topic
//   config with Kafka's built-in values (log.retention.hours=168,
//   log.retention.ms null, ...). Another broker id answers INVALID_REQUEST,
//   as in Kafka.
// - GROUP (32): the share group configs (../group-configs.ts).
// - Other resource types answer INVALID_REQUEST.
// - ConfigurationKeys filters by name; names this gateway does not know are
//   left out of the answer rather than failing it, as in Kafka. Null or an
//   empty list asks for every config, as in Kafka.
//
// Versions: v0 answers IsDefault; v1+ ConfigSource and, when asked,
// synonyms (the topic's own value, then the broker-wide default); v3+
// config types and, when asked, documentation.
//
// ACLs: DESCRIBE_CONFIGS on the topic (else TOPIC_AUTHORIZATION_FAILED) or,
// for broker configs, on the cluster (else CLUSTER_AUTHORIZATION_FAILED).
import { ErrorCode } from '../../../protocol/error-codes.js';
import { DescribeConfigs } from '../../../protocol/messages/index.js';
import type { RequestOf } from '../../../protocol/codec/types.js';
import { configsDenied } from '../config-resources.js';
import type { ApiHandler, HandlerContext } from '../handler.js';
import { kafkaErrorOf, NONE } from '../kafka-errors.js';
import { ConfigSource, ConfigType, describeTopicConfig, ResourceType, topicDefaultsAsBrokerConfigs, type DescribedConfig, type DescribeOptions } from '../../topic-configs/index.js';
import { topicNameProblem } from '../topics.js';
import { describeGroupConfigs, GROUP_RESOURCE } from '../group-configs.js';

type ConfigsResource = RequestOf<typeof DescribeConfigs>['resources'][number];

interface BrokerConfig {
  name: string;
  value: string | null;
  type: number;
  source: number;
  documentation: string;
}

function brokerConfigs(ctx: HandlerContext): BrokerConfig[] {
  const { settings } = ctx;
  const fromSettings = (name: string, value: string, type: number, documentation: string): BrokerConfig => ({
    name, value, type, source: ConfigSource.STATIC_BROKER_CONFIG, documentation,
  });
  const builtIn = (name: string, value: string, type: number, documentation: string): BrokerConfig => ({
    name, value, type, source: ConfigSource.DEFAULT_CONFIG, documentation,
  });
  return [
    fromSettings('auto.create.topics.enable', String(settings.autoCreateTopics), ConfigType.BOOLEAN, 'Whether Metadata and Produce create unknown topics (--auto-create-topics).'),
    fromSettings('broker.id', String(settings.advertised.nodeId), ConfigType.INT, 'This gateway\'s node id.'),
    builtIn('default.replication.factor', '1', ConfigType.INT, 'The replication factor of topics created without one. Partitions list one replica, this gateway; Queen\'s storage keeps the data durable.'),
    builtIn('delete.topic.enable', 'true', ConfigType.BOOLEAN, 'Topics can be deleted (DeleteTopics).'),
    fromSettings('node.id', String(settings.advertised.nodeId), ConfigType.INT, 'This gateway\'s node id.'),
    fromSettings('num.partitions', String(settings.defaultPartitions), ConfigType.INT, 'The partition count of topics created without one (--default-partitions).'),
    ...topicDefaultsAsBrokerConfigs().map((c) => ({ ...c, source: ConfigSource.DEFAULT_CONFIG })),
  ]
    // min.insync.replicas and a few others are both a topic key's synonym and a broker key: list each once.
    .filter((c, i, all) => all.findIndex((o) => o.name === c.name) === i)
    .sort((a, b) => a.name.localeCompare(b.name));
}

function describeBroker(ctx: HandlerContext, options: Required<DescribeOptions>): DescribedConfig[] {
  const wanted = options.keys ? new Set(options.keys) : null;
  return brokerConfigs(ctx)
    .filter((c) => !wanted || wanted.has(c.name))
    .map((c) => ({
      name: c.name,
      value: c.value,
      readOnly: true,
      isDefault: c.source === ConfigSource.DEFAULT_CONFIG,
      configSource: c.source,
      isSensitive: false,
      synonyms: options.includeSynonyms && c.value !== null ? [{ name: c.name, value: c.value, source: c.source }] : [],
      configType: c.type,
      documentation: options.includeDocumentation ? c.documentation : null,
    }));
}

async function describeResource(ctx: HandlerContext, resource: ConfigsResource, options: Required<DescribeOptions>) {
  const { resourceType, resourceName } = resource;
  const answer = (configs: DescribedConfig[]) => ({ errorCode: NONE, errorMessage: null, resourceType, resourceName, configs });
  const refuse = (errorCode: number, errorMessage: string) => ({ errorCode, errorMessage, resourceType, resourceName, configs: [] });

  if (resourceType === GROUP_RESOURCE) return describeGroupConfigs(ctx, resourceName, options);
  const denied = configsDenied(ctx, 'DESCRIBE_CONFIGS', resourceType, resourceName);
  if (denied) return refuse(denied.errorCode, denied.errorMessage);
  if (resourceType === ResourceType.BROKER) {
    const nodeId = String(ctx.settings.advertised.nodeId);
    if (resourceName !== '' && resourceName !== nodeId) {
      return refuse(ErrorCode.INVALID_REQUEST, `Unexpected broker id ${resourceName}: this gateway is broker ${nodeId}; ask for "${nodeId}" or "" (the cluster default).`);
    }
    return answer(describeBroker(ctx, options));
  }
  if (resourceType !== ResourceType.TOPIC) {
    return refuse(ErrorCode.INVALID_REQUEST, `Resource type ${resourceType} has no configs here; describe TOPIC (2) or BROKER (4) configs.`);
  }
  const nameProblem = topicNameProblem(resourceName);
  if (nameProblem !== null) return refuse(ErrorCode.INVALID_TOPIC_EXCEPTION, nameProblem);
  try {
    const queue = await ctx.core.describeQueue({ name: resourceName });
    if (!queue) return refuse(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic '${resourceName}' does not exist.`);
    return answer(describeTopicConfig(queue.config, options));
  } catch (e) {
    const { errorCode, errorMessage } = kafkaErrorOf(e);
    return refuse(errorCode, errorMessage);
  }
}

export const describeConfigs: ApiHandler<typeof DescribeConfigs> = {
  api: DescribeConfigs,
  versions: '0-4',
  async handle(request, ctx) {
    const results = await Promise.all(
      request.resources.map((resource: ConfigsResource) =>
        describeResource(ctx, resource, {
          keys: resource.configurationKeys?.length ? resource.configurationKeys : null,
          includeSynonyms: request.includeSynonyms,
          includeDocumentation: request.includeDocumentation,
        }),
      ),
    );
    return { throttleTimeMs: 0, results };
  },
};

import type { QueueConfig } from '../core/index.js';
import type { GatewaySettings } from './handler.js';
import type { BoundListener } from './server.js';
import { describeTopicConfig, KAFKA_QUEUE_CONFIG, TopicConfigError, topicConfigFromEntries } from '../topic-configs/index.js';

/**
 * The gateway as an operator's console sees it (the HTTP API's web console,
 * src/http/console/sources.ts, takes this shape; the composition root hands
 * it over, so neither front door imports the other): the live gateways of
 * its cluster, or this one alone, and the topic-config catalogue with which
 * it creates and describes topics, as CreateTopics and DescribeConfigs do.
 */
export function operatorView(settings: GatewaySettings, listeners: readonly BoundListener[], ownCore: boolean) {
  const startedAt = Date.now();
  const alone = () => {
    const { nodeId, host, port, rack } = settings.advertised;
    const byListener = Object.fromEntries(listeners.map((l) => [l.name, { host: l.advertised.host, port: l.advertised.port }]));
    return [{ nodeId, host, port, rack, listeners: byListener, core: ownCore ? `in-process:${host}:${port}` : 'external', startedAt }];
  };
  return {
    cluster: () => ({ clusterId: settings.clusterId, self: settings.advertised.nodeId, nodes: settings.cluster ? [...settings.cluster.liveNodes()] : alone() }),
    describeTopicConfigs: (config: QueueConfig) => describeTopicConfig(config),
    newTopicConfig: (configs: { name: string; value: string }[]): { config: Partial<QueueConfig> } | { problem: string } => {
      try {
        return { config: { ...KAFKA_QUEUE_CONFIG, ...topicConfigFromEntries(configs) } };
      } catch (e) {
        if (e instanceof TopicConfigError) return { problem: e.message };
        throw e;
      }
    },
    defaultPartitions: settings.defaultPartitions,
  };
}

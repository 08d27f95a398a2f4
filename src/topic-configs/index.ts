/**
 * The topic-config catalogue: Kafka's topic configs on a queue, shared by
 * every front door that creates or describes topics (the gateway's config
 * APIs, the bridge's copies). keys.ts holds the table and its story; this
 * file is what the front doors import.
 */
export { incrementalTopicConfig, replacedTopicConfig, topicConfigErrorOf, topicConfigFromEntries, type ConfigChange } from './changes.js';
export { describeTopicConfig, topicDefaultsAsBrokerConfigs, type ConfigSynonym, type DescribedConfig, type DescribeOptions } from './describe.js';
export { KAFKA_QUEUE_CONFIG } from './kafka-queues.js';
export { TOPIC_CONFIG_KEYS, type TopicConfigKey } from './keys.js';
export { ConfigOperation, ConfigSource, ConfigType, ResourceType, TopicConfigError } from './values.js';

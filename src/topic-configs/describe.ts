import type { QueueConfig } from '../core/index.js';
import { KAFKA_QUEUE_CONFIG } from './kafka-queues.js';
import { DEDUP_WINDOW_KEY, settingsFor, TOPIC_CONFIG_KEYS, type TopicConfigKey } from './keys.js';
import { ConfigSource, ConfigType } from './values.js';

/**
 * A topic's configs as DescribeConfigs (and CreateTopics v5+) answer them:
 * each key's value, whether it was set on the topic, its synonyms and type.
 */

export interface ConfigSynonym {
  name: string;
  value: string | null;
  source: number;
}

/** One described config, with every field DescribeConfigs and CreateTopics (v5+) answer. */
export interface DescribedConfig {
  name: string;
  value: string | null;
  readOnly: boolean;
  isDefault: boolean;
  configSource: number;
  isSensitive: boolean;
  synonyms: ConfigSynonym[];
  configType: number;
  documentation: string | null;
}

export interface DescribeOptions {
  /** Null for every key. */
  keys?: readonly string[] | null;
  includeSynonyms?: boolean;
  includeDocumentation?: boolean;
}

/**
 * A key's value on a queue, and whether it was set on the topic. A key that
 * drives a queue setting reads it back from the setting, which Queen's HTTP
 * API can change too: while the setting is what the topic's Kafka configs
 * make it, the Kafka value shows (so 2^63-1 reads back as given, not as
 * the core's largest number); once changed natively, the setting shows and
 * counts as set on the topic.
 */
export function currentValue(key: TopicConfigKey, config: QueueConfig): { value: string; set: boolean } {
  const stored = config.topicConfigs[key.name];
  const fromKafka = stored === undefined ? { value: key.default, set: false } : { value: stored, set: true };
  if (!('fromSetting' in key.effect)) return fromKafka;
  const actual = key.effect.fromSetting(config);
  const expected = key.effect.fromSetting({ ...config, ...settingsFor(config.topicConfigs) });
  return actual === expected ? fromKafka : { value: actual, set: true };
}

function describeKey(key: TopicConfigKey, config: QueueConfig, options: DescribeOptions): DescribedConfig {
  const { value, set } = currentValue(key, config);
  // Kafka lists the broker-wide default among a topic key's synonyms only where one broker key stands behind it (not for retention.ms, which has three).
  const brokerDefault = key.brokerDefault && key.brokerSynonyms.length === 1 ? [{ name: key.brokerDefault.name, value: key.brokerDefault.value, source: ConfigSource.DEFAULT_CONFIG }] : [];
  return {
    name: key.name,
    value,
    readOnly: false,
    isDefault: !set,
    configSource: set ? ConfigSource.DYNAMIC_TOPIC_CONFIG : ConfigSource.DEFAULT_CONFIG,
    isSensitive: false,
    synonyms: !options.includeSynonyms ? [] : set ? [{ name: key.name, value, source: ConfigSource.DYNAMIC_TOPIC_CONFIG }, ...brokerDefault] : brokerDefault,
    configType: key.type.code,
    documentation: options.includeDocumentation ? key.documentation : null,
  };
}

/**
 * The dedup window as a read-only config. Off (0) is what topics created
 * through Kafka have, so it reads as a default there: tools that list the
 * configs set on a topic (kafka-configs.sh, Terraform's drift check) must not
 * find a key they never set. A window set natively reads as set.
 */
function describeDedupWindow(config: QueueConfig, options: DescribeOptions): DescribedConfig {
  const value = String(config.dedupWindowSeconds);
  const source = config.dedupWindowSeconds === KAFKA_QUEUE_CONFIG.dedupWindowSeconds ? ConfigSource.DEFAULT_CONFIG : ConfigSource.DYNAMIC_TOPIC_CONFIG;
  return {
    name: DEDUP_WINDOW_KEY,
    value,
    readOnly: true,
    isDefault: source === ConfigSource.DEFAULT_CONFIG,
    configSource: source,
    isSensitive: false,
    synonyms: options.includeSynonyms ? [{ name: DEDUP_WINDOW_KEY, value, source }] : [],
    configType: ConfigType.LONG,
    documentation: options.includeDocumentation
      ? 'Queen\'s native deduplication window for pushes over HTTP, in seconds (0 = off, as on topics created through Kafka). Not a Kafka config; read-only here, set it with Queen\'s HTTP API.'
      : null,
  };
}

/** A topic's configs as Kafka describes them; names in `keys` that are not configs are left out, as Kafka does. */
export function describeTopicConfig(config: QueueConfig, options: DescribeOptions = {}): DescribedConfig[] {
  const wanted = options.keys ? new Set(options.keys) : null;
  const described = TOPIC_CONFIG_KEYS.filter((k) => !wanted || wanted.has(k.name)).map((k) => describeKey(k, config, options));
  if (!wanted || wanted.has(DEDUP_WINDOW_KEY)) described.push(describeDedupWindow(config, options));
  return described;
}

/** The broker-wide keys whose built-in values are the topic defaults, for a broker's DescribeConfigs. */
export function topicDefaultsAsBrokerConfigs(): { name: string; value: string | null; type: number; documentation: string }[] {
  return TOPIC_CONFIG_KEYS.flatMap((k) =>
    k.brokerSynonyms.map((name) => ({
      name,
      // As in Kafka, the broker keys without a built-in value (log.retention.ms beside log.retention.hours) are described as null.
      value: k.brokerDefault?.name === name ? k.brokerDefault.value : null,
      type: name.endsWith('.hours') || name.endsWith('.minutes') ? ConfigType.INT : k.type.code,
      documentation: `The cluster-wide default of the topic config ${k.name}. ${k.documentation}`,
    })),
  );
}

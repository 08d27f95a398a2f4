import { ErrorCode } from '../../protocol/error-codes.js';
import { DEFAULT_QUEUE_CONFIG, type QueueConfig, type TimestampType } from '../core/core.js';

/**
 * Kafka's topic configs as a window onto a queue's QueueConfig. CreateTopics,
 * DescribeConfigs, AlterConfigs and IncrementalAlterConfigs all go through
 * this one table, so a key's name, its parsing, its default and its
 * description exist once.
 *
 * Keys:
 * - retention.ms, retention.bytes, max.message.bytes, message.timestamp.type:
 *   the queue's settings of the same meaning; Kafka's defaults are Queen's.
 * - cleanup.policy: always "delete". Setting it to "delete" is accepted and
 *   changes nothing; "compact" is refused (compaction is not supported).
 * - queen.dedup.window.seconds: read-only here; the queue's native dedup
 *   window (0 on topics the gateway creates). Set through Queen's HTTP API.
 *
 * A value is reported as set on the topic (DYNAMIC_TOPIC_CONFIG) when it
 * differs from the default, else as the default (DEFAULT_CONFIG): the core
 * keeps values, not which of them were set explicitly.
 */

/** Kafka's ConfigResource types (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs). */
export const ResourceType = { TOPIC: 2, BROKER: 4 } as const;

/** Kafka's ConfigSource values. */
export const ConfigSource = { DYNAMIC_TOPIC_CONFIG: 1, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5 } as const;

/** Kafka's ConfigType values (DescribeConfigs v3+). */
export const ConfigType = { BOOLEAN: 1, STRING: 2, INT: 3, LONG: 5, LIST: 7 } as const;

/** IncrementalAlterConfigs operations. */
export const ConfigOperation = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

/** A config request a user got wrong: the Kafka error code for it and a sentence saying what to do. */
export class TopicConfigError extends Error {
  override readonly name = 'TopicConfigError';
  constructor(
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
  }
}

const invalid = (message: string) => new TopicConfigError(ErrorCode.INVALID_CONFIG, message);

interface TopicConfigKey {
  name: string;
  type: number;
  /** The broker-wide key whose value is this key's default (DescribeConfigs synonyms). */
  brokerSynonym: string;
  documentation: string;
  /** The value as Kafka shows it. */
  show(config: QueueConfig): string;
  /** The queue settings a value sets; absent for keys Kafka cannot change. */
  parse?(value: string): Partial<QueueConfig>;
}

const INT32_MAX = 2 ** 31 - 1;

function integerSetting(key: string, field: 'retentionMs' | 'retentionBytes' | 'maxMessageBytes', min: number, max: number, rule: string) {
  return (value: string): Partial<QueueConfig> => {
    const n = /^\s*-?\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max) {
      throw invalid(`Invalid value ${JSON.stringify(value)} for config ${key}: it must be ${rule}.`);
    }
    return { [field]: n };
  };
}

const TIMESTAMP_TYPES: readonly TimestampType[] = ['CreateTime', 'LogAppendTime'];

export const DELETE_POLICY = 'delete';

function cleanupPolicyProblem(policies: string[]): string | null {
  if (policies.includes('compact')) {
    return 'Log compaction is not supported by this gateway: cleanup.policy=compact is refused. Topics drop old records by time and size (retention.ms, retention.bytes); use cleanup.policy=delete.';
  }
  if (policies.length !== 1 || policies[0] !== DELETE_POLICY) {
    return `Invalid value ${JSON.stringify(policies.join(','))} for config cleanup.policy: "delete" is the only policy this gateway supports.`;
  }
  return null;
}

function parseList(value: string): string[] {
  return [...new Set(value.split(',').map((v) => v.trim()).filter((v) => v !== ''))];
}

const TOPIC_CONFIG_KEYS: readonly TopicConfigKey[] = [
  {
    name: 'cleanup.policy',
    type: ConfigType.LIST,
    brokerSynonym: 'log.cleanup.policy',
    documentation: 'How old log segments are cleaned up. Only "delete" (by retention.ms and retention.bytes) is supported; compaction is not.',
    show: () => DELETE_POLICY,
    parse(value) {
      const problem = cleanupPolicyProblem(parseList(value));
      if (problem) throw invalid(problem);
      return {};
    },
  },
  {
    name: 'max.message.bytes',
    type: ConfigType.INT,
    brokerSynonym: 'message.max.bytes',
    documentation: 'The largest record batch size allowed in this topic, in bytes.',
    show: (c) => String(c.maxMessageBytes),
    parse: integerSetting('max.message.bytes', 'maxMessageBytes', 1, INT32_MAX, 'an integer number of bytes from 1 to 2147483647'),
  },
  {
    name: 'message.timestamp.type',
    type: ConfigType.STRING,
    brokerSynonym: 'log.message.timestamp.type',
    documentation: 'Whether record timestamps are the producer\'s (CreateTime) or the broker\'s time of append (LogAppendTime).',
    show: (c) => c.timestampType,
    parse(value) {
      if (!TIMESTAMP_TYPES.includes(value as TimestampType)) {
        throw invalid(`Invalid value ${JSON.stringify(value)} for config message.timestamp.type: it must be CreateTime or LogAppendTime.`);
      }
      return { timestampType: value as TimestampType };
    },
  },
  {
    name: 'queen.dedup.window.seconds',
    type: ConfigType.LONG,
    brokerSynonym: 'queen.dedup.window.seconds',
    documentation: 'Queen\'s native deduplication window for pushes over HTTP, in seconds (0 = off, as on topics created through Kafka). Read-only here; set it with Queen\'s HTTP API.',
    show: (c) => String(c.dedupWindowSeconds),
  },
  {
    name: 'retention.bytes',
    type: ConfigType.LONG,
    brokerSynonym: 'log.retention.bytes',
    documentation: 'The most bytes a partition keeps before old records are deleted; -1 means no size limit.',
    show: (c) => String(c.retentionBytes),
    parse: integerSetting('retention.bytes', 'retentionBytes', -1, Number.MAX_SAFE_INTEGER, 'an integer number of bytes, or -1 for no limit'),
  },
  {
    name: 'retention.ms',
    type: ConfigType.LONG,
    brokerSynonym: 'log.retention.ms',
    documentation: 'How long records are kept before they are deleted, in milliseconds; -1 keeps them forever.',
    show: (c) => String(c.retentionMs),
    parse: integerSetting('retention.ms', 'retentionMs', -1, Number.MAX_SAFE_INTEGER, 'an integer number of milliseconds, or -1 to keep records forever'),
  },
];

const BY_NAME = new Map(TOPIC_CONFIG_KEYS.map((k) => [k.name, k]));
const ALTERABLE = TOPIC_CONFIG_KEYS.filter((k) => k.parse).map((k) => k.name);

function keyNamed(name: string): TopicConfigKey {
  const key = BY_NAME.get(name);
  if (!key) {
    throw invalid(`Unknown topic config ${JSON.stringify(name)}: this gateway supports ${ALTERABLE.join(', ')} (cleanup.policy=delete only).`);
  }
  return key;
}

function alterableKeyNamed(name: string): TopicConfigKey & Required<Pick<TopicConfigKey, 'parse'>> {
  const key = keyNamed(name);
  if (!key.parse) throw invalid(`Topic config ${name} is read-only through Kafka. ${key.documentation}`);
  return key as TopicConfigKey & Required<Pick<TopicConfigKey, 'parse'>>;
}

function parseValue(name: string, value: string | null): Partial<QueueConfig> {
  const key = alterableKeyNamed(name);
  if (value === null) throw invalid(`Config ${name} was given a null value; give a value, or delete the config to return it to its default.`);
  return key.parse(value);
}

/** The queue settings that put a key back to its default. */
function defaultOf(name: string): Partial<QueueConfig> {
  return alterableKeyNamed(name).parse(BY_NAME.get(name)!.show(DEFAULT_QUEUE_CONFIG));
}

function refuseDuplicates(names: string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new TopicConfigError(ErrorCode.INVALID_REQUEST, `Config ${name} is given more than once; give each config once.`);
    seen.add(name);
  }
}

// ─── Describing ───────────────────────────────────────────────────────────────

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

/** A topic's configs as Kafka describes them, by name; unknown names in `keys` are left out, as Kafka does. */
export function describeTopicConfig(config: QueueConfig, options: DescribeOptions = {}): DescribedConfig[] {
  const wanted = options.keys ? new Set(options.keys) : null;
  return TOPIC_CONFIG_KEYS.filter((k) => !wanted || wanted.has(k.name)).map((k) => {
    const value = k.show(config);
    const fallback = k.show(DEFAULT_QUEUE_CONFIG);
    const isDefault = value === fallback;
    const defaultSynonym = { name: k.brokerSynonym, value: fallback, source: ConfigSource.DEFAULT_CONFIG };
    return {
      name: k.name,
      value,
      readOnly: !k.parse,
      isDefault,
      configSource: isDefault ? ConfigSource.DEFAULT_CONFIG : ConfigSource.DYNAMIC_TOPIC_CONFIG,
      isSensitive: false,
      synonyms: !options.includeSynonyms
        ? []
        : isDefault
          ? [defaultSynonym]
          : [{ name: k.name, value, source: ConfigSource.DYNAMIC_TOPIC_CONFIG }, defaultSynonym],
      configType: k.type,
      documentation: options.includeDocumentation ? k.documentation : null,
    };
  });
}

/** The broker-wide keys whose values are the topic defaults, for a broker's DescribeConfigs. */
export function topicDefaultsAsBrokerConfigs(): { name: string; value: string; type: number; documentation: string }[] {
  return TOPIC_CONFIG_KEYS.filter((k) => k.parse).map((k) => ({
    name: k.brokerSynonym,
    value: k.show(DEFAULT_QUEUE_CONFIG),
    type: k.type,
    documentation: `The default for the topic config ${k.name}. ${k.documentation}`,
  }));
}

// ─── Changing ─────────────────────────────────────────────────────────────────

/** Queue settings for configs given at creation (CreateTopics); throws TopicConfigError. */
export function topicConfigFromEntries(entries: readonly { name: string; value: string | null }[]): Partial<QueueConfig> {
  refuseDuplicates(entries.map((e) => e.name));
  return Object.assign({}, ...entries.map((e) => parseValue(e.name, e.value)));
}

/**
 * AlterConfigs: the given configs replace the topic's whole set, so every
 * alterable key not listed returns to its default, as in Kafka.
 */
export function replacedTopicConfig(entries: readonly { name: string; value: string | null }[]): Partial<QueueConfig> {
  const given = topicConfigFromEntries(entries);
  return Object.assign({}, ...ALTERABLE.map(defaultOf), given);
}

export interface ConfigChange {
  name: string;
  configOperation: number;
  value: string | null;
}

function changedListValue(key: TopicConfigKey, current: QueueConfig, change: ConfigChange): Partial<QueueConfig> {
  if (key.type !== ConfigType.LIST) {
    const verb = change.configOperation === ConfigOperation.APPEND ? 'APPEND' : 'SUBTRACT';
    throw invalid(`Config ${key.name} is not a list, so ${verb} does not apply to it; use SET or DELETE.`);
  }
  const now = parseList(key.show(current));
  const given = parseList(change.value ?? '');
  const next = change.configOperation === ConfigOperation.APPEND
    ? [...new Set([...now, ...given])]
    : now.filter((v) => !given.includes(v));
  return parseValue(key.name, next.join(','));
}

/**
 * IncrementalAlterConfigs: SET a value, DELETE back to the default, APPEND to
 * or SUBTRACT from a list key (cleanup.policy; refused for the others).
 */
export function incrementalTopicConfig(current: QueueConfig, changes: readonly ConfigChange[]): Partial<QueueConfig> {
  refuseDuplicates(changes.map((c) => c.name));
  return Object.assign(
    {},
    ...changes.map((change) => {
      const key = alterableKeyNamed(change.name);
      switch (change.configOperation) {
        case ConfigOperation.SET:
          return parseValue(change.name, change.value);
        case ConfigOperation.DELETE:
          return defaultOf(change.name);
        case ConfigOperation.APPEND:
        case ConfigOperation.SUBTRACT:
          return changedListValue(key, current, change);
        default:
          throw new TopicConfigError(ErrorCode.INVALID_REQUEST, `Unknown config operation ${change.configOperation} for ${change.name}; use 0 (SET), 1 (DELETE), 2 (APPEND) or 3 (SUBTRACT).`);
      }
    }),
  );
}

/** The Kafka code and message for an error from this module; anything else is rethrown. */
export function topicConfigErrorOf(e: unknown): { errorCode: number; errorMessage: string } {
  if (e instanceof TopicConfigError) return { errorCode: e.errorCode, errorMessage: e.message };
  throw e;
}

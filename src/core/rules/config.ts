import { CoreError } from '../errors.js';
import { DEFAULT_QUEUE_CONFIG, type CompactionSettings, type QueueConfig, type TimestampType } from '../core.js';

/**
 * Queue configuration: checked key by key, merged with the defaults (create)
 * or with the current config (alter). An unknown key or a value out of range
 * fails the whole call with CoreError('invalid_config').
 */

type Rule = (value: unknown) => string | null; // null = fine, else what is wrong

const integerAtLeast = (min: number, hint: string): Rule => (value) =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= min ? null : `must be an integer ${hint}`;

/** Bounds on topicConfigs, so a client cannot make a queue's row grow without limit. */
const TOPIC_CONFIGS_MAX_KEYS = 100;
const TOPIC_CONFIG_MAX_CHARS = 32_768;

const topicConfigsRule: Rule = (value) => {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'must be an object of names to text values';
  const entries = Object.entries(value);
  if (entries.length > TOPIC_CONFIGS_MAX_KEYS) return `must have at most ${TOPIC_CONFIGS_MAX_KEYS} entries`;
  for (const [name, v] of entries) {
    if (typeof v !== 'string') return `must map each name to text; ${name} is not text`;
    if (name.length > 255 || v.length > TOPIC_CONFIG_MAX_CHARS) return `must have names of at most 255 and values of at most ${TOPIC_CONFIG_MAX_CHARS} characters; ${name.slice(0, 40)} is longer`;
  }
  return null;
};

/** Compaction settings: null (no compaction) or every field, each in Kafka's range for its topic config. */
const compactionRule: Rule = (value) => {
  if (value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) return 'must be null (no compaction) or an object of compaction settings';
  const fields: Record<keyof CompactionSettings, Rule> = {
    deleteRetentionMs: integerAtLeast(0, 'of 0 or more milliseconds'),
    minCompactionLagMs: integerAtLeast(0, 'of 0 or more milliseconds'),
    maxCompactionLagMs: integerAtLeast(1, 'of 1 or more milliseconds'),
    minCleanableDirtyRatio: (v) => (typeof v === 'number' && v >= 0 && v <= 1 ? null : 'must be a number from 0 to 1'),
    segmentBytes: integerAtLeast(1, 'of 1 or more bytes'),
    segmentMs: integerAtLeast(1, 'of 1 or more milliseconds'),
  };
  const given = value as Record<string, unknown>;
  for (const name of Object.keys(given)) if (!(name in fields)) return `has an unknown field ${name}; the fields are ${Object.keys(fields).join(', ')}`;
  for (const [name, rule] of Object.entries(fields)) {
    const problem = rule(given[name]);
    if (problem) return `field ${name} ${problem}`;
  }
  return null;
};

const TIMESTAMP_TYPES: readonly TimestampType[] = ['CreateTime', 'LogAppendTime'];

const RULES: Record<keyof QueueConfig, Rule> = {
  dedupWindowSeconds: integerAtLeast(0, 'of 0 or more seconds (0 turns deduplication off)'),
  retentionMs: integerAtLeast(-1, 'of 0 or more milliseconds, or -1 to keep records forever'),
  retentionBytes: integerAtLeast(-1, 'of 0 or more bytes, or -1 for no limit'),
  maxMessageBytes: integerAtLeast(0, 'of 0 or more bytes'),
  timestampType: (value) =>
    TIMESTAMP_TYPES.includes(value as TimestampType) ? null : `must be one of ${TIMESTAMP_TYPES.join(', ')}`,
  timestampBeforeMaxMs: integerAtLeast(0, 'of 0 or more milliseconds'),
  timestampAfterMaxMs: integerAtLeast(0, 'of 0 or more milliseconds'),
  leaseMs: integerAtLeast(1, 'of 1 or more milliseconds'),
  topicConfigs: topicConfigsRule,
  retryLimit: integerAtLeast(0, 'of 0 or more deliveries again (0 sends a failed message to the dead-letter queue at once)'),
  delayedProcessingMs: integerAtLeast(0, 'of 0 or more milliseconds'),
  windowBufferMs: integerAtLeast(0, 'of 0 or more milliseconds'),
  maxWaitMs: integerAtLeast(0, 'of 0 or more milliseconds (0: no limit)'),
  completedRetentionMs: integerAtLeast(0, 'of 0 or more milliseconds (0: keep consumed records)'),
  fixedPartitionCount: (value) => (typeof value === 'boolean' ? null : 'must be true or false'),
  compaction: compactionRule,
};

export function validateQueueConfig(config: unknown): Partial<QueueConfig> {
  if (config === undefined || config === null) return {};
  if (typeof config !== 'object' || Array.isArray(config)) {
    throw new CoreError('invalid_config', 'A queue config must be an object of settings.');
  }
  const out: Partial<QueueConfig> = {};
  for (const [key, value] of Object.entries(config)) {
    if (value === undefined) continue;
    const rule = RULES[key as keyof QueueConfig];
    if (!rule) {
      throw new CoreError('invalid_config', `Unknown queue setting "${key}"; known settings are ${Object.keys(RULES).join(', ')}.`);
    }
    const problem = rule(value);
    if (problem) {
      throw new CoreError('invalid_config', `Queue setting ${key} ${problem}; got ${JSON.stringify(value)}.`);
    }
    (out as Record<string, unknown>)[key] = (key === 'topicConfigs' || key === 'compaction') && value !== null ? { ...(value as object) } : value;
  }
  return out;
}

/**
 * A native queue's default maxMessageBytes: Queen sets no per-message limit,
 * so a queue made natively (not a Kafka topic: no fixedPartitionCount) takes
 * any payload the HTTP body limit lets through. It is the largest value
 * Kafka's max.message.bytes (an INT) can hold, so a Kafka client describing
 * the queue still reads a number it can parse.
 */
export const NATIVE_MAX_MESSAGE_BYTES = 2_147_483_647;

/**
 * The full config of a new queue: validated settings over the defaults. A
 * Kafka topic keeps Kafka's max.message.bytes default; a native queue that
 * names no limit gets none (NATIVE_MAX_MESSAGE_BYTES).
 */
export function resolveQueueConfig(config?: Partial<QueueConfig>): QueueConfig {
  const resolved = { ...DEFAULT_QUEUE_CONFIG, ...validateQueueConfig(config) };
  if (!resolved.fixedPartitionCount && config?.maxMessageBytes === undefined) resolved.maxMessageBytes = NATIVE_MAX_MESSAGE_BYTES;
  return resolved;
}

/** The config after an alter: only the keys present change. */
export function mergeQueueConfig(current: QueueConfig, change: Partial<QueueConfig>): QueueConfig {
  return { ...current, ...validateQueueConfig(change) };
}

import { ErrorCode } from '../../protocol/error-codes.js';
import { type CompactionSettings, DEFAULT_QUEUE_CONFIG, type QueueConfig, type TimestampType } from '../core/index.js';
import { KAFKA_QUEUE_CONFIG } from './topics.js';

/**
 * Kafka's topic configs on a queue. CreateTopics, DescribeConfigs,
 * AlterConfigs and IncrementalAlterConfigs all go through this one table, so
 * a key's name, type, parsing, validation, default and broker-wide synonyms
 * exist once.
 *
 * Every key Apache Kafka 4.x accepts on a topic is accepted here with Kafka's
 * type and validation, stored in the queue's `topicConfigs` (so a value set
 * on the topic is told from a default, as Kafka does) and described with its
 * source and default. A few take effect, mirrored into the queue's own
 * settings (`effect` below); the rest are kept and described but change
 * nothing, each with the reason in its `effect`. README.md lists them all.
 *
 * cleanup.policy=compact turns on the core's compactor (QueueConfig.compaction),
 * driven by delete.retention.ms, min/max.compaction.lag.ms,
 * min.cleanable.dirty.ratio and, for the active tail, segment.bytes and
 * segment.ms.
 *
 * The gateway has no broker-wide overrides (no server.properties), so a
 * default is always Kafka's built-in one, reported as DEFAULT_CONFIG.
 */

/** Kafka's ConfigResource types (DescribeConfigs, AlterConfigs, IncrementalAlterConfigs). */
export const ResourceType = { TOPIC: 2, BROKER: 4 } as const;

/** Kafka's ConfigSource values. */
export const ConfigSource = { DYNAMIC_TOPIC_CONFIG: 1, DYNAMIC_BROKER_CONFIG: 2, DYNAMIC_DEFAULT_BROKER_CONFIG: 3, STATIC_BROKER_CONFIG: 4, DEFAULT_CONFIG: 5 } as const;

/** Kafka's ConfigType values (DescribeConfigs v3+). */
export const ConfigType = { BOOLEAN: 1, STRING: 2, INT: 3, SHORT: 4, LONG: 5, DOUBLE: 6, LIST: 7 } as const;

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

// ─── Values: parsing as Kafka's ConfigDef does ────────────────────────────────

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const INT_MIN = -(2n ** 31n);
const INT_MAX = 2n ** 31n - 1n;

/** Why a value is refused, without the "Invalid value ... for configuration ..." that wraps it. */
class ValueProblem extends Error {}

function parseInteger(raw: string, min: bigint, max: bigint, typeName: string): bigint {
  const text = raw.trim();
  if (!/^[+-]?\d+$/.test(text)) throw new ValueProblem(`Not a number of type ${typeName}`);
  const n = BigInt(text);
  if (n < min || n > max) throw new ValueProblem(`Not a number of type ${typeName}`);
  return n;
}

/** Java's Double.toString for the values a ratio takes, so described values read as Kafka's. */
function javaDouble(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e7) return n.toFixed(1);
  const abs = Math.abs(n);
  if (abs >= 1e-3 && abs < 1e7) return String(n);
  const [mantissa, exponent] = n.toExponential().split('e');
  return `${mantissa!.includes('.') ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}

function parseList(raw: string): string[] {
  const text = raw.trim();
  return text === '' ? [] : text.split(/\s*,\s*/);
}

/** A key's type: how a value is read and how Kafka writes it back. */
interface ValueType {
  code: number;
  /** The value as Kafka shows it, or a ValueProblem. */
  normalize(raw: string): string;
}

const INT: ValueType = { code: ConfigType.INT, normalize: (raw) => String(parseInteger(raw, INT_MIN, INT_MAX, 'INT')) };
const LONG: ValueType = { code: ConfigType.LONG, normalize: (raw) => String(parseInteger(raw, LONG_MIN, LONG_MAX, 'LONG')) };
const STRING: ValueType = { code: ConfigType.STRING, normalize: (raw) => raw.trim() };
const LIST: ValueType = { code: ConfigType.LIST, normalize: (raw) => parseList(raw).join(',') };
const BOOLEAN: ValueType = {
  code: ConfigType.BOOLEAN,
  normalize(raw) {
    const text = raw.trim().toLowerCase();
    if (text !== 'true' && text !== 'false') throw new ValueProblem('Expected value to be either true or false');
    return text;
  },
};
const DOUBLE: ValueType = {
  code: ConfigType.DOUBLE,
  normalize(raw) {
    const text = raw.trim();
    const n = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?[dDfF]?$/.test(text) ? Number(text.replace(/[dDfF]$/, '')) : NaN;
    if (!Number.isFinite(n)) throw new ValueProblem('Not a number of type DOUBLE');
    return javaDouble(n);
  },
};

/** A check on a normalized value: null when fine, else what is wrong. */
type Check = (value: string) => string | null;

const atLeast = (min: bigint): Check => (v) => (BigInt(v) >= min ? null : `Value must be at least ${min}`);
const between = (min: bigint, max: bigint): Check => (v) => (BigInt(v) < min ? `Value must be at least ${min}` : BigInt(v) > max ? `Value must be no more than ${max}` : null);
const ratio: Check = (v) => (Number(v) < 0 ? 'Value must be at least 0' : Number(v) > 1 ? 'Value must be no more than 1' : null);
const oneOf = (...allowed: string[]): Check => (v) => (allowed.includes(v) ? null : `String must be one of: ${allowed.join(', ')}`);
const eachOneOf = (...allowed: string[]): Check => (v) => (parseList(v).every((item) => allowed.includes(item)) ? null : `String must be one of: ${allowed.join(', ')}`);
/** gzip's levels: 1 to 9, or -1 for the codec's own default. */
const gzipLevel: Check = (v) => (v === '-1' || (BigInt(v) >= 1n && BigInt(v) <= 9n) ? null : 'Value must be between 1 and 9 or equal to -1');
const throttledReplicas: Check = (v) => {
  const items = parseList(v);
  if (items.length === 0 || (items.length === 1 && items[0] === '*') || items.every((i) => /^\d+:\d+$/.test(i))) return null;
  return "it must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...";
};

// ─── Effects: what a key does to a queue ──────────────────────────────────────

/** A key that takes effect: its value is mirrored into one of the queue's own settings. */
interface Setting {
  toSetting(value: string): Partial<QueueConfig>;
  /** The queue's setting as this key's value. */
  fromSetting(config: QueueConfig): string;
}

/** Numbers beyond what the core holds mean "no limit" in effect: 2^53 ms is 285,000 years. */
function clampToSafe(value: string): number {
  const n = BigInt(value);
  return Number(n > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : n);
}

const retentionMsSetting: Setting = {
  toSetting: (v) => ({ retentionMs: clampToSafe(v) }),
  fromSetting: (c) => String(c.retentionMs),
};
const retentionBytesSetting: Setting = {
  // Kafka treats every negative size as no limit.
  toSetting: (v) => ({ retentionBytes: BigInt(v) < 0n ? -1 : clampToSafe(v) }),
  fromSetting: (c) => String(c.retentionBytes),
};
const maxMessageBytesSetting: Setting = {
  toSetting: (v) => ({ maxMessageBytes: Number(v) }),
  fromSetting: (c) => String(c.maxMessageBytes),
};
/** cleanup.policy: "delete" lets retention.ms and retention.bytes delete; an empty list (Kafka 4.x) deletes nothing, so retention is off. */
const DELETES_NOTHING: Partial<QueueConfig> = { retentionMs: -1, retentionBytes: -1 };
const deletesByRetention = (policy: string) => parseList(policy).includes('delete');
const compacts = (policy: string) => parseList(policy).includes('compact');

/** The compactor's settings for a topic whose Kafka configs are `value` (each key set or its default). */
function compactionSettings(value: (name: string) => string): CompactionSettings {
  return {
    deleteRetentionMs: clampToSafe(value('delete.retention.ms')),
    minCompactionLagMs: clampToSafe(value('min.compaction.lag.ms')),
    maxCompactionLagMs: clampToSafe(value('max.compaction.lag.ms')),
    minCleanableDirtyRatio: Number(value('min.cleanable.dirty.ratio')),
    segmentBytes: Number(value('segment.bytes')),
    segmentMs: clampToSafe(value('segment.ms')),
  };
}

const timestampBeforeSetting: Setting = {
  toSetting: (v) => ({ timestampBeforeMaxMs: clampToSafe(v) }),
  fromSetting: (c) => String(c.timestampBeforeMaxMs),
};
const timestampAfterSetting: Setting = {
  toSetting: (v) => ({ timestampAfterMaxMs: clampToSafe(v) }),
  fromSetting: (c) => String(c.timestampAfterMaxMs),
};

const timestampTypeSetting: Setting = {
  toSetting: (v) => ({ timestampType: v as TimestampType }),
  fromSetting: (c) => c.timestampType,
};

// ─── The table ────────────────────────────────────────────────────────────────

/** A broker-wide key and its built-in value, as Kafka lists it among a topic key's synonyms. */
interface BrokerDefault {
  name: string;
  value: string;
}

export interface TopicConfigKey {
  name: string;
  type: ValueType;
  /** Kafka's default, as Kafka shows it. */
  default: string;
  check?: Check;
  /** The broker-wide keys that set this key's default, the one that has a built-in value last. */
  brokerSynonyms: readonly string[];
  brokerDefault: BrokerDefault | null;
  /**
   * The queue setting it drives; or `policy`, for cleanup.policy, which
   * decides whether the retention keys delete anything and whether the queue
   * is compacted; or `compaction`, for the keys the compactor reads (only on
   * a compacted topic); or why it changes nothing here.
   */
  effect: Setting | { policy: string } | { compaction: string } | { none: string };
  /** A value Kafka's type and range take but this gateway cannot honour: the whole message saying so. */
  refuse?: (value: string) => string | null;
  /** What the key means, in the gateway's words. */
  documentation: string;
}

const MAX_LONG = String(LONG_MAX);
const WEEK_MS = String(7 * 24 * 3600 * 1000);

const NO_REPLICAS = 'Partitions have one replica, this gateway; durability comes from the core (PostgreSQL), not from broker replicas.';
const NO_SEGMENTS = 'The core stores batches in its own tables, not in segment files on a broker\'s disk.';
const ON_COMPACTED = 'Takes effect on compacted topics (cleanup.policy includes compact).';
const NO_RECOMPRESSION = 'Batches are stored and served exactly as the producer compressed them; the gateway never re-compresses.';
const NO_TIERED = 'The core is the only storage tier; there is no remote (tiered) storage.';
const NO_THROTTLE = 'There is no replication between brokers to throttle.';

function key(
  name: string,
  type: ValueType,
  defaultValue: string,
  check: Check | undefined,
  brokerSynonyms: readonly string[],
  brokerDefault: BrokerDefault | null,
  effect: TopicConfigKey['effect'],
  documentation: string,
  refuse?: TopicConfigKey['refuse'],
): TopicConfigKey {
  return { name, type, default: defaultValue, check, brokerSynonyms, brokerDefault, effect, documentation, refuse };
}

/** Synonyms with the broker default on the last one, the common case. */
const synonyms = (names: string[], builtIn: string): [string[], BrokerDefault] => [names, { name: names[names.length - 1]!, value: builtIn }];

export const TOPIC_CONFIG_KEYS: readonly TopicConfigKey[] = [
  key('cleanup.policy', LIST, 'delete', eachOneOf('compact', 'delete'), ...synonyms(['log.cleanup.policy'], 'delete'), { policy: '"delete" (the default): retention.ms and retention.bytes delete old batches. "compact": the core\'s compactor keeps the latest record per key (retention deletes nothing). "compact,delete": both. An empty list (as Kafka 4.x allows): nothing is deleted.' },
    'How old records are removed: "delete" drops them by retention.ms and retention.bytes; "compact" keeps the latest record per key (a producer must give every record a key); both may be listed; an empty list removes nothing.'),
  key('compression.gzip.level', INT, '-1', gzipLevel, ...synonyms(['compression.gzip.level'], '-1'), { none: NO_RECOMPRESSION }, 'The gzip level the broker would re-compress at; no effect here. ' + NO_RECOMPRESSION),
  key('compression.lz4.level', INT, '9', between(1n, 17n), ...synonyms(['compression.lz4.level'], '9'), { none: NO_RECOMPRESSION }, 'The lz4 level the broker would re-compress at; no effect here. ' + NO_RECOMPRESSION),
  key('compression.type', STRING, 'producer', oneOf('uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'), ...synonyms(['compression.type'], 'producer'), { none: NO_RECOMPRESSION },
    'The codec the broker would re-compress batches with ("producer" keeps the producer\'s); no effect here. ' + NO_RECOMPRESSION),
  key('compression.zstd.level', INT, '3', between(-131072n, 22n), ...synonyms(['compression.zstd.level'], '3'), { none: NO_RECOMPRESSION }, 'The zstd level the broker would re-compress at; no effect here. ' + NO_RECOMPRESSION),
  key('delete.retention.ms', LONG, '86400000', atLeast(0n), ...synonyms(['log.cleaner.delete.retention.ms'], '86400000'), { compaction: 'How long a tombstone stays once compaction has kept it as its key\'s latest record.' }, 'How long a compacted topic keeps a tombstone (a record with a null value) once compaction has seen it; a reader that starts from the beginning and reaches the end within this time sees every delete. ' + ON_COMPACTED),
  key('errors.deadletterqueue.group.enable', BOOLEAN, 'false', undefined, [], null, { none: 'Share groups (which write dead-letter queues) are not served by this gateway.' },
    'Whether share groups may write undeliverable records of this topic to a dead-letter queue; no effect here: share groups are not served.'),
  key('file.delete.delay.ms', LONG, '60000', atLeast(0n), ...synonyms(['log.segment.delete.delay.ms'], '60000'), { none: NO_SEGMENTS }, 'How long a broker waits before removing a deleted segment file; no effect here. ' + NO_SEGMENTS),
  key('flush.messages', LONG, MAX_LONG, atLeast(1n), ...synonyms(['log.flush.interval.messages'], MAX_LONG), { none: 'Every append is committed to the core before it is acknowledged (PostgreSQL commits it durably).' },
    'After how many records a broker forces its log to disk; no effect here: every acknowledged append is already committed by the core.'),
  key('flush.ms', LONG, MAX_LONG, atLeast(0n), ...synonyms(['log.flush.interval.ms', 'log.flush.scheduler.interval.ms'], MAX_LONG), { none: 'Every append is committed to the core before it is acknowledged (PostgreSQL commits it durably).' },
    'After how long a broker forces its log to disk; no effect here: every acknowledged append is already committed by the core.'),
  key('follower.replication.throttled.replicas', LIST, '', throttledReplicas, [], null, { none: NO_THROTTLE }, 'Replicas whose follower-side replication is throttled; no effect here. ' + NO_THROTTLE),
  key('index.interval.bytes', INT, '4096', atLeast(0n), ...synonyms(['log.index.interval.bytes'], '4096'), { none: NO_SEGMENTS }, 'How densely a broker indexes offsets in a segment; no effect here. ' + NO_SEGMENTS),
  key('leader.replication.throttled.replicas', LIST, '', throttledReplicas, [], null, { none: NO_THROTTLE }, 'Replicas whose leader-side replication is throttled; no effect here. ' + NO_THROTTLE),
  key('local.retention.bytes', LONG, '-2', atLeast(-2n), ...synonyms(['log.local.retention.bytes'], '-2'), { none: NO_TIERED }, 'How many bytes tiered storage keeps on local disk; no effect here. ' + NO_TIERED),
  key('local.retention.ms', LONG, '-2', atLeast(-2n), ...synonyms(['log.local.retention.ms'], '-2'), { none: NO_TIERED }, 'How long tiered storage keeps data on local disk; no effect here. ' + NO_TIERED),
  key('max.compaction.lag.ms', LONG, MAX_LONG, atLeast(1n), ...synonyms(['log.cleaner.max.compaction.lag.ms'], MAX_LONG), { compaction: 'A batch older than this is compacted whatever min.cleanable.dirty.ratio says, and is no longer part of the active tail.' }, 'The longest a record may stay uncompacted, in milliseconds. ' + ON_COMPACTED),
  key('max.decompressed.message.bytes', INT, '2147483639', atLeast(1n), ...synonyms(['max.decompressed.message.bytes'], '2147483639'), { none: 'The gateway inflates a compressed batch under its own fixed budget (64 MiB) when it validates it, whatever this says.' },
    'The most bytes a compressed batch may inflate to; no effect here: the gateway checks batches under its own fixed budget of 64 MiB.'),
  key('max.message.bytes', INT, String(DEFAULT_QUEUE_CONFIG.maxMessageBytes), atLeast(0n), ...synonyms(['message.max.bytes'], String(DEFAULT_QUEUE_CONFIG.maxMessageBytes)), maxMessageBytesSetting,
    'The largest record batch a producer may write to this topic, in bytes; a larger one is refused with MESSAGE_TOO_LARGE.'),
  key('message.timestamp.after.max.ms', LONG, '3600000', atLeast(0n), ...synonyms(['log.message.timestamp.after.max.ms'], '3600000'), timestampAfterSetting,
    'How far after the time of append a CreateTime timestamp may be, in milliseconds; a batch beyond it is refused with INVALID_TIMESTAMP (checked on each batch\'s first and largest timestamps).'),
  key('message.timestamp.before.max.ms', LONG, MAX_LONG, atLeast(0n), ...synonyms(['log.message.timestamp.before.max.ms'], MAX_LONG), timestampBeforeSetting,
    'How far before the time of append a CreateTime timestamp may be, in milliseconds; a batch beyond it is refused with INVALID_TIMESTAMP (checked on each batch\'s first and largest timestamps).'),
  key('message.timestamp.type', STRING, 'CreateTime', oneOf('CreateTime', 'LogAppendTime'), ...synonyms(['log.message.timestamp.type'], 'CreateTime'), timestampTypeSetting,
    'Whether record timestamps are the producer\'s (CreateTime) or the time of append (LogAppendTime, stamped on every batch as it is stored).'),
  key('min.cleanable.dirty.ratio', DOUBLE, '0.5', ratio, ...synonyms(['log.cleaner.min.cleanable.ratio'], '0.5'), { compaction: 'The share of a partition\'s cleanable bytes not yet compacted at which the compactor compacts it.' }, 'How much of a log (by bytes, outside the active tail) must be uncompacted before the compactor compacts it. ' + ON_COMPACTED),
  key('min.compaction.lag.ms', LONG, '0', atLeast(0n), ...synonyms(['log.cleaner.min.compaction.lag.ms'], '0'), { compaction: 'A batch appended less than this long ago is not compacted.' }, 'The shortest a record stays uncompacted, in milliseconds (by the time it was appended). ' + ON_COMPACTED),
  key('min.insync.replicas', INT, '1', atLeast(1n), ...synonyms(['min.insync.replicas'], '1'), { none: NO_REPLICAS },
    'How many in-sync replicas an acks=all write needs; no effect here: an acknowledged write is committed by the core, whatever the value. ' + NO_REPLICAS),
  key('preallocate', BOOLEAN, 'false', undefined, ...synonyms(['log.preallocate'], 'false'), { none: NO_SEGMENTS }, 'Whether a broker preallocates segment files; no effect here. ' + NO_SEGMENTS),
  key('remote.copy.lag.bytes', LONG, '-1', atLeast(-1n), ...synonyms(['log.remote.copy.lag.bytes'], '-1'), { none: NO_TIERED }, 'How many bytes may wait before being copied to tiered storage; no effect here. ' + NO_TIERED),
  key('remote.copy.lag.ms', LONG, '0', undefined, ...synonyms(['log.remote.copy.lag.ms'], '0'), { none: NO_TIERED }, 'How long data may wait before being copied to tiered storage; no effect here. ' + NO_TIERED),
  key('remote.log.copy.disable', BOOLEAN, 'false', undefined, [], null, { none: NO_TIERED }, 'Stops copying to tiered storage; no effect here. ' + NO_TIERED),
  key('remote.log.delete.on.disable', BOOLEAN, 'false', undefined, [], null, { none: NO_TIERED }, 'Deletes tiered data when tiered storage is turned off; no effect here. ' + NO_TIERED),
  key('remote.storage.enable', BOOLEAN, 'false', undefined, [], null, { none: NO_TIERED },
    'Whether the topic uses tiered storage; only false is taken. ' + NO_TIERED,
    (v) => (v === 'true' ? 'Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.' : null)),
  key('retention.bytes', LONG, '-1', undefined, ...synonyms(['log.retention.bytes'], '-1'), retentionBytesSetting,
    'The most bytes a partition keeps before its oldest batches are deleted; a negative value means no size limit.'),
  key('retention.ms', LONG, WEEK_MS, atLeast(-1n), ...synonyms(['log.retention.ms', 'log.retention.minutes', 'log.retention.hours'], '168'), retentionMsSetting,
    'How long records are kept before they are deleted, in milliseconds; -1 keeps them forever.'),
  key('segment.bytes', INT, '1073741824', atLeast(1048576n), ...synonyms(['log.segment.bytes'], '1073741824'), { compaction: 'On a compacted topic: the largest the active tail (never compacted) grows; otherwise no effect. ' + NO_SEGMENTS }, 'The size of a broker\'s segment files. ' + NO_SEGMENTS + ' On a compacted topic it bounds the active tail, the newest part that is never compacted, as Kafka never cleans its active segment.'),
  key('segment.index.bytes', INT, '10485760', atLeast(4n), ...synonyms(['log.index.size.max.bytes'], '10485760'), { none: NO_SEGMENTS }, 'The size of a broker\'s offset index files; no effect here. ' + NO_SEGMENTS),
  key('segment.jitter.ms', LONG, '0', atLeast(0n), ...synonyms(['log.roll.jitter.ms', 'log.roll.jitter.hours'], '0'), { none: NO_SEGMENTS }, 'Random jitter on segment rolling; no effect here. ' + NO_SEGMENTS),
  key('segment.ms', LONG, WEEK_MS, atLeast(1n), ...synonyms(['log.roll.ms', 'log.roll.hours'], '168'), { compaction: 'On a compacted topic: a batch older than this leaves the active tail (never compacted); otherwise no effect. ' + NO_SEGMENTS }, 'After how long a broker rolls a new segment file. ' + NO_SEGMENTS + ' On a compacted topic, a batch older than this leaves the active tail and can be compacted.'),
  key('unclean.leader.election.enable', BOOLEAN, 'false', undefined, ...synonyms(['unclean.leader.election.enable'], 'false'), { none: NO_REPLICAS },
    'Whether an out-of-sync replica may become leader; no effect here. ' + NO_REPLICAS),
];

/**
 * Not a Kafka key: Queen's native dedup window, shown read-only so a Kafka
 * admin can see it (0 on topics created through Kafka). Set over HTTP.
 */
const DEDUP_WINDOW_KEY = 'queen.dedup.window.seconds';

const BY_NAME = new Map(TOPIC_CONFIG_KEYS.map((k) => [k.name, k]));

function keyNamed(name: string): TopicConfigKey {
  const key = BY_NAME.get(name);
  if (key) return key;
  if (name === DEDUP_WINDOW_KEY) throw invalid(`Topic config ${DEDUP_WINDOW_KEY} is read-only through Kafka: it is Queen's native dedup window; set it with Queen's HTTP API.`);
  throw invalid(`Unknown topic config name: ${name}`);
}

/** The value as Kafka would store it, or a TopicConfigError naming the key and the rule. */
function normalizedValue(key: TopicConfigKey, raw: string): string {
  let value: string;
  try {
    value = key.type.normalize(raw);
  } catch (e) {
    if (e instanceof ValueProblem) throw invalid(`Invalid value ${raw} for configuration ${key.name}: ${e.message}`);
    throw e;
  }
  const problem = key.check?.(value);
  if (problem) throw invalid(`Invalid value ${key.type === LIST ? `[${parseList(raw).join(', ')}]` : raw} for configuration ${key.name}: ${problem}`);
  const refusal = key.refuse?.(value);
  if (refusal) throw invalid(refusal);
  return value;
}

/** Checks Kafka makes across keys, on the topic's whole set of values after a change. */
function checkTogether(set: Readonly<Record<string, string>>): void {
  const min = BigInt(set['min.compaction.lag.ms'] ?? '0');
  const max = BigInt(set['max.compaction.lag.ms'] ?? MAX_LONG);
  if (min > max) throw invalid(`conflict topic config setting min.compaction.lag.ms (${min}) > max.compaction.lag.ms (${max})`);
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

/**
 * A key's value on a queue, and whether it was set on the topic. A key that
 * drives a queue setting reads it back from the setting, which Queen's HTTP
 * API can change too: while the setting is what the topic's Kafka configs
 * make it, the Kafka value shows (so 2^63-1 reads back as given, not as
 * the core's largest number); once changed natively, the setting shows and
 * counts as set on the topic.
 */
function currentValue(key: TopicConfigKey, config: QueueConfig): { value: string; set: boolean } {
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

// ─── Changing ─────────────────────────────────────────────────────────────────

/**
 * The queue settings for a topic whose Kafka configs become `set` (every
 * key set on the topic, by name): the stored set itself, and every setting
 * a key drives, from `set` or else from the key's default.
 */
function settingsFor(set: Readonly<Record<string, string>>): Partial<QueueConfig> {
  const settings: Partial<QueueConfig> = { topicConfigs: set };
  for (const key of TOPIC_CONFIG_KEYS) {
    if ('toSetting' in key.effect) Object.assign(settings, key.effect.toSetting(set[key.name] ?? key.default));
  }
  const policy = set['cleanup.policy'] ?? 'delete';
  if (!deletesByRetention(policy)) Object.assign(settings, DELETES_NOTHING);
  settings.compaction = compacts(policy) ? compactionSettings((name) => set[name] ?? BY_NAME.get(name)!.default) : null;
  return settings;
}

/** The settings for a new set of Kafka configs, after the checks Kafka makes across keys. */
function checkedSettingsFor(set: Record<string, string>): Partial<QueueConfig> {
  checkTogether(set);
  return settingsFor(set);
}

/** A null value in CreateTopics: Kafka refuses it as a bad config. */
const nullAtCreation = (name: string) => invalid(`Null value not supported for topic configs: ${name}. Give a value, or leave the config out for its default.`);

/** A null value in AlterConfigs or an IncrementalAlterConfigs SET: Kafka refuses it as a bad request. */
const nullInAlter = (name: string) =>
  new TopicConfigError(ErrorCode.INVALID_REQUEST, `Null value not supported for : ${name}. Give a value, or delete the config to return it to its default.`);

/** One key's value as given, checked: the normalized value, or a TopicConfigError. */
function checkedValue(name: string, value: string | null, nullValue: (name: string) => TopicConfigError): string {
  const key = keyNamed(name);
  if (value === null) throw nullValue(name);
  return normalizedValue(key, value);
}

/** The set a list of entries makes; a key given twice keeps its last value. */
function setOf(entries: readonly { name: string; value: string | null }[], nullValue: (name: string) => TopicConfigError): Record<string, string> {
  const set: Record<string, string> = {};
  for (const { name, value } of entries) set[name] = checkedValue(name, value, nullValue);
  return set;
}

/**
 * Configs given at creation (CreateTopics): a key given twice takes its last
 * value, as in Kafka. Throws TopicConfigError.
 */
export function topicConfigFromEntries(entries: readonly { name: string; value: string | null }[]): Partial<QueueConfig> {
  return checkedSettingsFor(setOf(entries, nullAtCreation));
}

/**
 * AlterConfigs: the given configs replace the topic's whole set, so every
 * key not listed returns to its default, as in Kafka; a key given twice is
 * refused, as Kafka does here.
 */
export function replacedTopicConfig(entries: readonly { name: string; value: string | null }[]): Partial<QueueConfig> {
  refuseDuplicates(entries.map((e) => e.name));
  return checkedSettingsFor(setOf(entries, nullInAlter));
}

export interface ConfigChange {
  name: string;
  configOperation: number;
  value: string | null;
}

/** APPEND and SUBTRACT on a list key, starting from its current value (its default when unset), as Kafka does. */
function changedList(key: TopicConfigKey, current: QueueConfig, change: ConfigChange): string {
  if (key.type !== LIST) {
    const verb = change.configOperation === ConfigOperation.APPEND ? 'APPEND' : 'SUBTRACT';
    throw invalid(`Can't ${verb} to key ${key.name} because its type is not LIST.`);
  }
  const now = parseList(currentValue(key, current).value);
  const given = parseList(change.value ?? '');
  const next = change.configOperation === ConfigOperation.APPEND ? [...now, ...given.filter((v) => !now.includes(v))] : now.filter((v) => !given.includes(v));
  return next.join(',');
}

/**
 * IncrementalAlterConfigs: SET a value, DELETE back to the default (a name
 * that is no config deletes nothing, as in Kafka), APPEND to or SUBTRACT
 * from a list key.
 */
export function incrementalTopicConfig(current: QueueConfig, changes: readonly ConfigChange[]): Partial<QueueConfig> {
  refuseDuplicates(changes.map((c) => c.name));
  const set: Record<string, string> = { ...current.topicConfigs };
  for (const change of changes) {
    switch (change.configOperation) {
      case ConfigOperation.SET:
        set[change.name] = checkedValue(change.name, change.value, nullInAlter);
        break;
      case ConfigOperation.DELETE:
        delete set[change.name];
        break;
      case ConfigOperation.APPEND:
      case ConfigOperation.SUBTRACT: {
        const key = keyNamed(change.name);
        set[change.name] = normalizedValue(key, changedList(key, current, change));
        break;
      }
      default:
        throw new TopicConfigError(ErrorCode.INVALID_REQUEST, `Unknown config operation ${change.configOperation} for ${change.name}; use 0 (SET), 1 (DELETE), 2 (APPEND) or 3 (SUBTRACT).`);
    }
  }
  return checkedSettingsFor(set);
}

/** The Kafka code and message for an error from this module; anything else is rethrown. */
export function topicConfigErrorOf(e: unknown): { errorCode: number; errorMessage: string } {
  if (e instanceof TopicConfigError) return { errorCode: e.errorCode, errorMessage: e.message };
  throw e;
}

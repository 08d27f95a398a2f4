import { ErrorCode } from '../../protocol/error-codes.js';
import { DEFAULT_QUEUE_CONFIG, type QueueConfig } from '../core/index.js';
import {
  compacts,
  compactionSettings,
  deletesByRetention,
  DELETES_NOTHING,
  maxMessageBytesSetting,
  retentionBytesSetting,
  retentionMsSetting,
  timestampAfterSetting,
  timestampBeforeSetting,
  timestampTypeSetting,
  type Setting,
} from './effects.js';
import {
  atLeast,
  between,
  BOOLEAN,
  type Check,
  DOUBLE,
  eachOneOf,
  gzipLevel,
  INT,
  invalid,
  LIST,
  LONG,
  LONG_MAX,
  oneOf,
  parseList,
  ratio,
  STRING,
  throttledReplicas,
  TopicConfigError,
  ValueProblem,
  type ValueType,
} from './values.js';

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

export const MAX_LONG = String(LONG_MAX);
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
export const DEDUP_WINDOW_KEY = 'queen.dedup.window.seconds';

const BY_NAME = new Map(TOPIC_CONFIG_KEYS.map((k) => [k.name, k]));

export function keyNamed(name: string): TopicConfigKey {
  const key = BY_NAME.get(name);
  if (key) return key;
  if (name === DEDUP_WINDOW_KEY) throw invalid(`Topic config ${DEDUP_WINDOW_KEY} is read-only through Kafka: it is Queen's native dedup window; set it with Queen's HTTP API.`);
  throw invalid(`Unknown topic config name: ${name}`);
}

/** The value as Kafka would store it, or a TopicConfigError naming the key and the rule. */
export function normalizedValue(key: TopicConfigKey, raw: string): string {
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
export function checkTogether(set: Readonly<Record<string, string>>): void {
  const min = BigInt(set['min.compaction.lag.ms'] ?? '0');
  const max = BigInt(set['max.compaction.lag.ms'] ?? MAX_LONG);
  if (min > max) throw invalid(`conflict topic config setting min.compaction.lag.ms (${min}) > max.compaction.lag.ms (${max})`);
}

export function refuseDuplicates(names: string[]): void {
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new TopicConfigError(ErrorCode.INVALID_REQUEST, `Config ${name} is given more than once; give each config once.`);
    seen.add(name);
  }
}

/**
 * The queue settings for a topic whose Kafka configs become `set` (every
 * key set on the topic, by name): the stored set itself, and every setting
 * a key drives, from `set` or else from the key's default.
 */
export function settingsFor(set: Readonly<Record<string, string>>): Partial<QueueConfig> {
  const settings: Partial<QueueConfig> = { topicConfigs: set };
  for (const key of TOPIC_CONFIG_KEYS) {
    if ('toSetting' in key.effect) Object.assign(settings, key.effect.toSetting(set[key.name] ?? key.default));
  }
  const policy = set['cleanup.policy'] ?? 'delete';
  if (!deletesByRetention(policy)) Object.assign(settings, DELETES_NOTHING);
  settings.compaction = compacts(policy) ? compactionSettings((name) => set[name] ?? BY_NAME.get(name)!.default) : null;
  return settings;
}

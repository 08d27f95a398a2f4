/**
 * `queen-gateway bridge`'s settings: a table like serve's (./settings.ts),
 * read by the same parser (./setting-sources.ts) from flags, QUEEN_*
 * variables and a configuration file, then checked as a whole here: exactly
 * one target (a core over the RPC, a PostgreSQL engine in this process, or
 * Apache Kafka for the reverse direction), what goes with which, and the
 * librdkafka options the bridge must set itself. A flag given twice is
 * refused (the bridge's options are too consequential for "the last wins").
 * Settings that came from the environment and that the chosen target does not
 * use are ignored rather than refused: one environment serves several
 * commands (QUEEN_RPC_SECRET for a gateway beside a reverse bridge).
 */
import { CompressionCodec } from '../../protocol/records/compression.js';
import { RESERVED_SOURCE_OPTIONS } from '../bridge/bridge.js';
import { RESERVED_TARGET_OPTIONS } from '../bridge/to-kafka.js';
import { parseRpcAddress } from '../rpc/address.js';
import { ConfigError } from './config-error.js';
import { checkRpcAuthentication, RPC_TLS_FLAGS } from './setting-checks.js';
import { LOG_LEVELS, readSettings, type SettingDef, type SettingsRead, type SettingsScope } from './setting-sources.js';

const CODECS: Record<string, CompressionCodec> = { none: CompressionCodec.None, gzip: CompressionCodec.Gzip, snappy: CompressionCodec.Snappy, lz4: CompressionCodec.Lz4, zstd: CompressionCodec.Zstd };

export interface BridgeConfig {
  source: string;
  topics: RegExp;
  groups: RegExp | null;
  sourceOptions: Record<string, string>;
  core: string | null;
  rpcSecret: string | null;
  /** Mutual TLS to the core of --core: the bridge's client certificate and key, and the CA the core's certificate must chain to. */
  rpcTls: { certFile: string; keyFile: string; caFile: string } | null;
  engine: 'postgres' | null;
  databaseUrl: string | null;
  databaseSchema: string;
  compression: CompressionCodec;
  refreshIntervalMs: number;
  progressIntervalMs: number;
  metricsPort: number | null;
  logLevel: string;
  /** The reverse direction: Kafka's bootstrap servers as the target (instead of a core), and its librdkafka settings. */
  toKafka: string | null;
  targetOptions: Record<string, string>;
}

export const BRIDGE_SETTINGS = [
  { flag: 'source', value: 'BROKERS', kind: { type: 'string' }, help: "the source cluster's bootstrap servers, host:port[,host:port] (required)" },
  { flag: 'topics', value: 'PATTERN', kind: { type: 'string' }, help: 'a regular expression; topics whose whole name it matches are copied, and followed as they appear (required)' },
  { flag: 'groups', value: 'PATTERN', kind: { type: 'string' }, help: 'a regular expression; consumer groups whose whole name it matches have their committed offsets copied (default: none)' },
  { flag: 'source-option', value: 'KEY=VALUE', kind: { type: 'pairs' }, help: 'a librdkafka setting for the source, repeatable: security.protocol, sasl.*, ssl.* ... (in a file, a mapping)' },
  { flag: 'core', value: 'HOST:PORT', kind: { type: 'string' }, help: 'the target core over the internal RPC (a `queen-gateway core`); or use --engine postgres' },
  { flag: 'rpc-secret', value: 'SECRET', kind: { type: 'string' }, help: 'the RPC secret for --core; optional with the --rpc-tls-* files' },
  { flag: 'rpc-tls-cert-file', value: 'FILE', kind: { type: 'string' }, help: "mutual TLS to --core: the bridge's PEM client certificate (reloaded when the file changes)" },
  { flag: 'rpc-tls-key-file', value: 'FILE', kind: { type: 'string' }, help: 'the PEM private key of --rpc-tls-cert-file' },
  { flag: 'rpc-tls-ca-file', value: 'FILE', kind: { type: 'string' }, help: "the PEM CA certificates the core's certificate must chain to" },
  { flag: 'engine', value: 'postgres', kind: { type: 'string' }, help: 'open the target PostgreSQL engine in this process instead of --core' },
  { flag: 'database-url', value: 'URL', kind: { type: 'string' }, help: 'the PostgreSQL URL for --engine postgres' },
  { flag: 'database-schema', value: 'NAME', kind: { type: 'string' }, default: 'queen', help: 'the PostgreSQL schema for --engine postgres' },
  { flag: 'compression', value: 'CODEC', kind: { type: 'choice', choices: Object.keys(CODECS) }, default: 'none', help: `with --to-kafka, codec of the batches that must be re-encoded for Kafka (gaps from compaction, LogAppendTime): ${Object.keys(CODECS).join(', ')} (the others, and every batch forward, are copied as they are, codec included)` },
  { flag: 'refresh-interval-ms', value: 'MS', kind: { type: 'int', min: 100, max: 3_600_000 }, default: 5000, help: 'how often new topics, partitions and group offsets are looked for' },
  { flag: 'progress-interval-ms', value: 'MS', kind: { type: 'int', min: 0, max: 3_600_000 }, default: 5000, help: 'how often the progress line is written to stderr; 0 for never' },
  { flag: 'metrics-port', value: 'PORT', kind: { type: 'int', min: 0, max: 65535 }, help: 'serve Prometheus metrics at http://127.0.0.1:PORT/metrics (0 picks a free port; default: no metrics)' },
  { flag: 'log-level', value: 'LEVEL', kind: { type: 'choice', choices: LOG_LEVELS }, default: 'info', help: 'pino log level' },
  { flag: 'to-kafka', value: 'BROKERS', kind: { type: 'string' }, help: 'reverse, for a rollback: copy from --source (a gateway) to the Apache Kafka cluster at these bootstrap servers, instead of into a core' },
  { flag: 'target-option', value: 'KEY=VALUE', kind: { type: 'pairs' }, help: 'with --to-kafka, a security setting for Kafka under the names --source-option takes, repeatable: security.protocol, sasl.*, ssl.* ... (in a file, a mapping)' },
] as const satisfies readonly SettingDef[];

export function bridgeScope(everyFlag: ReadonlySet<string>): SettingsScope {
  return {
    command: 'bridge',
    taken: BRIDGE_SETTINGS,
    everyFlag,
    refuseRepeats: true,
    unknownFlag: (name, nearest) => `Unknown flag --${name} for the bridge${nearest === undefined ? '' : ` (did you mean --${nearest}?)`}; run "queen-gateway bridge --help" to see its flags.`,
  };
}

function pattern(flag: string, raw: string): RegExp {
  try {
    return new RegExp(raw);
  } catch (e) {
    throw new ConfigError(`The flag --${flag} is not a valid regular expression (${(e as Error).message}); give one such as 'orders\\..*'.`);
  }
}

function brokers(flag: string, raw: string): void {
  if (!/^[^,\s:]+:\d+(,[^,\s:]+:\d+)*$/.test(raw)) throw new ConfigError(`--${flag} must be host:port pairs separated by commas, e.g. kafka-1:9092,kafka-2:9092; got ${JSON.stringify(raw)}.`);
}

function checkOptions(flag: string, options: Record<string, string>): Record<string, string> {
  const reserved = flag === 'source-option' ? RESERVED_SOURCE_OPTIONS : RESERVED_TARGET_OPTIONS;
  for (const key of Object.keys(options)) {
    if (reserved.includes(key)) throw new ConfigError(`--${flag} ${key} cannot be set: the bridge sets it itself (${key === 'bootstrap.servers' ? `use ${flag === 'source-option' ? '--source' : '--to-kafka'}` : 'its exactly-once copy depends on it'}).`);
  }
  return options;
}

/** The settings' values, typed, and which were given on purpose (a flag or the file) rather than inherited from the environment. */
class BridgeValues {
  constructor(private readonly read: SettingsRead) {}
  text(flag: string): string | null {
    return (this.read.values.get(flag) as string | undefined) ?? null;
  }
  number(flag: string): number | null {
    return (this.read.values.get(flag) as number | undefined) ?? null;
  }
  options(flag: string): Record<string, string> {
    return checkOptions(flag, (this.read.values.get(flag) as Record<string, string> | undefined) ?? {});
  }
  given(flag: string): boolean {
    const origin = this.read.origins.get(flag)?.from;
    return origin === 'flag' || origin === 'file';
  }
}

export function readBridgeConfig(argv: readonly string[], env: NodeJS.ProcessEnv, everyFlag: ReadonlySet<string> = new Set(BRIDGE_SETTINGS.map((d) => d.flag))): BridgeConfig {
  const values = new BridgeValues(readSettings(bridgeScope(everyFlag), argv, env));
  const sourceOptions = values.options('source-option');
  const targetOptions = values.options('target-option');
  const source = values.text('source');
  if (!source) throw new ConfigError('The bridge needs its source: set --source to the Kafka cluster\'s bootstrap servers, e.g. --source kafka-1:9092,kafka-2:9092.');
  brokers('source', source);
  const topics = values.text('topics');
  if (!topics) throw new ConfigError("The bridge needs --topics: a regular expression for the topics to copy, e.g. --topics 'orders|payments' or --topics '.*' for all.");
  const core = values.text('core');
  const engine = values.text('engine');
  const toKafka = readReverse(values, source, targetOptions);
  if (engine !== null && engine !== 'postgres') throw new ConfigError(`--engine must be postgres for the bridge (a memory engine in the bridge's own process would be lost with it); got ${JSON.stringify(engine)}.`);
  if ([core, engine, toKafka].filter((t) => t !== null).length !== 1) throw new ConfigError('The bridge needs exactly one target: --core HOST:PORT (a running `queen-gateway core`), --engine postgres --database-url URL, or --to-kafka BROKERS (reverse, to Apache Kafka).');
  if (core !== null) {
    try {
      parseRpcAddress(core);
    } catch (e) {
      throw new ConfigError(`The flag --core is wrong: ${(e as Error).message}`);
    }
  }
  // --core authenticates as a gateway does (./setting-checks.ts).
  const tlsFiles = RPC_TLS_FLAGS.map((flag) => values.text(flag) ?? undefined);
  const rpcSecret = core === null ? null : values.text('rpc-secret');
  let rpcTls: BridgeConfig['rpcTls'] = null;
  if (core === null) {
    if (RPC_TLS_FLAGS.some((flag) => values.given(flag))) throw new ConfigError('The --rpc-tls-* files are for --core (mutual TLS to a core over the RPC); the other targets do not use the RPC: leave them out.');
  } else if (checkRpcAuthentication('bridge', rpcSecret ?? undefined, tlsFiles)) {
    const [certFile, keyFile, caFile] = tlsFiles as string[];
    rpcTls = { certFile: certFile!, keyFile: keyFile!, caFile: caFile! };
  }
  const databaseUrl = values.text('database-url');
  if (engine !== null && !databaseUrl) throw new ConfigError('--engine postgres needs a database: set --database-url (or QUEEN_DATABASE_URL) to a URL such as postgres://user:pass@localhost:5432/queen.');
  const groups = values.text('groups');
  return {
    source,
    topics: pattern('topics', topics),
    groups: groups === null ? null : pattern('groups', groups),
    sourceOptions,
    core,
    rpcSecret,
    rpcTls,
    engine: engine as 'postgres' | null,
    databaseUrl,
    databaseSchema: values.text('database-schema')!,
    compression: CODECS[values.text('compression')!]!,
    refreshIntervalMs: values.number('refresh-interval-ms')!,
    progressIntervalMs: values.number('progress-interval-ms')!,
    metricsPort: values.number('metrics-port'),
    logLevel: values.text('log-level')!,
    toKafka,
    targetOptions,
  };
}

/** The reverse direction's flags: --to-kafka, and what does not go with it. */
function readReverse(values: BridgeValues, source: string, targetOptions: Record<string, string>): string | null {
  const toKafka = values.text('to-kafka');
  if (toKafka === null) {
    if (Object.keys(targetOptions).length > 0) throw new ConfigError('--target-option is for the reverse direction only (settings for the Kafka cluster of --to-kafka); the forward bridge writes into a core.');
    return null;
  }
  brokers('to-kafka', toKafka);
  const misplaced = ['rpc-secret', 'database-url', 'database-schema'].find((flag) => values.given(flag));
  if (misplaced) throw new ConfigError(`--${misplaced} is for a core target; with --to-kafka the target is Kafka: leave --${misplaced} out.`);
  if (toKafka.split(',').some((b) => source.split(',').includes(b))) throw new ConfigError(`--to-kafka names a broker of --source (${toKafka}); the reverse bridge copies from a gateway to a different, Apache Kafka cluster.`);
  return toKafka;
}

/**
 * `queen-gateway bridge`: the migration bridge (src/bridge) as a command.
 * Its flags are its own (a repeated --source-option does not fit the serve
 * settings' table), read and checked before anything starts; a mistake is one
 * sentence on stderr and exit code 2. The target is a core: over the internal
 * RPC (--core HOST:PORT, authenticated as a gateway is: the secret in
 * --rpc-secret or QUEEN_RPC_SECRET, mutual TLS with the --rpc-tls-* files, or
 * both), or a PostgreSQL engine opened in this process (--engine postgres
 * --database-url).
 * Over the RPC the core's group coordinator is the gateways' own, so a group
 * whose members have joined on the target is seen to have moved at once.
 * With --to-kafka the target is an Apache Kafka cluster instead (the reverse
 * direction, src/bridge/to-kafka.ts) and no core is opened.
 */
import { pino } from 'pino';
import { openCore, type Core } from '../core/index.js';
import { connectCore, parseRpcAddress } from '../rpc/index.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { Bridge, RESERVED_SOURCE_OPTIONS } from '../bridge/bridge.js';
import { MissingLibrdkafka } from '../bridge/librdkafka.js';
import { KafkaTarget, RESERVED_TARGET_OPTIONS } from '../bridge/to-kafka.js';
import { finalReport, progressLine, rate, serveMetrics } from '../bridge/report.js';
import { TlsCredentials } from '../tls/credentials.js';
import { checkRpcAuthentication, ConfigError, LOG_LEVELS, RPC_TLS_FLAGS } from './settings.js';

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

const FLAGS: { flag: string; value: string; help: string }[] = [
  { flag: 'source', value: 'BROKERS', help: "the source cluster's bootstrap servers, host:port[,host:port] (required)" },
  { flag: 'topics', value: 'PATTERN', help: 'a regular expression; topics whose whole name it matches are copied, and followed as they appear (required)' },
  { flag: 'groups', value: 'PATTERN', help: "a regular expression; consumer groups whose whole name it matches have their committed offsets copied (default: none)" },
  { flag: 'source-option', value: 'KEY=VALUE', help: 'a librdkafka setting for the source, repeatable: security.protocol, sasl.*, ssl.* ...' },
  { flag: 'core', value: 'HOST:PORT', help: 'the target core over the internal RPC (a `queen-gateway core`); or use --engine postgres' },
  { flag: 'rpc-secret', value: 'SECRET', help: 'the RPC secret for --core (default: QUEEN_RPC_SECRET); optional with the --rpc-tls-* files' },
  { flag: 'rpc-tls-cert-file', value: 'FILE', help: "mutual TLS to --core: the bridge's PEM client certificate (reloaded when the file changes)" },
  { flag: 'rpc-tls-key-file', value: 'FILE', help: 'the PEM private key of --rpc-tls-cert-file' },
  { flag: 'rpc-tls-ca-file', value: 'FILE', help: "the PEM CA certificates the core's certificate must chain to" },
  { flag: 'engine', value: 'postgres', help: 'open the target PostgreSQL engine in this process instead of --core' },
  { flag: 'database-url', value: 'URL', help: 'the PostgreSQL URL for --engine postgres (default: QUEEN_DATABASE_URL)' },
  { flag: 'database-schema', value: 'NAME', help: 'the PostgreSQL schema for --engine postgres (default queen)' },
  { flag: 'compression', value: 'CODEC', help: 'codec of the batches written to the target: none, gzip, snappy, lz4, zstd (default none)' },
  { flag: 'refresh-interval-ms', value: 'MS', help: 'how often new topics, partitions and group offsets are looked for (default 5000)' },
  { flag: 'progress-interval-ms', value: 'MS', help: 'how often the progress line is written to stderr; 0 for never (default 5000)' },
  { flag: 'metrics-port', value: 'PORT', help: 'serve Prometheus metrics at http://127.0.0.1:PORT/metrics (0 picks a free port; default: no metrics)' },
  { flag: 'log-level', value: 'LEVEL', help: `pino log level: ${LOG_LEVELS.join(', ')} (default info)` },
  { flag: 'to-kafka', value: 'BROKERS', help: 'reverse, for a rollback: copy from --source (a gateway) to the Apache Kafka cluster at these bootstrap servers, instead of into a core' },
  { flag: 'target-option', value: 'KEY=VALUE', help: 'with --to-kafka, a librdkafka setting for Kafka, repeatable: security.protocol, sasl.*, ssl.* ...' },
];

export function bridgeHelp(): string {
  return [
    'Usage: queen-gateway bridge --source BROKERS --topics PATTERN [--groups PATTERN] (--core HOST:PORT | --engine postgres --database-url URL | --to-kafka BROKERS) [flags]',
    '',
    'bridge: copies a Kafka cluster\'s topics (offset for offset) and consumer-group offsets into the Queen core, and keeps them in step until stopped (SIGINT/SIGTERM).',
    'With --to-kafka it runs in reverse, for a rollback: from a gateway to Apache Kafka, exactly once through Kafka transactions, offsets translated (Kafka cannot keep them).',
    '',
    ...FLAGS.map((f) => `  --${`${f.flag} ${f.value}`.padEnd(32)} ${f.help}`),
  ].join('\n');
}

function pattern(flag: string, raw: string): RegExp {
  try {
    return new RegExp(raw);
  } catch (e) {
    throw new ConfigError(`The flag --${flag} is not a valid regular expression (${(e as Error).message}); give one such as 'orders\\..*'.`);
  }
}

function whole(flag: string, raw: string, min: number, max: number): number {
  const n = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new ConfigError(`The flag --${flag} must be a whole number from ${min} to ${max}; got ${JSON.stringify(raw)}.`);
  return n;
}

function brokers(flag: string, raw: string): void {
  if (!/^[^,\s:]+:\d+(,[^,\s:]+:\d+)*$/.test(raw)) throw new ConfigError(`--${flag} must be host:port pairs separated by commas, e.g. kafka-1:9092,kafka-2:9092; got ${JSON.stringify(raw)}.`);
}

export function readBridgeConfig(argv: readonly string[], env: NodeJS.ProcessEnv): BridgeConfig {
  const known = new Set(FLAGS.map((f) => f.flag));
  const values = new Map<string, string>();
  const sourceOptions: Record<string, string> = {};
  const targetOptions: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`Unexpected argument ${JSON.stringify(arg)}; the bridge's settings are given as --name value (see queen-gateway bridge --help).`);
    const eq = arg.indexOf('=');
    const name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    if (!known.has(name)) throw new ConfigError(`Unknown flag --${name} for the bridge; run "queen-gateway bridge --help" to see its flags.`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined || value === '') throw new ConfigError(`The flag --${name} needs a value, e.g. --${name} ${FLAGS.find((f) => f.flag === name)!.value}.`);
    if (name === 'source-option' || name === 'target-option') {
      const at = value.indexOf('=');
      if (at <= 0) throw new ConfigError(`--${name} takes KEY=VALUE, a librdkafka setting such as security.protocol=ssl; got ${JSON.stringify(value)}.`);
      const key = value.slice(0, at).trim();
      const reserved = name === 'source-option' ? RESERVED_SOURCE_OPTIONS : RESERVED_TARGET_OPTIONS;
      if (reserved.includes(key)) throw new ConfigError(`--${name} ${key} cannot be set: the bridge sets it itself (${key === 'bootstrap.servers' ? `use ${name === 'source-option' ? '--source' : '--to-kafka'}` : 'its exactly-once copy depends on it'}).`);
      (name === 'source-option' ? sourceOptions : targetOptions)[key] = value.slice(at + 1);
    } else if (values.has(name)) {
      throw new ConfigError(`The flag --${name} is given twice; give it once.`);
    } else values.set(name, value);
  }
  const source = values.get('source');
  if (!source) throw new ConfigError('The bridge needs its source: set --source to the Kafka cluster\'s bootstrap servers, e.g. --source kafka-1:9092,kafka-2:9092.');
  brokers('source', source);
  const topics = values.get('topics');
  if (!topics) throw new ConfigError("The bridge needs --topics: a regular expression for the topics to copy, e.g. --topics 'orders|payments' or --topics '.*' for all.");
  const core = values.get('core') ?? null;
  const engine = values.get('engine') ?? null;
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
  // --core authenticates as a gateway does (settings.ts); the environment's secret is a default for it alone.
  const tlsFiles = RPC_TLS_FLAGS.map((flag) => values.get(flag));
  const rpcSecret = core === null ? null : (values.get('rpc-secret') ?? (env['QUEEN_RPC_SECRET'] || null));
  let rpcTls: BridgeConfig['rpcTls'] = null;
  if (core === null) {
    if (tlsFiles.some((f) => f !== undefined)) throw new ConfigError('The --rpc-tls-* files are for --core (mutual TLS to a core over the RPC); the other targets do not use the RPC: leave them out.');
  } else if (checkRpcAuthentication('bridge', rpcSecret ?? undefined, tlsFiles)) {
    const [certFile, keyFile, caFile] = tlsFiles as string[];
    rpcTls = { certFile: certFile!, keyFile: keyFile!, caFile: caFile! };
  }
  const databaseUrl = values.get('database-url') ?? env['QUEEN_DATABASE_URL'] ?? null;
  if (engine !== null && !databaseUrl) throw new ConfigError('--engine postgres needs a database: set --database-url (or QUEEN_DATABASE_URL) to a URL such as postgres://user:pass@localhost:5432/queen.');
  const compressionName = values.get('compression') ?? 'none';
  const compression = CODECS[compressionName];
  if (compression === undefined) throw new ConfigError(`--compression must be one of ${Object.keys(CODECS).join(', ')}; got ${JSON.stringify(compressionName)}.`);
  const logLevel = values.get('log-level') ?? 'info';
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) throw new ConfigError(`--log-level must be one of ${LOG_LEVELS.join(', ')}; got ${JSON.stringify(logLevel)}.`);
  const metrics = values.get('metrics-port');
  return {
    source,
    topics: pattern('topics', topics),
    groups: values.has('groups') ? pattern('groups', values.get('groups')!) : null,
    sourceOptions,
    core,
    rpcSecret,
    rpcTls,
    engine: engine as 'postgres' | null,
    databaseUrl,
    databaseSchema: values.get('database-schema') ?? 'queen',
    compression,
    refreshIntervalMs: whole('refresh-interval-ms', values.get('refresh-interval-ms') ?? '5000', 100, 3_600_000),
    progressIntervalMs: whole('progress-interval-ms', values.get('progress-interval-ms') ?? '5000', 0, 3_600_000),
    metricsPort: metrics === undefined ? null : whole('metrics-port', metrics, 0, 65535),
    logLevel,
    toKafka,
    targetOptions,
  };
}

/** The reverse direction's flags: --to-kafka, and what does not go with it. */
function readReverse(values: Map<string, string>, source: string, targetOptions: Record<string, string>): string | null {
  const toKafka = values.get('to-kafka') ?? null;
  if (toKafka === null) {
    if (Object.keys(targetOptions).length > 0) throw new ConfigError('--target-option is for the reverse direction only (settings for the Kafka cluster of --to-kafka); the forward bridge writes into a core.');
    return null;
  }
  brokers('to-kafka', toKafka);
  const misplaced = ['rpc-secret', 'database-url', 'database-schema'].find((flag) => values.has(flag));
  if (misplaced) throw new ConfigError(`--${misplaced} is for a core target; with --to-kafka the target is Kafka: leave --${misplaced} out.`);
  if (toKafka.split(',').some((b) => source.split(',').includes(b))) throw new ConfigError(`--to-kafka names a broker of --source (${toKafka}); the reverse bridge copies from a gateway to a different, Apache Kafka cluster.`);
  return toKafka;
}

/** Runs the bridge until SIGINT or SIGTERM; then the final report on stderr, exit 0. */
export async function runBridge(config: BridgeConfig): Promise<void> {
  const log = pino({ level: config.logLevel, base: { service: 'queen-bridge' } });
  const core: Core | null = config.toKafka !== null ? null : config.core !== null
    ? await connectCore({
        address: parseRpcAddress(config.core),
        ...(config.rpcSecret === null ? {} : { secret: config.rpcSecret }),
        ...(config.rpcTls === null ? {} : { tls: new TlsCredentials({ ...config.rpcTls, clientAuth: 'required' }, log) }),
        connectTimeoutMs: 30_000,
        log,
      })
    : await openCore({ engine: 'postgres', url: config.databaseUrl!, schema: config.databaseSchema, log });
  let bridge: Bridge;
  try {
    const target = core ?? (await KafkaTarget.start({ bootstrap: config.toKafka!, options: config.targetOptions, compression: config.compression, log }));
    bridge = await Bridge.start({
      source: config.source,
      sourceOptions: config.sourceOptions,
      topics: config.topics,
      groups: config.groups,
      ...(target instanceof KafkaTarget ? { target } : { core: target, compression: config.compression }),
      refreshIntervalMs: config.refreshIntervalMs,
      log,
    });
  } catch (e) {
    await core?.close();
    if (e instanceof MissingLibrdkafka) {
      process.stderr.write(e.message + '\n');
      process.exit(1);
    }
    throw e;
  }
  let stopping = false;
  const metrics = config.metricsPort === null ? null : await serveMetrics(config.metricsPort, () => bridge.progress(), () => !stopping);
  log.info({ source: config.source, metrics: metrics ? `http://127.0.0.1:${metrics.port}/metrics` : null }, `bridge running: copying from ${config.source}${config.toKafka ? ` to Kafka at ${config.toKafka}` : ''}`);
  let last: { copied: number; at: number } | null = null;
  const progress = config.progressIntervalMs === 0 ? null : setInterval(() => {
    const now = Date.now();
    const p = bridge.progress();
    process.stderr.write(progressLine(p, rate(p, now, last)) + '\n');
    last = { copied: p.copied, at: now };
  }, config.progressIntervalMs);

  const stop = async (reason: string, failure: Error | null) => {
    if (stopping) return;
    stopping = true;
    if (progress) clearInterval(progress);
    log.info({ reason }, 'stopping: writing what was read, then the final report');
    const p = await bridge.stop();
    await metrics?.close();
    await core?.close();
    process.stderr.write(finalReport(p, Date.now()) + '\n');
    log.info({ copied: p.copied, topics: p.topics, groups: p.groups }, 'bridge stopped');
    if (failure) {
      process.stderr.write(failure.message + '\n');
      process.exit(1);
    }
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT', null));
  process.on('SIGTERM', () => void stop('SIGTERM', null));
  bridge.done.catch((e: Error) => void stop('failure', e));
}

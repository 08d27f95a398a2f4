/**
 * The `queen-gateway` command. `serve` (the default) runs the gateway and the
 * core in one process; `core` runs the core alone behind the internal RPC and
 * `gateway --core HOST:PORT` a Kafka listener that uses it (the split layout).
 * Each is configured by flags and QUEEN_* environment variables
 * (./settings.ts), validated before anything starts. Logs are pino JSON on
 * stdout; a configuration mistake is one sentence on stderr and exit code 2.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { openCore, type Core } from '../core/index.js';
import { startBroker, type StartBrokerOptions } from '../index.js';
import { connectCore, formatRpcAddress, parseRpcAddress, RpcServer } from '../rpc/index.js';
import { runBridge } from './bridge.js';
import type { BridgeConfig } from './bridge-settings.js';
import { printConfig } from './config-print.js';
import { processLogger, SignalHandling } from './lifecycle.js';
import { COMMANDS, ConfigError, helpText, listenersOf, overviewText, readBridgeSettings, readConfig, saslMechanismsOf, type Command, type ServeConfig } from './settings.js';
import { usesSasl } from '../gateway/listeners.js';
import { TlsCredentials } from '../tls/credentials.js';
import { serveOperations, type OperationsEndpoint } from '../metrics/endpoint.js';
import { coreProblem } from '../operations/health.js';
import { coreExposition } from '../operations/registry.js';
import { CoreWatch } from '../operations/core-watch.js';
import { notifyReady } from './systemd.js';
import { paceGarbageCollection } from './heap.js';

const USAGE_ERROR = 2;

const MEMORY_ENGINE_WARNING =
  'Using the memory engine: every topic and record is lost when this process exits. For durable storage run with --engine postgres --database-url postgres://user:pass@host:5432/db (or QUEEN_ENGINE=postgres and QUEEN_DATABASE_URL).';

function logger(config: ServeConfig, service: string): Logger {
  return processLogger(config.logLevel, service);
}

function groupOptions(config: ServeConfig) {
  return {
    initialRebalanceDelayMs: config.groupInitialRebalanceDelayMs,
    minSessionTimeoutMs: config.groupMinSessionTimeoutMs,
    maxSessionTimeoutMs: config.groupMaxSessionTimeoutMs,
    maxGroupSize: config.groupMaxSize,
  };
}

/** KIP-848 consumer groups: Kafka's group.consumer.* settings. */
function consumerGroupOptions(config: ServeConfig) {
  return {
    heartbeatIntervalMs: config.groupConsumerHeartbeatIntervalMs,
    sessionTimeoutMs: config.groupConsumerSessionTimeoutMs,
    maxGroupSize: config.groupMaxSize,
  };
}

function databaseOptions(config: ServeConfig) {
  return {
    ...(config.redisUrl === undefined ? {} : { redisUrl: config.redisUrl, redisKeyPrefix: config.redisKeyPrefix, crossNodeWakeups: config.crossNodeWakeups as 'redis' | 'notify' }),
    poolSize: config.databasePoolSize,
    databaseWaitMs: config.databaseWaitMs,
    connectTimeoutMs: config.databaseConnectTimeoutMs,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    coordinatorLeaseMs: config.coordinatorLeaseMs,
  };
}

/** How far produced batches may inflate while the core checks them. */
function appendLimits(config: ServeConfig) {
  return { maxInflatedBatchBytes: config.maxInflatedBatchBytes, maxInflatedRequestBytes: config.maxInflatedRequestBytes };
}

/** The Kafka listener's options, shared by serve and gateway. */
function listenerOptions(config: ServeConfig, log: Logger): StartBrokerOptions {
  const listeners = listenersOf(config);
  return {
    listeners,
    ...(config.tlsCertFile === undefined
      ? {}
      : { tls: { certFile: config.tlsCertFile, keyFile: config.tlsKeyFile!, caFile: config.tlsCaFile, clientAuth: config.tlsClientAuth as 'none' | 'requested' | 'required' } }),
    ...(listeners.some((l) => usesSasl(l.name)) ? { sasl: saslOptions(config) } : {}),
    host: config.host,
    port: config.port,
    advertisedHost: config.advertisedHost,
    advertisedPort: config.advertisedPort,
    autoCreateTopics: config.autoCreateTopics,
    defaultPartitions: config.defaultPartitions,
    logger: log,
    limits: serverLimits(config),
    fetchMaxBytes: config.fetchMaxBytes,
    maxFetchSessions: config.maxFetchSessions,
    transactionVersion: config.transactionVersion,
    authorization: {
      enabled: config.authorizer,
      superUsers: (config.superUsers ?? '').split(';').map((u) => u.trim()).filter((u) => u !== ''),
      allowEveryoneIfNoAclFound: config.allowEveryoneIfNoAclFound,
      refreshMs: config.aclRefreshMs,
    },
    quotas: { refreshMs: config.quotaRefreshMs, windowMs: config.quotaWindowMs, samples: config.quotaWindowSamples },
    nodeId: config.nodeId,
    ...(config.redisUrl === undefined ? {} : { cluster: { redisUrl: config.redisUrl, keyPrefix: config.redisKeyPrefix, nodeTtlMs: config.nodeTtlMs, ...(config.core === undefined ? {} : { core: config.core }) } }),
    clusterId: config.clusterId,
    shutdownGraceMs: config.shutdownGraceMs,
    http: httpOptions(config),
  };
}

function saslOptions(config: ServeConfig): NonNullable<StartBrokerOptions['sasl']> {
  return {
    mechanisms: saslMechanismsOf(config),
    plainUsersFile: config.saslPlainUsersFile,
    maxReauthMs: config.connectionsMaxReauthMs,
    ...(config.saslOauthbearerKeysFile === undefined
      ? {}
      : { oauthbearer: { keysFile: config.saslOauthbearerKeysFile, audience: config.saslOauthbearerAudience, issuer: config.saslOauthbearerIssuer } }),
  };
}

function serverLimits(config: ServeConfig): StartBrokerOptions['limits'] {
  return {
    maxFrameBytes: config.maxFrameBytes,
    maxConnections: config.maxConnections,
    maxConnectionsPerIp: config.maxConnectionsPerIp,
    idleTimeoutMs: config.idleTimeoutMs,
    frameTimeoutMs: config.frameTimeoutMs,
    maxInFlightPerConnection: config.maxInFlight,
    maxBufferedBytes: config.maxBufferedBytes,
    saslMaxReceiveBytes: config.saslMaxReceiveBytes,
    authenticationTimeoutMs: config.authenticationTimeoutMs,
  };
}

/** Queen's native HTTP API on the same core (default port 6632; --no-http turns it off). */
function httpOptions(config: ServeConfig): StartBrokerOptions['http'] {
  if (!config.http) return false;
  return {
    host: config.httpHost ?? config.host,
    port: config.httpPort,
    healthTimeoutMs: config.healthTimeoutMs,
    maxInFlight: config.httpMaxInFlight,
    tls: config.httpTls,
    ...(config.encryptionKey === undefined ? {} : { encryptionKey: config.encryptionKey }),
    ...(config.httpTokensFile !== undefined || config.httpBasicAuth ? { auth: { tokensFile: config.httpTokensFile, basic: config.httpBasicAuth } } : {}),
  };
}

/**
 * The operations listener (--metrics-port): /metrics with the process's
 * series and the core's figures, /health the process's liveness, /ready the core's answer and
 * `notReady`. None when the flag is not given.
 */
async function startOperations(config: ServeConfig, core: Core, log: Logger, notReady: () => string | null): Promise<OperationsEndpoint | null> {
  if (config.metricsPort === undefined) return null;
  // The core's figures as last read: /metrics never waits on a store that does not answer.
  const watch = new CoreWatch(core, 'The core', config.healthTimeoutMs);
  const endpoint = await serveOperations({
    host: config.metricsHost,
    port: config.metricsPort,
    metrics: () => coreExposition(watch),
    // /health is liveness (the process runs), as on the HTTP API; /ready asks the core too.
    ready: async () => notReady() ?? (await coreProblem(core, config.healthTimeoutMs)),
  });
  log.info({ metrics: `${endpoint.url}/metrics` }, `operations listener on ${endpoint.url}: /metrics, /health, /ready`);
  return endpoint;
}

async function serve(config: ServeConfig): Promise<void> {
  const log = logger(config, 'queen-gateway');
  const signals = new SignalHandling(log);
  // The first line a newcomer reads says where the data goes.
  if (config.engine === 'memory') log.warn(MEMORY_ENGINE_WARNING);
  const broker = await startBroker({
    ...listenerOptions(config, log),
    engine: config.engine as 'memory' | 'postgres',
    url: config.databaseUrl,
    schema: config.databaseSchema,
    database: databaseOptions(config),
    memoryMaxBytes: config.memoryMaxBytes,
    groups: groupOptions(config),
    consumerGroups: consumerGroupOptions(config),
    ...appendLimits(config),
  });
  let stopping = false;
  let operations: OperationsEndpoint | null;
  try {
    operations = await startOperations(config, broker.core, log, () => (stopping ? 'The gateway is shutting down.' : null));
  } catch (e) {
    await broker.stop();
    throw e;
  }
  log.info({ bootstrap: broker.bootstrap, listeners: broker.listeners.map((l) => `${l.name}://${l.advertised.host}:${l.advertised.port}`), http: broker.httpUrl }, `ready: point bootstrap.servers at ${broker.bootstrap}`);
  void notifyReady(log, `serving Kafka at ${broker.bootstrap}`);
  signals.serving(async () => {
    stopping = true;
    await broker.stop();
    await operations?.close();
  });
}

/** Mutual TLS on the RPC, when its three files are given (settings.ts checks they come together). */
function rpcTls(config: ServeConfig, log: Logger): TlsCredentials | undefined {
  if (config.rpcTlsCertFile === undefined) return undefined;
  return new TlsCredentials({ certFile: config.rpcTlsCertFile, keyFile: config.rpcTlsKeyFile!, caFile: config.rpcTlsCaFile, clientAuth: 'required' }, log);
}

/** The core alone: an engine and the group coordinator, served to gateways over the internal RPC. */
async function runCore(config: ServeConfig): Promise<void> {
  const log = logger(config, 'queen-core');
  const signals = new SignalHandling(log);
  if (config.engine === 'memory') log.warn(MEMORY_ENGINE_WARNING);
  const core: Core = await openCore(
    config.engine === 'postgres'
      ? { engine: 'postgres', url: config.databaseUrl, schema: config.databaseSchema, groups: groupOptions(config), consumerGroups: consumerGroupOptions(config), log, ...databaseOptions(config), ...appendLimits(config) }
      : { engine: 'memory', groups: groupOptions(config), consumerGroups: consumerGroupOptions(config), log, maxStoredBytes: config.memoryMaxBytes, ...appendLimits(config) },
  );
  let server: RpcServer;
  try {
    server = new RpcServer({
      core,
      secret: config.rpcSecret,
      tls: rpcTls(config, log),
      handshakeTimeoutMs: config.rpcHandshakeTimeoutMs,
      maxUnauthenticated: config.rpcMaxUnauthenticated,
      log,
    });
  } catch (e) {
    await core.close();
    throw e;
  }
  let bound;
  try {
    bound = await server.listen(config.rpcSocket !== undefined ? { path: config.rpcSocket } : { host: config.rpcHost, port: config.rpcPort });
  } catch (e) {
    await core.close();
    throw e;
  }
  let stopping = false;
  let operations: OperationsEndpoint | null;
  try {
    operations = await startOperations(config, core, log, () => (stopping ? 'The core is shutting down.' : null));
  } catch (e) {
    await server.close();
    await core.close();
    throw e;
  }
  log.info({ rpc: formatRpcAddress(bound), engine: config.engine, authentication: [...(config.rpcSecret === undefined ? [] : ['secret']), ...(config.rpcTlsCertFile === undefined ? [] : ['mutual TLS'])] }, `ready: gateways connect with --core ${formatRpcAddress(bound).replace(/^unix:/, '')}`);
  void notifyReady(log, `serving the core at ${formatRpcAddress(bound)}`);
  signals.serving(async () => {
    stopping = true;
    await server.close();
    await core.close();
    await operations?.close();
  });
}

/** A Kafka listener whose core is another process. */
async function runGateway(config: ServeConfig): Promise<void> {
  const log = logger(config, 'queen-gateway');
  const signals = new SignalHandling(log);
  const core = await connectCore({ address: parseRpcAddress(config.core!), secret: config.rpcSecret, tls: rpcTls(config, log), callTimeoutMs: config.rpcCallTimeoutMs, connectTimeoutMs: 30_000, log });
  let broker;
  try {
    const options = listenerOptions(config, log);
    // A gateway whose core is gone can serve nothing: it leaves the registry until the core answers again.
    if (options.cluster) options.cluster.serving = () => core.reachable();
    broker = await startBroker({ ...options, core });
  } catch (e) {
    await core.close();
    throw e;
  }
  let stopping = false;
  const notReady = () => (stopping ? 'The gateway is shutting down.' : core.reachable() ? null : `The core at ${core.address} does not answer.`);
  let operations: OperationsEndpoint | null;
  try {
    operations = await startOperations(config, core, log, notReady);
  } catch (e) {
    await broker.stop();
    await core.close();
    throw e;
  }
  log.info({ bootstrap: broker.bootstrap, core: core.address }, `ready: point bootstrap.servers at ${broker.bootstrap}`);
  void notifyReady(log, `serving Kafka at ${broker.bootstrap}`);
  signals.serving(async () => {
    stopping = true;
    await broker.stop();
    await core.close();
    await operations?.close();
  });
}

/** The version in the package.json this file was installed with (two folders up from src/cli, three from dist/src/cli). */
function packageVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'queen-gateway' && pkg.version) return pkg.version;
    } catch {
      // not at this depth
    }
  }
  return 'unknown';
}

export async function main(argv: readonly string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === '--version' || first === '-v' || first === 'version') {
    process.stdout.write(`queen-gateway ${packageVersion()}\n`);
    return;
  }
  if (first === '--help' || first === '-h' || first === 'help') {
    const topic = rest[0];
    process.stdout.write((topic !== undefined && topic in COMMANDS ? helpText(topic as Command) : overviewText()) + '\n');
    return;
  }
  if (first === 'config') return configCommand(rest);
  const command = first === undefined || first.startsWith('--') ? 'serve' : first;
  const args = first === undefined || first.startsWith('--') ? argv : rest;
  if (command === 'bridge') return bridgeCommand(args);
  if (!(command in COMMANDS)) {
    process.stderr.write(`Unknown command "${command}"; the commands are ${Object.keys(COMMANDS).join(', ')} (run "queen-gateway <command> --help" for its flags).\n`);
    process.exitCode = USAGE_ERROR;
    return;
  }
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(helpText(command as Command) + '\n');
    return;
  }
  let config: ServeConfig;
  try {
    config = readConfig(args, process.env, command as Command);
  } catch (e) {
    if (e instanceof ConfigError) {
      process.stderr.write(e.message + '\n');
      process.exitCode = USAGE_ERROR;
      return;
    }
    throw e;
  }
  paceGarbageCollection();
  try {
    await (command === 'core' ? runCore : command === 'gateway' ? runGateway : serve)(config);
  } catch (e) {
    // A start failure the settings could not catch (port in use, database down, core refusing): one line, then exit.
    const inUse = (e as NodeJS.ErrnoException).code === 'EADDRINUSE';
    const operationsPort = inUse && config.metricsPort !== undefined && (e as { port?: number }).port === config.metricsPort;
    const reason = operationsPort
      ? `Port ${config.metricsPort} on ${config.metricsHost} (--metrics-port) is already in use; stop whatever holds it or choose another with --metrics-port.`
      : inUse && command === 'core'
      ? `The RPC address ${config.rpcSocket ?? `${config.rpcHost}:${config.rpcPort}`} is already in use; stop whatever holds it or choose another with --rpc-port or --rpc-socket.`
      : inUse
        ? config.listener === undefined
          ? `Port ${config.port} on ${config.host} is already in use; stop whatever holds it or choose another with --port.`
          : `A listener's port is already in use (${config.listener.join(', ')}); stop whatever holds it or choose another port in --listener.`
        : `The ${command === 'core' ? 'core' : 'gateway'} could not start: ${(e as Error).message}`;
    process.stderr.write(reason + '\n');
    process.exit(1);
  }
}

/** `config print [COMMAND] [flags]`: the effective configuration, or the sentence saying what is wrong with it (exit 2). */
function configCommand(args: readonly string[]): void {
  const [verb, ...rest] = args;
  const command = rest[0] !== undefined && !rest[0].startsWith('--') ? rest[0] : 'serve';
  const flags = rest[0] === command ? rest.slice(1) : rest;
  if (verb !== 'print' || !(command in COMMANDS)) {
    process.stderr.write(`Usage: queen-gateway config print [${Object.keys(COMMANDS).join('|')}] [--config FILE] [flags]: prints the effective configuration of a command (default serve).\n`);
    process.exitCode = USAGE_ERROR;
    return;
  }
  try {
    process.stdout.write(printConfig(command as Command, flags, process.env));
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(e.message + '\n');
    process.exitCode = USAGE_ERROR;
  }
}

/** The migration bridge (./bridge.ts): its own table of settings, the same parser and exit codes. */
async function bridgeCommand(args: readonly string[]): Promise<void> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(helpText('bridge') + '\n');
    return;
  }
  let config: BridgeConfig;
  try {
    config = readBridgeSettings(args, process.env);
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(e.message + '\n');
    process.exitCode = USAGE_ERROR;
    return;
  }
  try {
    await runBridge(config);
  } catch (e) {
    process.stderr.write(`The bridge could not start: ${(e as Error).message}\n`);
    process.exit(1);
  }
}

await main(process.argv.slice(2));

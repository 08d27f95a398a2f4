/**
 * queen-gateway as a library.
 *
 * `startBroker(options?)` starts a Kafka-protocol gateway and a Queen core in
 * this process and resolves once clients can connect:
 *
 * ```ts
 * import { startBroker } from 'queen-gateway';
 * const broker = await startBroker();              // memory engine, 127.0.0.1, a free port
 * // new Kafka({ brokers: [broker.bootstrap] }) ... librdkafka: 'bootstrap.servers': broker.bootstrap
 * await broker.stop();
 * ```
 *
 * Options (all optional):
 * - `engine`: 'memory' (default; data is lost on stop) or 'postgres' with
 *   `url` (a PostgreSQL connection URL) and `schema` (default "queen").
 * - `host` (default '127.0.0.1') and `port` (default 0: a free port).
 * - `advertisedHost`, `advertisedPort`: what Metadata tells clients to dial;
 *   default the bound address. A wildcard `host` ('0.0.0.0', '::') needs
 *   `advertisedHost`.
 * - `autoCreateTopics` (default true), `defaultPartitions` (default 1).
 * - `logLevel` (default 'silent') or `logger` (a pino logger).
 * - `limits`: the server's limits (maxFrameBytes, maxConnections,
 *   maxConnectionsPerIp, idleTimeoutMs, frameTimeoutMs,
 *   maxInFlightPerConnection, maxBufferedBytes), `fetchMaxBytes`,
 *   `maxFetchSessions`, `nodeId` (default 0), `clusterId`, `shutdownGraceMs`,
 *   `transactionVersion` (the transaction.version level finalized, default 2).
 * - `database`: the PostgreSQL pool's poolSize, connectTimeoutMs and
 *   statementTimeoutMs; `memoryMaxBytes`: the memory engine's size limit.
 * - `core`: an already-open Core to serve instead of opening one; `stop()`
 *   then leaves it open.
 * - `http`: Queen's native HTTP API on the same core, `{ port, host,
 *   bodyLimit, healthTimeoutMs, maxInFlight }` (port default 6632, 0 picks a free one; host default the
 *   gateway's; maxInFlight: requests at the core at once before 429, default 1024). Off when absent or false.
 *
 * - `listeners`: several Kafka listeners at once, each
 *   `{ name: 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL', host, port,
 *   advertisedHost?, advertisedPort? }`; default one PLAINTEXT listener on
 *   `host`/`port`. `tls`: `{ certFile, keyFile, caFile?, clientAuth? }` for
 *   the SSL ones (and the HTTP API when `http.tls` is set); `sasl`:
 *   mechanisms and sessions for the SASL ones (see src/gateway/sasl/settings.ts).
 *
 * - `authorization`: ACLs, `{ enabled, superUsers, allowEveryoneIfNoAclFound,
 *   refreshMs }` (src/access/authorizer.ts); off by default. `quotas`:
 *   `{ refreshMs, windowMs, samples }` for client quotas (src/gateway/quotas.ts).
 *   `http.auth`: `{ tokensFile, basic }` puts the HTTP API behind credentials
 *   and the same ACLs (src/http/access.ts).
 *
 * - `cluster`: several gateways as one Kafka cluster, `{ redisUrl, nodeTtlMs?,
 *   keyPrefix?, core? }`: the gateway registers in Redis (src/cluster/), and
 *   Metadata lists every live gateway and spreads partition leadership over
 *   them. `nodeId` then defaults to one derived from the advertised address.
 *
 * The result: `{ bootstrap: 'host:port', host, port, listeners, core, httpUrl, stop() }`, where
 * host and port are the first listener's advertised address and `stop()` shuts the gateway
 * down gracefully and closes the core. `stop()` may be called more than once.
 */
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { pino, type Level, type Logger } from 'pino';
import { openCore, type ConsumerCoordinatorOptions, type CoordinatorOptions, type Core, type EngineName } from './core/index.js';
import type { GatewaySettings } from './gateway/handler.js';
import { isWildcardHost, type ListenerSpec } from './gateway/listeners.js';
import { buildSasl, type BuiltSasl, type SaslOptions } from './gateway/sasl/settings.js';
import { GatewayServer, type BoundListener } from './gateway/server.js';
import type { ServerLimits } from './gateway/limits.js';
import { TlsCredentials, type TlsFiles } from './tls/credentials.js';
import type { AuthorizationSettings } from './access/authorizer.js';
import type { QuotaSettings } from './gateway/quotas.js';
import { DEFAULT_HTTP_PORT, startHttpServer, type HttpServer } from './http/index.js';
import { operatorView } from './gateway/operator-view.js';
import { derivedNodeId } from './cluster/leadership.js';
import { joinRegistry, leaveRegistry, registeredNode, type Registration } from './cluster/registration.js';

export type { ConsumerCoordinatorOptions, Core, CoordinatorOptions } from './core/index.js';
export { GatewayServer, type GatewayOptions } from './gateway/server.js';
export { DEFAULT_LIMITS, type ServerLimits } from './gateway/limits.js';
export type { GatewaySettings } from './gateway/handler.js';
export type { AuthorizationSettings } from './access/authorizer.js';
export type { QuotaSettings } from './gateway/quotas.js';
export { isWildcardHost, type ListenerSpec, type SecurityProtocol } from './gateway/listeners.js';
export type { SaslOptions } from './gateway/sasl/settings.js';
export type { BoundListener } from './gateway/server.js';
export { TlsCredentials, type TlsFiles } from './tls/credentials.js';
export { buildHttpApi, startHttpServer, DEFAULT_HTTP_PORT, type HttpApiOptions, type HttpServer, type HttpServerOptions } from './http/index.js';
export * from './client/index.js';

export type { EngineName } from './core/index.js';
export type LogLevel = Level | 'silent';

export interface StartBrokerOptions {
  engine?: EngineName;
  /** PostgreSQL connection URL (engine 'postgres'). */
  url?: string;
  /** PostgreSQL schema (engine 'postgres'). */
  schema?: string;
  host?: string;
  port?: number;
  advertisedHost?: string;
  advertisedPort?: number;
  autoCreateTopics?: boolean;
  defaultPartitions?: number;
  logLevel?: LogLevel;
  logger?: Logger;
  limits?: Partial<ServerLimits>;
  fetchMaxBytes?: number;
  maxFetchSessions?: number;
  /** The transaction.version feature level ApiVersions finalizes: 2 (default, as Kafka 4) lets clients use KIP-890 part 2. */
  transactionVersion?: number;
  nodeId?: number;
  clusterId?: string;
  /** How long stop() lets in-flight requests finish. Default 5000 ms. */
  shutdownGraceMs?: number;
  /**
   * Group coordinator settings. Tests usually want `{ initialRebalanceDelayMs: 0 }`
   * (Kafka's group.initial.rebalance.delay.ms, default 3000) so groups form at once.
   */
  groups?: Partial<CoordinatorOptions>;
  /**
   * KIP-848 consumer group settings: Kafka's group.consumer.heartbeat.interval.ms
   * (default 5000), group.consumer.session.timeout.ms (45000) and
   * group.consumer.max.size. Tests usually want a short heartbeat interval.
   */
  consumerGroups?: Partial<ConsumerCoordinatorOptions>;
  core?: Core;
  /** Bytes one produced compressed batch may inflate to while the core checks it (default 16 MiB). */
  maxInflatedBatchBytes?: number;
  /** Bytes all compressed batches of one Produce request may inflate to together (default 64 MiB). */
  maxInflatedRequestBytes?: number;
  /** How often the core's compactor looks at compacted topics (cleanup.policy=compact); 0 turns it off. Default 15 s, Kafka's cleaner backoff. */
  compactionIntervalMs?: number;
  /** Queen's native HTTP API on the same core; off when absent or false. */
  http?: {
    port?: number;
    host?: string;
    bodyLimit?: number;
    healthTimeoutMs?: number;
    maxInFlight?: number;
    /** 64 hex characters: the key that seals the payloads of queues configured with encryptionEnabled (src/http/payload-cipher.ts). */
    encryptionKey?: string;
    /** HTTPS with the `tls` files. */
    tls?: boolean;
    /**
     * Authentication (bearer tokens from `tokensFile`, `name=token` lines;
     * Basic with the SASL/PLAIN users when `basic` and SASL is configured),
     * and the gateway's ACLs on queues (src/http/access.ts). Off when absent.
     */
    auth?: { tokensFile?: string; basic?: boolean };
  } | false;
  /**
   * PostgreSQL engine: the pool's size and timeouts (connect default 5 s,
   * statement default 10 s). A database that stops answering makes requests
   * fail with retriable errors within these, never hang.
   */
  database?: {
    poolSize?: number;
    connectTimeoutMs?: number;
    statementTimeoutMs?: number;
    /** With a database URL naming several servers: Fetches this many records behind (or more) read from a standby (docs/failover.md). */
    standbyReadLagRecords?: number;
    /** Redis for cross-node wake-ups (src/core/engines/postgres/redis-wakeups.ts), with its key prefix and the choice of 'redis' (default) or 'notify'. */
    redisUrl?: string;
    redisKeyPrefix?: string;
    crossNodeWakeups?: 'redis' | 'notify';
    coordinatorLeaseMs?: number;
  };
  /**
   * Memory engine: most bytes of records and KV entries kept; past it Produce answers
   * POLICY_VIOLATION (and native pushes 507) saying why. Default a quarter of
   * the machine's memory; 0 = no limit.
   */
  memoryMaxBytes?: number;
  /** ACLs (Kafka's StandardAuthorizer rules over bindings stored in the core); off by default. */
  authorization?: Partial<AuthorizationSettings>;
  /** Client quotas: how often they are read from the core, and the measuring windows. */
  quotas?: Partial<QuotaSettings>;
  /** Kafka listeners; default one PLAINTEXT listener on host and port. */
  listeners?: readonly ListenerSpec[];
  /** Certificate, key and client-certificate policy for SSL and SASL_SSL listeners. */
  tls?: TlsFiles;
  /** SASL mechanisms and sessions for SASL_PLAINTEXT and SASL_SSL listeners. */
  sasl?: SaslOptions;
  /** Several gateways as one cluster, registered in Redis (src/cluster/membership.ts); absent for a gateway alone. */
  cluster?: ClusterOptions;
}

export interface ClusterOptions {
  /** redis://host:port of the Redis that carries the node registry. */
  redisUrl: string;
  /** How long a gateway stays listed after its last heartbeat (default 6000 ms; heartbeats every third of it). */
  nodeTtlMs?: number;
  /** Prefix of the registry's keys, so clusters can share a Redis (default "queen"). */
  keyPrefix?: string;
  /** How the registry names the core this gateway uses (default its RPC address, or "in-process:HOST:PORT" for its own). */
  core?: string;
  /**
   * Whether this gateway's core answers now (a core across the RPC: the
   * connection is up). While it does not, the gateway withdraws from the
   * registry, so Metadata elsewhere stops naming it and clients go to the
   * gateways that can serve them; default always.
   */
  serving?: () => boolean;
}

export interface Broker {
  /** "host:port", ready for `bootstrap.servers`. */
  bootstrap: string;
  host: string;
  port: number;
  /** Every Kafka listener, bound, with the address Metadata answers on it. */
  listeners: BoundListener[];
  core: Core;
  /** http://host:port of the native HTTP API, when `http` was asked for. */
  httpUrl?: string;
  stop(): Promise<void>;
}

/** A Kafka-style cluster id: 22 characters of URL-safe base64 from 16 random bytes. */
export function newClusterId(): string {
  return randomBytes(16).toString('base64url');
}

export async function startBroker(options: StartBrokerOptions = {}): Promise<Broker> {
  const host = options.host ?? '127.0.0.1';
  if (isWildcardHost(host) && !options.advertisedHost) {
    throw new Error(`Listening on the wildcard address ${host || '(empty)'} needs an advertised host: set advertisedHost to the name or address clients should dial.`);
  }
  const log = options.logger ?? pino({ level: options.logLevel ?? 'silent' });
  const ownCore = options.core === undefined;
  const core = options.core ?? (await openEngine(options, log));
  const parts: BrokerParts = { options, host, log, core, ownCore, settings: gatewaySettings(options), listeners: [], registry: null, http: null };
  try {
    await openListeners(parts);
    if (options.cluster) parts.registry = await joinCluster(parts, options.cluster);
    if (options.http) {
      parts.http = await startHttp(parts, options.http);
      log.info({ url: parts.http.url }, 'HTTP API listening');
    }
  } catch (e) {
    await stopParts(parts, 0);
    throw e;
  }
  return brokerOf(parts);
}

/** What startBroker has opened so far, closed in reverse on a failure or by stop(). */
interface BrokerParts {
  options: StartBrokerOptions;
  host: string;
  log: Logger;
  core: Core;
  ownCore: boolean;
  settings: GatewaySettings;
  tls?: TlsCredentials;
  sasl?: BuiltSasl;
  gateway?: GatewayServer;
  listeners: BoundListener[];
  registry: Registration | null;
  http: HttpServer | null;
}

function gatewaySettings(options: StartBrokerOptions): GatewaySettings {
  return {
    clusterId: options.clusterId ?? newClusterId(),
    // Filled in once the port is bound.
    advertised: { nodeId: options.nodeId ?? 0, host: '', port: 0, rack: null },
    autoCreateTopics: options.autoCreateTopics ?? true,
    defaultPartitions: options.defaultPartitions ?? 1,
    fetchMaxBytes: options.fetchMaxBytes ?? 55 * 1024 * 1024,
    maxFetchSessions: options.maxFetchSessions ?? 1000,
    transactionVersion: options.transactionVersion ?? 2,
  };
}

/** The gateway on every Kafka listener; the first one's advertised address becomes the broker's. */
async function openListeners(parts: BrokerParts): Promise<void> {
  const { options, host, core, log, settings } = parts;
  const specs: readonly ListenerSpec[] = options.listeners ?? [
    { name: 'PLAINTEXT', host, port: options.port ?? 0, advertisedHost: options.advertisedHost, advertisedPort: options.advertisedPort },
  ];
  if (specs.length === 0) throw new Error('No listeners: give at least one, e.g. { name: "PLAINTEXT", host: "127.0.0.1", port: 9092 }.');
  if (options.tls) parts.tls = new TlsCredentials(options.tls, log);
  if (options.sasl) parts.sasl = buildSasl(options.sasl, core, log);
  const { tls, sasl } = parts;
  const gateway = new GatewayServer({ core, settings, limits: options.limits, log, tls, sasl: sasl?.settings, authorization: options.authorization, quotas: options.quotas });
  parts.gateway = gateway;
  // A cluster member answers nobody as a lone gateway: clients wait until it has joined.
  if (options.cluster) gateway.holdConnectionsUntilJoined();
  for (const spec of specs) {
    if (isWildcardHost(spec.host) && !spec.advertisedHost) {
      throw new Error(`The ${spec.name} listener on the wildcard address ${spec.host || '(empty)'} needs an advertised host: set its advertisedHost to the name or address clients should dial.`);
    }
    parts.listeners.push(await gateway.listenOn(spec));
  }
  settings.advertised.host = parts.listeners[0]!.advertised.host;
  settings.advertised.port = parts.listeners[0]!.advertised.port;
}

function startHttp(parts: BrokerParts, http: Exclude<StartBrokerOptions['http'], false | undefined>): Promise<HttpServer> {
  const { options, core, log, tls, sasl, ownCore } = parts;
  const gateway = parts.gateway!;
  if (http.tls && !tls) throw new Error('The HTTP API over TLS needs the certificate files: give tls { certFile, keyFile }.');
  return startHttpServer({
    core,
    log,
    host: http.host ?? parts.host,
    port: http.port ?? DEFAULT_HTTP_PORT,
    readiness: { engine: engineName(options, ownCore ? null : core), listeners: () => ({ kafka: gateway.accepting }) },
    graceMs: options.shutdownGraceMs ?? 5_000,
    ...(http.bodyLimit === undefined ? {} : { bodyLimit: http.bodyLimit }),
    ...(http.healthTimeoutMs === undefined ? {} : { healthTimeoutMs: http.healthTimeoutMs }),
    ...(http.maxInFlight === undefined ? {} : { maxInFlight: http.maxInFlight }),
    ...(http.encryptionKey === undefined ? {} : { encryptionKey: http.encryptionKey }),
    ...(http.tls ? { tls } : {}),
    ...(http.auth ? { access: { tokensFile: http.auth.tokensFile, checkPassword: http.auth.basic ? sasl?.checkPassword : undefined, authorizer: gateway.authorizer } } : {}),
    console: operatorView(parts.settings, parts.listeners, ownCore),
  });
}

/** Closes what is open, last opened first. Leaving the cluster first moves clients to the other gateways at once, rather than after the TTL. */
async function stopParts(parts: BrokerParts, graceMs: number): Promise<void> {
  await leaveRegistry(parts.registry);
  await parts.http?.close();
  await parts.gateway?.close(graceMs);
  parts.sasl?.close();
  if (parts.ownCore) await parts.core.close();
}

function brokerOf(parts: BrokerParts): Broker {
  const { options, log, listeners, core, http } = parts;
  const advertised = parts.settings.advertised;
  const bootstrap = `${isIP(advertised.host) === 6 ? `[${advertised.host}]` : advertised.host}:${advertised.port}`;
  log.info(
    { listeners: listeners.map((l) => `${l.name}://${l.host}:${l.port}`), advertised: bootstrap, engine: parts.ownCore ? options.engine ?? 'memory' : 'external' },
    'gateway listening',
  );
  let stopping: Promise<void> | null = null;
  return {
    bootstrap,
    host: advertised.host,
    port: advertised.port,
    listeners,
    core,
    ...(http ? { httpUrl: http.url } : {}),
    stop() {
      stopping ??= stopParts(parts, options.shutdownGraceMs ?? 5_000).then(() => log.info('gateway stopped'));
      return stopping;
    },
  };
}

/** Registers this gateway in the node registry and hands the gateway its cluster view. */
async function joinCluster(parts: BrokerParts, cluster: ClusterOptions): Promise<Registration> {
  const { options, settings, listeners, log } = parts;
  const externalCore = parts.ownCore ? null : parts.core;
  const { node: coreNode } = await parts.core.findCoordinators({ kind: 'group', keys: [] });
  const { host, port } = settings.advertised;
  const nodeId = options.nodeId ?? derivedNodeId(host, port);
  const core = cluster.core ?? (externalCore === null ? `in-process:${host}:${port}` : ((externalCore as { address?: string }).address ?? 'external'));
  const self = registeredNode(nodeId, settings.advertised, listeners, core, coreNode);
  const registration = await joinRegistry(self, {
    redisUrl: cluster.redisUrl,
    keyPrefix: cluster.keyPrefix,
    nodeTtlMs: cluster.nodeTtlMs,
    serving: cluster.serving,
    proposedClusterId: settings.clusterId,
    clusterIdConfigured: options.clusterId !== undefined,
    log,
  });
  parts.gateway!.joinCluster(nodeId, registration.clusterId, registration.membership);
  log.info({ nodeId, clusterId: registration.clusterId, redis: registration.connection.where, live: registration.membership.liveNodes().length }, 'joined the cluster');
  return registration;
}

/** What holds the data, as /health and /ready name it: the engine, or the core this gateway uses over the RPC. */
function engineName(options: StartBrokerOptions, externalCore: Core | null): string {
  if (externalCore === null) return options.engine ?? 'memory';
  const address = (externalCore as { address?: string }).address;
  return address === undefined ? 'external core' : `core at ${address}`;
}

function openEngine(options: StartBrokerOptions, log: Logger): Promise<Core> {
  // Every engine gets the same options and takes the ones it knows (src/core/engines/registry.ts).
  return openCore({
    engine: options.engine ?? 'memory',
    groups: options.groups,
    consumerGroups: options.consumerGroups,
    log,
    maxInflatedBatchBytes: options.maxInflatedBatchBytes,
    maxInflatedRequestBytes: options.maxInflatedRequestBytes,
    ...(options.compactionIntervalMs === undefined ? {} : { compactionIntervalMs: options.compactionIntervalMs }),
    ...(options.memoryMaxBytes === undefined ? {} : { maxStoredBytes: options.memoryMaxBytes }),
    ...(options.url === undefined ? {} : { url: options.url }),
    schema: options.schema ?? 'queen',
    ...options.database,
  });
}

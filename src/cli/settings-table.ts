/**
 * Every setting of `serve`, `core` and `gateway`, declared once: its flag
 * (also its key in a configuration file), its type, default and bounds; its
 * environment variable is derived from the flag (./setting-sources.ts), so
 * the names cannot drift. The commands, and the validated configuration's
 * type, derived from the table. Which command takes which setting, and how
 * they are read, is ./settings.ts.
 */
import { defaultMemoryLimitBytes, ENGINE_NAMES, ENGINES } from '../core/index.js';
import { SASL_MECHANISMS } from '../gateway/sasl/settings.js';
import { CLIENT_AUTH_MODES } from '../tls/credentials.js';
import { LOG_LEVELS, type Kind, type SettingDef } from './setting-sources.js';

const MIB = 1024 * 1024;
const INT32_MAX = 2 ** 31 - 1;
/** 1 TiB: byte limits above it are typing mistakes. */
const MAX_BYTES = 2 ** 40;

export const SETTINGS = [
  { flag: 'host', kind: { type: 'string' }, default: '127.0.0.1', help: 'address to listen on' },
  { flag: 'port', kind: { type: 'int', min: 0, max: 65535 }, default: 9092, help: 'port to listen on (0 picks a free one)' },
  { flag: 'advertised-host', kind: { type: 'string' }, help: 'host clients are told to dial (default: the listen host; required with a wildcard listen host)' },
  { flag: 'advertised-port', kind: { type: 'int', min: 1, max: 65535 }, help: 'port clients are told to dial (default: the listen port)' },
  { flag: 'engine', kind: { type: 'choice', choices: ENGINE_NAMES }, default: 'memory', help: `storage engine: ${ENGINE_NAMES.map((name) => ENGINES[name].summary).join(', or ')}` },
  { flag: 'database-url', kind: { type: 'string' }, help: 'PostgreSQL URL for --engine postgres, e.g. postgres://user:pass@localhost:5432/queen' },
  { flag: 'database-schema', kind: { type: 'string' }, default: 'queen', help: 'PostgreSQL schema for --engine postgres' },
  { flag: 'database-pool-size', kind: { type: 'int', min: 1, max: 1_000 }, default: 10, help: 'PostgreSQL connections the core keeps' },
  { flag: 'database-connect-timeout-ms', kind: { type: 'int', min: 100, max: INT32_MAX }, default: 5_000, help: 'how long connecting to PostgreSQL (or waiting for a free pooled connection) may take' },
  { flag: 'database-wait-ms', kind: { type: 'int', min: 0, max: INT32_MAX }, default: 60_000, help: 'at start, how long to keep retrying a PostgreSQL that does not answer yet (starting up, or not reachable), logging each attempt, before giving up (0 = try once)' },
  { flag: 'database-statement-timeout-ms', kind: { type: 'int', min: 100, max: INT32_MAX }, default: 10_000, help: 'how long one PostgreSQL statement may take before the request gets a retriable error' },
  { flag: 'memory-max-bytes', kind: { type: 'int', min: 0, max: MAX_BYTES }, default: defaultMemoryLimitBytes(), defaultText: "a quarter of the machine's memory", help: "memory engine: most bytes of records and KV entries kept; past it writes are refused, saying why (default a quarter of this machine's memory; 0 = no limit)" },
  { flag: 'auto-create-topics', kind: { type: 'bool' }, default: true, help: 'create unknown topics on Metadata requests (--no-auto-create-topics to turn off)' },
  { flag: 'default-partitions', kind: { type: 'int', min: 1, max: 100_000 }, default: 1, help: 'partitions of an auto-created topic' },
  { flag: 'max-frame-bytes', kind: { type: 'int', min: 1024, max: INT32_MAX }, default: 100 * MIB, help: 'largest request frame; a larger one closes its connection' },
  { flag: 'max-connections', kind: { type: 'int', min: 1, max: 1_000_000 }, default: 10_000, help: 'connections accepted at once' },
  { flag: 'max-connections-per-ip', kind: { type: 'int', min: 1, max: 1_000_000 }, default: 1_000, help: 'connections accepted at once from one IP address' },
  { flag: 'idle-timeout-ms', kind: { type: 'int', min: 0, max: INT32_MAX }, default: 600_000, help: 'close connections idle this long (0 = never)' },
  { flag: 'frame-timeout-ms', kind: { type: 'int', min: 0, max: INT32_MAX }, default: 60_000, help: 'a request frame, once begun, must arrive whole within this long or its connection closes (0 = no deadline)' },
  { flag: 'max-in-flight', kind: { type: 'int', min: 1, max: 100_000 }, default: 100, help: 'unanswered requests per connection before reading pauses' },
  { flag: 'max-buffered-bytes', kind: { type: 'int', min: 1024, max: MAX_BYTES }, default: 256 * MIB, help: 'request bytes held at once across all connections; past it, connections stop reading until room is made (at least --max-frame-bytes)' },
  { flag: 'fetch-max-bytes', kind: { type: 'int', min: 1024, max: INT32_MAX }, default: 55 * MIB, help: 'largest Fetch response, whatever a client asks' },
  { flag: 'max-fetch-sessions', kind: { type: 'int', min: 0, max: 1_000_000 }, default: 1000, help: 'incremental fetch sessions kept (0 = none)' },
  { flag: 'shutdown-grace-ms', kind: { type: 'int', min: 0, max: INT32_MAX }, default: 5000, help: 'on SIGTERM/SIGINT, how long in-flight requests may finish' },
  { flag: 'group-initial-rebalance-delay-ms', kind: { type: 'int', min: 0, max: 300_000 }, default: 3000, help: "how long a new group's first rebalance waits for more members (Kafka's group.initial.rebalance.delay.ms)" },
  { flag: 'group-min-session-timeout-ms', kind: { type: 'int', min: 1, max: INT32_MAX }, default: 6000, help: 'shortest session timeout a consumer may ask for' },
  { flag: 'group-max-session-timeout-ms', kind: { type: 'int', min: 1, max: INT32_MAX }, default: 1_800_000, help: 'longest session timeout a consumer may ask for' },
  { flag: 'group-max-size', kind: { type: 'int', min: 1, max: 1_000_000 }, default: 1000, help: 'members a consumer group may have' },
  { flag: 'group-consumer-heartbeat-interval-ms', kind: { type: 'int', min: 100, max: INT32_MAX }, default: 5000, help: "how often a KIP-848 consumer group member heartbeats (Kafka's group.consumer.heartbeat.interval.ms)" },
  { flag: 'group-consumer-session-timeout-ms', kind: { type: 'int', min: 1000, max: INT32_MAX }, default: 45_000, help: "how long a KIP-848 consumer group member may go unheard before it is removed (Kafka's group.consumer.session.timeout.ms)" },
  { flag: 'coordinator-lease-ms', kind: { type: 'int', min: 500, max: 600_000 }, default: 10_000, help: "postgres: how long a core's lease on a group or transactional id outlives its last renewal; when a core dies, another takes its groups over after this (keep it below the clients' session timeout)" },
  // Produce checks every record, inflating compressed batches; these bound that (src/core/rules/batches.ts).
  { flag: 'max-inflated-batch-bytes', kind: { type: 'int', min: 1024, max: INT32_MAX }, default: 16 * MIB, help: 'bytes one produced compressed batch may inflate to; a larger one is refused with MESSAGE_TOO_LARGE' },
  { flag: 'max-inflated-request-bytes', kind: { type: 'int', min: 1024, max: INT32_MAX }, default: 64 * MIB, help: "bytes all compressed batches of one Produce request may inflate to together" },
  { flag: 'node-id', kind: { type: 'int', min: 0, max: INT32_MAX }, help: 'broker id this gateway reports (default 0 alone; with --redis-url, derived from the advertised address, so a restart keeps it)' },
  { flag: 'cluster-id', kind: { type: 'string' }, help: 'cluster id reported to clients (default: random per start)' },
  { flag: 'log-level', kind: { type: 'choice', choices: LOG_LEVELS }, default: 'info', help: 'pino log level' },
  // Queen's native HTTP API on the same core (src/http).
  { flag: 'http', kind: { type: 'bool' }, default: true, help: "serve Queen's native HTTP API in this process (--no-http to turn it off)" },
  { flag: 'http-host', kind: { type: 'string' }, help: 'address the HTTP API listens on (default: --host)' },
  { flag: 'http-port', kind: { type: 'int', min: 0, max: 65535 }, default: 6632, help: 'port the HTTP API listens on (0 picks a free one)' },
  { flag: 'http-max-in-flight', kind: { type: 'int', min: 1, max: 1_000_000 }, default: 1024, help: 'HTTP requests at the core at once (long-poll pops included); one more is answered 429 with Retry-After' },
  { flag: 'health-timeout-ms', kind: { type: 'int', min: 10, max: INT32_MAX }, default: 2_000, help: 'GET /ready answers 503 when the core has not answered within this long' },
  // The split layout: `core` serves an engine over the internal RPC, `gateway --core HOST:PORT` uses it.
  { flag: 'rpc-host', kind: { type: 'string' }, default: '127.0.0.1', help: 'core: address the internal RPC listens on' },
  { flag: 'rpc-port', kind: { type: 'int', min: 0, max: 65535 }, default: 7070, help: 'core: port the internal RPC listens on (0 picks a free one)' },
  { flag: 'rpc-socket', kind: { type: 'string' }, help: 'core: listen on this Unix socket path instead of TCP' },
  { flag: 'rpc-secret', kind: { type: 'string' }, help: 'core and gateway: shared secret that authenticates the hop, at least 16 characters (never sent over the wire); optional with the --rpc-tls-* files' },
  { flag: 'core', kind: { type: 'string' }, help: 'gateway: the core to use, HOST:PORT or the path of its Unix socket' },
  { flag: 'rpc-call-timeout-ms', kind: { type: 'int', min: 100, max: INT32_MAX }, default: 30_000, help: 'gateway: how long a core call may take, beyond the wait a long-poll asks for' },
  { flag: 'rpc-tls-cert-file', kind: { type: 'string' }, help: "core and gateway: mutual TLS on the RPC: this side's PEM certificate chain (the core's server certificate, a gateway's client certificate; reloaded when the file changes)" },
  { flag: 'rpc-tls-key-file', kind: { type: 'string' }, help: 'core and gateway: PEM private key of --rpc-tls-cert-file' },
  { flag: 'rpc-tls-ca-file', kind: { type: 'string' }, help: "core and gateway: PEM CA certificates the other side's certificate must chain to; with the three TLS files the secret is optional, with both a gateway must pass both" },
  { flag: 'rpc-handshake-timeout-ms', kind: { type: 'int', min: 100, max: 600_000 }, default: 5_000, help: 'core: a connection must finish the RPC handshake (TLS and the secret) within this long, or it is closed and logged' },
  { flag: 'rpc-max-unauthenticated', kind: { type: 'int', min: 1, max: 100_000 }, default: 64, help: 'core: connections still in their RPC handshake at once; more are closed at once (logged)' },
  // ACLs and client quotas (src/access/authorizer.ts, src/gateway/quotas.ts); both are stored in the core.
  { flag: 'authorizer', kind: { type: 'bool' }, default: false, help: "check Kafka ACLs on every request, as Kafka's StandardAuthorizer (off: every client may do everything)" },
  { flag: 'super-users', kind: { type: 'string' }, help: 'principals allowed everything with --authorizer, separated by ";" as in Kafka\'s super.users, e.g. "User:admin;User:ops"' },
  { flag: 'allow-everyone-if-no-acl-found', kind: { type: 'bool' }, default: false, help: "with --authorizer, allow everyone on a resource no ACL covers (Kafka's allow.everyone.if.no.acl.found)" },
  { flag: 'acl-refresh-ms', kind: { type: 'int', min: 100, max: INT32_MAX }, default: 5_000, help: 'how often the gateway reads ACLs again from the core (changes made through another gateway take effect within this)' },
  { flag: 'quota-refresh-ms', kind: { type: 'int', min: 100, max: INT32_MAX }, default: 5_000, help: 'how often the gateway reads client quotas again from the core' },
  { flag: 'quota-window-ms', kind: { type: 'int', min: 10, max: 3_600_000 }, default: 1_000, help: "one quota sample window (Kafka's quota.window.size.seconds, in ms)" },
  { flag: 'http-tokens-file', kind: { type: 'string' }, help: 'HTTP API: require credentials; bearer tokens as name=token lines (the principal is User:<name>), ACLs applied with --authorizer' },
  { flag: 'encryption-key', kind: { type: 'string' }, help: "HTTP API: the AES-256-GCM key, 64 hex characters (openssl rand -hex 32), that seals the payloads of queues configured with encryptionEnabled; the environment variable is Queen's own" },
  { flag: 'http-basic-auth', kind: { type: 'bool' }, default: false, help: 'HTTP API: require credentials; accept Basic with the SASL/PLAIN users (--sasl-plain-users-file and the SCRAM store)' },
  { flag: 'quota-window-samples', kind: { type: 'int', min: 2, max: 1_000 }, default: 11, help: "quota sample windows kept (Kafka's quota.window.num)" },
  // Security (issue 19): listeners by security protocol, TLS, SASL.
  { flag: 'listener', kind: { type: 'list' }, help: 'a Kafka listener PROTOCOL://HOST:PORT, PROTOCOL one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL; repeat for several (default PLAINTEXT on --host and --port)' },
  { flag: 'advertised-listener', kind: { type: 'list' }, help: 'the address clients are told to dial for one listener, PROTOCOL://HOST:PORT; repeatable (default: the bound address)' },
  { flag: 'tls-cert-file', kind: { type: 'string' }, help: 'PEM certificate chain for SSL and SASL_SSL listeners (reloaded when the file changes)' },
  { flag: 'tls-key-file', kind: { type: 'string' }, help: 'PEM private key of --tls-cert-file' },
  { flag: 'tls-ca-file', kind: { type: 'string' }, help: 'PEM CA certificates client certificates must chain to' },
  { flag: 'tls-client-auth', kind: { type: 'choice', choices: CLIENT_AUTH_MODES }, default: 'none', help: "client certificates (Kafka's ssl.client.auth): none, requested or required; a verified certificate's subject is the principal" },
  { flag: 'sasl-mechanisms', kind: { type: 'string' }, default: 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512', help: `SASL mechanisms SASL listeners offer, comma-separated, from ${SASL_MECHANISMS.join(', ')}` },
  { flag: 'sasl-plain-users-file', kind: { type: 'string' }, help: 'PLAIN users as name=password lines, checked before the SCRAM store in the core (reloaded when the file changes)' },
  { flag: 'sasl-oauthbearer-keys-file', kind: { type: 'string' }, help: 'OAUTHBEARER: PEM public keys/certificates or a JWKS file that JWTs must be signed with (enables OAUTHBEARER)' },
  { flag: 'sasl-oauthbearer-audience', kind: { type: 'string' }, help: "OAUTHBEARER: a token's aud must name this" },
  { flag: 'sasl-oauthbearer-issuer', kind: { type: 'string' }, help: "OAUTHBEARER: a token's iss must be this" },
  { flag: 'http-tls', kind: { type: 'bool' }, default: false, help: 'serve the HTTP API over HTTPS with --tls-cert-file and --tls-key-file' },
  { flag: 'connections-max-reauth-ms', kind: { type: 'int', min: 0, max: INT32_MAX }, default: 0, help: "Kafka's connections.max.reauth.ms: SASL sessions last this long and clients re-authenticate; a connection past its session is closed (0 = sessions never end)" },
  { flag: 'sasl-max-receive-bytes', kind: { type: 'int', min: 64, max: INT32_MAX }, default: 524_288, help: "largest frame read before a SASL client has authenticated (Kafka's sasl.server.max.receive.size)" },
  { flag: 'authentication-timeout-ms', kind: { type: 'int', min: 0, max: INT32_MAX }, default: 10_000, help: 'a client on a TLS or SASL listener must finish its TLS handshake and SASL authentication within this long (0 = no deadline)' },
  // Several gateways and cores (issue 20): Redis carries the node registry and cross-node wake-ups (src/cluster).
  { flag: 'redis-url', kind: { type: 'string' }, help: 'Redis for the cluster, e.g. redis://127.0.0.1:6379: gateways register there and list each other in Metadata; cores wake each other\'s long-polls through it (default: none, a single node)' },
  { flag: 'redis-key-prefix', kind: { type: 'string' }, default: 'queen', help: 'prefix of the keys and channels in Redis, so several clusters can share one' },
  { flag: 'cross-node-wakeups', kind: { type: 'choice', choices: ['redis', 'notify'] }, default: 'redis', help: "with --redis-url and --engine postgres: what tells other cores of an append, so their long-polls answer at once: Redis pub/sub, or PostgreSQL's LISTEN/NOTIFY (without --redis-url always NOTIFY)" },
  { flag: 'node-ttl-ms', kind: { type: 'int', min: 300, max: 600_000 }, default: 6_000, help: 'with --redis-url: how long a gateway stays listed after its last heartbeat (heartbeats every third of it); a killed gateway\'s partitions move after this' },
  // Operations (issue 33): a small listener for Prometheus and probes (src/metrics/endpoint.ts), for every command.
  { flag: 'metrics-host', kind: { type: 'string' }, default: '127.0.0.1', help: 'address the operations listener (GET /metrics, /health, /ready) listens on' },
  { flag: 'metrics-port', kind: { type: 'int', min: 0, max: 65535 }, help: 'serve GET /metrics, /health and /ready on this port (0 picks a free one; default: no such listener; serve and gateway also answer /metrics, /health and /ready on the HTTP API)' },
] as const satisfies readonly SettingDef[];

// ─── Commands ─────────────────────────────────────────────────────────────────

// ─── Commands ─────────────────────────────────────────────────────────────────

export const COMMANDS = {
  serve: 'the gateway and the core in one process, calling each other directly',
  core: 'the core alone: a storage engine and the group coordinator behind the internal RPC',
  gateway: 'a Kafka listener without an engine, using the core at --core HOST:PORT',
  bridge: "the migration bridge: copies a Kafka cluster's topics and group offsets into the core, offset for offset",
} as const;

export type Command = keyof typeof COMMANDS;


type Flag = (typeof SETTINGS)[number]['flag'];
type CamelCase<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<CamelCase<T>>}` : S;
type ValueOf<K extends Kind> = K extends { type: 'int' } ? number : K extends { type: 'bool' } ? boolean : K extends { type: 'list' } ? string[] : K extends { type: 'pairs' } ? Record<string, string> : string;
type Def<F extends Flag> = Extract<(typeof SETTINGS)[number], { flag: F }>;

/** The validated settings, by camelCase name; settings without a default may be undefined. */
export type ServeConfig = {
  [F in Flag as CamelCase<F>]: Def<F> extends { default: unknown } ? ValueOf<Def<F>['kind']> : ValueOf<Def<F>['kind']> | undefined;
};


/**
 * Every setting of `serve`, declared once: its flag, its environment variable
 * (QUEEN_ + the flag in upper snake case, derived, so the two cannot drift),
 * its type, default and bounds. Flags win over the environment. Validation
 * happens before anything starts; a bad value is one sentence saying what to
 * fix, raised as a ConfigError.
 */
import { defaultMemoryLimitBytes } from '../core/engines/memory/store.js';
import { ENGINE_NAMES, ENGINES } from '../core/engines/registry.js';
import { parseRpcAddress } from '../rpc/address.js';
import { joinAdvertised, parseListener, usesSasl, usesTls, type ListenerAddress, type ListenerSpec } from '../gateway/listeners.js';
import { SASL_MECHANISMS, type SaslMechanismName } from '../gateway/sasl/settings.js';
import { CLIENT_AUTH_MODES } from '../tls/credentials.js';
import { redisUrlProblem } from '../cluster/redis-url.js';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

type Kind =
  | { type: 'string' }
  | { type: 'int'; min: number; max: number }
  | { type: 'bool' }
  | { type: 'choice'; choices: readonly string[] }
  /** Repeatable flag; in the environment, comma-separated. */
  | { type: 'list' };

interface SettingDef {
  flag: string;
  kind: Kind;
  default?: string | number | boolean;
  help: string;
}

const MIB = 1024 * 1024;
const INT32_MAX = 2 ** 31 - 1;
/** 1 TiB: byte limits above it are typing mistakes. */
const MAX_BYTES = 2 ** 40;
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

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
  { flag: 'database-statement-timeout-ms', kind: { type: 'int', min: 100, max: INT32_MAX }, default: 10_000, help: 'how long one PostgreSQL statement may take before the request gets a retriable error' },
  { flag: 'memory-max-bytes', kind: { type: 'int', min: 0, max: MAX_BYTES }, default: defaultMemoryLimitBytes(), help: "memory engine: most bytes of records and KV entries kept; past it writes are refused, saying why (default a quarter of this machine's memory; 0 = no limit)" },
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
  { flag: 'health-timeout-ms', kind: { type: 'int', min: 10, max: INT32_MAX }, default: 2_000, help: 'GET /health answers 503 when the core has not answered within this long' },
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
  // ACLs and client quotas (src/gateway/authorizer.ts, src/gateway/quotas.ts); both are stored in the core.
  { flag: 'authorizer', kind: { type: 'bool' }, default: false, help: "check Kafka ACLs on every request, as Kafka's StandardAuthorizer (off: every client may do everything)" },
  { flag: 'super-users', kind: { type: 'string' }, help: 'principals allowed everything with --authorizer, separated by ";" as in Kafka\'s super.users, e.g. "User:admin;User:ops"' },
  { flag: 'allow-everyone-if-no-acl-found', kind: { type: 'bool' }, default: false, help: "with --authorizer, allow everyone on a resource no ACL covers (Kafka's allow.everyone.if.no.acl.found)" },
  { flag: 'acl-refresh-ms', kind: { type: 'int', min: 100, max: INT32_MAX }, default: 5_000, help: 'how often the gateway reads ACLs again from the core (changes made through another gateway take effect within this)' },
  { flag: 'quota-refresh-ms', kind: { type: 'int', min: 100, max: INT32_MAX }, default: 5_000, help: 'how often the gateway reads client quotas again from the core' },
  { flag: 'quota-window-ms', kind: { type: 'int', min: 10, max: 3_600_000 }, default: 1_000, help: "one quota sample window (Kafka's quota.window.size.seconds, in ms)" },
  { flag: 'http-tokens-file', kind: { type: 'string' }, help: 'HTTP API: require credentials; bearer tokens as name=token lines (the principal is User:<name>), ACLs applied with --authorizer' },
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
] as const satisfies readonly SettingDef[];

// ─── Commands ─────────────────────────────────────────────────────────────────

export const COMMANDS = {
  serve: 'the gateway and the core in one process, calling each other directly',
  core: 'the core alone: a storage engine and the group coordinator behind the internal RPC',
  gateway: 'a Kafka listener without an engine, using the core at --core HOST:PORT',
  bridge: "the migration bridge: copies a Kafka cluster's topics and group offsets into the core, offset for offset",
} as const;

export type Command = keyof typeof COMMANDS;

/** Mutual TLS on the RPC: this side's certificate, its key, the CA the other side's certificate must chain to. */
export const RPC_TLS_FLAGS: readonly string[] = ['rpc-tls-cert-file', 'rpc-tls-key-file', 'rpc-tls-ca-file'];
/** The core's limits on connections that have not authenticated yet. */
const RPC_HANDSHAKE_FLAGS: readonly string[] = ['rpc-handshake-timeout-ms', 'rpc-max-unauthenticated'];
const SPLIT_LAYOUT_FLAGS: readonly string[] = ['rpc-host', 'rpc-port', 'rpc-socket', 'rpc-secret', 'core', 'rpc-call-timeout-ms', ...RPC_TLS_FLAGS, ...RPC_HANDSHAKE_FLAGS];
const STORAGE_AND_GROUP_FLAGS: readonly string[] = [
  'engine',
  'database-url',
  'database-schema',
  'database-pool-size',
  'database-connect-timeout-ms',
  'database-statement-timeout-ms',
  'memory-max-bytes',
  'group-initial-rebalance-delay-ms',
  'group-min-session-timeout-ms',
  'group-max-session-timeout-ms',
  'group-max-size',
  'group-consumer-heartbeat-interval-ms',
  'group-consumer-session-timeout-ms',
  'coordinator-lease-ms',
  'max-inflated-batch-bytes',
  'max-inflated-request-bytes',
];
const CORE_FLAGS: readonly string[] = [...STORAGE_AND_GROUP_FLAGS, 'rpc-host', 'rpc-port', 'rpc-socket', 'rpc-secret', ...RPC_TLS_FLAGS, ...RPC_HANDSHAKE_FLAGS, 'shutdown-grace-ms', 'log-level', 'redis-url', 'redis-key-prefix', 'cross-node-wakeups'];
const NOT_GATEWAY_FLAGS: readonly string[] = [...STORAGE_AND_GROUP_FLAGS, 'rpc-host', 'rpc-port', 'rpc-socket', ...RPC_HANDSHAKE_FLAGS, 'cross-node-wakeups'];
const MIN_SECRET_LENGTH = 16;

/** Whether `command` takes the setting: serve all but the split layout's, core its short list, gateway all but storage and groups. */
export function takesSetting(command: Command, flag: string): boolean {
  switch (command) {
    case 'serve':
      return !SPLIT_LAYOUT_FLAGS.includes(flag);
    case 'core':
      return CORE_FLAGS.includes(flag);
    case 'gateway':
      return !NOT_GATEWAY_FLAGS.includes(flag);
    case 'bridge':
      return false; // its flags are its own (src/cli/bridge.ts)
  }
}

/**
 * The RPC's authentication settings as every end of the hop (core, gateway,
 * bridge) checks them: the three TLS files together or not at all, the secret
 * or the files or both, and a secret long enough. Whether TLS was given.
 */
export function checkRpcAuthentication(who: string, secret: string | undefined, tlsFiles: readonly (string | undefined)[]): boolean {
  const given = tlsFiles.filter((f) => f !== undefined).length;
  if (given !== 0 && given !== RPC_TLS_FLAGS.length) {
    throw new ConfigError(
      `--rpc-tls-cert-file, --rpc-tls-key-file and --rpc-tls-ca-file go together: mutual TLS needs this side's certificate and key and the CA the other side's certificate must chain to; give all three, or none.`,
    );
  }
  if (secret === undefined && given === 0) {
    throw new ConfigError(
      `The ${who} needs a way to authenticate the RPC: set --rpc-secret (or ${envName('rpc-secret')}) to the same string of at least ${MIN_SECRET_LENGTH} characters on the core and every gateway, or give mutual TLS files (--rpc-tls-cert-file, --rpc-tls-key-file, --rpc-tls-ca-file), or both.`,
    );
  }
  if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`The RPC secret is too short: set --rpc-secret (or ${envName('rpc-secret')}) to the same string of at least ${MIN_SECRET_LENGTH} characters on the core and every gateway.`);
  }
  return given !== 0;
}

function checkSplitLayout(command: Command, config: ServeConfig): void {
  if (command === 'serve') return;
  const tls = checkRpcAuthentication(command, config.rpcSecret, [config.rpcTlsCertFile, config.rpcTlsKeyFile, config.rpcTlsCaFile]);
  if (tls && command === 'core' && config.rpcSocket !== undefined) {
    throw new ConfigError('TLS on the RPC takes TCP: drop --rpc-socket and listen with --rpc-host and --rpc-port, or drop the --rpc-tls-* files (a Unix socket\'s file permissions decide who may connect).');
  }
  if (command === 'gateway') {
    if (config.core === undefined) throw new ConfigError(`The gateway needs its core: set --core (or ${envName('core')}) to the core's HOST:PORT, e.g. --core core:7070.`);
    try {
      parseRpcAddress(config.core);
    } catch (e) {
      throw new ConfigError(`The flag --core is wrong: ${(e as Error).message}`);
    }
  }
}

type Flag = (typeof SETTINGS)[number]['flag'];
type CamelCase<S extends string> = S extends `${infer H}-${infer T}` ? `${H}${Capitalize<CamelCase<T>>}` : S;
type ValueOf<K extends Kind> = K extends { type: 'int' } ? number : K extends { type: 'bool' } ? boolean : K extends { type: 'list' } ? string[] : string;
type Def<F extends Flag> = Extract<(typeof SETTINGS)[number], { flag: F }>;

/** The validated settings, by camelCase name; settings without a default may be undefined. */
export type ServeConfig = {
  [F in Flag as CamelCase<F>]: Def<F> extends { default: unknown } ? ValueOf<Def<F>['kind']> : ValueOf<Def<F>['kind']> | undefined;
};

export function envName(flag: string): string {
  return `QUEEN_${flag.toUpperCase().replace(/-/g, '_')}`;
}

function camelCase(flag: string): string {
  return flag.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

function parseValue(def: SettingDef, raw: string, source: string): string | number | boolean | string[] {
  const { kind } = def;
  switch (kind.type) {
    case 'list': {
      const items = raw.split(',').map((item) => item.trim());
      if (items.some((item) => item === '')) throw new ConfigError(`${source} has an empty item; give each value once, e.g. ${source.startsWith('The flag') ? `--${def.flag} A --${def.flag} B` : 'A,B'}.`);
      return items;
    }
    case 'string':
      if (raw.trim() === '') throw new ConfigError(`${source} is empty; give it a value or leave it out.`);
      return raw;
    case 'int': {
      const n = /^-?\d+$/.test(raw.trim()) ? Number(raw) : NaN;
      if (!Number.isSafeInteger(n) || n < kind.min || n > kind.max) {
        throw new ConfigError(`${source} must be a whole number from ${kind.min} to ${kind.max}; got ${JSON.stringify(raw)}.`);
      }
      return n;
    }
    case 'bool':
      if (/^(true|1|yes|on)$/i.test(raw)) return true;
      if (/^(false|0|no|off)$/i.test(raw)) return false;
      throw new ConfigError(`${source} must be true or false; got ${JSON.stringify(raw)}.`);
    case 'choice':
      if (!kind.choices.includes(raw)) {
        throw new ConfigError(`${source} must be one of ${kind.choices.join(', ')}; got ${JSON.stringify(raw)}.`);
      }
      return raw;
  }
}

/** Reads flags (`--name value`, `--name=value`, `--flag`/`--no-flag` for switches) over the environment. */
export function readConfig(argv: readonly string[], env: NodeJS.ProcessEnv, command: Command = 'serve'): ServeConfig {
  const taken = (SETTINGS as readonly SettingDef[]).filter((d) => takesSetting(command, d.flag));
  const defs = new Map<string, SettingDef>(taken.map((d) => [d.flag, d]));
  const values = new Map<string, string | number | boolean | string[]>();

  for (const def of taken) {
    const raw = env[envName(def.flag)];
    if (raw !== undefined && raw !== '') values.set(def.flag, parseValue(def, raw, `The environment variable ${envName(def.flag)}`));
  }

  const flagged = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) throw new ConfigError(`Unexpected argument ${JSON.stringify(arg)}; settings are given as --name value (see --help).`);
    const eq = arg.indexOf('=');
    let name = eq >= 0 ? arg.slice(2, eq) : arg.slice(2);
    let inline: string | undefined = eq >= 0 ? arg.slice(eq + 1) : undefined;
    if (!defs.has(name) && name.startsWith('no-') && defs.get(name.slice(3))?.kind.type === 'bool' && inline === undefined) {
      name = name.slice(3);
      inline = 'false';
    }
    const def = defs.get(name);
    if (!def && SETTINGS.some((d) => d.flag === name)) {
      throw new ConfigError(`The flag --${name} is not a setting of "queen-gateway ${command}"; run "queen-gateway ${command} --help" to see its flags.`);
    }
    if (!def) throw new ConfigError(`Unknown flag --${name}; run "queen-gateway ${command} --help" to see the flags.`);
    let raw = inline;
    if (raw === undefined) {
      if (def.kind.type === 'bool') raw = 'true';
      else {
        raw = argv[++i];
        if (raw === undefined) throw new ConfigError(`The flag --${name} needs a value, e.g. --${name} <value>.`);
      }
    }
    const value = parseValue(def, raw, `The flag --${name}`);
    // A repeated list flag adds to what the flags gave so far (the environment's value is replaced).
    const earlier = def.kind.type === 'list' && flagged.has(name) ? (values.get(name) as string[]) : [];
    values.set(name, Array.isArray(value) ? [...earlier, ...value] : value);
    flagged.add(name);
  }

  const config: Record<string, unknown> = {};
  for (const def of SETTINGS as readonly SettingDef[]) config[camelCase(def.flag)] = values.get(def.flag) ?? def.default;
  checkSplitLayout(command, config as ServeConfig);
  return checkCombinations(config as ServeConfig, command);
}

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

function checkCombinations(config: ServeConfig, command: Command = 'serve'): ServeConfig {
  if (command !== 'core' && WILDCARDS.has(config.host) && config.advertisedHost === undefined) {
    throw new ConfigError(
      `Listening on ${config.host} (every interface) needs an advertised address: set --advertised-host (or ${envName('advertised-host')}) to the host name or IP clients should connect to.`,
    );
  }
  if (config.engine === 'postgres' && config.databaseUrl === undefined) {
    throw new ConfigError(`--engine postgres needs a database: set --database-url (or ${envName('database-url')}) to a URL such as postgres://user:pass@localhost:5432/queen.`);
  }
  if (config.groupMinSessionTimeoutMs > config.groupMaxSessionTimeoutMs) {
    throw new ConfigError(
      `--group-min-session-timeout-ms (${config.groupMinSessionTimeoutMs}) is above --group-max-session-timeout-ms (${config.groupMaxSessionTimeoutMs}); make the minimum the smaller of the two.`,
    );
  }
  if (command !== 'core' && config.maxFrameBytes > config.maxBufferedBytes) {
    throw new ConfigError(
      `--max-frame-bytes (${config.maxFrameBytes}) is above --max-buffered-bytes (${config.maxBufferedBytes}), so a frame of the largest size could never be read; raise --max-buffered-bytes or lower --max-frame-bytes.`,
    );
  }
  if (config.redisUrl !== undefined) {
    const problem = redisUrlProblem(config.redisUrl);
    if (problem) throw new ConfigError(`The flag --redis-url is wrong: ${problem}`);
  }
  if (config.engine === 'memory' && config.databaseUrl !== undefined) {
    throw new ConfigError('A database URL was given but the engine is memory: add --engine postgres to use PostgreSQL, or drop the database URL.');
  }
  if (command !== 'core') checkSecurity(config);
  return config;
}

function readListeners(flag: string, texts: readonly string[]): ListenerAddress[] {
  return texts.map((text) => {
    try {
      return parseListener(text);
    } catch (e) {
      throw new ConfigError(`The flag --${flag} is wrong: ${(e as Error).message}.`);
    }
  });
}

/** The Kafka listeners the settings ask for: --listener, or one PLAINTEXT listener on --host/--port. */
export function listenersOf(config: ServeConfig): ListenerSpec[] {
  if (config.listener === undefined) {
    return [{ name: 'PLAINTEXT', host: config.host, port: config.port, advertisedHost: config.advertisedHost, advertisedPort: config.advertisedPort }];
  }
  try {
    return joinAdvertised(readListeners('listener', config.listener), readListeners('advertised-listener', config.advertisedListener ?? []));
  } catch (e) {
    if (e instanceof ConfigError) throw e;
    throw new ConfigError(`The listeners do not fit together: ${(e as Error).message}.`);
  }
}

export function saslMechanismsOf(config: ServeConfig): SaslMechanismName[] {
  const names = config.saslMechanisms.split(',').map((m) => m.trim().toUpperCase());
  if (config.saslOauthbearerKeysFile !== undefined && !names.includes('OAUTHBEARER')) names.push('OAUTHBEARER');
  for (const name of names) {
    if (!(SASL_MECHANISMS as readonly string[]).includes(name)) {
      throw new ConfigError(`The flag --sasl-mechanisms names ${JSON.stringify(name)}; use a comma-separated list from ${SASL_MECHANISMS.join(', ')}.`);
    }
  }
  return names as SaslMechanismName[];
}

function checkSecurity(config: ServeConfig): void {
  if (config.listener === undefined && config.advertisedListener !== undefined) {
    throw new ConfigError('--advertised-listener needs the listeners it describes: add --listener PROTOCOL://HOST:PORT for each.');
  }
  const listeners = listenersOf(config);
  for (const l of listeners) {
    if (WILDCARDS.has(l.host) && l.advertisedHost === undefined) {
      throw new ConfigError(`The ${l.name} listener on ${l.host} (every interface) needs an advertised address: add --advertised-listener ${l.name}://HOST:${l.port || 'PORT'} with the host clients should dial.`);
    }
  }
  if (config.httpTls && (config.tlsCertFile === undefined || config.tlsKeyFile === undefined)) {
    throw new ConfigError('--http-tls needs a certificate and key: set --tls-cert-file and --tls-key-file (PEM files).');
  }
  const tlsListener = listeners.find((l) => usesTls(l.name));
  if (tlsListener && (config.tlsCertFile === undefined || config.tlsKeyFile === undefined)) {
    throw new ConfigError(`The ${tlsListener.name} listener needs a certificate and key: set --tls-cert-file and --tls-key-file (PEM files).`);
  }
  if ((config.tlsCertFile === undefined) !== (config.tlsKeyFile === undefined)) {
    throw new ConfigError('--tls-cert-file and --tls-key-file go together: give both, or neither.');
  }
  if (config.tlsClientAuth !== 'none' && config.tlsCaFile === undefined) {
    throw new ConfigError(`--tls-client-auth ${config.tlsClientAuth} needs the CA client certificates must chain to: set --tls-ca-file.`);
  }
  if (listeners.some((l) => usesSasl(l.name)) && saslMechanismsOf(config).includes('OAUTHBEARER') && config.saslOauthbearerKeysFile === undefined) {
    throw new ConfigError('OAUTHBEARER needs the keys tokens are signed with: set --sasl-oauthbearer-keys-file to a PEM or JWKS file (unsigned tokens are never accepted).');
  }
}

export function helpText(command: Command = 'serve'): string {
  const lines = [`Usage: queen-gateway ${command} [flags]`, '', `${command}: ${COMMANDS[command]}.`, `Other commands: ${Object.keys(COMMANDS).filter((c) => c !== command).join(', ')}.`, '', 'Every flag can also be set by its environment variable; flags win.', ''];
  for (const def of (SETTINGS as readonly SettingDef[]).filter((d) => takesSetting(command, d.flag))) {
    const shown = def.default === undefined ? '' : ` (default ${def.default})`;
    lines.push(`  --${def.flag.padEnd(20)} ${envName(def.flag).padEnd(30)} ${def.help}${shown}`);
  }
  return lines.join('\n');
}

/** `queen-gateway --help`: the commands, and where each one's flags are listed. */
export function overviewText(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((c) => c.length));
  return [
    'Usage: queen-gateway [command] [flags]',
    '',
    'A Kafka-protocol gateway over the Queen core. Commands:',
    ...Object.entries(COMMANDS).map(([name, what]) => `  ${name.padEnd(width)}  ${what}${name === 'serve' ? ' (the default)' : ''}`),
    '',
    'queen-gateway <command> --help   the flags of one command (each also an environment variable)',
    'queen-gateway --version          the version',
  ].join('\n');
}

/**
 * The checks on settings that one value alone cannot make: the RPC's
 * authentication, the split layout's addresses, the listeners and their
 * security, limits that must fit together. Each failure is one sentence
 * saying what to fix, raised as a ConfigError before anything starts.
 */
import { parseRpcAddress } from '../rpc/address.js';
import { joinAdvertised, parseListener, usesSasl, usesTls, type ListenerAddress, type ListenerSpec } from '../gateway/listeners.js';
import { SASL_MECHANISMS, type SaslMechanismName } from '../gateway/sasl/settings.js';
import { encryptionKeyProblem } from '../http/payload-cipher.js';
import { redisUrlProblem } from '../redis/redis-url.js';
import { ConfigError } from './config-error.js';
import { envName } from './setting-sources.js';
import type { Command, ServeConfig } from './settings-table.js';

/** Mutual TLS on the RPC: this side's certificate, its key, the CA the other side's certificate must chain to. */
export const RPC_TLS_FLAGS: readonly string[] = ['rpc-tls-cert-file', 'rpc-tls-key-file', 'rpc-tls-ca-file'];
const MIN_SECRET_LENGTH = 16;

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

export function checkSplitLayout(command: Command, config: ServeConfig): void {
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

const WILDCARDS = new Set(['0.0.0.0', '::', '[::]']);

export function checkCombinations(config: ServeConfig, command: Command = 'serve'): ServeConfig {
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
  const keyProblem = config.encryptionKey === undefined ? null : encryptionKeyProblem(config.encryptionKey);
  if (keyProblem) throw new ConfigError(`The flag --encryption-key (or ${envName('encryption-key')}) is wrong: ${keyProblem}.`);
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

/**
 * The client's security settings, given under librdkafka's names (the
 * bridge's --source-option takes them, as it did when the bridge read through
 * librdkafka): security.protocol, ssl.* files, sasl.mechanism(s),
 * sasl.username/password, and OAUTHBEARER's OIDC client-credentials settings
 * or librdkafka's unsecured-token config. A setting this client does not know
 * is refused with a sentence, rather than silently ignored.
 */
import { readFileSync } from 'node:fs';
import type { ConnectionOptions } from 'node:tls';

export type SaslSettings =
  | { mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512'; username: string; password: string }
  | { mechanism: 'OAUTHBEARER'; token: () => Promise<string> };

export interface ClientSecurity {
  /** TLS options for node:tls, or null for a plain connection. */
  tls: ConnectionOptions | null;
  sasl: SaslSettings | null;
}

export class ClientSettingError extends Error {
  override readonly name = 'ClientSettingError';
}

/** Settings that shape only librdkafka's own behaviour (logging, buffers); taken and ignored so existing command lines keep working. */
const IGNORED = new Set(['client.id', 'debug', 'log_level', 'socket.keepalive.enable', 'ssl.endpoint.identification.algorithm']);
const KNOWN = new Set([
  'security.protocol',
  'ssl.ca.location',
  'ssl.certificate.location',
  'ssl.key.location',
  'ssl.key.password',
  'enable.ssl.certificate.verification',
  'sasl.mechanism',
  'sasl.mechanisms',
  'sasl.username',
  'sasl.password',
  'sasl.oauthbearer.method',
  'sasl.oauthbearer.config',
  'sasl.oauthbearer.client.id',
  'sasl.oauthbearer.client.secret',
  'sasl.oauthbearer.token.endpoint.url',
  'sasl.oauthbearer.scope',
  'sasl.oauthbearer.extensions',
]);

/** Reads the settings; a missing file or an unknown setting throws a ClientSettingError naming it. */
export function clientSecurity(settings: Readonly<Record<string, string>>): ClientSecurity {
  for (const key of Object.keys(settings)) {
    if (!KNOWN.has(key) && !IGNORED.has(key)) throw new ClientSettingError(`the setting ${key} is not one the bridge's Kafka client takes (it takes ${[...KNOWN].join(', ')})`);
  }
  const protocol = (settings['security.protocol'] ?? 'plaintext').toLowerCase();
  if (!['plaintext', 'ssl', 'sasl_plaintext', 'sasl_ssl'].includes(protocol)) throw new ClientSettingError(`security.protocol=${protocol} is not one of plaintext, ssl, sasl_plaintext, sasl_ssl`);
  return {
    tls: protocol === 'ssl' || protocol === 'sasl_ssl' ? tlsOptions(settings) : null,
    sasl: protocol.startsWith('sasl') ? saslSettings(settings) : null,
  };
}

function tlsOptions(settings: Readonly<Record<string, string>>): ConnectionOptions {
  const file = (key: string) => {
    const path = settings[key];
    if (!path) return undefined;
    try {
      return readFileSync(path);
    } catch (e) {
      throw new ClientSettingError(`${key}=${path} cannot be read: ${(e as Error).message}`);
    }
  };
  const ca = file('ssl.ca.location');
  const cert = file('ssl.certificate.location');
  const key = file('ssl.key.location');
  return {
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(settings['ssl.key.password'] ? { passphrase: settings['ssl.key.password'] } : {}),
    rejectUnauthorized: settings['enable.ssl.certificate.verification'] !== 'false',
  };
}

function saslSettings(settings: Readonly<Record<string, string>>): SaslSettings {
  const mechanism = (settings['sasl.mechanisms'] ?? settings['sasl.mechanism'] ?? 'GSSAPI').toUpperCase();
  if (mechanism === 'PLAIN' || mechanism === 'SCRAM-SHA-256' || mechanism === 'SCRAM-SHA-512') {
    const username = settings['sasl.username'];
    const password = settings['sasl.password'];
    if (username === undefined || password === undefined) throw new ClientSettingError(`sasl.mechanism ${mechanism} needs sasl.username and sasl.password`);
    return { mechanism, username, password };
  }
  if (mechanism === 'OAUTHBEARER') return { mechanism, token: oauthToken(settings) };
  throw new ClientSettingError(`sasl.mechanism ${mechanism} is not one the bridge speaks (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)`);
}

/**
 * OAUTHBEARER's token: with sasl.oauthbearer.method=oidc, fetched from the
 * token endpoint by the client-credentials grant (as librdkafka does), kept
 * until shortly before it expires; otherwise librdkafka's default, an
 * unsecured token for sasl.oauthbearer.config's principal (for brokers that
 * take unsigned tokens).
 */
function oauthToken(settings: Readonly<Record<string, string>>): () => Promise<string> {
  if ((settings['sasl.oauthbearer.method'] ?? 'default').toLowerCase() === 'oidc') {
    const url = settings['sasl.oauthbearer.token.endpoint.url'];
    const id = settings['sasl.oauthbearer.client.id'];
    const secret = settings['sasl.oauthbearer.client.secret'];
    if (!url || !id || secret === undefined) throw new ClientSettingError('sasl.oauthbearer.method=oidc needs sasl.oauthbearer.token.endpoint.url, sasl.oauthbearer.client.id and sasl.oauthbearer.client.secret');
    let cached: { token: string; until: number } | null = null;
    return async () => {
      if (cached && cached.until > Date.now()) return cached.token;
      const body = new URLSearchParams({ grant_type: 'client_credentials', ...(settings['sasl.oauthbearer.scope'] ? { scope: settings['sasl.oauthbearer.scope'] } : {}) });
      const answer = await fetch(url, { method: 'POST', body, headers: { authorization: `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`, 'content-type': 'application/x-www-form-urlencoded' } });
      if (!answer.ok) throw new ClientSettingError(`the token endpoint ${url} answered HTTP ${answer.status}`);
      const json = (await answer.json()) as { access_token?: string; expires_in?: number };
      if (typeof json.access_token !== 'string') throw new ClientSettingError(`the token endpoint ${url} answered no access_token`);
      cached = { token: json.access_token, until: Date.now() + Math.max(0, (json.expires_in ?? 60) - 30) * 1000 };
      return json.access_token;
    };
  }
  const config = Object.fromEntries((settings['sasl.oauthbearer.config'] ?? '').split(/\s+/).filter(Boolean).map((pair) => pair.split('=', 2) as [string, string]));
  const principal = config['principal'];
  if (!principal) throw new ClientSettingError('sasl.mechanism OAUTHBEARER needs sasl.oauthbearer.method=oidc (with its token endpoint) or sasl.oauthbearer.config=principal=NAME for an unsecured token');
  return async () => {
    const { UnsecuredJWT } = await import('jose');
    const life = Number(config['lifeSeconds'] ?? 3600);
    return new UnsecuredJWT({ ...(config['scope'] ? { scope: config['scope'] } : {}) }).setSubject(principal).setIssuedAt().setExpirationTime(`${life}s`).encode();
  };
}

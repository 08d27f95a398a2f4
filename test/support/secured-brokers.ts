/**
 * The gateway and Apache Kafka secured alike, for the suites that hold one
 * against the other over SASL and TLS (the Java client's security test, the
 * SASL differential suite, the security benchmark): one description of
 * users, keys and certificates, two brokers built from it.
 *
 * `makeSecurityFixture()` makes the certificates (test/support/certificates.ts),
 * an RSA key that signs OAUTHBEARER tokens with its public half in a JWKS
 * file both brokers read, and the users, who exist alike for PLAIN (the
 * gateway's users file, Kafka's JAAS entries) and for SCRAM (the gateway's
 * core, Kafka's metadata at format time). `admin` is a super user on both
 * when the authorizer is on; ANONYMOUS (the PLAINTEXT listener) too, which
 * Kafka needs for its own start-up and which lets a harness set up over the
 * plain port.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiKey } from '../../protocol/api-keys.js';
import { scramKeysFromPassword } from '../../src/gateway/sasl/scram.js';
import { startBroker, type Broker } from '../../src/index.js';
import type { SecurityProtocol } from '../../src/gateway/listeners.js';
import { startApacheKafka, type ApacheKafka } from './apache-kafka.js';
import { makeTestPki, type TestPki } from './certificates.js';
import { freePort } from './gateway.js';
import { RawConnection } from './raw-connection.js';

export const SECURED_USERS = { admin: 'admin-secret', alice: 'alice-secret', bob: 'bob-secret', carol: 'carol-secret' } as const;
export type SecuredUser = keyof typeof SECURED_USERS;

export const TOKEN_AUDIENCE = 'queen';
export const TOKEN_ISSUER = 'https://issuer.test';
const KEY_ID = 'test-signer';

export interface SecurityFixture {
  pki: TestPki;
  /** The JWKS both brokers check OAUTHBEARER tokens against. */
  jwksFile: string;
  /** The signing key, PKCS#8 PEM: the Java driver's SignedTokenLoginHandler signs with it. */
  privateKeyFile: string;
  /** A JWT for `sub` signed with the fixture's key, for this audience and issuer, living `lifetimeSeconds`. */
  token(sub: string, lifetimeSeconds?: number): string;
  remove(): void;
}

export function makeSecurityFixture(): SecurityFixture {
  const pki = makeTestPki();
  const signer = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwksFile = join(pki.dir, 'jwks.json');
  writeFileSync(jwksFile, JSON.stringify({ keys: [{ ...signer.publicKey.export({ format: 'jwk' }), kid: KEY_ID, alg: 'RS256', use: 'sig' }] }));
  const privateKeyFile = join(pki.dir, 'token-signer.key');
  writeFileSync(privateKeyFile, signer.privateKey.export({ type: 'pkcs8', format: 'pem' }));
  return {
    pki,
    jwksFile,
    privateKeyFile,
    token(sub, lifetimeSeconds = 300) {
      const now = Math.floor(Date.now() / 1000);
      const header = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: KEY_ID })).toString('base64url');
      const claims = Buffer.from(JSON.stringify({ sub, aud: TOKEN_AUDIENCE, iss: TOKEN_ISSUER, iat: now, exp: now + lifetimeSeconds })).toString('base64url');
      return `${header}.${claims}.${sign('sha256', Buffer.from(`${header}.${claims}`), signer.privateKey).toString('base64url')}`;
    },
    remove: () => pki.remove(),
  };
}

export interface SecuredOptions {
  /** StandardAuthorizer / the gateway's authorizer, with admin (and ANONYMOUS) super users. Default on. */
  authorization?: boolean;
  /** connections.max.reauth.ms; default 0 (sessions last as long as the connection). */
  maxReauthMs?: number;
}

/** A secured broker: an address per listener, and a way to drop a user's SCRAM credentials. */
export interface SecuredBroker {
  name: 'gateway' | 'kafka';
  /** host:port of each listener, PLAINTEXT included. */
  bootstrap: Record<SecurityProtocol, string>;
  port: Record<SecurityProtocol, number>;
  /** Deletes the user's SCRAM-SHA-256 and SCRAM-SHA-512 credentials (AlterUserScramCredentials over PLAINTEXT). */
  deleteScramUser(user: string): Promise<void>;
  stop(): Promise<void>;
}

const PROTOCOLS: readonly SecurityProtocol[] = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'];

function addresses(ports: Record<SecurityProtocol, number>): Record<SecurityProtocol, string> {
  return Object.fromEntries(PROTOCOLS.map((p) => [p, `127.0.0.1:${ports[p]}`])) as Record<SecurityProtocol, string>;
}

async function deleteScramUserOver(port: number, user: string): Promise<void> {
  const raw = await RawConnection.open(port);
  try {
    // One mechanism per request: Kafka refuses two alterations of one user in a request (DUPLICATE_RESOURCE).
    for (const mechanism of [1, 2]) {
      const answer = await raw.request(ApiKey.AlterUserScramCredentials, 0, { deletions: [{ name: user, mechanism }], upsertions: [] });
      const failed = (answer.results as { errorCode: number; errorMessage: string | null }[]).find((r) => r.errorCode !== 0);
      if (failed) throw new Error(`deleting ${user}'s SCRAM credentials failed: ${failed.errorCode} ${failed.errorMessage}`);
    }
  } finally {
    raw.destroy();
  }
}

export async function startSecuredGateway(fixture: SecurityFixture, options: SecuredOptions = {}): Promise<SecuredBroker & { broker: Broker }> {
  const usersFile = join(fixture.pki.dir, `plain-users-${randomBytes(4).toString('hex')}.txt`);
  writeFileSync(usersFile, Object.entries(SECURED_USERS).map(([u, p]) => `${u}=${p}`).join('\n') + '\n');
  const broker = await startBroker({
    logLevel: 'silent',
    nodeId: 1,
    listeners: PROTOCOLS.map((name) => ({ name, host: '127.0.0.1', port: 0 })),
    tls: { certFile: fixture.pki.serverCert, keyFile: fixture.pki.serverKey },
    sasl: {
      mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'],
      plainUsersFile: usersFile,
      oauthbearer: { keysFile: fixture.jwksFile, audience: TOKEN_AUDIENCE, issuer: TOKEN_ISSUER },
      maxReauthMs: options.maxReauthMs ?? 0,
    },
    ...(options.authorization === false ? {} : { authorization: { enabled: true, superUsers: ['User:admin', 'User:ANONYMOUS'] } }),
    autoCreateTopics: true,
    defaultPartitions: 1,
    groups: { initialRebalanceDelayMs: 0 },
    shutdownGraceMs: 1_000,
  });
  for (const [user, password] of Object.entries(SECURED_USERS)) {
    for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
      const salt = randomBytes(16);
      await broker.core.alterScramCredentials({ deletions: [], upsertions: [{ user, mechanism, iterations: 4096, salt, ...(await scramKeysFromPassword(mechanism, password, salt, 4096)) }] });
    }
  }
  const port = Object.fromEntries(broker.listeners.map((l) => [l.name, l.port])) as Record<SecurityProtocol, number>;
  return {
    name: 'gateway',
    broker,
    port,
    bootstrap: addresses(port),
    deleteScramUser: (user) => deleteScramUserOver(port.PLAINTEXT, user),
    stop: () => broker.stop(),
  };
}

export async function startSecuredKafka(fixture: SecurityFixture, options: SecuredOptions = {}): Promise<SecuredBroker & { kafka: ApacheKafka }> {
  const listenerPorts = { SSL: await freePort(), SASL_PLAINTEXT: await freePort(), SASL_SSL: await freePort() };
  const kafka = await startApacheKafka({
    security: {
      listeners: (['SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const).map((protocol) => ({ name: protocol, protocol, port: listenerPorts[protocol] })),
      plainUsers: SECURED_USERS,
      scramUsers: SECURED_USERS,
      oauthbearer: { jwksFile: fixture.jwksFile, audience: TOKEN_AUDIENCE, issuer: TOKEN_ISSUER },
      tls: { certFile: fixture.pki.serverCert, keyFile: fixture.pki.serverKey },
      ...(options.authorization === false ? {} : { superUsers: ['User:admin'] }),
      maxReauthMs: options.maxReauthMs ?? 0,
    },
  });
  const port = { PLAINTEXT: kafka.port, ...listenerPorts };
  return {
    name: 'kafka',
    kafka,
    port,
    bootstrap: addresses(port),
    deleteScramUser: (user) => deleteScramUserOver(kafka.port, user),
    stop: () => kafka.stop(),
  };
}

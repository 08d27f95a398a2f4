/**
 * Security with real clients: kafkajs, librdkafka (@confluentinc/kafka-javascript)
 * and kcat over SASL_SSL, SASL_PLAINTEXT and SSL; PLAIN (users file and the
 * SCRAM store), SCRAM-SHA-256 and SCRAM-SHA-512; wrong passwords; client
 * certificates as principals; certificate reload; Metadata answering the
 * listener a client came in on; re-authentication (KIP-368) and a session
 * that expires; the limits before authentication. Certificates are made at
 * test time (test/support/certificates.ts).
 */
import { createHmac, generateKeyPairSync, pbkdf2Sync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { get as httpsGet } from 'node:https';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import kafkajs from 'kafkajs';
import rdkafka from '@confluentinc/kafka-javascript';
import { pino, type Logger } from 'pino';
import { ErrorCode } from '../../protocol/error-codes.js';
import { openCore, type Core } from '../../src/core/index.js';
import type { ApiHandler } from '../../src/gateway/handler.js';
import { handlers } from '../../src/gateway/handlers/index.js';
import { buildSasl, type BuiltSasl } from '../../src/gateway/sasl/settings.js';
import { scramKeysFromPassword, scramKeysFromSaltedPassword } from '../../src/gateway/sasl/scram.js';
import { GatewayServer, type BoundListener } from '../../src/gateway/server.js';
import { TlsCredentials } from '../../src/gateway/tls.js';
import { startBroker, type Broker } from '../../src/index.js';
import { makeTestPki, type TestPki } from '../support/certificates.js';
import { LogCapture } from '../support/gateway.js';
import { runKcat } from '../support/kcat.js';
import { connectProducer, disconnect, produceAll, expectDelivered } from '../support/rdkafka.js';
import { RawConnection, frame, requestHeaderBytes } from '../support/raw-connection.js';
import { waitFor } from '../support/eventually.js';

const { Kafka, logLevel } = kafkajs;

const METADATA = 3;

function capture(): { logs: LogCapture; logger: Logger } {
  const logs = new LogCapture();
  const logger = pino(
    { level: 'debug' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.write(chunk.toString());
        done();
      },
    }),
  );
  return { logs, logger };
}

async function addScramUser(core: Core, user: string, password: string): Promise<void> {
  for (const mechanism of ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
    const salt = randomBytes(16);
    await core.alterScramCredentials({ deletions: [], upsertions: [{ user, mechanism, iterations: 4096, salt, ...(await scramKeysFromPassword(mechanism, password, salt, 4096)) }] });
  }
}

/** A user made as kafka-configs.sh and the admin clients make one: the SaltedPassword over the password's UTF-8 bytes, unprepared. */
async function addScramUserAsKafkaToolsDo(core: Core, user: string, password: string): Promise<void> {
  for (const [mechanism, hash, bytes] of [['SCRAM-SHA-256', 'sha256', 32], ['SCRAM-SHA-512', 'sha512', 64]] as const) {
    const salt = randomBytes(16);
    const salted = pbkdf2Sync(Buffer.from(password, 'utf8'), salt, 4096, bytes, hash);
    await core.alterScramCredentials({ deletions: [], upsertions: [{ user, mechanism, iterations: 4096, salt, ...scramKeysFromSaltedPassword(mechanism, salted) }] });
  }
}

/** A soft hyphen (SASLprep maps it to nothing, NFKC keeps it) and a no-break space (both make it a space). */
const NON_ASCII_PASSWORD = 'open\u00adsesame\u00a0now';
const PREPARED_PASSWORD = 'opensesame now';

type KafkajsMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512';

function kafkajsOver(bootstrap: string, pki: TestPki, mechanism: KafkajsMechanism, username: string, password: string, extra: Record<string, unknown> = {}) {
  return new Kafka({
    clientId: 'queen-security',
    brokers: [bootstrap],
    ssl: { ca: [readFileSync(pki.caCert)] },
    sasl: { mechanism, username, password } as never,
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    connectionTimeout: 5_000,
    ...extra,
  });
}

/** kafkajs wraps the broker's error; the SASL failure's name and message are what a user reads. */
async function kafkajsFailure(connect: () => Promise<unknown>): Promise<Error> {
  try {
    await connect();
  } catch (e) {
    return e as Error;
  }
  throw new Error('the client connected with a wrong password');
}

describe('SASL_SSL with kafkajs, librdkafka and kcat', () => {
  let pki: TestPki;
  let broker: Broker;
  let logs: LogCapture;
  let sasl: BoundListener;
  let plaintext: BoundListener;

  beforeAll(async () => {
    pki = makeTestPki();
    const usersFile = join(pki.dir, 'plain-users.txt');
    writeFileSync(usersFile, '# PLAIN users\nalice=alice-secret\n');
    const captured = capture();
    logs = captured.logs;
    broker = await startBroker({
      logger: captured.logger,
      listeners: [
        { name: 'SASL_SSL', host: '127.0.0.1', port: 0 },
        { name: 'PLAINTEXT', host: '127.0.0.1', port: 0 },
      ],
      tls: { certFile: pki.serverCert, keyFile: pki.serverKey },
      sasl: { plainUsersFile: usersFile },
    });
    [sasl, plaintext] = broker.listeners as [BoundListener, BoundListener];
    await addScramUser(broker.core, 'bob', 'bob-secret');
    await addScramUserAsKafkaToolsDo(broker.core, 'nadia', NON_ASCII_PASSWORD);
    await addScramUser(broker.core, 'omar', NON_ASCII_PASSWORD);
  });
  afterAll(async () => {
    await broker?.stop();
    pki?.remove();
  });

  const bootstrap = () => `127.0.0.1:${sasl.port}`;

  for (const [mechanism, user, password] of [
    ['plain', 'alice', 'alice-secret'],
    ['plain', 'bob', 'bob-secret'],
    ['scram-sha-256', 'bob', 'bob-secret'],
    ['scram-sha-512', 'bob', 'bob-secret'],
  ] as const) {
    it(`kafkajs authenticates with ${mechanism} as ${user}, produces and reads its records back`, async () => {
      const kafka = kafkajsOver(bootstrap(), pki, mechanism, user, password);
      const admin = kafka.admin();
      await admin.connect();
      const topic = `sec-${mechanism}-${user}`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic, messages: [{ key: 'k', value: `from ${user}` }] });
      const offsets = await admin.fetchTopicOffsets(topic);
      expect(offsets[0]!.high).toBe('1');
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
      expect(metadata.topics[0]!.partitions[0]!.leader).toBe(0);
      await producer.disconnect();
      await admin.disconnect();
    });
  }

  for (const mechanism of ['plain', 'scram-sha-256', 'scram-sha-512'] as const) {
    it(`kafkajs with a wrong password over ${mechanism} gets SASL_AUTHENTICATION_FAILED, and the attempt is logged without the password`, async () => {
      const admin = kafkajsOver(bootstrap(), pki, mechanism, 'bob', 'not-bobs-password-42').admin();
      const e = await kafkajsFailure(() => admin.connect());
      expect(e.name).toBe('KafkaJSSASLAuthenticationError');
      expect(e.message).toMatch(/Authentication failed/);
      const upper = mechanism.toUpperCase();
      await waitFor(() => logs.matching('authentication failed', '"user":"bob"', `"mechanism":"${upper}"`).length > 0, { timeoutMs: 5_000, what: 'the failed attempt in the log' });
      expect(logs.lines.some((l) => l.includes('not-bobs-password-42'))).toBe(false);
    });
  }

  describe('a password with a soft hyphen and a no-break space', () => {
    async function kafkajsLogsIn(mechanism: KafkajsMechanism, user: string, password: string): Promise<boolean> {
      const admin = kafkajsOver(bootstrap(), pki, mechanism, user, password).admin();
      try {
        await admin.connect();
        await admin.listTopics();
        return true;
      } catch {
        return false;
      } finally {
        await admin.disconnect();
      }
    }

    it('kafkajs and librdkafka log in with SCRAM as typed, against a user made as Kafka tools make one (they hash the password unprepared)', async () => {
      expect(NON_ASCII_PASSWORD.normalize('NFKC')).not.toBe(PREPARED_PASSWORD); // the case that tells SASLprep from NFKC
      expect(await kafkajsLogsIn('scram-sha-256', 'nadia', NON_ASCII_PASSWORD)).toBe(true);
      const producer = await connectProducer(bootstrap(), {
        'security.protocol': 'sasl_ssl',
        'ssl.ca.location': pki.caCert,
        'sasl.mechanisms': 'SCRAM-SHA-512',
        'sasl.username': 'nadia',
        'sasl.password': NON_ASCII_PASSWORD,
      });
      try {
        expectDelivered(await produceAll(producer, 'sec-nadia', [{ partition: 0, key: 'k', value: 'typed', headers: [], timestamp: Date.now() }]));
      } finally {
        await disconnect(producer);
      }
    });

    it('PLAIN takes the same password against that SCRAM user, and not its prepared form', async () => {
      expect(await kafkajsLogsIn('plain', 'nadia', NON_ASCII_PASSWORD)).toBe(true);
      expect(await kafkajsLogsIn('plain', 'nadia', PREPARED_PASSWORD)).toBe(false);
    });

    it('a user made here from the password holds its SASLprep form: a client that prepares it (RFC 5802) logs in with SCRAM, and PLAIN takes it as typed', async () => {
      expect(await kafkajsLogsIn('scram-sha-512', 'omar', PREPARED_PASSWORD)).toBe(true);
      expect(await kafkajsLogsIn('plain', 'omar', NON_ASCII_PASSWORD)).toBe(true);
      expect(await kafkajsLogsIn('plain', 'omar', 'open sesame now')).toBe(false);
    });
  });

  it('kafkajs as an unknown user fails the same way as a wrong password', async () => {
    const admin = kafkajsOver(bootstrap(), pki, 'scram-sha-256', 'nobody', 'whatever').admin();
    const e = await kafkajsFailure(() => admin.connect());
    expect(e.name).toBe('KafkaJSSASLAuthenticationError');
    expect(e.message).toContain('invalid credentials with SASL mechanism SCRAM-SHA-256');
  });

  for (const mechanism of ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']) {
    it(`librdkafka produces over SASL_SSL with ${mechanism}`, async () => {
      const producer = await connectProducer(bootstrap(), {
        'security.protocol': 'sasl_ssl',
        'ssl.ca.location': pki.caCert,
        'sasl.mechanisms': mechanism,
        'sasl.username': 'bob',
        'sasl.password': 'bob-secret',
      });
      try {
        const topic = `sec-rdkafka-${mechanism.toLowerCase()}`;
        const deliveries = await produceAll(producer, topic, [{ partition: 0, key: 'k', value: 'v', headers: [], timestamp: Date.now() }]);
        expectDelivered(deliveries);
      } finally {
        await disconnect(producer);
      }
    });
  }

  it('librdkafka with a wrong password fails to connect and reports the broker\'s authentication failure', async () => {
    // The binding's connect callback says only "broker transport failure"; librdkafka's own report of why comes as a log event.
    const producer = new rdkafka.Producer({
      'bootstrap.servers': bootstrap(),
      'security.protocol': 'sasl_ssl',
      'ssl.ca.location': pki.caCert,
      'sasl.mechanisms': 'SCRAM-SHA-512',
      'sasl.username': 'bob',
      'sasl.password': 'wrong',
      'event_cb': true,
      'log_level': 3,
    } as never);
    const reports: string[] = [];
    producer.on('event.log', (e: { message: string }) => reports.push(e.message));
    const failure = await new Promise<Error | null>((resolve) => producer.connect({ timeout: 5_000 } as never, (err) => resolve(err ? new Error(err.message) : null)));
    expect(failure).not.toBeNull();
    expect(reports.some((r) => r.includes('SASL authentication error: Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512'))).toBe(true);
  });

  it('kcat reads metadata over SASL_SSL, and fails with a wrong password', async () => {
    const args = (password: string) => ['-b', bootstrap(), '-L', '-J', '-m', '5', '-X', 'security.protocol=sasl_ssl', '-X', `ssl.ca.location=${pki.caCert}`, '-X', 'sasl.mechanisms=SCRAM-SHA-256', '-X', 'sasl.username=bob', '-X', `sasl.password=${password}`];
    const good = await runKcat(args('bob-secret'));
    expect(good.code).toBe(0);
    expect(JSON.parse(good.stdout).brokers[0].name).toBe(`127.0.0.1:${sasl.port}`);
    const bad = await runKcat(args('wrong'));
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/Authentication failed|authentication/i);
  });

  it('Metadata answers each client with the address of the listener it came in on', async () => {
    const plain = new Kafka({ brokers: [`127.0.0.1:${plaintext.port}`], logLevel: logLevel.NOTHING });
    const admin = plain.admin();
    await admin.connect();
    const cluster = await admin.describeCluster();
    expect(cluster.brokers.map((b) => b.port)).toEqual([plaintext.port]);
    await admin.disconnect();
    const secure = kafkajsOver(bootstrap(), pki, 'plain', 'alice', 'alice-secret').admin();
    await secure.connect();
    expect((await secure.describeCluster()).brokers.map((b) => b.port)).toEqual([sasl.port]);
    await secure.disconnect();
  });

  it('before authenticating, a SASL listener serves only ApiVersions and the SASL exchange; other requests close the connection', async () => {
    const raw = await RawConnection.open(sasl.port).catch(() => null);
    // The listener speaks TLS: a bare TCP client's bytes are not even a TLS handshake.
    expect(raw).not.toBeNull();
    raw!.write(frame(Buffer.concat([requestHeaderBytes(3, 1, 1), Buffer.from([0, 0, 0, 0])])));
    await raw!.expectClosed(5_000, 'a plaintext request on a TLS listener');
  });

  it('a SaslHandshake on the PLAINTEXT listener answers ILLEGAL_SASL_STATE, as Kafka does', async () => {
    const raw = await RawConnection.open(plaintext.port);
    const answer = await raw.request(17, 1, { mechanism: 'PLAIN' });
    expect(answer.errorCode).toBe(ErrorCode.ILLEGAL_SASL_STATE);
    raw.destroy();
  });
});

describe('SASL_PLAINTEXT on the wire: the v0 handshake, limits before authentication, sessions', () => {
  let core: Core;
  let built: BuiltSasl;
  let gateway: GatewayServer;
  let logs: LogCapture;
  let port: number;
  const REAUTH_MS = 1_500;

  beforeAll(async () => {
    core = await openCore({ engine: 'memory' });
    await addScramUser(core, 'carol', 'carol-secret');
    const captured = capture();
    logs = captured.logs;
    built = buildSasl({ maxReauthMs: REAUTH_MS }, core, captured.logger);
    gateway = new GatewayServer({
      core,
      settings: { clusterId: 'c', advertised: { nodeId: 0, host: '127.0.0.1', port: 0, rack: null }, autoCreateTopics: true, defaultPartitions: 1, fetchMaxBytes: 1 << 20, maxFetchSessions: 10 },
      log: captured.logger,
      sasl: built.settings,
      limits: { saslMaxReceiveBytes: 4096, authenticationTimeoutMs: 1_000 },
    });
    port = (await gateway.listenOn({ name: 'SASL_PLAINTEXT', host: '127.0.0.1', port: 0 })).port;
  });
  afterAll(async () => {
    await gateway?.close(0);
    built?.close();
    await core?.close();
  });

  const plainToken = (user: string, password: string) => Buffer.from(`\u0000${user}\u0000${password}`);

  it('SaslHandshake v0 then a bare PLAIN token authenticates; Metadata follows', async () => {
    const raw = await RawConnection.open(port);
    const hs = await raw.request(17, 0, { mechanism: 'PLAIN' });
    expect(hs.errorCode).toBe(0);
    expect(hs.mechanisms).toEqual(['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']);
    raw.write(frame(plainToken('carol', 'carol-secret')));
    // The answer to a bare token is a bare token, PLAIN's being empty: a frame of size 0.
    expect((await raw.readFrame()).length).toBe(0);
    const metadata = await raw.request(3, 1, { topics: [] });
    expect(metadata.brokers).toHaveLength(1);
    raw.destroy();
  });

  it('SaslHandshake v0 with a wrong PLAIN password closes the connection', async () => {
    const raw = await RawConnection.open(port);
    await raw.request(17, 0, { mechanism: 'PLAIN' });
    raw.write(frame(plainToken('carol', 'wrong')));
    await raw.expectClosed(5_000, 'a wrong password on the v0 path');
  });

  it('a request other than ApiVersions or SaslHandshake before authentication closes the connection', async () => {
    const raw = await RawConnection.open(port);
    const versions = await raw.request(18, 0, {});
    expect(versions.errorCode).toBe(0);
    raw.write(frame(Buffer.concat([requestHeaderBytes(3, 1, 7), Buffer.from([0, 0, 0, 0])])));
    await raw.expectClosed(5_000, 'Metadata before SASL');
  });

  it('a frame above the SASL receive limit before authentication closes the connection before it is read', async () => {
    const raw = await RawConnection.open(port);
    raw.write(frame(Buffer.alloc(10), 1_000_000));
    await raw.expectClosed(5_000, 'a 1 MB frame before authentication');
    await waitFor(() => logs.matching('exceeds the 4096-byte maximum').length > 0, { timeoutMs: 5_000, what: 'the refusal in the log' });
  });

  it('a client that does not authenticate within the deadline is closed, logged', async () => {
    const raw = await RawConnection.open(port);
    await raw.expectClosed(5_000, 'the authentication deadline');
    await waitFor(() => logs.matching('did not authenticate within 1000 ms').length > 0, { timeoutMs: 5_000, what: 'the deadline in the log' });
  });

  it('an unknown mechanism answers UNSUPPORTED_SASL_MECHANISM with the enabled list, then closes', async () => {
    const raw = await RawConnection.open(port);
    const hs = await raw.request(17, 1, { mechanism: 'GSSAPI' });
    expect(hs.errorCode).toBe(ErrorCode.UNSUPPORTED_SASL_MECHANISM);
    expect(hs.mechanisms).toContain('SCRAM-SHA-512');
    await raw.expectClosed(5_000, 'an unknown mechanism');
  });

  it('SaslAuthenticate v1 answers the session lifetime; a request after it ends without re-authenticating closes the connection', async () => {
    const raw = await RawConnection.open(port);
    await raw.request(17, 1, { mechanism: 'PLAIN' });
    const auth = await raw.request(36, 1, { authBytes: plainToken('carol', 'carol-secret') });
    expect(auth.errorCode).toBe(0);
    expect(auth.sessionLifetimeMs).toBe(BigInt(REAUTH_MS));
    const before = await raw.request(3, 1, { topics: [] });
    expect(before.brokers).toHaveLength(1);
    await new Promise((r) => setTimeout(r, REAUTH_MS + 200));
    raw.write(frame(Buffer.concat([requestHeaderBytes(3, 1, 50), Buffer.from([0, 0, 0, 0])])));
    await raw.expectClosed(5_000, 'a request on an expired session');
    await waitFor(() => logs.matching('expired without re-authentication').length > 0, { timeoutMs: 5_000, what: 'the expiry in the log' });
  });

  it('re-authenticating as another principal fails with SASL_AUTHENTICATION_FAILED', async () => {
    await addScramUser(core, 'dave', 'dave-secret');
    const raw = await RawConnection.open(port);
    await raw.request(17, 1, { mechanism: 'PLAIN' });
    expect((await raw.request(36, 1, { authBytes: plainToken('carol', 'carol-secret') })).errorCode).toBe(0);
    expect((await raw.request(17, 1, { mechanism: 'PLAIN' })).errorCode).toBe(0);
    const again = await raw.request(36, 1, { authBytes: plainToken('dave', 'dave-secret') });
    expect(again.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    expect(again.errorMessage).toContain('Cannot change principals');
    await raw.expectClosed(5_000, 'a principal change');
  });

  it('kafkajs re-authenticates before its session ends and keeps working across several sessions', async () => {
    const kafka = new Kafka({ brokers: [`127.0.0.1:${port}`], sasl: { mechanism: 'scram-sha-256', username: 'carol', password: 'carol-secret' }, logLevel: logLevel.NOTHING, reauthenticationThreshold: 1_000 } as never);
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < 4; i++) {
      await producer.send({ topic: 'sessions', messages: [{ value: `m${i}` }] });
      await new Promise((r) => setTimeout(r, 700));
    }
    await producer.disconnect();
    expect(logs.matching('re-authenticated', 'User:carol').length).toBeGreaterThan(0);
  });
});

describe('principals on the connection: SASL users and TLS client certificates', () => {
  let pki: TestPki;
  let core: Core;
  let built: BuiltSasl;
  let gateway: GatewayServer;
  let tls: TlsCredentials;
  let ssl: BoundListener;
  let saslSsl: BoundListener;

  // Metadata answering the connection's listener and principal as the cluster id (kafkajs's describeCluster shows it): how this test sees what authorization will key on.
  const metadata = handlers.find((h) => h.api.apiKey === METADATA)!;
  const echoPrincipal: ApiHandler = {
    ...metadata,
    async handle(request, ctx) {
      const answer = (await metadata.handle(request, ctx))!;
      return { ...answer, clusterId: `${ctx.connection.listener} ${ctx.connection.principal}` };
    },
  };

  beforeAll(async () => {
    pki = makeTestPki();
    core = await openCore({ engine: 'memory' });
    await addScramUser(core, 'erin', 'erin-secret');
    const { logger } = capture();
    built = buildSasl({}, core, logger);
    // TlsCredentials reads live.pem/live.key, which the reload test replaces.
    copyFileSync(pki.serverCert, join(pki.dir, 'live.pem'));
    copyFileSync(pki.serverKey, join(pki.dir, 'live.key'));
    tls = new TlsCredentials({ certFile: join(pki.dir, 'live.pem'), keyFile: join(pki.dir, 'live.key'), caFile: pki.caCert, clientAuth: 'requested' }, logger);
    gateway = new GatewayServer({
      core,
      settings: { clusterId: 'c', advertised: { nodeId: 0, host: '127.0.0.1', port: 0, rack: null }, autoCreateTopics: true, defaultPartitions: 1, fetchMaxBytes: 1 << 20, maxFetchSessions: 10 },
      log: logger,
      sasl: built.settings,
      tls,
      handlers: [...handlers.filter((h) => h !== metadata), echoPrincipal],
    });
    ssl = await gateway.listenOn({ name: 'SSL', host: '127.0.0.1', port: 0 });
    saslSsl = await gateway.listenOn({ name: 'SASL_SSL', host: '127.0.0.1', port: 0 });
  }, 30_000);
  afterAll(async () => {
    await gateway?.close(0);
    built?.close();
    await core?.close();
    pki?.remove();
  });

  async function principalVia(options: ConstructorParameters<typeof Kafka>[0]): Promise<string> {
    const admin = new Kafka({ logLevel: logLevel.NOTHING, retry: { retries: 0 }, ...options }).admin();
    await admin.connect();
    try {
      return (await admin.describeCluster()).clusterId;
    } finally {
      await admin.disconnect();
    }
  }

  it('a SASL user is User:<name> on the connection', async () => {
    const ca = [readFileSync(pki.caCert)];
    expect(await principalVia({ brokers: [`127.0.0.1:${saslSsl.port}`], ssl: { ca }, sasl: { mechanism: 'scram-sha-512', username: 'erin', password: 'erin-secret' } })).toBe('SASL_SSL User:erin');
  });

  it('a verified client certificate makes its subject the principal, written as Kafka writes it; no certificate is ANONYMOUS', async () => {
    const client = pki.client('app', '/C=DE/O=Acme, Inc/OU=payments/CN=app');
    const ca = [readFileSync(pki.caCert)];
    expect(await principalVia({ brokers: [`127.0.0.1:${ssl.port}`], ssl: { ca, cert: readFileSync(client.cert), key: readFileSync(client.key) } })).toBe(
      'SSL User:CN=app,OU=payments,O=Acme\\, Inc,C=DE',
    );
    expect(await principalVia({ brokers: [`127.0.0.1:${ssl.port}`], ssl: { ca } })).toBe('SSL User:ANONYMOUS');
  });

  it('a client certificate from a CA the gateway does not trust is refused', async () => {
    const rogue = pki.client('rogue', '/CN=rogue', { untrusted: true });
    await expect(
      principalVia({ brokers: [`127.0.0.1:${ssl.port}`], ssl: { ca: [readFileSync(pki.caCert)], cert: readFileSync(rogue.cert), key: readFileSync(rogue.key) }, connectionTimeout: 3_000 }),
    ).rejects.toThrow();
  });

  it('kcat reads metadata over SSL with a client certificate', async () => {
    const client = pki.client('kcat', '/CN=kcat');
    const result = await runKcat(['-b', `127.0.0.1:${ssl.port}`, '-L', '-J', '-m', '5', '-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${pki.caCert}`, '-X', `ssl.certificate.location=${client.cert}`, '-X', `ssl.key.location=${client.key}`]);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout).brokers[0].name).toBe(`127.0.0.1:${ssl.port}`);
  });

  it('a renewed certificate written over the files is served to new connections without a restart', async () => {
    const subjectOfServed = () =>
      new Promise<string>((resolve, reject) => {
        const socket = tlsConnect({ host: '127.0.0.1', port: ssl.port, ca: readFileSync(pki.caCert), servername: 'localhost' }, () => {
          resolve(String(socket.getPeerCertificate().subject.CN));
          socket.destroy();
        });
        socket.on('error', reject);
      });
    expect(await subjectOfServed()).toBe('localhost');
    const renewed = pki.server('renewed', 'renewed.localhost');
    copyFileSync(renewed.key, join(pki.dir, 'live.key'));
    copyFileSync(renewed.cert, join(pki.dir, 'live.pem'));
    await waitFor(async () => (await subjectOfServed()) === 'renewed.localhost', { timeoutMs: 10_000, what: 'the renewed certificate' });
  });
});

describe('OAUTHBEARER: JWTs checked against configured keys', () => {
  let pki: TestPki;
  let broker: Broker;
  let logs: LogCapture;
  const signer = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });

  function jwt(claims: Record<string, unknown>, options: { key?: KeyObject; alg?: string } = {}): string {
    const header = Buffer.from(JSON.stringify({ alg: options.alg ?? 'RS256', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    if (options.alg === 'none') return `${header}.${body}.`;
    const signature = sign('sha256', Buffer.from(`${header}.${body}`), options.key ?? signer.privateKey).toString('base64url');
    return `${header}.${body}.${signature}`;
  }
  const inAMinute = () => Math.floor(Date.now() / 1000) + 60;
  /** The algorithm-confusion forgery: HS256 keyed with the verifier's public key, which anyone has. */
  function hmacOverPublicKey(claims: Record<string, unknown>): string {
    const header = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    const publicPem = signer.publicKey.export({ type: 'spki', format: 'pem' });
    return `${header}.${body}.${createHmac('sha256', publicPem).update(`${header}.${body}`).digest('base64url')}`;
  }

  beforeAll(async () => {
    pki = makeTestPki();
    const keysFile = join(pki.dir, 'issuer.pem');
    writeFileSync(keysFile, signer.publicKey.export({ type: 'spki', format: 'pem' }));
    const captured = capture();
    logs = captured.logs;
    broker = await startBroker({
      logger: captured.logger,
      listeners: [{ name: 'SASL_SSL', host: '127.0.0.1', port: 0 }],
      tls: { certFile: pki.serverCert, keyFile: pki.serverKey },
      sasl: { mechanisms: ['OAUTHBEARER'], oauthbearer: { keysFile, audience: 'queen', issuer: 'https://issuer.test' }, maxReauthMs: 60_000 },
    });
  });
  afterAll(async () => {
    await broker?.stop();
    pki?.remove();
  });

  const good = () => ({ sub: 'svc-orders', aud: 'queen', iss: 'https://issuer.test', exp: inAMinute() });

  async function kafkajsWith(token: string): Promise<Error | null> {
    const admin = new Kafka({
      brokers: [broker.bootstrap],
      ssl: { ca: [readFileSync(pki.caCert)] },
      sasl: { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: token }) },
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
    }).admin();
    try {
      await admin.connect();
      await admin.listTopics();
      return null;
    } catch (e) {
      return e as Error;
    } finally {
      await admin.disconnect();
    }
  }

  it('kafkajs with a token signed by the configured key, for this audience and issuer, is served', async () => {
    expect(await kafkajsWith(jwt(good()))).toBeNull();
  });

  it("kafkajs with a token whose nbf is a few seconds ahead (a clock skew under Kafka's 30 s) is served", async () => {
    expect(await kafkajsWith(jwt({ ...good(), nbf: Math.floor(Date.now() / 1000) + 10 }))).toBeNull();
  });

  for (const [what, token] of [
    ['an unsecured token (alg none)', () => jwt(good(), { alg: 'none' })],
    ['a token signed by another key', () => jwt(good(), { key: stranger.privateKey })],
    ['an expired token (past the 30 s clock skew)', () => jwt({ ...good(), exp: Math.floor(Date.now() / 1000) - 60 })],
    ['a token not valid for another two minutes (nbf)', () => jwt({ ...good(), nbf: Math.floor(Date.now() / 1000) + 120 })],
    ['a token signed with HMAC over the public key (HS256)', () => hmacOverPublicKey(good())],
    ['a token for another audience', () => jwt({ ...good(), aud: 'someone-else' })],
    ['a token from another issuer', () => jwt({ ...good(), iss: 'https://evil.test' })],
    ['a token without sub', () => jwt({ aud: 'queen', iss: 'https://issuer.test', exp: inAMinute() })],
  ] as const) {
    it(`kafkajs with ${what} is refused`, async () => {
      const failure = await kafkajsWith(token());
      expect(failure).not.toBeNull();
    });
  }

  it('refusals are logged with the reason, the token never', async () => {
    const token = jwt({ ...good(), aud: 'someone-else' });
    await kafkajsWith(token);
    await waitFor(() => logs.matching('authentication failed', 'not meant for this audience', 'svc-orders (unverified)').length > 0, { what: 'the refusal in the log', timeoutMs: 5_000 });
    expect(logs.lines.some((l) => l.includes(token))).toBe(false);
  });

  it('SaslAuthenticate answers a session no longer than the token lives, and a refused token gets SASL_AUTHENTICATION_FAILED after the error challenge', async () => {
    const exp = Math.floor(Date.now() / 1000) + 20;
    const port = broker.port;
    const socket = tlsConnect({ host: '127.0.0.1', port, ca: readFileSync(pki.caCert), servername: 'localhost' });
    await new Promise<void>((resolve, reject) => socket.once('secureConnect', () => resolve()).once('error', reject));
    const raw = RawConnection.over(socket);
    expect((await raw.request(17, 1, { mechanism: 'OAUTHBEARER' })).errorCode).toBe(0);
    const auth = await raw.request(36, 1, { authBytes: Buffer.from(`n,,\u0001auth=Bearer ${jwt({ ...good(), exp })}\u0001\u0001`) });
    expect(auth.errorCode).toBe(0);
    expect(Number(auth.sessionLifetimeMs)).toBeGreaterThan(10_000);
    expect(Number(auth.sessionLifetimeMs)).toBeLessThanOrEqual(20_000);
    raw.destroy();

    const second = tlsConnect({ host: '127.0.0.1', port, ca: readFileSync(pki.caCert), servername: 'localhost' });
    await new Promise<void>((resolve, reject) => second.once('secureConnect', () => resolve()).once('error', reject));
    const refused = RawConnection.over(second);
    await refused.request(17, 1, { mechanism: 'OAUTHBEARER' });
    const challenge = await refused.request(36, 1, { authBytes: Buffer.from(`n,,\u0001auth=Bearer ${jwt(good(), { key: stranger.privateKey })}\u0001\u0001`) });
    expect(challenge.errorCode).toBe(0);
    expect(JSON.parse((challenge.authBytes as Buffer).toString())).toEqual({ status: 'invalid_token' });
    const final = await refused.request(36, 1, { authBytes: Buffer.from('\u0001') });
    expect(final.errorCode).toBe(ErrorCode.SASL_AUTHENTICATION_FAILED);
    await refused.expectClosed(5_000, 'a refused token');
  });

  it('librdkafka authenticates with a token from its refresh callback and produces', async () => {
    const producer = await connectProducer(broker.bootstrap, {
      'security.protocol': 'sasl_ssl',
      'ssl.ca.location': pki.caCert,
      'sasl.mechanisms': 'OAUTHBEARER',
      oauthbearer_token_refresh_cb: async () => ({ tokenValue: jwt(good()), lifetime: Date.now() + 60_000, principal: 'svc-orders' }),
    });
    try {
      expectDelivered(await produceAll(producer, 'oauth-topic', [{ partition: 0, key: 'k', value: 'v', headers: [], timestamp: Date.now() }]));
    } finally {
      await disconnect(producer);
    }
  });
});

describe('the HTTP API over TLS', () => {
  it('serves /health over HTTPS with the same certificate files, and refuses plain HTTP', async () => {
    const pki = makeTestPki();
    const broker = await startBroker({ tls: { certFile: pki.serverCert, keyFile: pki.serverKey }, http: { port: 0, tls: true } });
    try {
      expect(broker.httpUrl).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const status = await new Promise<number>((resolve, reject) => {
        httpsGet(`${broker.httpUrl}/health`, { ca: readFileSync(pki.caCert) }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        }).on('error', reject);
      });
      expect(status).toBe(200);
      const plain = await fetch(broker.httpUrl!.replace('https:', 'http:') + '/health').then(
        () => 'answered',
        () => 'refused',
      );
      expect(plain).toBe('refused');
    } finally {
      await broker.stop();
      pki.remove();
    }
  });
});

/**
 * kafkajs and librdkafka over SASL_SSL where test/e2e/security.test.ts stops
 * short (issue 19): with the gateway secured as the Java client's test and
 * the SASL differential suite have it (test/support/secured-brokers.ts:
 * PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER, the authorizer on,
 * sessions of a few seconds):
 *
 * - each mechanism with each client, produce and then consume through a
 *   consumer group (security.test.ts produces only, and kafkajs there uses
 *   OAUTHBEARER for a listing only);
 * - a wrong password with librdkafka for every mechanism, and a token signed
 *   by another key (security.test.ts has SCRAM-SHA-512 only);
 * - a consumer group bob has no ACL for: GROUP_AUTHORIZATION_FAILED as each
 *   client reports it, and not one record read;
 * - a user deleted while connected: when the session ends, re-authentication
 *   fails and the client's next request fails with the authentication error,
 *   nothing more stored (security.test.ts shows an expired session on the
 *   wire only).
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import rdkafka from '@confluentinc/kafka-javascript';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/eventually.js';
import { connectConsumer, connectProducer, disconnect, expectDelivered, produceAll, readRecords } from '../support/rdkafka.js';
import { makeSecurityFixture, SECURED_USERS, startSecuredGateway, type SecuredBroker, type SecuredUser, type SecurityFixture } from '../support/secured-brokers.js';

const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs;
const SESSION_MS = 3_000;

let fixture: SecurityFixture;
let gateway: SecuredBroker;

beforeAll(async () => {
  fixture = makeSecurityFixture();
  gateway = await startSecuredGateway(fixture, { maxReauthMs: SESSION_MS });
  const admin = plainAdmin();
  await admin.connect();
  const acl = (principal: string, resourceType: number, resourceName: string, operation: number) => ({
    resourceType, resourceName, resourcePatternType: ResourcePatternTypes.PREFIXED, principal, host: '*', operation, permissionType: AclPermissionTypes.ALLOW,
  });
  await admin.createAcls({
    acl: [
      ...['alice', 'carol'].flatMap((u) => [acl(`User:${u}`, AclResourceTypes.TOPIC, `${u}-`, AclOperationTypes.ALL), acl(`User:${u}`, AclResourceTypes.GROUP, `${u}-`, AclOperationTypes.ALL)]),
      acl('User:bob', AclResourceTypes.TOPIC, 'shared-', AclOperationTypes.READ),
      acl('User:bob', AclResourceTypes.TOPIC, 'shared-', AclOperationTypes.DESCRIBE),
    ],
  });
  await admin.disconnect();
}, 60_000);
afterAll(async () => {
  await gateway?.stop();
  fixture?.remove();
});

function plainAdmin() {
  return new Kafka({ brokers: [gateway.bootstrap.PLAINTEXT], logLevel: logLevel.NOTHING }).admin();
}

async function createTopic(topic: string): Promise<void> {
  const admin = plainAdmin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
}

async function storedCount(topic: string): Promise<number> {
  const admin = plainAdmin();
  await admin.connect();
  try {
    return Number((await admin.fetchTopicOffsets(topic))[0]!.high);
  } finally {
    await admin.disconnect();
  }
}

const MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const;
type Mechanism = (typeof MECHANISMS)[number];

function kafkajsClient(mechanism: Mechanism, user: SecuredUser, password: string = SECURED_USERS[user]) {
  const sasl =
    mechanism === 'OAUTHBEARER'
      ? { mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: fixture.token(user) }) }
      : { mechanism: mechanism.toLowerCase(), username: user, password };
  return new Kafka({
    clientId: `sec-${user}`,
    brokers: [gateway.bootstrap.SASL_SSL],
    ssl: { ca: [readFileSync(fixture.pki.caCert)] },
    sasl: sasl as never,
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
    reauthenticationThreshold: 1_000,
  } as never);
}

/** librdkafka's settings for SASL_SSL; OAUTHBEARER's token comes from the refresh callback, signed with `key` (default the trusted one). */
function rdkafkaSecurity(mechanism: Mechanism, user: SecuredUser, options: { password?: string; token?: () => string } = {}): Record<string, unknown> {
  const base = { 'security.protocol': 'sasl_ssl', 'ssl.ca.location': fixture.pki.caCert, 'sasl.mechanisms': mechanism };
  if (mechanism === 'OAUTHBEARER') {
    return { ...base, oauthbearer_token_refresh_cb: async () => ({ tokenValue: (options.token ?? (() => fixture.token(user)))(), lifetime: Date.now() + 300_000, principal: user }) };
  }
  return { ...base, 'sasl.username': user, 'sasl.password': options.password ?? SECURED_USERS[user] };
}

/** A token claiming to be alice's, signed by a key the gateway does not trust. */
function strangerToken(): string {
  const stranger = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const [header, claims] = fixture.token('alice').split('.');
  return `${header}.${claims}.${sign('sha256', Buffer.from(`${header}.${claims}`), stranger.privateKey).toString('base64url')}`;
}

describe('kafkajs over SASL_SSL', () => {
  for (const mechanism of MECHANISMS) {
    it(`produces and consumes in a group as alice with ${mechanism}`, async () => {
      const topic = `alice-kafkajs-${mechanism.toLowerCase()}`;
      await createTopic(topic);
      const kafka = kafkajsClient(mechanism, 'alice');
      const producer = kafka.producer();
      await producer.connect();
      await producer.send({ topic, messages: [{ value: 'one' }, { value: 'two' }] });
      await producer.disconnect();
      const consumer = kafka.consumer({ groupId: `alice-g-kafkajs-${mechanism.toLowerCase()}` });
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: true });
      const read: string[] = [];
      await consumer.run({ eachMessage: async ({ message }) => void read.push(message.value!.toString()) });
      await waitFor(() => read.length >= 2, { what: `alice's two records over ${mechanism}`, timeoutMs: 30_000 });
      await consumer.disconnect();
      expect(read).toEqual(['one', 'two']);
    }, 60_000);
  }

  it("refuses bob a group he has no ACL for with GROUP_AUTHORIZATION_FAILED (kafkajs: no coordinator found), and he reads nothing", async () => {
    const topic = 'shared-kafkajs';
    await createTopic(topic);
    const consumer = kafkajsClient('SCRAM-SHA-256', 'bob').consumer({ groupId: 'bob-kafkajs', retry: { retries: 0 } });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const read: string[] = [];
    const crashed = new Promise<Error>((resolve) => consumer.on(consumer.events.CRASH, ({ payload }) => resolve(payload.error)));
    await consumer.run({ eachMessage: async ({ message }) => void read.push(message.value!.toString()) }).catch(() => {});
    const error = await crashed;
    await consumer.disconnect();
    // kafkajs drops the code FindCoordinator answered and says only this (Apache Kafka alike: authorization.test.ts).
    expect(error.name).toBe('KafkaJSGroupCoordinatorNotFound');
    expect(read).toEqual([]);
  }, 60_000);

  it("fails carol's sends with KafkaJSSASLAuthenticationError once her deleted user's session ends, storing nothing more", async () => {
    const topic = 'carol-kafkajs-expiry';
    await createTopic(topic);
    const producer = kafkajsClient('SCRAM-SHA-512', 'carol').producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ value: 'before' }] });
    await gateway.deleteScramUser('carol');
    let failure: Error | null = null;
    const deadline = Date.now() + SESSION_MS * 4;
    while (!failure && Date.now() < deadline) {
      try {
        await producer.send({ topic, messages: [{ value: 'after' }] });
      } catch (e) {
        failure = e as Error;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    await producer.disconnect().catch(() => {});
    // With retries 0 kafkajs wraps the cause: the refused re-authentication, or the close that follows it when
    // the send was already on its way (which of the two kafkajs reports depends on timing).
    expect(failure?.name).toBe('KafkaJSNonRetriableError');
    expect(['KafkaJSSASLAuthenticationError', 'KafkaJSConnectionClosedError']).toContain((failure as Error & { cause?: Error }).cause?.name);
    // Either way carol is out: a new connection is refused.
    const again = kafkajsClient('SCRAM-SHA-512', 'carol').producer();
    const refused = await again.connect().then(
      () => null,
      (e: Error) => e,
    );
    expect(refused?.name).toBe('KafkaJSSASLAuthenticationError');
    // Records sent before the session ended count; none after the failure.
    const stored = await storedCount(topic);
    await new Promise((r) => setTimeout(r, 500));
    expect(await storedCount(topic)).toBe(stored);
  }, 60_000);
});

describe('librdkafka over SASL_SSL', () => {
  for (const mechanism of MECHANISMS) {
    it(`produces and reads back as alice with ${mechanism}, and refuses a wrong ${mechanism === 'OAUTHBEARER' ? 'token' : 'password'}`, async () => {
      const topic = `alice-rdkafka-${mechanism.toLowerCase()}`;
      await createTopic(topic);
      const producer = await connectProducer(gateway.bootstrap.SASL_SSL, rdkafkaSecurity(mechanism, 'alice'));
      try {
        expectDelivered(await produceAll(producer, topic, [{ partition: 0, key: 'k', value: 'v', headers: [], timestamp: Date.now() }]));
      } finally {
        await disconnect(producer);
      }
      const read = await readRecords(gateway.bootstrap.SASL_SSL, topic, { partitions: [0], count: 1, config: { ...rdkafkaSecurity(mechanism, 'alice'), 'group.id': `alice-g-rdkafka-${mechanism.toLowerCase()}` } as never });
      expect(read.map((r) => r.value)).toEqual(['v']);

      const wrong = mechanism === 'OAUTHBEARER' ? rdkafkaSecurity(mechanism, 'alice', { token: strangerToken }) : rdkafkaSecurity(mechanism, 'alice', { password: 'not-alices' });
      const refused = new rdkafka.Producer({ 'bootstrap.servers': gateway.bootstrap.SASL_SSL, event_cb: true, log_level: 3, ...wrong } as never);
      const reports: string[] = [];
      refused.on('event.log', (e: { message: string }) => reports.push(e.message));
      refused.on('event.error', (e: { message: string }) => reports.push(e.message));
      const failure = await new Promise<Error | null>((resolve) => refused.connect({ timeout: 5_000 } as never, (err) => resolve(err ? new Error(err.message) : null)));
      if (refused.isConnected()) refused.disconnect();
      expect(failure).not.toBeNull();
      await waitFor(() => reports.some((r) => r.includes('SASL authentication error') || r.includes('Authentication failed')), { what: `librdkafka's report of the refused ${mechanism} login`, timeoutMs: 10_000, describe: () => reports.join('\n') });
      expect(await storedCount(topic)).toBe(1);
    }, 90_000);
  }

  it('refuses bob a consumer group he has no ACL for with GROUP_AUTHORIZATION_FAILED, and he reads nothing', async () => {
    const topic = 'shared-rdkafka';
    await createTopic(topic);
    const consumer = await connectConsumer(gateway.bootstrap.SASL_SSL, { ...rdkafkaSecurity('SCRAM-SHA-256', 'bob'), 'group.id': 'bob-rdkafka' } as never);
    const codes: number[] = [];
    consumer.on('event.error', (e: { code: number }) => codes.push(e.code));
    consumer.subscribe([topic]);
    let read = 0;
    const deadline = Date.now() + 20_000;
    while (!codes.includes(rdkafka.CODES.ERRORS.ERR_GROUP_AUTHORIZATION_FAILED) && Date.now() < deadline) {
      await new Promise<void>((resolve) =>
        consumer.consume(10, (err, messages) => {
          if (err) codes.push(err.code);
          read += messages?.length ?? 0;
          resolve();
        }),
      );
    }
    await disconnect(consumer);
    expect(codes).toContain(rdkafka.CODES.ERRORS.ERR_GROUP_AUTHORIZATION_FAILED);
    expect(read).toBe(0);
  }, 60_000);
});

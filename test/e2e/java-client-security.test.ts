/**
 * Apache Kafka's Java client over SASL_SSL (issue 19), against the gateway
 * and against Apache Kafka secured alike (test/support/secured-brokers.ts:
 * the same users, certificates and token key, StandardAuthorizer with admin
 * a super user), with the same assertions on both:
 *
 * - PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and OAUTHBEARER (a JWT the driver's
 *   SignedTokenLoginHandler signs with the key the broker checks against):
 *   a producer stores records and a consumer group member reads them back;
 * - a wrong password (each mechanism) and a token signed by another key:
 *   SaslAuthenticationException, with the broker's own sentence, and nothing
 *   stored;
 * - a principal without the ACL: TopicAuthorizationException for a write,
 *   GroupAuthorizationException for a group it may not join,
 *   ClusterAuthorizationException for an idempotent producer (InitProducerId
 *   needs WRITE on some topic or IDEMPOTENT_WRITE), and not one record read
 *   or stored;
 * - sessions of a few seconds (connections.max.reauth.ms): a producer lives
 *   across several by re-authenticating; when its user's SCRAM credentials
 *   are deleted, the next re-authentication fails and so do its sends, with
 *   SaslAuthenticationException, and nothing more is stored.
 */
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import kafkajs from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../support/eventually.js';
import { JavaConsumer, javaProduce, startJavaProduce, type JavaConfig } from '../support/java-client.js';
import { makeSecurityFixture, SECURED_USERS, startSecuredGateway, startSecuredKafka, TOKEN_AUDIENCE, TOKEN_ISSUER, type SecuredBroker, type SecuredUser, type SecurityFixture } from '../support/secured-brokers.js';

const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs;

/** Sessions this long: every client here re-authenticates, several times in the longer tests. */
const SESSION_MS = 4_000;
const MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const;
type Mechanism = (typeof MECHANISMS)[number];

let fixture: SecurityFixture;
/** A key neither broker trusts, for a token that must be refused. */
let strangerKeyFile: string;
const brokers: SecuredBroker[] = [];

beforeAll(async () => {
  fixture = makeSecurityFixture();
  strangerKeyFile = join(fixture.pki.dir, 'stranger.key');
  writeFileSync(strangerKeyFile, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }));
  const [gateway, kafka] = await Promise.all([startSecuredGateway(fixture, { maxReauthMs: SESSION_MS }), startSecuredKafka(fixture, { maxReauthMs: SESSION_MS })]);
  brokers.push(gateway, kafka);
  for (const broker of brokers) await grantAcls(broker);
}, 240_000);
afterAll(async () => {
  await Promise.allSettled(brokers.map((b) => b.stop()));
  fixture?.remove();
});

/** kafkajs over PLAINTEXT (ANONYMOUS, a super user on both): the test's own set-up and checks. */
function plainAdmin(broker: SecuredBroker) {
  return new Kafka({ clientId: 'java-security-setup', brokers: [broker.bootstrap.PLAINTEXT], logLevel: logLevel.NOTHING, retry: { retries: 5 } }).admin();
}

/**
 * alice and carol: ALL on topics and groups prefixed with their names. bob:
 * READ and DESCRIBE on topics prefixed "shared-", nothing on groups.
 */
async function grantAcls(broker: SecuredBroker): Promise<void> {
  const acl = (principal: string, resourceType: number, resourceName: string, operation: number) => ({
    resourceType, resourceName, resourcePatternType: ResourcePatternTypes.PREFIXED, principal, host: '*', operation, permissionType: AclPermissionTypes.ALLOW,
  });
  const admin = plainAdmin(broker);
  await admin.connect();
  try {
    await admin.createAcls({
      acl: [
        ...['alice', 'carol'].flatMap((user) => [acl(`User:${user}`, AclResourceTypes.TOPIC, `${user}-`, AclOperationTypes.ALL), acl(`User:${user}`, AclResourceTypes.GROUP, `${user}-`, AclOperationTypes.ALL)]),
        acl('User:bob', AclResourceTypes.TOPIC, 'shared-', AclOperationTypes.READ),
        acl('User:bob', AclResourceTypes.TOPIC, 'shared-', AclOperationTypes.DESCRIBE),
      ],
    });
  } finally {
    await admin.disconnect();
  }
}

async function createTopic(broker: SecuredBroker, topic: string): Promise<void> {
  const admin = plainAdmin(broker);
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

/** The topic's end offset, read over PLAINTEXT: what was stored, whoever tried. */
async function storedCount(broker: SecuredBroker, topic: string): Promise<number> {
  const admin = plainAdmin(broker);
  await admin.connect();
  try {
    return Number((await admin.fetchTopicOffsets(topic))[0]!.high);
  } finally {
    await admin.disconnect();
  }
}

/** The Java client's settings for SASL_SSL with this mechanism as this user (the password or the token key as given). */
function saslSsl(mechanism: Mechanism, user: string, secret: { password?: string; keyFile?: string } = {}): JavaConfig {
  const password = secret.password ?? SECURED_USERS[user as SecuredUser];
  const jaas =
    mechanism === 'PLAIN'
      ? `org.apache.kafka.common.security.plain.PlainLoginModule required username="${user}" password="${password}";`
      : mechanism === 'OAUTHBEARER'
        ? `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required keyFile="${secret.keyFile ?? fixture.privateKeyFile}" subject="${user}" audience="${TOKEN_AUDIENCE}" issuer="${TOKEN_ISSUER}" keyId="test-signer" lifetimeSeconds="300";`
        : `org.apache.kafka.common.security.scram.ScramLoginModule required username="${user}" password="${password}";`;
  return {
    'security.protocol': 'SASL_SSL',
    'ssl.truststore.type': 'PEM',
    'ssl.truststore.location': fixture.pki.caCert,
    'sasl.mechanism': mechanism,
    'sasl.jaas.config': jaas,
    ...(mechanism === 'OAUTHBEARER' ? { 'sasl.login.callback.handler.class': 'queen.gateway.javaclient.SignedTokenLoginHandler' } : {}),
    // Generous for a loaded machine (a refusal comes at once either way).
    'max.block.ms': 90_000,
    'delivery.timeout.ms': 120_000,
    'request.timeout.ms': 30_000,
  };
}

const records = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ key: `k${i}`, value: `${tag}-${i}` }));

/** Kafka's own sentence for each refusal, kept to check the gateway says the same. */
const kafkaSaid = new Map<string, string | null>();

describe.each([['kafka'], ['gateway']] as const)('the Java client over SASL_SSL against the %s', (name) => {
  const broker = () => brokers.find((b) => b.name === name)!;

  for (const mechanism of MECHANISMS) {
    it(`produces and reads back as alice with ${mechanism}`, async () => {
      const topic = `alice-${mechanism.toLowerCase()}`;
      await createTopic(broker(), topic);
      const produced = await javaProduce(broker().bootstrap.SASL_SSL, topic, records(3, mechanism), saslSsl(mechanism, 'alice'));
      expect(produced.failed).toEqual([]);
      expect(produced.sent.map((s) => s.offset)).toEqual([0, 1, 2]);
      const consumer = await JavaConsumer.start({ bootstrap: broker().bootstrap.SASL_SSL, topics: [topic], groupId: `alice-g-${mechanism.toLowerCase()}`, clientId: `alice-${mechanism}`, maxRecords: 3, config: saslSsl(mechanism, 'alice') });
      await consumer.finished(90_000);
      expect(consumer.records.map((r) => r.value)).toEqual(records(3, mechanism).map((r) => r.value));
      expect(consumer.commits.at(-1)?.offset).toBe(3);
    }, 300_000);
  }

  for (const [mechanism, secret, what] of [
    ['PLAIN', { password: 'not-alices-password' }, 'a wrong password'],
    ['SCRAM-SHA-256', { password: 'not-alices-password' }, 'a wrong password'],
    ['SCRAM-SHA-512', { password: 'not-alices-password' }, 'a wrong password'],
    ['OAUTHBEARER', { keyFile: '<stranger>' }, 'a token signed by another key'],
  ] as const) {
    it(`refuses ${what} with ${mechanism}: SaslAuthenticationException with Kafka's sentence, nothing stored`, async () => {
      const topic = `alice-refused-${mechanism.toLowerCase()}`;
      await createTopic(broker(), topic);
      const config = saslSsl(mechanism, 'alice', 'keyFile' in secret ? { keyFile: strangerKeyFile } : secret);
      const produced = await javaProduce(broker().bootstrap.SASL_SSL, topic, records(2, 'refused'), config);
      expect(produced.sent).toEqual([]);
      expect(produced.failed.map((f) => f.error.type)).toEqual(['SaslAuthenticationException', 'SaslAuthenticationException']);
      const message = produced.failed[0]!.error.message;
      if (name === 'kafka') kafkaSaid.set(mechanism, message);
      else if (kafkaSaid.has(mechanism)) expect(message).toBe(kafkaSaid.get(mechanism));
      expect(await storedCount(broker(), topic)).toBe(0);
    }, 120_000);
  }

  it('stops a consumer with a wrong password with SaslAuthenticationException, before it reads anything', async () => {
    const topic = 'alice-consumer-refused';
    await createTopic(broker(), topic);
    expect((await javaProduce(broker().bootstrap.SASL_SSL, topic, records(1, 'x'), saslSsl('SCRAM-SHA-512', 'alice'))).sent).toHaveLength(1);
    const consumer = await JavaConsumer.start({ bootstrap: broker().bootstrap.SASL_SSL, topics: [topic], groupId: 'alice-g-refused', clientId: 'alice-wrong', config: saslSsl('SCRAM-SHA-512', 'alice', { password: 'wrong' }) });
    await consumer.exited(90_000);
    expect(consumer.fatalError?.type).toBe('SaslAuthenticationException');
    expect(consumer.records).toEqual([]);
  }, 120_000);

  it('refuses bob a write to a topic he may only read: TopicAuthorizationException, nothing stored', async () => {
    const topic = 'shared-writes';
    await createTopic(broker(), topic);
    const produced = await javaProduce(broker().bootstrap.SASL_SSL, topic, records(2, 'bob'), { ...saslSsl('SCRAM-SHA-256', 'bob'), 'enable.idempotence': false });
    expect(produced.sent).toEqual([]);
    expect(produced.failed.map((f) => f.error.type)).toEqual(['TopicAuthorizationException', 'TopicAuthorizationException']);
    expect(await storedCount(broker(), topic)).toBe(0);
  }, 180_000);

  it('refuses bob an idempotent producer (no WRITE anywhere, no IDEMPOTENT_WRITE): ClusterAuthorizationException, nothing stored', async () => {
    const topic = 'shared-idempotent';
    await createTopic(broker(), topic);
    const produced = await javaProduce(broker().bootstrap.SASL_SSL, topic, records(2, 'bob'), saslSsl('SCRAM-SHA-256', 'bob'));
    expect(produced.sent).toEqual([]);
    expect(produced.failed.map((f) => f.error.type)).toEqual(['ClusterAuthorizationException', 'ClusterAuthorizationException']);
    expect(await storedCount(broker(), topic)).toBe(0);
  }, 180_000);

  it("refuses bob alice's topic and a group he has no ACL for, and he reads nothing", async () => {
    const topic = 'alice-private';
    await createTopic(broker(), topic);
    expect((await javaProduce(broker().bootstrap.SASL_SSL, topic, records(2, 'private'), saslSsl('PLAIN', 'alice'))).sent).toHaveLength(2);
    const shared = 'shared-reads';
    await createTopic(broker(), shared);
    const produce = await javaProduce(broker().bootstrap.PLAINTEXT, shared, records(2, 'shared'));
    expect(produce.sent).toHaveLength(2);

    const onPrivate = await JavaConsumer.start({ bootstrap: broker().bootstrap.SASL_SSL, topics: [topic], groupId: 'bob-g', clientId: 'bob-private', config: saslSsl('PLAIN', 'bob') });
    await onPrivate.exited(90_000);
    // Metadata refuses the topic before the group is asked anything.
    expect(onPrivate.fatalError?.type).toBe('TopicAuthorizationException');
    expect(onPrivate.records).toEqual([]);

    const onShared = await JavaConsumer.start({ bootstrap: broker().bootstrap.SASL_SSL, topics: [shared], groupId: 'bob-g', clientId: 'bob-shared', config: saslSsl('PLAIN', 'bob') });
    await onShared.exited(90_000);
    expect(onShared.fatalError?.type).toBe('GroupAuthorizationException');
    expect(onShared.records).toEqual([]);
  }, 180_000);

  it('keeps a producer working across several sessions by re-authenticating', async () => {
    const topic = 'alice-sessions';
    await createTopic(broker(), topic);
    // Six records 1.5 s apart: about nine seconds, more than two sessions.
    const run = await startJavaProduce(broker().bootstrap.SASL_SSL, topic, records(6, 'session'), 1_500, saslSsl('SCRAM-SHA-512', 'alice'));
    const result = await run.finished();
    expect(result.failed).toEqual([]);
    expect(result.sent.map((s) => s.offset)).toEqual([0, 1, 2, 3, 4, 5]);
  }, 120_000);

  it('fails the sends after a session whose user was deleted expires: SaslAuthenticationException, nothing more stored', async () => {
    const topic = 'carol-expiry';
    await createTopic(broker(), topic);
    // Short waits here: once carol is refused, each send would otherwise wait max.block.ms for metadata that cannot come.
    const run = await startJavaProduce(broker().bootstrap.SASL_SSL, topic, records(8, 'expiry'), 1_000, {
      ...saslSsl('SCRAM-SHA-256', 'carol'),
      'max.block.ms': 10_000,
      'delivery.timeout.ms': 15_000,
      'request.timeout.ms': 10_000,
    });
    await waitFor(() => run.lines.filter((l) => l.event === 'sent').length >= 2, { what: "carol's first two records", timeoutMs: 60_000 });
    // Records from here on were sent after the deletion (a loaded machine may have timed out an earlier one).
    const deletedAt = run.lines.filter((l) => l.event === 'sent' || l.event === 'failed').length;
    await broker().deleteScramUser('carol');
    const result = await run.finished();
    const sentAfter = result.sent.filter((s) => s.index >= deletedAt);
    const failedAfter = result.failed.filter((f) => f.index >= deletedAt);
    expect(failedAfter.length).toBeGreaterThan(0);
    // Once a send failed, none after it succeeded: the connection is not served without a session.
    expect(Math.max(-1, ...sentAfter.map((s) => s.index))).toBeLessThan(Math.min(...failedAfter.map((f) => f.index)));
    // The refused re-authentication reaches the sends as SaslAuthenticationException; a send already waiting for
    // the connection when it closed may end by its own timeout first (the Java client's doing, on either broker).
    expect(failedAfter.at(-1)!.error.type).toBe('SaslAuthenticationException');
    expect(failedAfter.filter((f) => f.error.type !== 'SaslAuthenticationException' && f.error.type !== 'TimeoutException')).toEqual([]);
    expect(await storedCount(broker(), topic)).toBe(result.sent.length);
  }, 240_000);
});

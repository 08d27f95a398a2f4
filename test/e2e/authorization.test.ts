/**
 * ACLs with real clients (issue 19): kafkajs over SASL_PLAINTEXT/PLAIN as
 * three users against the gateway with its authorizer on (memory and
 * PostgreSQL engines), and the same scenario against Apache Kafka with its
 * StandardAuthorizer, answering the same codes. Also: librdkafka refused a
 * write, authorization off by default, deny winning over allow, and the
 * ACL APIs over the wire.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import rdkafka from '@confluentinc/kafka-javascript';
import kafkajs from 'kafkajs';
import { startBroker, type Broker } from '../../src/index.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startApacheKafka, type ApacheKafka } from '../support/apache-kafka.js';
import { freePort } from '../support/gateway.js';
import { client, outcome, runAuthorizationScenario, USERS, type ScenarioResult } from './authorization-scenario.js';

const { AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs;

/** What Kafka's rules give the scenario: alice does her work, bob is refused everything and sees nothing. */
const EXPECTED: ScenarioResult = {
  aliceCreatesTopic: 'OK',
  aliceProduces: 'OK',
  aliceReadsBack: 2,
  bobListsTopic: false,
  bobMetadata: 'TOPIC_AUTHORIZATION_FAILED',
  bobDeletesTopic: 'TOPIC_AUTHORIZATION_FAILED',
  topicSurvivesBob: true,
  bobProduces: 'TOPIC_AUTHORIZATION_FAILED',
  bobDeletesRecords: 'TOPIC_AUTHORIZATION_FAILED',
  bobAltersRetention: 'TOPIC_AUTHORIZATION_FAILED',
  // FindCoordinator answers GROUP_AUTHORIZATION_FAILED; kafkajs reports only that it found no coordinator (the wire test below reads the code).
  bobFetchesGroupOffsets: 'kafkajs: group coordinator not found',
  bobCreatesAcl: 'CLUSTER_AUTHORIZATION_FAILED',
  aliceAclsListed: 2,
  aliceProducesAfterRevoke: 'TOPIC_AUTHORIZATION_FAILED',
};

let dir: string;
let usersFile: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'queen-authz-'));
  usersFile = join(dir, 'plain-users.txt');
  writeFileSync(usersFile, Object.entries(USERS).map(([u, p]) => `${u}=${p}`).join('\n') + '\n');
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await releaseEngines();
});

async function securedGateway(engine: Awaited<ReturnType<typeof engineMatrix>>[number], extra: Parameters<typeof startBroker>[0] = {}): Promise<{ broker: Broker; bootstrap: string }> {
  const store = engine.fresh();
  const broker = await startBroker({
    ...(store.engine === 'memory' ? { engine: 'memory' } : { engine: 'postgres', url: store.url, schema: store.schema }),
    listeners: [{ name: 'SASL_PLAINTEXT', host: '127.0.0.1', port: 0 }],
    sasl: { mechanisms: ['PLAIN'], plainUsersFile: usersFile },
    authorization: { enabled: true, superUsers: ['User:admin'] },
    autoCreateTopics: false,
    groups: { initialRebalanceDelayMs: 0 },
    shutdownGraceMs: 1_000,
    ...extra,
  });
  return { broker, bootstrap: broker.bootstrap };
}

for (const engine of await engineMatrix()) {
  describe.skipIf(engine.skipReason !== null)(`ACLs on the gateway (${engine.name}${engine.skipReason ? `: ${engine.skipReason}` : ''})`, () => {
    let broker: Broker;
    let bootstrap: string;
    beforeAll(async () => {
      ({ broker, bootstrap } = await securedGateway(engine));
    });
    afterAll(async () => {
      await broker?.stop();
    });

    it("lets alice work on her topics, and refuses bob everything of hers with Kafka's codes, showing him nothing", async () => {
      expect(await runAuthorizationScenario(bootstrap)).toEqual(EXPECTED);
    }, 120_000);

    it('refuses a librdkafka producer without WRITE with TOPIC_AUTHORIZATION_FAILED, storing nothing', async () => {
      const admin = client(bootstrap, 'admin').admin();
      await admin.connect();
      const topic = `carol-${Date.now()}`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
      // bob may see the topic (DESCRIBE) but not write to it.
      await admin.createAcls({ acl: [{ resourceType: AclResourceTypes.TOPIC, resourceName: topic, resourcePatternType: ResourcePatternTypes.LITERAL, principal: 'User:bob', host: '*', operation: AclOperationTypes.DESCRIBE, permissionType: AclPermissionTypes.ALLOW }] });
      const producer = new rdkafka.Producer({
        'bootstrap.servers': bootstrap,
        'security.protocol': 'sasl_plaintext',
        'sasl.mechanisms': 'PLAIN',
        'sasl.username': 'bob',
        'sasl.password': USERS.bob,
        dr_cb: true,
        'message.send.max.retries': 0,
      });
      const reports: { code: number | null }[] = [];
      producer.on('delivery-report', (err) => reports.push({ code: err ? (err as { code: number }).code : null }));
      await new Promise<void>((resolve, reject) => producer.connect({}, (err) => (err ? reject(err) : resolve())));
      producer.setPollInterval(20);
      producer.produce(topic, null, Buffer.from('from bob'));
      const deadline = Date.now() + 20_000;
      while (reports.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      await new Promise<void>((resolve) => producer.disconnect(() => resolve()));
      expect(reports).toEqual([{ code: rdkafka.CODES.ERRORS.ERR_TOPIC_AUTHORIZATION_FAILED }]);
      const offsets = await admin.fetchTopicOffsets(topic);
      expect(offsets[0]!.high).toBe('0');
      await admin.disconnect();
    });

    it('lets a DENY win over an ALLOW, whoever it names', async () => {
      const admin = client(bootstrap, 'admin').admin();
      await admin.connect();
      const topic = `shared-${Date.now()}`;
      await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
      const acl = (principal: string, permissionType: number) => ({
        resourceType: AclResourceTypes.TOPIC, resourceName: topic, resourcePatternType: ResourcePatternTypes.LITERAL,
        principal, host: '*', operation: AclOperationTypes.ALL, permissionType,
      });
      await admin.createAcls({ acl: [acl('User:*', AclPermissionTypes.ALLOW), acl('User:bob', AclPermissionTypes.DENY)] });
      const send = (user: 'alice' | 'bob') => async () => {
        const producer = client(bootstrap, user).producer();
        await producer.connect();
        try {
          await producer.send({ topic, messages: [{ value: user }] });
        } finally {
          await producer.disconnect();
        }
      };
      expect(await outcome(send('alice'))).toBe('OK');
      expect(await outcome(send('bob'))).toBe('TOPIC_AUTHORIZATION_FAILED');
      await admin.disconnect();
    });
  });
}

describe('ACLs off (the default)', () => {
  it('answers SECURITY_DISABLED to the ACL APIs and lets every client do everything, as before', async () => {
    const broker = await startBroker({ autoCreateTopics: false });
    try {
      const admin = new kafkajs.Kafka({ brokers: [broker.bootstrap], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 0 } }).admin();
      await admin.connect();
      const topic = `open-${Date.now()}`;
      expect(await outcome(() => admin.createTopics({ topics: [{ topic }] }))).toBe('OK');
      expect(await outcome(() => admin.describeAcls({ resourceType: AclResourceTypes.ANY, resourcePatternType: ResourcePatternTypes.ANY, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY }))).toBe('SECURITY_DISABLED');
      expect(await outcome(() => admin.deleteTopics({ topics: [topic] }))).toBe('OK');
      await admin.disconnect();
    } finally {
      await broker.stop();
    }
  });
});

describe('the same scenario against Apache Kafka (StandardAuthorizer, SASL/PLAIN)', () => {
  let kafka: ApacheKafka;
  let saslPort: number;
  beforeAll(async () => {
    saslPort = await freePort();
    const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="${USERS.admin}" ${Object.entries(USERS).map(([u, p]) => `user_${u}="${p}"`).join(' ')};`;
    kafka = await startApacheKafka({
      autoCreateTopics: false,
      extraListeners: [{ name: 'SASL', protocol: 'SASL_PLAINTEXT', port: saslPort }],
      config: {
        'listener.name.sasl.sasl.enabled.mechanisms': 'PLAIN',
        'listener.name.sasl.plain.sasl.jaas.config': jaas,
        'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
        // ANONYMOUS: the plain listeners, the broker's own controller traffic and the harness's start-up probe.
        'super.users': 'User:admin;User:ANONYMOUS',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await kafka?.stop();
  });

  it('answers every step as the gateway does', async () => {
    expect(await runAuthorizationScenario(`127.0.0.1:${saslPort}`)).toEqual(EXPECTED);
  }, 180_000);
});

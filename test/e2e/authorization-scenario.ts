/**
 * The authorization scenario of issue 19, written once against a broker that
 * speaks SASL/PLAIN with users admin (a super user), alice and bob, and
 * authorizes with Kafka's rules: the gateway, and Apache Kafka with its
 * StandardAuthorizer (authorization.test.ts runs both and compares).
 *
 * alice gets ALL on topics and groups prefixed with her name, through the
 * admin's CreateAcls; bob gets nothing. What each client is told is
 * collected as error type names (kafkajs's names for Kafka's codes), so two
 * brokers' answers compare as plain data.
 */
import { randomBytes } from 'node:crypto';
import kafkajs from 'kafkajs';

const { Kafka, logLevel, AclResourceTypes, AclOperationTypes, AclPermissionTypes, ResourcePatternTypes } = kafkajs;

export const USERS = { admin: 'admin-secret', alice: 'alice-secret', bob: 'bob-secret' } as const;
export type User = keyof typeof USERS;

export function client(bootstrap: string, user: User, clientId = `authz-${user}`, retries = 0) {
  return new Kafka({
    clientId,
    brokers: [bootstrap],
    sasl: { mechanism: 'plain', username: user, password: USERS[user] },
    logLevel: logLevel.NOTHING,
    retry: { retries },
    connectionTimeout: 10_000,
    requestTimeout: 15_000,
  });
}

/** The Kafka error type a client was given (kafkajs wraps some in aggregates), or "OK". */
export async function outcome(action: () => Promise<unknown>): Promise<string> {
  try {
    await action();
    return 'OK';
  } catch (e) {
    return errorType(e) ?? `unexpected: ${(e as Error).message}`;
  }
}

function errorType(e: unknown, depth = 0): string | null {
  if (!e || typeof e !== 'object' || depth > 4) return null;
  // kafkajs drops the code FindCoordinator answered and says only this (both brokers alike).
  if ((e as Error).name === 'KafkaJSGroupCoordinatorNotFound') return 'kafkajs: group coordinator not found';
  const err = e as { type?: unknown; errors?: unknown[]; cause?: unknown; originalError?: unknown };
  if (typeof err.type === 'string' && /_[A-Z]+/.test(err.type)) return err.type;
  for (const inner of [...(Array.isArray(err.errors) ? err.errors : []), err.cause, err.originalError]) {
    const found = errorType(inner, depth + 1);
    if (found) return found;
  }
  return null;
}

export interface ScenarioResult {
  aliceCreatesTopic: string;
  aliceProduces: string;
  aliceReadsBack: number;
  bobListsTopic: boolean;
  bobMetadata: string;
  bobDeletesTopic: string;
  topicSurvivesBob: boolean;
  bobProduces: string;
  bobDeletesRecords: string;
  bobAltersRetention: string;
  bobFetchesGroupOffsets: string;
  bobCreatesAcl: string;
  aliceAclsListed: number;
  aliceProducesAfterRevoke: string;
}

export async function runAuthorizationScenario(bootstrap: string): Promise<ScenarioResult> {
  const tag = randomBytes(4).toString('hex');
  const topic = `alice-${tag}`;
  const group = `alice-g-${tag}`;
  const admin = client(bootstrap, 'admin').admin();
  const alice = client(bootstrap, 'alice');
  const bob = client(bootstrap, 'bob');
  const aliceAdmin = alice.admin();
  const bobAdmin = bob.admin();
  const aliceAcl = (resourceType: number) => ({
    resourceType,
    resourceName: `alice-`,
    resourcePatternType: ResourcePatternTypes.PREFIXED,
    principal: 'User:alice',
    host: '*',
    operation: AclOperationTypes.ALL,
    permissionType: AclPermissionTypes.ALLOW,
  });
  await Promise.all([admin.connect(), aliceAdmin.connect(), bobAdmin.connect()]);
  try {
    await admin.createAcls({ acl: [aliceAcl(AclResourceTypes.TOPIC), aliceAcl(AclResourceTypes.GROUP)] });
    const result: Partial<ScenarioResult> = {};
    result.aliceCreatesTopic = await outcome(() => aliceAdmin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true }));

    const producer = alice.producer();
    await producer.connect();
    result.aliceProduces = await outcome(() => producer.send({ topic, messages: [{ value: 'one' }, { value: 'two' }] }));

    // Retries here: Apache Kafka answers COORDINATOR_NOT_AVAILABLE while it makes its offsets topic for the first group.
    const consumer = client(bootstrap, 'alice', 'authz-alice', 10).consumer({ groupId: group });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const read: string[] = [];
    await new Promise<void>((resolve, reject) => {
      // Apache Kafka makes its offsets topic on the first group: on a busy machine that takes a while.
      const timer = setTimeout(() => reject(new Error(`alice read ${read.length} of 2 records`)), 90_000);
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        // kafkajs restarts itself after a retriable error (GROUP_LOAD_IN_PROGRESS on a young Apache Kafka).
        if (payload.restart) return;
        clearTimeout(timer);
        reject(new Error(`alice's consumer crashed: ${errorType(payload.error) ?? payload.error.message}`));
      });
      void consumer.run({
        eachMessage: async ({ message }) => {
          read.push(message.value!.toString());
          if (read.length >= 2) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    await consumer.disconnect();
    result.aliceReadsBack = read.length;

    result.bobListsTopic = (await bobAdmin.listTopics()).includes(topic);
    result.bobMetadata = await outcome(() => bobAdmin.fetchTopicMetadata({ topics: [topic] }));
    result.bobDeletesTopic = await outcome(() => bobAdmin.deleteTopics({ topics: [topic], timeout: 5_000 }));
    result.topicSurvivesBob = (await aliceAdmin.listTopics()).includes(topic);
    const bobProducer = bob.producer();
    await bobProducer.connect();
    result.bobProduces = await outcome(() => bobProducer.send({ topic, messages: [{ value: 'from bob' }] }));
    await bobProducer.disconnect();
    result.bobDeletesRecords = await outcome(() => bobAdmin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: '-1' }] }));
    result.bobAltersRetention = await outcome(async () => {
      const answer = await bobAdmin.alterConfigs({ validateOnly: false, resources: [{ type: 2, name: topic, configEntries: [{ name: 'retention.ms', value: '1' }] }] });
      const failed = answer.resources.find((r: { errorCode: number }) => r.errorCode !== 0);
      if (failed) throw Object.assign(new Error(failed.errorMessage ?? ''), { type: codeName(failed.errorCode) });
    });
    result.bobFetchesGroupOffsets = await outcome(() => bobAdmin.fetchOffsets({ groupId: group, topics: [topic] }));
    result.bobCreatesAcl = await outcome(() => bobAdmin.createAcls({ acl: [{ ...aliceAcl(AclResourceTypes.TOPIC), principal: 'User:bob' }] }));

    const listed = await admin.describeAcls({
      resourceType: AclResourceTypes.ANY,
      resourcePatternType: ResourcePatternTypes.ANY,
      principal: 'User:alice',
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    });
    result.aliceAclsListed = listed.resources.reduce((n, r) => n + r.acls.length, 0);
    await admin.deleteAcls({ filters: [aliceAcl(AclResourceTypes.TOPIC)] });
    // Apache Kafka applies ACL changes through its metadata log; a moment later they hold.
    let after = 'OK';
    for (let i = 0; i < 20 && after === 'OK'; i++) {
      after = await outcome(() => producer.send({ topic, messages: [{ value: 'after revoke' }] }));
      if (after === 'OK') await new Promise((r) => setTimeout(r, 250));
    }
    result.aliceProducesAfterRevoke = after;
    await producer.disconnect();
    return result as ScenarioResult;
  } finally {
    await admin.deleteAcls({ filters: [aliceAcl(AclResourceTypes.TOPIC), aliceAcl(AclResourceTypes.GROUP)] }).catch(() => {});
    await Promise.all([admin.disconnect(), aliceAdmin.disconnect(), bobAdmin.disconnect()]);
  }
}

/** The three authorization codes the scenario can meet, by kafkajs's names. */
function codeName(code: number): string {
  return ({ 29: 'TOPIC_AUTHORIZATION_FAILED', 30: 'GROUP_AUTHORIZATION_FAILED', 31: 'CLUSTER_AUTHORIZATION_FAILED' } as Record<number, string>)[code] ?? `code ${code}`;
}

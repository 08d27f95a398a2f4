/**
 * The web console in headless Chromium (Debian's, driven by playwright-core)
 * against a real gateway: records produced and a group formed with kafkajs
 * over the Kafka protocol, then the pages read as a user reads them, and
 * the console's actions checked through a Kafka client.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Admin, Consumer, Kafka, Producer } from 'kafkajs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openCore, type Core } from '../../src/core/index.js';
import { startBroker, type Broker } from '../../src/index.js';
import { launchChromium, type HeadlessChromium } from '../support/chromium.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { waitFor } from '../support/eventually.js';
import { connectKafkajsProducer, kafkajsClient } from '../support/kafkajs.js';
import { uniqueTopic } from '../support/records.js';
import { startMember, waitForCover } from '../support/groups-members.js';
import { redisServerMissing, startRedis, type TestRedis } from '../support/redis.js';

/** The text of the console's view once it contains `expected` (the views render after their fetches). */
async function viewShowing(page: Page, expected: string, what: string): Promise<string> {
  let text = '';
  await waitFor(
    async () => {
      text = (await page.textContent('#view')) ?? '';
      return text.includes(expected);
    },
    { what, timeoutMs: 15_000, intervalMs: 50, describe: () => `the view read: ${text.slice(0, 400)}` },
  );
  return text;
}

/** The cells of the table row whose first cell is `first`. */
async function rowOf(page: Page, first: string): Promise<string[]> {
  const row = page.locator('#view tbody tr', { has: page.locator('td:first-child', { hasText: first }) }).first();
  return row.locator('td').allTextContents();
}

async function confirm(page: Page): Promise<void> {
  await page.locator('#confirm-ok').click();
}

const engines = await engineMatrix();
afterAll(() => releaseEngines());

for (const engine of engines) describe.skipIf(engine.skipReason !== null)(`the web console in headless Chromium, ${engine.name} engine${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
  let broker: Broker;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  let browser: HeadlessChromium;
  let page: Page;
  const consumers: Consumer[] = [];

  beforeAll(async () => {
    const choice = engine.fresh();
    broker = await startBroker({
      ...(choice.engine === 'memory' ? { engine: 'memory' as const } : { engine: 'postgres' as const, url: choice.url, schema: choice.schema }),
      autoCreateTopics: false,
      groups: { initialRebalanceDelayMs: 0 },
      consumerGroups: { heartbeatIntervalMs: 500 },
      http: { port: 0 },
    });
    kafka = kafkajsClient(broker.bootstrap);
    admin = kafka.admin();
    await admin.connect();
    producer = await connectKafkajsProducer(kafka);
    browser = await launchChromium();
    page = await browser.context.newPage();
  });
  afterAll(async () => {
    await Promise.all(consumers.map((c) => c.disconnect().catch(() => {})));
    await browser?.close();
    await producer?.disconnect();
    await admin?.disconnect();
    await broker?.stop();
  });

  /** Loads the page afresh at a view (a goto to the hash it shows already would not render it again). */
  const open = async (hash: string) => {
    await page.goto('about:blank');
    await page.goto(`${broker.httpUrl}/${hash}`);
  };

  it('shows this gateway, the topics with their offsets, and a partition’s records with key, headers and value', async () => {
    const topic = uniqueTopic('console-orders');
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    await producer.send({
      topic,
      messages: [0, 1, 2, 3, 4].map((i) => ({ partition: 0, key: `order-${i}`, value: JSON.stringify({ order: i, total: i * 10 }), headers: { origin: `shop-${i}` } })),
    });
    await producer.send({ topic, messages: [{ partition: 1, key: 'late', value: 'one' }] });

    await open('#/');
    const cluster = await viewShowing(page, 'this one', 'the gateways table');
    expect(cluster).toContain(broker.bootstrap);

    await open('#/topics');
    await viewShowing(page, topic, 'the topic in the topic list');
    expect(await rowOf(page, topic)).toEqual([topic, '2', '6', 'delete', 'Kafka', expect.any(String)]);

    await open(`#/topics/${topic}`);
    await viewShowing(page, 'high watermark', 'the partitions of the topic');
    // partition, name, log start, high watermark, last stable, records, size, browse
    expect((await rowOf(page, '0')).slice(0, 6)).toEqual(['0', '0', '0', '5', '5', '5']);
    expect((await rowOf(page, '1')).slice(0, 6)).toEqual(['1', '1', '0', '1', '1', '1']);
    expect(await page.textContent('#view')).toContain('retention.ms');

    await open(`#/topics/${topic}/messages?partition=0&offset=2`);
    await viewShowing(page, 'order-2', 'the records of partition 0 from offset 2');
    const record = await rowOf(page, '2');
    expect(record.slice(2)).toEqual(['order-2', 'origin: shop-2', '{"order":2,"total":20}']);
    expect(await page.textContent('#view')).not.toContain('order-1');

    await page.selectOption('#browse select[name=format]', 'hex');
    await page.click('#browse button');
    await viewShowing(page, '6f 72 64 65 72 2d 32', 'the key of offset 2 in hex');
  });

  it('reads from a time: the first record shown is the first at or after it', async () => {
    const topic = uniqueTopic('console-times');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    const now = Date.now();
    await producer.send({
      topic,
      messages: [
        { key: 'old', value: 'a', timestamp: String(now - 60_000) },
        { key: 'newer', value: 'b', timestamp: String(now - 10_000) },
      ],
    });
    await open(`#/topics/${topic}/messages?partition=0&timestamp=${now - 30_000}`);
    const text = await viewShowing(page, 'newer', 'the record at or after the time');
    expect(text).not.toContain('old');
    expect(await rowOf(page, '1')).toContain('newer');
  });

  it('shows keys, header values and values an attacker chose as text, and runs none of them', async () => {
    const topic = uniqueTopic('console-hostile');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    const key = '<img src=x onerror="window.__console_pwned=1">';
    const value = '<script>window.__console_pwned=2</script><b>bold</b>';
    const header = '<svg onload="window.__console_pwned=3"></svg>';
    await producer.send({ topic, messages: [{ key, value, headers: { '<i>h</i>': header } }] });

    await open(`#/topics/${topic}/messages?partition=0`);
    await viewShowing(page, key, 'the hostile key as text');
    expect(await page.textContent('#view')).toContain(value);
    expect(await page.textContent('#view')).toContain(`<i>h</i>: ${header}`);
    expect(await page.locator('#view img, #view script, #view svg, #view i, #view pre b').count()).toBe(0);
    expect(await page.evaluate("typeof window.__console_pwned")).toBe("undefined");
  });

  it('shows a group’s state, members and lag, refuses a reset while it has members, and resets it once it is empty', async () => {
    const topic = uniqueTopic('console-lag');
    const groupId = uniqueTopic('console-group');
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    await producer.send({ topic, messages: [0, 1, 2, 3].map((i) => ({ partition: i % 2, value: `first-${i}` })) });

    const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 100 });
    consumers.push(consumer);
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    let seen = 0;
    await consumer.run({ autoCommitInterval: 100, eachMessage: async () => void seen++ });
    await waitFor(async () => {
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return seen >= 4 && offsets!.partitions.every((p) => p.offset === '2');
    }, { what: 'the group to read and commit the first 4 records', timeoutMs: 30_000, describe: () => `${seen} read` });
    consumer.pause([{ topic }]);
    await producer.send({ topic, messages: [0, 1, 2].map((i) => ({ partition: 0, value: `more-${i}` })) });

    await open('#/groups');
    await viewShowing(page, groupId, 'the group in the group list');
    // group, type, protocol type, state, members, topics, lag
    expect(await rowOf(page, groupId)).toEqual([groupId, 'classic', 'consumer', 'Stable', '1', topic, '3']);

    await open(`#/groups/${groupId}`);
    await viewShowing(page, 'Offsets and lag', 'the group page');
    const lagRow = await page.locator('#view tbody tr', { hasText: topic }).filter({ has: page.locator('td:nth-child(2)', { hasText: /^0$/ }) }).first().locator('td').allTextContents();
    expect(lagRow.slice(1, 5)).toEqual(['0', '2', '5', '3']);
    expect(await page.textContent('#view')).toContain(`${topic} [`);

    await page.selectOption('#reset-offsets select[name=topic]', topic);
    await page.selectOption('#reset-offsets select[name=to]', 'earliest');
    await page.click('#reset-offsets button');
    await confirm(page);
    await waitFor(async () => ((await page.textContent('#reset-outcome')) ?? '').includes('has active members'), { what: 'the refusal of a reset while the group has members', timeoutMs: 10_000 });
    const [still] = await admin.fetchOffsets({ groupId, topics: [topic] });
    expect(still!.partitions.map((p) => p.offset)).toEqual(['2', '2']);

    await consumer.disconnect();
    consumers.splice(consumers.indexOf(consumer), 1);
    await open(`#/groups/${groupId}`);
    await viewShowing(page, 'Empty', 'the group, empty once its consumer left');
    await page.selectOption('#reset-offsets select[name=topic]', topic);
    await page.selectOption('#reset-offsets select[name=to]', 'offset');
    await page.fill('#reset-offsets input[name=offset]', '1');
    await page.click('#reset-offsets button');
    await confirm(page);
    await waitFor(async () => {
      const [offsets] = await admin.fetchOffsets({ groupId, topics: [topic] });
      return offsets!.partitions.every((p) => p.offset === '1');
    }, { what: 'the reset to offset 1 in every partition, read by a Kafka client', timeoutMs: 10_000 });
    // The page shows the new lag: (5 - 1) + (2 - 1).
    const lag = page.locator('#view .figure', { hasText: 'lag' }).locator('.figure-value');
    let shown: string | null = null;
    await waitFor(async () => (shown = await lag.textContent()) === '5', { what: 'a lag of 5 on the group page after the reset', timeoutMs: 10_000, describe: () => `it read ${shown}` });
  });

  it('shows a KIP-848 consumer group as a consumer group: its state, members and what each is assigned', async () => {
    const topic = uniqueTopic('console-kip848');
    const groupId = `${topic}-g`;
    await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });
    const member = await startMember({ bootstrap: broker.bootstrap, groupProtocol: 'consumer', group: groupId, topic, name: 'kip848' });
    try {
      await waitForCover([member], 2, 'the KIP-848 member to hold both partitions');
      await open('#/groups');
      await viewShowing(page, groupId, 'the KIP-848 group in the group list');
      // group, type, protocol type, state, members, topics, lag
      expect((await rowOf(page, groupId)).slice(0, 5)).toEqual([groupId, 'consumer', 'consumer', 'Stable', '1']);
      const shown = (await (await fetch(`${broker.httpUrl}/console/api/groups/${groupId}`)).json()) as { type: string; state: string; members: { assignment: { topic: string; partitions: number[] }[] }[] };
      expect([shown.type, shown.state]).toEqual(['consumer', 'Stable']);
      expect(shown.members.flatMap((m) => m.assignment.filter((a) => a.topic === topic).flatMap((a) => a.partitions)).sort()).toEqual([0, 1]);
    } finally {
      await member.close();
    }
  });

  it('samples throughput: records produced and records a group commits past, which the cluster page charts', async () => {
    const topic = uniqueTopic('console-rate');
    const groupId = uniqueTopic('console-rate-group');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
    const sample = async () => (await (await fetch(`${broker.httpUrl}/console/api/throughput`)).json()) as { produced: number; consumed: number };
    const before = await sample();
    await producer.send({ topic, messages: Array.from({ length: 25 }, (_, i) => ({ value: `r${i}` })) });
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: '10' }] });
    const after = await sample();
    expect(after.produced - before.produced).toBe(25);
    expect(after.consumed - before.consumed).toBe(10);

    await open('#/');
    await viewShowing(page, 'records/s in', 'the throughput chart');
    // Two samples make the first point of each line.
    await waitFor(async () => (await page.locator('#throughput path.chart-line').count()) === 2, { what: 'the two lines of the chart drawn', timeoutMs: 15_000 });
  });

  it('creates a topic with a config and deletes it, each after a confirmation, as a Kafka client then sees', async () => {
    const topic = uniqueTopic('console-made');
    await open('#/topics');
    await viewShowing(page, 'Create a topic', 'the topic list');
    await page.fill('#create-topic input[name=name]', topic);
    await page.fill('#create-topic input[name=partitions]', '3');
    await page.fill('#create-topic textarea[name=configs]', 'retention.ms=3600000\ncleanup.policy=compact');
    await page.click('#create-topic button');
    await confirm(page);
    await viewShowing(page, `Topic ${topic}`, 'the new topic’s page');

    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    expect(metadata.topics[0]!.partitions).toHaveLength(3);
    const described = await admin.describeConfigs({ resources: [{ type: 2, name: topic, configNames: ['retention.ms', 'cleanup.policy'] }], includeSynonyms: false });
    expect(Object.fromEntries(described.resources[0]!.configEntries.map((c) => [c.configName, c.configValue]))).toEqual({ 'retention.ms': '3600000', 'cleanup.policy': 'compact' });

    await page.click('#delete-topic');
    await page.locator('#confirm').getByText('Cancel').click();
    expect(await admin.listTopics()).toContain(topic);

    await page.click('#delete-topic');
    await confirm(page);
    await waitFor(async () => !(await admin.listTopics()).includes(topic), { what: 'the topic gone for a Kafka client', timeoutMs: 10_000 });
    await viewShowing(page, 'All topics', 'the topic list after the delete');
    expect(await page.textContent('#view')).not.toContain(topic);
  });

  it('refuses to create a topic with a config Kafka would refuse, saying why', async () => {
    const topic = uniqueTopic('console-bad');
    await open('#/topics');
    await viewShowing(page, 'Create a topic', 'the topic list');
    await page.fill('#create-topic input[name=name]', topic);
    await page.fill('#create-topic textarea[name=configs]', 'retention.ms=soon');
    await page.click('#create-topic button');
    await confirm(page);
    await viewShowing(page, 'retention.ms', 'the refusal naming the config');
    expect(await page.textContent('#view .error')).toMatch(/retention\.ms/);
    expect(await admin.listTopics()).not.toContain(topic);
  });
});

describe('the web console behind the HTTP API’s tokens and ACLs', () => {
  let dir: string;
  let broker: Broker;
  let browser: HeadlessChromium;
  const topic = uniqueTopic('console-secret');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'queen-console-access-'));
    const tokensFile = join(dir, 'tokens.txt');
    writeFileSync(tokensFile, 'admin=admin-token-0123456789\nalice=alice-token-0123456789\n');
    const usersFile = join(dir, 'users.txt');
    writeFileSync(usersFile, 'bob=bob-secret-ß\n');
    broker = await startBroker({
      engine: 'memory',
      listeners: [{ name: 'SASL_PLAINTEXT', host: '127.0.0.1', port: 0 }],
      sasl: { mechanisms: ['PLAIN'], plainUsersFile: usersFile },
      authorization: { enabled: true, superUsers: ['User:admin', 'User:bob'] },
      http: { port: 0, auth: { tokensFile, basic: true } },
    });
    await broker.core.createQueue({ name: topic, partitions: 1 });
    await broker.core.createQueue({ name: 'alice-orders', partitions: 1 });
    await broker.core.createAcls({ bindings: [{ resourceType: 'TOPIC', resourceName: 'alice-', patternType: 'PREFIXED', principal: 'User:alice', host: '*', operation: 'DESCRIBE', permission: 'ALLOW' }] });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses the console’s data without credentials, and serves the page, which asks for them', async () => {
    const refused = await fetch(`${broker.httpUrl}/console/api/topics`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'unauthenticated' });
    // No browser password dialog over the console's own form.
    expect(refused.headers.get('www-authenticate')).toBeNull();
    expect((await fetch(`${broker.httpUrl}/console/api/groups`, { headers: { authorization: 'Bearer guess' } })).status).toBe(401);

    const page = await browser.context.newPage();
    await page.goto(`${broker.httpUrl}/#/topics`);
    await page.locator('#sign-in').waitFor({ state: 'visible' });
    expect(await page.textContent('#view')).not.toContain(topic);
    await page.fill('#sign-in input[name=token]', 'admin-token-0123456789');
    await page.click('#sign-in button');
    await viewShowing(page, topic, 'the topics once signed in');
    await page.close();
  });

  it('signs in with a user and password the Kafka listeners accept (Basic)', async () => {
    const page = await browser.context.newPage();
    await page.goto(`${broker.httpUrl}/#/topics`);
    await page.locator('#sign-in').waitFor({ state: 'visible' });
    await page.fill('#sign-in input[name=user]', 'bob');
    await page.fill('#sign-in input[name=password]', 'wrong');
    await page.click('#sign-in button');
    // A wrong password is refused and the form asks again, saying why.
    await waitFor(async () => ((await page.textContent('#sign-in-reason')) ?? '').includes('not accepted') && (await page.locator('#sign-in').isVisible()), { what: 'the form asking again after a wrong password', timeoutMs: 10_000 });
    await page.fill('#sign-in input[name=user]', 'bob');
    await page.fill('#sign-in input[name=password]', 'bob-secret-ß');
    await page.click('#sign-in button');
    await viewShowing(page, topic, 'the topics once bob signed in');
    await page.close();
  });

  it('shows a principal only what its ACLs let it describe, and refuses what they do not', async () => {
    const alice = { authorization: 'Bearer alice-token-0123456789' };
    await waitFor(async () => {
      const listed = await fetch(`${broker.httpUrl}/console/api/topics`, { headers: alice });
      return listed.ok && ((await listed.json()) as { name: string }[]).some((t) => t.name === 'alice-orders');
    }, { what: 'alice’s DESCRIBE ACL in force', timeoutMs: 10_000 });
    const listed = (await (await fetch(`${broker.httpUrl}/console/api/topics`, { headers: alice })).json()) as { name: string }[];
    expect(listed.map((t) => t.name)).toEqual(['alice-orders']);

    const cluster = await fetch(`${broker.httpUrl}/console/api/cluster`, { headers: alice });
    expect(cluster.status).toBe(403);
    expect(((await cluster.json()) as { message: string }).message).toContain('DESCRIBE on the cluster');
    const browse = await fetch(`${broker.httpUrl}/console/api/topics/alice-orders/partitions/0/messages`, { headers: alice });
    expect(browse.status).toBe(403);
    expect(((await browse.json()) as { message: string }).message).toContain("READ on queue 'alice-orders'");
    const create = await fetch(`${broker.httpUrl}/console/api/topics`, { method: 'POST', headers: { ...alice, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'alice-new' }) });
    expect(create.status).toBe(403);
    expect(await broker.core.describeQueue({ name: 'alice-new' })).toBeNull();
  });
});

const redisMissing = redisServerMissing();

describe.skipIf(redisMissing !== null)(`the web console of a cluster in the node registry${redisMissing ? ` (skipped: ${redisMissing})` : ''}`, () => {
  let redis: TestRedis;
  let core: Core;
  const gateways: Broker[] = [];
  let browser: HeadlessChromium;

  beforeAll(async () => {
    redis = await startRedis();
    core = await openCore({ engine: 'memory' });
    const cluster = { redisUrl: redis.url, nodeTtlMs: 900, keyPrefix: uniqueTopic('console-cluster') };
    // One at a time: each derives its node id from its own port.
    gateways.push(await startBroker({ core, cluster, http: { port: 0 } }));
    gateways.push(await startBroker({ core, cluster }));
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await Promise.all(gateways.map((g) => g.stop()));
    await core?.close();
    await redis?.stop();
  });

  it('lists every live gateway of the registry, this one marked', async () => {
    const page = await browser.context.newPage();
    let text = '';
    // The first gateway learns of the second on its next registry read.
    await waitFor(
      async () => {
        await page.goto('about:blank');
        await page.goto(`${gateways[0]!.httpUrl}/#/`);
        text = await viewShowing(page, 'Gateways', 'the cluster page');
        return text.includes(gateways[1]!.bootstrap);
      },
      { what: 'both gateways on the first one’s cluster page', timeoutMs: 15_000, intervalMs: 300, describe: () => text.slice(0, 400) },
    );
    expect(text).toContain(gateways[0]!.bootstrap);
    const self = (await page.locator('#view tbody tr', { hasText: '(this one)' }).allTextContents()).join();
    expect(self).toContain(gateways[0]!.bootstrap);
    expect(self).not.toContain(gateways[1]!.bootstrap);
    expect((await page.locator('.figure', { hasText: 'gateways' }).locator('.figure-value').textContent())).toBe('2');
    await page.close();
  });
});

/**
 * Takes the web console's screenshots for docs/console.md: a gateway with
 * the HTTP API, topics, records, groups, a transaction, ACLs, quotas and a
 * dead letter made through real clients (kafkajs, Queen's HTTP API), then
 * each view in headless Chromium at 1280x800.
 *
 *   npx tsx scripts/console-screenshots.ts [directory, default docs/console]
 */
import { mkdirSync } from 'node:fs';
import { startBroker } from '../src/index.js';
import { launchChromium } from '../test/support/chromium.js';
import { connectKafkajsProducer, kafkajsClient } from '../test/support/kafkajs.js';

const out = process.argv[2] ?? 'docs/console';
mkdirSync(out, { recursive: true });

const broker = await startBroker({ engine: 'memory', autoCreateTopics: false, groups: { initialRebalanceDelayMs: 0 }, http: { port: 0 } });
const http = broker.httpUrl!;
const post = async (path: string, body: unknown) => (await fetch(`${http}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json();
const kafka = kafkajsClient(broker.bootstrap);
const admin = kafka.admin();
await admin.connect();
await admin.createTopics({
  topics: [
    { topic: 'orders', numPartitions: 3 },
    { topic: 'payments', numPartitions: 2, configEntries: [{ name: 'retention.ms', value: '86400000' }] },
    { topic: 'customers', numPartitions: 1, configEntries: [{ name: 'cleanup.policy', value: 'compact' }] },
  ],
});
const producer = await connectKafkajsProducer(kafka);
const order = (i: number) => ({ key: `order-${1000 + i}`, value: JSON.stringify({ id: 1000 + i, customer: `c-${i % 7}`, total: Math.round(i * 13.7) / 1 }), headers: { source: i % 2 ? 'web' : 'mobile', 'trace-id': `4f1c${i}` }, partition: i % 3 });
await producer.send({ topic: 'orders', messages: Array.from({ length: 60 }, (_, i) => order(i)) });
await producer.send({ topic: 'customers', messages: Array.from({ length: 7 }, (_, i) => ({ key: `c-${i}`, value: JSON.stringify({ name: `Customer ${i}`, tier: i % 3 ? 'standard' : 'gold' }) })) });
await producer.send({ topic: 'payments', messages: Array.from({ length: 12 }, (_, i) => ({ key: `pay-${i}`, value: JSON.stringify({ order: 1000 + i, status: 'captured' }), partition: i % 2 })) });

// A group that reads (its member, the out-rate, then lag once it pauses), and one with offsets and no members.
const billing = kafka.consumer({ groupId: 'billing', maxWaitTimeInMs: 100 });
await billing.connect();
await billing.subscribe({ topic: 'orders', fromBeginning: true });
await billing.run({ autoCommitInterval: 200, eachMessage: async () => {} });
await admin.setOffsets({ groupId: 'analytics', topic: 'payments', partitions: [{ partition: 0, offset: '2' }, { partition: 1, offset: '4' }] });

// One transaction left open, one committed.
const transactional = kafka.producer({ transactionalId: 'payments-writer', maxInFlightRequests: 1, idempotent: true });
await transactional.connect();
const open = await transactional.transaction();
await open.send({ topic: 'payments', messages: [{ key: 'pay-open', value: '{"status":"pending"}', partition: 0 }] });
const settled = kafka.producer({ transactionalId: 'ledger-writer', maxInFlightRequests: 1, idempotent: true });
await settled.connect();
const done = await settled.transaction();
await done.send({ topic: 'payments', messages: [{ key: 'pay-done', value: '{"status":"settled"}', partition: 1 }] });
await done.commit();

await broker.core.createAcls({
  bindings: [
    { resourceType: 'TOPIC', resourceName: 'orders', patternType: 'LITERAL', principal: 'User:billing', host: '*', operation: 'READ', permission: 'ALLOW' },
    { resourceType: 'GROUP', resourceName: 'billing', patternType: 'LITERAL', principal: 'User:billing', host: '*', operation: 'READ', permission: 'ALLOW' },
    { resourceType: 'TOPIC', resourceName: 'pay', patternType: 'PREFIXED', principal: 'User:checkout', host: '*', operation: 'WRITE', permission: 'ALLOW' },
    { resourceType: 'TOPIC', resourceName: '*', patternType: 'LITERAL', principal: 'User:intern', host: '*', operation: 'DELETE', permission: 'DENY' },
  ],
});
await broker.core.alterClientQuotas({
  alterations: [
    { entity: { user: 'checkout' }, set: { producer_byte_rate: 1048576 }, remove: [] },
    { entity: { clientId: null }, set: { consumer_byte_rate: 5242880, request_percentage: 50 }, remove: [] },
  ],
});

// A Queen queue worked over HTTP, with a message sent to its dead-letter queue.
await post('/api/v1/configure', { queue: 'emails', namespace: 'notifications', task: 'send', options: { retryLimit: 2, leaseTime: 60 } });
await post('/api/v1/push', { items: Array.from({ length: 5 }, (_, i) => ({ queue: 'emails', payload: { to: `user${i}@example.com`, template: 'receipt' } })) });
const popped = await (await fetch(`${http}/api/v1/pop/queue/emails?consumerGroup=mailer&batch=1`)).json();
const message = popped.messages[0];
await post('/api/v1/ack', { transactionId: message.transactionId, partitionId: message.partitionId, status: 'dlq', consumerGroup: 'mailer', leaseId: message.leaseId, error: 'SMTP 550: mailbox unavailable' });

const browser = await launchChromium();
const page = await browser.context.newPage();
const shoot = async (name: string, hash: string, settleMs = 600) => {
  await page.goto('about:blank');
  await page.goto(`${http}/${hash}`);
  await page.waitForTimeout(settleMs);
  await page.screenshot({ path: `${out}/${name}.png` });
};

// Steady traffic while the throughput chart samples.
let sending = true;
const traffic = (async () => {
  for (let i = 60; sending; i++) {
    await producer.send({ topic: 'orders', messages: Array.from({ length: 20 + (i % 15) }, (_, j) => order(i * 40 + j)) });
    await new Promise((r) => setTimeout(r, 150));
  }
})();
await shoot('cluster', '#/', 16_000);
sending = false;
await traffic;
// billing stops reading while orders keep coming: a group with a member and lag.
billing.pause([{ topic: 'orders' }]);
await producer.send({ topic: 'orders', messages: Array.from({ length: 90 }, (_, i) => order(100_000 + i)) });
await shoot('topics', '#/topics');
await shoot('topic', '#/topics/payments');
await shoot('messages', '#/topics/orders/messages?partition=0&format=text');
await shoot('groups', '#/groups');
await shoot('group', '#/groups/billing');
await shoot('transactions', '#/transactions');
await shoot('security', '#/security');
await shoot('queues', '#/queues');
await shoot('dead-letters', '#/queues/emails/dead-letters');

await browser.close();
await open.abort();
await Promise.all([transactional.disconnect(), settled.disconnect(), billing.disconnect(), producer.disconnect(), admin.disconnect()]);
await broker.stop();
console.log(`screenshots in ${out}`);

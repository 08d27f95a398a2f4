/**
 * Apache Kafka's own kafka-transactions.sh (TransactionsCommand) against the
 * gateway: `list`, `describe --transactional-id` and `describe-producers`
 * show an open transaction as the core holds it (DescribeTransactions,
 * ListTransactions and DescribeProducers with CurrentTxnStartOffset), and
 * `list` shows it ended after the commit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { kafkaTool, table } from '../support/kafka-tools.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { uniqueTopic } from '../support/records.js';

const transactionsTool = (bootstrap: string, args: string[]) => kafkaTool('TransactionsCommand', bootstrap, args);

describe('kafka-transactions.sh against the gateway (memory engine)', () => {
  let gateway: RunningGateway;
  beforeAll(async () => {
    gateway = await startGateway({ engine: { engine: 'memory' } });
  });
  afterAll(async () => {
    await gateway?.stop();
  });

  it('lists and describes an open transaction and its producer, then lists it committed', { timeout: 180_000 }, async () => {
    const kafka = kafkajsClient(gateway.bootstrap);
    const admin = kafka.admin();
    await admin.connect();
    const topic = uniqueTopic('tools-txn');
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const transactionalId = uniqueTopic('tools-tid');
    const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      const txn = await producer.transaction();
      await txn.send({ topic, messages: [{ value: 'a' }, { value: 'b' }] });

      const listed = await transactionsTool(gateway.bootstrap, ['list']);
      expect(listed.exit, listed.stderr).toBe(0);
      const row = table(listed.lines).find((r) => r['TransactionalId'] === transactionalId);
      expect(row, listed.lines.join('\n')).toMatchObject({ TransactionState: 'Ongoing' });

      const described = await transactionsTool(gateway.bootstrap, ['describe', '--transactional-id', transactionalId]);
      expect(described.exit, described.stderr).toBe(0);
      expect(table(described.lines)[0], described.lines.join('\n')).toMatchObject({ TransactionalId: transactionalId, TransactionState: 'Ongoing', TopicPartitions: `${topic}-0` });

      const producers = await transactionsTool(gateway.bootstrap, ['describe-producers', '--topic', topic, '--partition', '0']);
      expect(producers.exit, producers.stderr).toBe(0);
      expect(table(producers.lines)[0], producers.lines.join('\n')).toMatchObject({ CurrentTransactionStartOffset: '0' });

      await txn.commit();
    } finally {
      await producer.disconnect();
    }
    const after = await transactionsTool(gateway.bootstrap, ['list']);
    expect(table(after.lines).find((r) => r['TransactionalId'] === transactionalId), after.lines.join('\n')).toMatchObject({ TransactionState: 'CompleteCommit' });
  });
});

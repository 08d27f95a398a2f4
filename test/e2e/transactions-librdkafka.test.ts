/**
 * Kafka transactions with librdkafka (@confluentinc/kafka-javascript) through
 * the gateway, on every engine: `transactional.id`, initTransactions,
 * beginTransaction, sendOffsetsToTransaction, commitTransaction and
 * abortTransaction. A read_committed librdkafka consumer reads only the
 * committed records; a read_uncommitted one reads all; the offsets sent with
 * the committed transaction become the group's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KafkaConsumer as KafkaConsumerType, LibrdKafkaError, Producer as ProducerType } from '@confluentinc/kafka-javascript';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { uniqueTopic } from '../support/records.js';
import { connectConsumer, connectProducer, createTopic, disconnect, readRecords } from '../support/rdkafka.js';
import { kafkajsClient } from '../support/kafkajs.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

function call(run: (cb: (err: LibrdKafkaError | null) => void) => void, what: string): Promise<void> {
  return new Promise((resolve, reject) => run((err) => (err ? reject(new Error(`${what}: ${err.message} (code ${err.code})`)) : resolve())));
}

function produce(producer: ProducerType, topic: string, values: string[]): void {
  for (const v of values) producer.produce(topic, 0, Buffer.from(v), null, Date.now());
}

for (const engine of engines) {
  const title = `Kafka transactions, librdkafka, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let gateway: RunningGateway;

    beforeAll(async () => {
      gateway = await startGateway({ engine: engine.fresh(), groups: { initialRebalanceDelayMs: 0 } });
    });
    afterAll(async () => {
      await gateway?.stop();
    });

    it('aborts and commits transactions with offsets; read_committed reads only what was committed', async () => {
      const input = uniqueTopic('rdk-txn-in');
      const output = uniqueTopic('rdk-txn-out');
      const group = uniqueTopic('rdk-txn-group');
      await createTopic(gateway.bootstrap, input, 1);
      await createTopic(gateway.bootstrap, output, 1);
      const producer = await connectProducer(gateway.bootstrap, { 'transactional.id': uniqueTopic('rdk-tid'), 'transaction.timeout.ms': 30_000 }, output);
      // The consumer whose group the offsets are sent for (librdkafka takes the group from it).
      const groupConsumer: KafkaConsumerType = await connectConsumer(gateway.bootstrap, { 'group.id': group }, input);
      try {
        await call((cb) => producer.initTransactions(20_000, cb), 'initTransactions');
        await call((cb) => producer.beginTransaction(cb), 'beginTransaction');
        produce(producer, output, ['aborted-0', 'aborted-1', 'aborted-2']);
        // Delivered before the abort: librdkafka would otherwise purge records it had not sent yet, and nothing would be stored to abort.
        await call((cb) => producer.flush(20_000, cb), 'flush');
        await call((cb) => producer.sendOffsetsToTransaction([{ topic: input, partition: 0, offset: 3 }], groupConsumer, 20_000, cb), 'sendOffsetsToTransaction');
        await call((cb) => producer.abortTransaction(20_000, cb), 'abortTransaction');

        await call((cb) => producer.beginTransaction(cb), 'beginTransaction');
        produce(producer, output, ['committed-0', 'committed-1', 'committed-2', 'committed-3']);
        await call((cb) => producer.sendOffsetsToTransaction([{ topic: input, partition: 0, offset: 9 }], groupConsumer, 20_000, cb), 'sendOffsetsToTransaction');
        await call((cb) => producer.commitTransaction(20_000, cb), 'commitTransaction');
      } finally {
        await disconnect(groupConsumer);
        await disconnect(producer);
      }

      const committed = await readRecords(gateway.bootstrap, output, { partitions: [0], count: 4, config: { 'isolation.level': 'read_committed' } });
      expect(committed.map((r) => r.value)).toEqual(['committed-0', 'committed-1', 'committed-2', 'committed-3']);
      const all = await readRecords(gateway.bootstrap, output, { partitions: [0], count: 7, config: { 'isolation.level': 'read_uncommitted' } });
      expect(all.map((r) => r.value)).toEqual(['aborted-0', 'aborted-1', 'aborted-2', 'committed-0', 'committed-1', 'committed-2', 'committed-3']);

      const admin = kafkajsClient(gateway.bootstrap).admin();
      await admin.connect();
      try {
        expect((await admin.fetchOffsets({ groupId: group, topics: [input] }))[0]!.partitions[0]!.offset).toBe('9');
      } finally {
        await admin.disconnect();
      }
    });
  });
}

/**
 * The client's transactional producer (src/kafka-client/producer.ts, the
 * reverse bridge's writing side) against a real Apache Kafka 4 broker:
 * - batches go as they were built, only the producer fields stamped: read
 *   back raw from Kafka, each stored batch's records section (the lz4 bytes)
 *   equals the one sent, and its header carries the producer's id, epoch and
 *   sequence and the transactional flag;
 * - an aborted transaction (the epoch bumped after it) is invisible to a
 *   read_committed reader, and the next transaction commits;
 * - a second producer with the same transactional id fences the first,
 *   whose next transaction fails as fatal (the reverse bridge then stops).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BATCH_HEADER_SIZE, BatchAttr, BatchPos } from '../../protocol/records/batch-header.js';
import { CompressionCodec } from '../../protocol/records/compression.js';
import { buildBatch, decodeBatch } from '../../protocol/records/record-batch.js';
import { KafkaClient } from '../../src/kafka-client/client.js';
import { committedBatches, fetchFrom, type RawBatch } from '../../src/kafka-client/fetch.js';
import { ProducerError, TransactionalProducer } from '../../src/kafka-client/producer.js';
import { startApacheKafka, type ApacheKafka } from '../support/apache-kafka.js';
import { createTopic } from '../support/rdkafka.js';
import { uniqueTopic } from '../support/records.js';

function batchOf(label: string, count: number): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({ key: `k${i}`, value: `${label}-${i}`, headers: [{ key: 'h', value: Buffer.from(label) }], timestamp: Date.now() }));
  return buildBatch({ records, compression: CompressionCodec.Lz4 });
}

/** Every batch a read_committed reader of the partition reads, raw. */
async function committedOf(client: KafkaClient, topic: string, partition: number): Promise<RawBatch[]> {
  await client.refreshMetadata([topic]);
  const [end] = await client.listOffsets([{ topic, partition }], -1, true);
  const batches: RawBatch[] = [];
  for (let offset = 0; offset < end!; ) {
    const answer = await fetchFrom(await client.connection(client.leaderOf(topic, partition)!.leader), [{ topic, partition, offset, maxBytes: 1 << 20 }], { maxWaitMs: 500, minBytes: 1, maxBytes: 1 << 20, readCommitted: true });
    const p = answer.partitions[0]!;
    expect(p.errorCode, `fetch of ${topic}/${partition} at ${offset}`).toBe(0);
    const view = committedBatches(p.records, p.aborted, offset);
    batches.push(...view.batches);
    offset = view.next;
  }
  return batches;
}

describe('the client\'s transactional producer against Apache Kafka', () => {
  let kafka: ApacheKafka;
  let client: KafkaClient;
  beforeAll(async () => {
    kafka = await startApacheKafka();
    client = await KafkaClient.connect({ bootstrap: kafka.bootstrap, settings: {} });
  }, 180_000);
  afterAll(async () => {
    client?.close();
    await kafka?.stop();
  });

  it('sends batches with only the producer fields stamped, skips an aborted transaction, and is fenced by a second producer', async () => {
    const topic = uniqueTopic('client-txn');
    await createTopic(kafka.bootstrap, topic, 2);
    await client.refreshMetadata([topic]);
    const transactionalId = uniqueTopic('client-tid');
    const first = await TransactionalProducer.start(client, transactionalId);

    const sent = [batchOf('a', 5), batchOf('b', 3)];
    first.begin();
    const bases = await first.produce([{ topic, partition: 0, batches: sent }, { topic, partition: 1, batches: [batchOf('c', 2)] }]);
    expect(bases).toEqual([[0, 5], [0]]);
    await first.commit();

    first.begin();
    await first.produce([{ topic, partition: 0, batches: [batchOf('aborted', 4)] }]);
    await first.abort();
    first.begin();
    await first.produce([{ topic, partition: 0, batches: [batchOf('d', 1)] }]);
    await first.commit();

    const stored = await committedOf(client, topic, 0);
    const values = stored.flatMap((b) => decodeBatch(b.bytes).records.map((r) => r.value!.toString()));
    expect(values).toEqual(['a-0', 'a-1', 'a-2', 'a-3', 'a-4', 'b-0', 'b-1', 'b-2', 'd-0']);
    // The records sections are the bytes sent; the headers carry the producer's fields.
    expect(stored.slice(0, 2).map((b, i) => b.bytes.subarray(BATCH_HEADER_SIZE).equals(sent[i]!.subarray(BATCH_HEADER_SIZE)))).toEqual([true, true]);
    const headers = stored.map((b) => ({ transactional: (b.bytes.readInt16BE(BatchPos.Attributes) & BatchAttr.Transactional) !== 0, producerId: b.bytes.readBigInt64BE(BatchPos.ProducerId), epoch: b.bytes.readInt16BE(BatchPos.ProducerEpoch), sequence: b.bytes.readInt32BE(BatchPos.BaseSequence) }));
    expect(headers.map((h) => h.transactional)).toEqual([true, true, true]);
    expect(new Set(headers.map((h) => h.producerId)).size, 'one producer id').toBe(1);
    expect(headers.map((h) => h.sequence), 'sequences: 0 and 5, then 0 again after the abort bumped the epoch').toEqual([0, 5, 0]);
    expect(headers[2]!.epoch, 'the epoch after the abort').toBe(headers[0]!.epoch + 1);

    // A second producer with the same id fences the first.
    const second = await TransactionalProducer.start(client, transactionalId);
    first.begin();
    const fenced = await first.produce([{ topic, partition: 1, batches: [batchOf('fenced', 1)] }]).then(() => first.commit()).then(() => null, (e: unknown) => e);
    expect(fenced).toBeInstanceOf(ProducerError);
    expect((fenced as ProducerError).fatal, `fatal: ${(fenced as Error).message}`).toBe(true);
    second.begin();
    await second.produce([{ topic, partition: 1, batches: [batchOf('e', 1)] }]);
    await second.commit();
    const p1 = (await committedOf(client, topic, 1)).flatMap((b) => decodeBatch(b.bytes).records.map((r) => r.value!.toString()));
    expect(p1).toEqual(['c-0', 'c-1', 'e-0']);
  }, 240_000);
});

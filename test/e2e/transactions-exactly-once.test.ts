/**
 * Exactly-once consume-transform-produce through a gateway that dies: the
 * gateway runs as a child process on the PostgreSQL engine; 100,000 input
 * records are transformed by a librdkafka transactional processor
 * (../support/transactional-processor.ts: read_committed consumer,
 * transactional producer, sendOffsetsToTransaction, a commit every
 * COMMIT_EVERY records). Twice mid-stream the gateway is SIGKILLed and
 * started again on the same port and database, and the processor instance
 * then running is abandoned where it stands (its transaction open, as a
 * crashed application leaves it) and a new instance started, which fences it
 * and aborts that transaction.
 *
 * At the end the output topic, read with read_committed, holds exactly one
 * transformed record per input record (checked by content: each input's
 * sequence number once, in order per partition, nothing after), and the
 * group's committed offsets are the input's end.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway.js';
import { expectExactlyOnceInOrder, sequencedValue, uniqueTopic, type SentRecord } from '../support/records.js';
import { adminCall, connectConsumer, connectProducer, createAdmin, disconnect, expectDelivered, produceAll, readRecords, recordCounts } from '../support/rdkafka.js';
import { committedOffsets, TransactionalProcessor } from '../support/transactional-processor.js';

const engines = await engineMatrix();
afterAll(releaseEngines);
const postgres = engines.find((e) => e.name === 'postgres')!;

const TOTAL = 100_000;
const PARTITIONS = [0, 1, 2, 3];
const COMMIT_EVERY = 1_000;
/** The gateway is killed when this many records are committed (by the processor's count). */
const KILL_AT = [30_000, 65_000];

const title = 'exactly-once consume-transform-produce with the gateway SIGKILLed twice, postgres engine' + (postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : '');
describe.skipIf(postgres.skipReason !== null)(title, () => {
  let gateway: GatewayProcess | null = null;
  afterAll(async () => {
    await gateway?.stop();
  });

  it(`${TOTAL} input records become exactly ${TOTAL} output records, offsets committed with them`, { timeout: 300_000 }, async () => {
    gateway = await startGatewayProcess({ engine: postgres.fresh(), autoCreateTopics: false });
    const running = gateway;
    const input = uniqueTopic('eos-in');
    const output = uniqueTopic('eos-out');
    const group = `${input}-processor`;
    const admin = createAdmin(running.bootstrap);
    try {
      for (const topic of [input, output]) await adminCall<void>((cb) => admin.createTopic({ topic, num_partitions: PARTITIONS.length, replication_factor: 1 }, 15_000, cb));
    } finally {
      admin.disconnect();
    }

    const records: SentRecord[] = Array.from({ length: TOTAL }, (_, seq) => ({ partition: seq % PARTITIONS.length, key: null, value: sequencedValue(input, seq), headers: [], timestamp: Date.now() }));
    const producer = await connectProducer(running.bootstrap, { 'enable.idempotence': true, 'linger.ms': 5, 'batch.num.messages': 2_000, 'queue.buffering.max.messages': TOTAL }, input);
    try {
      expectDelivered(await produceAll(producer, input, records, { timeoutMs: 90_000 }));
    } finally {
      await disconnect(producer);
    }
    const inputEnd = await recordCounts(running.bootstrap, input, PARTITIONS);

    const kills: Promise<void>[] = [];
    const pendingKills = [...KILL_AT];
    const processor: TransactionalProcessor = new TransactionalProcessor({
      bootstrap: running.bootstrap,
      input,
      output,
      partitions: PARTITIONS,
      group,
      transactionalId: `${input}-txn`,
      commitEvery: COMMIT_EVERY,
      inputEnd,
      transform: (value) => sequencedValue(output, Number(value.slice(input.length + 1))),
      onCommitted: (total) => {
        if (pendingKills.length > 0 && total >= pendingKills[0]!) {
          pendingKills.shift();
          // The kill lands while the processor goes on: it is mid-transaction or between two.
          kills.push(
            (async () => {
              await running.kill();
              processor.abandon();
              await running.restart();
            })(),
          );
        }
      },
    });
    const started = Date.now();
    const run = await processor.run(240_000);
    await Promise.all(kills);
    const seconds = (Date.now() - started) / 1000;
    console.log(`exactly-once pipeline: ${TOTAL} records in ${seconds.toFixed(1)} s, ${run.transactions} transactions, ${run.instances} processor instances; instance endings: ${run.endings.join(' | ')}`);

    expect(pendingKills, 'both kills happened mid-stream').toEqual([]);
    expect(running.logs.matching('gateway listening').length, 'the gateway started three times').toBe(3);
    expect(run.instances, 'the processor was restarted after each kill').toBeGreaterThanOrEqual(3);

    const read = await readRecords(running.bootstrap, output, { partitions: PARTITIONS, count: TOTAL, timeoutMs: 90_000, config: { 'isolation.level': 'read_committed' } });
    expectExactlyOnceInOrder(output, TOTAL, read);
    // Nothing committed after the 100,000th: a read_committed reader from just past the last record finds nothing more.
    const after = new Map<number, number>();
    for (const r of read) after.set(r.partition, Math.max(after.get(r.partition) ?? 0, r.offset + 1));
    await expect(
      readRecords(running.bootstrap, output, { partitions: PARTITIONS, from: after, count: 1, timeoutMs: 3_000, config: { 'isolation.level': 'read_committed' } }),
    ).rejects.toThrow(/read 0 of 1 records/);

    const consumer = await connectConsumer(running.bootstrap, { 'group.id': group, 'isolation.level': 'read_committed' }, input);
    try {
      expect(await committedOffsets(consumer, input, PARTITIONS), "the group's committed offsets are the input's end").toEqual(inputEnd);
    } finally {
      await disconnect(consumer);
    }
  });
});

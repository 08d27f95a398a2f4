/**
 * The fault test: the gateway process (PostgreSQL engine) is SIGKILLed while
 * an idempotent librdkafka producer streams 100,000 records, then started
 * again on the same port over the same database. librdkafka reconnects and
 * resends whatever it had not heard back about; the durable producer state
 * must turn those resends into acknowledgements of what is already stored.
 * A reader then gets exactly 100,000 records: none lost, none twice, and in
 * order within each partition.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway.js';
import { expectExactlyOnceInOrder, sequencedValue, uniqueTopic, type SentRecord } from '../support/records.js';
import { adminCall, connectProducer, createAdmin, disconnect, expectDelivered, expectStoredCount, produceAll, readRecords } from '../support/rdkafka.js';

const engines = await engineMatrix();
afterAll(releaseEngines);
const postgres = engines.find((e) => e.name === 'postgres')!;

const TOTAL = 100_000;
const PARTITIONS = [0, 1, 2, 3];
const KILL_AT = 30_000;

const title = 'SIGKILL of the gateway process mid-stream, postgres engine' + (postgres.skipReason ? ` (skipped: ${postgres.skipReason})` : '');
describe.skipIf(postgres.skipReason !== null)(title, () => {
  let gateway: GatewayProcess | null = null;
  afterAll(async () => {
    await gateway?.stop();
  });

  it(`an idempotent librdkafka producer's ${TOTAL} records arrive exactly once, in order per partition`, { timeout: 120_000 }, async () => {
    gateway = await startGatewayProcess({ engine: postgres.fresh(), autoCreateTopics: false });
    const running = gateway;
    const topic = uniqueTopic('sigkill');
    const admin = createAdmin(running.bootstrap);
    try {
      await adminCall<void>((cb) => admin.createTopic({ topic, num_partitions: PARTITIONS.length, replication_factor: 1 }, 15_000, cb));
    } finally {
      admin.disconnect();
    }

    const records: SentRecord[] = Array.from({ length: TOTAL }, (_, seq) => ({
      partition: seq % PARTITIONS.length,
      key: null,
      value: sequencedValue(topic, seq),
      headers: [],
      timestamp: Date.now(),
    }));
    const producer = await connectProducer(running.bootstrap, {
      'enable.idempotence': true,
      'max.in.flight.requests.per.connection': 5,
      'linger.ms': 5,
      'batch.num.messages': 2_000,
      // Generous: the records queued while the gateway is down must survive the restart.
      // (a restart takes a few seconds; this is ten times that and more).
      'message.timeout.ms': 50_000,
      'queue.buffering.max.messages': TOTAL,
    }, topic);

    let restart: Promise<void> | null = null;
    let deliveredAtKill = -1;
    try {
      const deliveries = await produceAll(producer, topic, records, {
        timeoutMs: 60_000,
        onDelivery: (delivered) => {
          if (delivered === KILL_AT && !restart) {
            deliveredAtKill = delivered;
            restart = running.kill().then(() => running.restart());
          }
        },
      });
      await restart;
      expectDelivered(deliveries);
    } finally {
      await disconnect(producer);
    }
    expect(deliveredAtKill, 'the gateway was killed while records were still outstanding').toBe(KILL_AT);
    expect(running.logs.matching('gateway listening').length, 'the gateway started twice (before and after the kill)').toBeGreaterThanOrEqual(2);

    const read = await readRecords(running.bootstrap, topic, { partitions: PARTITIONS, count: TOTAL, timeoutMs: 60_000 });
    expectExactlyOnceInOrder(topic, TOTAL, read);
    await expectStoredCount(running.bootstrap, topic, PARTITIONS, TOTAL);
  });
});

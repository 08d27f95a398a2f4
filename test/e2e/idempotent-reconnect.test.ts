/**
 * Idempotent producers whose TCP connections are cut mid-stream, on every
 * engine. The gateway advertises a chaos proxy's address, so every client
 * connection runs through it; the test drops them all several times while
 * Produce requests are in flight. Clients reconnect and resend what they did
 * not hear back about, with the same producer id and sequence numbers, and
 * the gateway must store each record exactly once, in order per partition.
 *
 * - librdkafka: enable.idempotence=true, five requests in flight.
 * - kafkajs: idempotent: true (kafkajs allows one request in flight then).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { startChaosProxy, type ChaosProxy } from '../support/chaos-proxy.js';
import { expectExactlyOnceInOrder, sequencedValue, uniqueTopic, type SentRecord } from '../support/records.js';
import { adminCall, connectProducer, createAdmin, disconnect, expectDelivered, expectStoredCount, produceAll, readRecords } from '../support/rdkafka.js';
import { connectKafkajsProducer, kafkajsClient, kafkajsSend } from '../support/kafkajs.js';
import { waitFor } from '../support/eventually.js';

const engines = await engineMatrix();
afterAll(releaseEngines);

const PARTITIONS = [0, 1, 2, 3];

/** Record i goes to partition i mod 4 with value `topic:i`, so order and uniqueness can be checked from values. */
function sequencedRecords(topic: string, total: number): SentRecord[] {
  return Array.from({ length: total }, (_, seq) => ({
    partition: seq % PARTITIONS.length,
    key: `k${seq}`,
    value: sequencedValue(topic, seq),
    headers: [],
    timestamp: Date.now(),
  }));
}

/** What each cut found: how many connections it closed and how far the producer had got. */
interface Cut {
  connections: number;
  progress: number;
}

function expectCutsMidStream(cuts: Cut[], total: number, wanted: number): void {
  const midStream = cuts.filter((c) => c.connections > 0 && c.progress < total);
  expect(
    midStream.length,
    `the proxy was to cut the producer's connections ${wanted} times while records were still outstanding; cuts: ${JSON.stringify(cuts)}`,
  ).toBeGreaterThanOrEqual(wanted);
}

for (const engine of engines) {
  const title = `idempotent producers through dropped connections, ${engine.name} engine` + (engine.skipReason ? ` (skipped: ${engine.skipReason})` : '');
  describe.skipIf(engine.skipReason !== null)(title, () => {
    let proxy: ChaosProxy;
    let gateway: RunningGateway;

    beforeAll(async () => {
      proxy = await startChaosProxy();
      gateway = await startGateway({ engine: engine.fresh(), autoCreateTopics: false, advertisedPort: proxy.port });
      proxy.forwardTo(gateway.port);
    });
    afterAll(async () => {
      await gateway?.stop();
      await proxy?.close();
    });

    async function createTopic(topic: string): Promise<void> {
      const admin = createAdmin(gateway.bootstrap);
      try {
        await adminCall<void>((cb) => admin.createTopic({ topic, num_partitions: PARTITIONS.length, replication_factor: 1 }, 15_000, cb));
      } finally {
        admin.disconnect();
      }
    }

    it('librdkafka (enable.idempotence, 5 in flight): every record exactly once, in order per partition', { timeout: 90_000 }, async () => {
      const topic = uniqueTopic('idem-rdkafka');
      await createTopic(topic);
      const total = 20_000;
      const records = sequencedRecords(topic, total);
      const producer = await connectProducer(gateway.bootstrap, {
        'enable.idempotence': true,
        'max.in.flight.requests.per.connection': 5,
        // Small batches, so there are many requests and several in flight when the cuts come.
        'batch.num.messages': 100,
        'linger.ms': 2,
        'message.timeout.ms': 40_000,
        'retry.backoff.ms': 50,
      }, topic);
      const cuts: Cut[] = [];
      const milestones = [0.15, 0.35, 0.55, 0.75].map((f) => Math.floor(total * f));
      try {
        const deliveries = await produceAll(producer, topic, records, {
          timeoutMs: 45_000,
          onDelivery: (delivered) => {
            if (delivered === milestones[0]) {
              milestones.shift();
              cuts.push({ connections: proxy.dropAll(), progress: delivered });
            }
          },
        });
        expectDelivered(deliveries);
      } finally {
        await disconnect(producer);
      }
      expectCutsMidStream(cuts, total, 3);

      const read = await readRecords(gateway.bootstrap, topic, { partitions: PARTITIONS, count: total, timeoutMs: 30_000 });
      expectExactlyOnceInOrder(topic, total, read);
      await expectStoredCount(gateway.bootstrap, topic, PARTITIONS, total);
    });

    it('kafkajs (idempotent: true): every record exactly once, in order per partition', { timeout: 90_000 }, async () => {
      const topic = uniqueTopic('idem-kafkajs');
      await createTopic(topic);
      const total = 8_000;
      const chunk = 200;
      const records = sequencedRecords(topic, total);
      const producer = await connectKafkajsProducer(kafkajsClient(gateway.bootstrap, { retries: 30 }), { idempotent: true, maxInFlightRequests: 1 });
      const cuts: Cut[] = [];
      let sent = 0;
      let sending = true;
      // The chaos: whenever the producer has written another stretch of bytes, cut it off mid-request.
      const chaos = (async () => {
        const stretch = 60_000;
        while (sending && cuts.length < 5) {
          const mark = proxy.bytesFromClients + stretch;
          await waitFor(() => !sending || proxy.bytesFromClients >= mark, { what: 'the producer to send more bytes', timeoutMs: 60_000, intervalMs: 1 });
          if (sending) cuts.push({ connections: proxy.dropAll(), progress: sent });
        }
      })();
      try {
        for (let i = 0; i < total; i += chunk) {
          await kafkajsSend(producer, topic, records.slice(i, i + chunk), { acks: -1 });
          sent = i + chunk;
        }
      } finally {
        sending = false;
        await chaos;
        await producer.disconnect();
      }
      expectCutsMidStream(cuts, total, 3);

      const read = await readRecords(gateway.bootstrap, topic, { partitions: PARTITIONS, count: total, timeoutMs: 30_000 });
      expectExactlyOnceInOrder(topic, total, read);
      await expectStoredCount(gateway.bootstrap, topic, PARTITIONS, total);
    });
  });
}

/**
 * Producers that move from Apache Kafka to the gateway in the middle of a
 * stream, keeping their idempotence: the bridge copies Kafka's batches byte
 * for byte, producer ids and sequences included, and the target's producer
 * windows are rebuilt from them. Every client connection runs through a TCP
 * proxy that both Kafka and the gateway advertise (the same node id), so
 * "switching bootstrap.servers" is the proxy pointing at the gateway instead
 * of Kafka: the producer instance goes on with the producer id and sequence
 * numbers Kafka gave it.
 *
 * The switch is a short outage, as a real one is: the proxy cuts every
 * connection and points nowhere while records are in flight, the bridge
 * catches up with Kafka, then the proxy points at the gateway. A request Kafka
 * wrote but whose answer was cut is resent to the gateway, which answers it as
 * a duplicate from the copied window; the rest follow in sequence. Neither a
 * librdkafka nor a Java idempotent producer then sees OUT_OF_ORDER_SEQUENCE
 * or UNKNOWN_PRODUCER_ID (the producer keeps its id and epoch: one producer,
 * epoch unchanged, on every partition of the target), and every record is on
 * the target once, in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LibrdKafkaError } from '@confluentinc/kafka-javascript';
import { pino } from 'pino';
import { openCore, type Core } from '../../src/core/index.js';
import { startBroker, type BoundListener, type Broker } from '../../src/index.js';
import { Bridge } from '../../src/bridge/bridge.js';
import { KafkaClient } from '../../src/kafka-client/client.js';
import { startApacheKafka, type ApacheKafka } from '../support/apache-kafka.js';
import { startChaosProxy, type ChaosProxy } from '../support/chaos-proxy.js';
import { freePort } from '../support/gateway.js';
import { waitFor } from '../support/eventually.js';
import { connectProducer, createTopic, disconnect, expectDelivered, produceAll, readRecords, type Delivery } from '../support/rdkafka.js';
import { startJavaProduce } from '../support/java-client.js';
import { expectExactlyOnceInOrder, sequencedValue, uniqueTopic, type SentRecord } from '../support/records.js';

const PARTITIONS = 3;

function call(run: (cb: (err: LibrdKafkaError | null) => void) => void, what: string): Promise<void> {
  return new Promise((resolve, reject) => run((err) => (err ? reject(new Error(`${what}: ${err.message} (code ${err.code})`)) : resolve())));
}
const TOTAL = 600;

describe('bridge: idempotent producers move from Apache Kafka to the gateway mid-stream', () => {
  let proxy: ChaosProxy;
  let kafka: ApacheKafka;
  let core: Core;
  let gateway: Broker;
  let directPort: number;
  const bridges: Bridge[] = [];
  beforeAll(async () => {
    proxy = await startChaosProxy();
    const kafkaPort = await freePort();
    directPort = await freePort();
    proxy.forwardTo(kafkaPort);
    // Kafka and the gateway both advertise the proxy to clients, under the same node id (the harness's Kafka is
    // node 1); Kafka's second listener, DIRECT, advertises itself: the bridge reads Kafka there, whatever the proxy does.
    kafka = await startApacheKafka({
      port: kafkaPort,
      extraListeners: [{ name: 'DIRECT', protocol: 'PLAINTEXT', port: directPort }],
      config: { 'advertised.listeners': `PLAINTEXT://127.0.0.1:${proxy.port},DIRECT://127.0.0.1:${directPort}` },
    });
    core = await openCore({ engine: 'memory' });
    gateway = await startBroker({ core, autoCreateTopics: false, advertisedHost: '127.0.0.1', advertisedPort: proxy.port, nodeId: 1 });
  }, 180_000);
  afterAll(async () => {
    for (const b of bridges) await b.stop();
    await gateway?.stop();
    await core?.close();
    await kafka?.stop();
    await proxy?.close();
  });

  /** The port the gateway listens on (it advertises the proxy's). */
  const gatewayPort = () => (gateway.listeners[0] as BoundListener).port;

  /** Copies `topic` from Kafka (its DIRECT listener, not through the proxy) into the gateway's core. */
  async function bridgeTopic(topic: string): Promise<Bridge> {
    const bridge = await Bridge.start({ source: `127.0.0.1:${directPort}`, sourceOptions: {}, topics: new RegExp(topic.replace(/[.]/g, '\\.')), groups: null, core, refreshIntervalMs: 200, log: pino({ level: 'warn' }) });
    bridges.push(bridge);
    return bridge;
  }

  /**
   * The outage: every connection cut, nothing reachable, until the bridge has
   * all of Kafka's partitions; then the gateway. Answers how many records
   * Kafka holds: the rest go to the gateway.
   */
  async function switchToGateway(topic: string): Promise<number> {
    proxy.forwardTo(await freePort());
    expect(proxy.dropAll(), 'client connections cut at the switch').toBeGreaterThan(0);
    const ends = async () => (await readEnds(topic)).join();
    await waitFor(async () => (await ends()) === (await targetEnds(topic)).join(), { what: `the bridge to catch up with Kafka on ${topic}`, timeoutMs: 60_000, intervalMs: 100 });
    proxy.forwardTo(gatewayPort());
    proxy.dropAll();
    return (await readEnds(topic)).reduce((a, b) => a + b, 0);
  }

  async function readEnds(topic: string): Promise<number[]> {
    const client = await KafkaClient.connect({ bootstrap: `127.0.0.1:${directPort}`, settings: {} });
    try {
      await client.refreshMetadata([topic]);
      return await client.listOffsets(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition })), -1, false);
    } finally {
      client.close();
    }
  }

  async function targetEnds(topic: string): Promise<number[]> {
    const { partitions } = await core.offsets({ partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({ queue: topic, partition })) });
    return partitions.map((p) => p.highWatermark);
  }

  /** One producer per partition on the target, the one Kafka gave the client, its epoch never bumped. */
  async function expectOneProducerKept(topic: string): Promise<void> {
    const ids = new Set<number>();
    for (let partition = 0; partition < PARTITIONS; partition++) {
      const { producers } = await core.describeProducers({ queue: topic, partition });
      expect(producers.map((p) => p.producerEpoch), `${topic}/${partition}: producers on the target`).toEqual([0]);
      ids.add(producers[0]!.producerId);
    }
    expect(ids.size, 'one producer id across the partitions').toBe(1);
  }

  async function readTarget(topic: string): Promise<{ partition: number; offset: number; value: string }[]> {
    return readRecords(`127.0.0.1:${gatewayPort()}`, topic, { partitions: [0, 1, 2], count: TOTAL, timeoutMs: 60_000 });
  }

  it('librdkafka (enable.idempotence, five requests in flight) keeps its producer id and sequences across the move', async () => {
    const topic = uniqueTopic('bridge-move-rdkafka');
    proxy.forwardTo(kafka.port);
    await createTopic(`127.0.0.1:${directPort}`, topic, PARTITIONS);
    await bridgeTopic(topic);
    const records: SentRecord[] = Array.from({ length: TOTAL }, (_, seq) => ({ partition: seq % PARTITIONS, key: `k${seq}`, value: sequencedValue(topic, seq), headers: [], timestamp: Date.now() }));
    const producer = await connectProducer(`127.0.0.1:${proxy.port}`, { 'enable.idempotence': true, 'linger.ms': 5, 'message.timeout.ms': 120_000, 'max.in.flight.requests.per.connection': 5 });
    const deliveries: Delivery[] = [];
    let atKafka = 0;
    const errors: string[] = [];
    producer.on('event.error', (e) => errors.push(e.message));
    try {
      // Half to Kafka; then the rest while the switch happens under the records in flight.
      deliveries.push(...(await produceAll(producer, topic, records.slice(0, TOTAL / 2))));
      const rest = produceAll(producer, topic, records.slice(TOTAL / 2), { timeoutMs: 180_000 });
      atKafka = await switchToGateway(topic);
      deliveries.push(...(await rest));
    } finally {
      await disconnect(producer);
    }
    expectDelivered(deliveries);
    expect(atKafka, 'records Kafka holds: the rest went to the gateway').toBeLessThan(TOTAL);
    expect(errors.filter((e) => /OUT_OF_ORDER|UNKNOWN_PRODUCER|sequence/i.test(e)), 'sequence errors the client raised').toEqual([]);
    expectExactlyOnceInOrder(topic, TOTAL, await readTarget(topic));
    await expectOneProducerKept(topic);
  }, 300_000);

  /** Transactions of 30 records over the partitions from a librdkafka producer with `transactionalId`, every third aborted (by number, from `first`); answers the committed ones' sequence numbers' end. */
  async function transactions(topic: string, transactionalId: string, first: number, count: number, committedFrom: number, errors: string[]): Promise<number> {
    const producer = await connectProducer(`127.0.0.1:${proxy.port}`, { 'transactional.id': transactionalId, 'transaction.timeout.ms': 60_000 }, topic);
    producer.on('event.error', (e) => errors.push(e.message));
    let seq = committedFrom;
    try {
      await call((cb) => producer.initTransactions(60_000, cb), 'initTransactions');
      for (let t = first; t < first + count; t++) {
        const abort = t % 3 === 2;
        await call((cb) => producer.beginTransaction(cb), 'beginTransaction');
        for (let i = 0; i < 30; i++) producer.produce(topic, i % PARTITIONS, Buffer.from(abort ? `${topic}:aborted-${t}-${i}` : sequencedValue(topic, seq + i)), Buffer.from(`k${i}`), Date.now());
        if (abort) {
          // Delivered first: librdkafka purges what it has not sent, and there would be nothing to abort at the broker.
          await call((cb) => producer.flush(60_000, cb), 'flush');
          await call((cb) => producer.abortTransaction(60_000, cb), 'abortTransaction');
        } else {
          await call((cb) => producer.commitTransaction(60_000, cb), 'commitTransaction');
          seq += 30;
        }
      }
    } finally {
      await disconnect(producer);
    }
    return seq;
  }

  it('a librdkafka transactional producer moves between transactions (restarted with the same transactional.id): committed records once, aborted ones nowhere, no producer error', async () => {
    const topic = uniqueTopic('bridge-move-txn');
    const transactionalId = uniqueTopic('bridge-move-tid');
    proxy.forwardTo(kafka.port);
    await createTopic(`127.0.0.1:${directPort}`, topic, PARTITIONS);
    await bridgeTopic(topic);
    const errors: string[] = [];
    // Four transactions at Kafka (the third aborted), then the switch between transactions, then three at the gateway (the sixth aborted).
    const atKafka = await transactions(topic, transactionalId, 0, 4, 0, errors);
    await waitFor(async () => (await readEnds(topic)).join() === (await targetEnds(topic)).join(), { what: `the bridge to catch up with Kafka on ${topic}`, timeoutMs: 60_000, intervalMs: 100 });
    proxy.forwardTo(gatewayPort());
    const total = await transactions(topic, transactionalId, 4, 3, atKafka, errors);
    expect([atKafka, total], 'committed records at Kafka, in all').toEqual([90, 150]);
    expect(errors.filter((e) => /OUT_OF_ORDER|UNKNOWN_PRODUCER|sequence|fenced|mapping/i.test(e)), 'producer errors the client raised').toEqual([]);
    const read = await readRecords(`127.0.0.1:${gatewayPort()}`, topic, { partitions: [0, 1, 2], count: total, timeoutMs: 60_000, config: { 'isolation.level': 'read_committed' } });
    expectExactlyOnceInOrder(topic, total, read);
  }, 300_000);

  it('the Java client\'s idempotent producer (one record at a time) keeps its producer id and sequences across the move', async () => {
    const topic = uniqueTopic('bridge-move-java');
    proxy.forwardTo(kafka.port);
    await createTopic(`127.0.0.1:${directPort}`, topic, PARTITIONS);
    await bridgeTopic(topic);
    const records = Array.from({ length: TOTAL }, (_, seq) => ({ partition: seq % PARTITIONS, key: `k${seq}`, value: sequencedValue(topic, seq) }));
    const run = await startJavaProduce(`127.0.0.1:${proxy.port}`, topic, records, 10, { 'enable.idempotence': true, acks: 'all', 'delivery.timeout.ms': 120_000 });
    await waitFor(() => run.lines.filter((l) => l.event === 'sent').length >= TOTAL / 2, { what: 'half the records sent to Kafka', timeoutMs: 120_000, intervalMs: 50 });
    const atKafka = await switchToGateway(topic);
    const result = await run.finished(240_000);
    expect(atKafka, 'records Kafka holds: the rest went to the gateway').toBeLessThan(TOTAL);
    expect(result.failed, 'records the Java client reported failed').toEqual([]);
    expect(result.sent.length).toBe(TOTAL);
    expectExactlyOnceInOrder(topic, TOTAL, await readTarget(topic));
    await expectOneProducerKept(topic);
  }, 300_000);
});

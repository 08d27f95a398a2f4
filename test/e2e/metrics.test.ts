/**
 * /metrics as an operator's Prometheus reads it, after real Kafka traffic: a
 * kafkajs producer writes N records to a topic in a known number of Produce
 * requests, a kafkajs consumer group reads them all and commits, an admin
 * asks to create the topic again (TOPIC_ALREADY_EXISTS). The series move by
 * exactly what happened: messages in by N for that topic, Produce requests by
 * the number of sends, one NONE per partition answered, the error counted,
 * a long-poll held in the Fetch purgatory, lag falling to 0. Every engine.
 */
import { readFileSync } from 'node:fs';
import type { Admin, Consumer, Kafka, Producer } from 'kafkajs';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../src/index.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { waitFor } from '../support/eventually.js';
import { connectKafkajsProducer, kafkajsClient } from '../support/kafkajs.js';
import { scrape, type Scrape } from '../support/prometheus.js';
import { uniqueTopic } from '../support/records.js';

const engines = await engineMatrix();
afterAll(() => releaseEngines());

const RECORDS = 500;
const SENDS = 5;
const PARTITIONS = 2;

for (const engine of engines) {
  describe.skipIf(engine.skipReason !== null)(`/metrics after Kafka traffic: ${engine.name}${engine.skipReason ? ` (skipped: ${engine.skipReason})` : ''}`, () => {
    let broker: Broker;
    let kafka: Kafka;
    let admin: Admin;
    let producer: Producer;
    let consumer: Consumer | null = null;
    const metrics = () => scrape(`${broker.httpUrl}/metrics`);

    beforeEach(async () => {
      const choice = engine.fresh();
      broker = await startBroker({
        ...(choice.engine === 'memory' ? { engine: 'memory' as const } : { engine: 'postgres' as const, url: choice.url, schema: choice.schema }),
        autoCreateTopics: false,
        groups: { initialRebalanceDelayMs: 0 },
        http: { port: 0 },
      });
      kafka = kafkajsClient(broker.bootstrap);
      admin = kafka.admin();
      await admin.connect();
      producer = await connectKafkajsProducer(kafka);
    });
    afterEach(async () => {
      await consumer?.disconnect();
      consumer = null;
      await producer.disconnect();
      await admin.disconnect();
      await broker.stop();
    });

    it('counts records, bytes, requests and error codes per topic and API, and shows lag falling to 0', async () => {
      const topic = uniqueTopic('metered');
      const group = uniqueTopic('metered-group');
      await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }] });
      const before = await metrics();
      const delta = (after: Scrape, name: string, labels: Record<string, string> = {}) => after.sum(name, labels) - before.sum(name, labels);

      // SENDS Produce requests, each with records for both partitions.
      const perSend = RECORDS / SENDS;
      for (let s = 0; s < SENDS; s++) {
        await producer.send({ topic, acks: -1, messages: Array.from({ length: perSend }, (_, i) => ({ partition: i % PARTITIONS, value: `record ${s * perSend + i}` })) });
      }
      // An error a user sees: the topic exists already.
      expect(await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }] })).toBe(false);

      const produced = await metrics();
      expect(produced.sum('kafka_server_brokertopicmetrics_messagesin_total', { topic })).toBe(RECORDS);
      expect(delta(produced, 'kafka_network_requestmetrics_requests_total', { request: 'Produce' })).toBe(SENDS);
      expect(delta(produced, 'kafka_network_requestmetrics_totaltimems_count', { request: 'Produce' })).toBe(SENDS);
      expect(delta(produced, 'kafka_network_requestmetrics_errors_total', { request: 'Produce', error: 'NONE' })).toBe(SENDS * PARTITIONS);
      expect(delta(produced, 'kafka_network_requestmetrics_errors_total', { request: 'CreateTopics', error: 'TOPIC_ALREADY_EXISTS' })).toBe(1);
      const bytesIn = produced.sum('kafka_server_brokertopicmetrics_bytesin_total', { topic });
      expect(bytesIn).toBeGreaterThan(RECORDS * 'record 0'.length);
      expect(produced.sum('kafka_topic_partition_current_offset', { topic })).toBe(RECORDS);
      expect(produced.sum('queen_queue_depth_messages', { queue: topic })).toBe(RECORDS);
      // The producer and the admin are connected now.
      expect(produced.sum('kafka_server_socket_server_metrics_connection_count', { listener: 'PLAINTEXT' })).toBeGreaterThanOrEqual(2);
      expect(produced.sum('queen_gateway_connections', { listener: 'PLAINTEXT', principal: 'User:ANONYMOUS' })).toBeGreaterThanOrEqual(2);

      // One more client connects and leaves: a creation and a close.
      const visitor = kafka.admin();
      await visitor.connect();
      await visitor.listTopics();
      expect(delta(await metrics(), 'kafka_server_socket_server_metrics_connection_creation_total', { listener: 'PLAINTEXT' })).toBeGreaterThanOrEqual(1);
      await visitor.disconnect();
      await waitFor(async () => delta(await metrics(), 'kafka_server_socket_server_metrics_connection_close_total', { listener: 'PLAINTEXT' }) >= 1, {
        what: 'the visiting admin\'s connection counted as closed',
        timeoutMs: 10_000,
      });

      // The group starts at 0 on both partitions: all N behind.
      await admin.setOffsets({ groupId: group, topic, partitions: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, offset: '0' })) });
      const behind = await metrics();
      expect(behind.sum('kafka_consumergroup_lag', { consumergroup: group, topic })).toBe(RECORDS);
      expect(behind.sum('kafka_consumergroup_lag_sum', { consumergroup: group, topic })).toBe(RECORDS);

      consumer = kafka.consumer({ groupId: group, sessionTimeout: 6_000, heartbeatInterval: 500, maxWaitTimeInMs: 5_000 });
      await consumer.connect();
      await consumer.subscribe({ topic });
      let read = 0;
      await consumer.run({ eachMessage: async () => void read++ });
      let last = behind;
      await waitFor(
        async () => {
          last = await metrics();
          return last.sum('kafka_consumergroup_lag', { consumergroup: group, topic }) === 0 && last.sum('kafka_consumergroup_current_offset', { consumergroup: group, topic }) === RECORDS;
        },
        { what: `group ${group}'s lag on ${topic} falling to 0 in /metrics`, timeoutMs: 45_000, intervalMs: 200, describe: () => `${read} records read; lag ${last.sum('kafka_consumergroup_lag', { consumergroup: group, topic })}` },
      );
      expect(read).toBeGreaterThanOrEqual(RECORDS);
      expect(last.sum('queen_brokertopicmetrics_messagesout_total', { topic })).toBeGreaterThanOrEqual(RECORDS);
      expect(last.sum('kafka_server_brokertopicmetrics_bytesout_total', { topic })).toBeGreaterThanOrEqual(bytesIn);
      const fetches = delta(last, 'kafka_network_requestmetrics_requests_total', { request: 'Fetch' });
      expect(fetches).toBeGreaterThanOrEqual(1);
      expect(delta(last, 'kafka_network_requestmetrics_requests_total', { request: 'FetchConsumer' })).toBe(fetches);
      expect(last.sum('kafka_coordinator_group_groupmetadatamanager_numgroupsstable')).toBeGreaterThanOrEqual(1);

      // Caught up, the consumer's next Fetch waits in the purgatory for records that do not come.
      await waitFor(async () => (await metrics()).sum('kafka_server_delayedoperationpurgatory_purgatorysize', { delayedOperation: 'Fetch' }) >= 1, {
        what: 'a caught-up consumer\'s Fetch held in the Fetch purgatory',
        timeoutMs: 20_000,
        intervalMs: 100,
      });
    });

    it('carries the process\'s own series and, on PostgreSQL, the pool and statement latencies', async () => {
      const page = await metrics();
      expect(page.has('process_cpu_user_seconds_total')).toBe(true);
      expect(page.has('process_resident_memory_bytes')).toBe(true);
      expect(page.has('nodejs_eventloop_lag_seconds')).toBe(true);
      expect(page.text).toContain('# TYPE kafka_network_requestmetrics_totaltimems histogram');
      // Every series the Grafana dashboard graphs is one this process declares (the RPC's are the split layout's; PostgreSQL's its engine's).
      const dashboard = readFileSync(new URL('../../docs/grafana/queen-gateway.json', import.meta.url), 'utf8');
      const graphed = new Set([...dashboard.matchAll(/\b(?:kafka|queen|process|nodejs)_[a-z0-9_]+/g)].map((m) => m[0].replace(/_bucket$/, '')));
      const ours = [...graphed].filter((name) => !name.startsWith('queen_rpc_') && (engine.name === 'postgres' || !name.startsWith('queen_postgres_')));
      expect(ours.length).toBeGreaterThan(15);
      expect(ours.filter((name) => !page.text.includes(`# TYPE ${name} `))).toEqual([]);
      if (engine.name === 'postgres') {
        await admin.createTopics({ topics: [{ topic: uniqueTopic('pg-metered') }] });
        const after = await metrics();
        expect(after.sum('queen_postgres_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
        expect(after.sum('queen_postgres_statement_duration_seconds_count')).toBeGreaterThan(page.sum('queen_postgres_statement_duration_seconds_count'));
      }
    });
  });
}

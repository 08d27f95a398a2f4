/**
 * The bridge in reverse, for a rollback (`bridge --to-kafka`): a gateway as
 * the source, Apache Kafka as the target. Records (lz4-compressed, with
 * headers, over six partitions) keep arriving at the gateway while the bridge
 * (a child process) copies them and is SIGKILLed three times; a second topic
 * has committed and aborted transactions (its gateway log has gaps: aborted
 * records and markers); a consumer group reads part of the topic at the
 * gateway, stops, and carries on at Kafka from the offsets the bridge
 * translated; a third topic appears at the gateway while the bridge runs.
 * At the end every partition on Kafka holds the source's records
 * in the source's order, record for record (key, value, headers, timestamp),
 * with none twice. Offsets are not compared one for one: Kafka cannot keep
 * them (docs/bridge.md, "In reverse"), which is why the group's offsets are
 * translated.
 *
 * The bridge process runs as on a machine where only `npm install` ran
 * (librdkafka's binding unresolvable): both its sides are the project's own
 * client.
 *
 * 6,000 records by default (BRIDGE_RECORDS sets it), to keep this file to a
 * few minutes on the shared 2-core machine.
 */
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../src/index.js';
import { OFFSET_MAP_TOPIC } from '../../src/bridge/to-kafka.js';
import { startApacheKafka, type ApacheKafka } from '../support/apache-kafka.js';
import { gapCount, readLogs, startBridgeProcess, type BridgeProcess, type PartitionLog } from '../support/bridge.js';
import { sleep, waitFor } from '../support/eventually.js';
import { freePort } from '../support/gateway.js';
import { kafkajsClient } from '../support/kafkajs.js';
import { connectProducer, disconnect, expectDelivered, produceAll } from '../support/rdkafka.js';
import { planRecords, uniqueTopic } from '../support/records.js';
import { consumeWhile, groupConsumer, GROUP } from './bridge-scenario.js';

const RECORDS = Number(process.env['BRIDGE_RECORDS'] ?? 6_000);
const PARTITIONS = 6;
/**
 * Record timestamps: recent ones. Kafka deletes by record time, and its
 * retention check runs 30 s after start: records stamped years ago would be
 * gone from the copy before the comparison (on the gateway they stay).
 */
const RECENT = Date.now() - 60_000;

/** Per partition: its record count and a SHA-256 over every record's key, value, headers and timestamp, in log order (offsets left out: Kafka's differ). */
function contents(logs: PartitionLog[]): string[] {
  return logs.map((log, partition) => {
    const hash = createHash('sha256');
    for (const r of log.records) hash.update(JSON.stringify([r.key, r.value, r.headers, r.timestamp])).update('\n');
    return `p${partition} records=${log.records.length} sha256=${hash.digest('hex').slice(0, 16)}`;
  });
}

/** Transactions on two partitions of the gateway, every other one aborted: a log with gaps (aborted records, markers). */
async function writeTransactions(bootstrap: string, topic: string): Promise<void> {
  const producer = kafkajsClient(bootstrap).producer({ transactionalId: `reverse-txn-${process.pid}`, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  try {
    for (let t = 0; t < 8; t++) {
      const transaction = await producer.transaction();
      await transaction.send({ topic, messages: Array.from({ length: 10 }, (_, i) => ({ partition: i % 2, key: `k-${i}`, value: `txn-${t}-${i}`, headers: { txn: String(t) }, timestamp: String(RECENT + t * 100 + i) })) });
      if (t % 2 === 1) await transaction.abort();
      else await transaction.commit();
    }
  } finally {
    await producer.disconnect();
  }
}

describe('bridge in reverse: a gateway copied to Apache Kafka (--to-kafka)', () => {
  let kafka: ApacheKafka;
  let source: Broker;
  let bridge: BridgeProcess | undefined;
  afterAll(async () => {
    await bridge?.kill();
    await source?.stop();
    await kafka?.stop();
  });

  it('copies a live topic record for record through three SIGKILLs with no duplicate; a group moves from the gateway to Kafka mid-stream', async () => {
    [kafka, source] = await Promise.all([startApacheKafka(), startBroker({ autoCreateTopics: false, groups: { initialRebalanceDelayMs: 0 } })]);
    const main = uniqueTopic('reverse-main');
    const txn = uniqueTopic('reverse-txn');
    const late = uniqueTopic('reverse-late');
    const sourceAdmin = kafkajsClient(source.bootstrap).admin();
    await sourceAdmin.connect();
    await sourceAdmin.createTopics({
      topics: [
        { topic: main, numPartitions: PARTITIONS, configEntries: [{ name: 'retention.ms', value: '604800000' }] },
        { topic: txn, numPartitions: 2 },
      ],
    });
    await sourceAdmin.disconnect();
    await writeTransactions(source.bootstrap, txn);

    const producer = await connectProducer(source.bootstrap, { 'compression.codec': 'lz4', 'linger.ms': 5, 'enable.idempotence': true });
    const plan = planRecords({ label: main, partitions: PARTITIONS, perPartition: RECORDS / PARTITIONS, headers: [['origin', 'reverse-test'], ['empty', '']], baseTimestamp: RECENT });
    const initial = plan.slice(0, RECORDS / 2);
    const ongoing = plan.slice(RECORDS / 2);
    expectDelivered(await produceAll(producer, main, initial, { timeoutMs: 300_000 }));

    const metricsPort = await freePort();
    bridge = await startBridgeProcess([
      '--source', source.bootstrap,
      '--to-kafka', kafka.bootstrap,
      '--topics', `${main}|${txn}|${late}`,
      '--groups', GROUP,
      '--compression', 'zstd',
      '--refresh-interval-ms', '500',
      '--progress-interval-ms', '1000',
      '--metrics-port', String(metricsPort),
    ], { withoutLibrdkafka: true });
    const running = bridge;

    // The producer keeps writing while the bridge runs, is killed and comes back.
    let writerDone = false;
    const chunk = Math.ceil(ongoing.length / 30);
    const writing = (async () => {
      for (let at = 0; at < ongoing.length; at += chunk) {
        expectDelivered(await produceAll(producer, main, ongoing.slice(at, at + chunk), { timeoutMs: 300_000 }));
        await sleep(400);
      }
    })().finally(() => (writerDone = true));

    const kafkaAdmin = kafkajsClient(kafka.bootstrap).admin();
    await kafkaAdmin.connect();
    const kafkaEnd = async () => {
      try {
        return (await kafkaAdmin.fetchTopicOffsets(main)).reduce((n, p) => n + Number(p.high), 0);
      } catch {
        return 0; // not created on Kafka yet
      }
    };

    // The group reads part of the topic at the gateway and leaves.
    const atSource = await groupConsumer(source.bootstrap, main);
    const firstPart = await consumeWhile(atSource, (read) => read.length >= initial.length / 2, 'the group at the gateway');
    await disconnect(atSource);

    // Three crashes, each after the copy has moved on since the last.
    let killsWhileWriting = 0;
    for (let kill = 0; kill < 3; kill++) {
      const before = await kafkaEnd();
      await waitFor(async () => writerDone || (await kafkaEnd()) > before, { what: `the bridge to copy more before kill ${kill + 1}`, timeoutMs: 120_000, intervalMs: 100, describe: () => running.logs.tail() });
      if (!writerDone) killsWhileWriting++;
      await running.kill();
      await sleep(200);
      await running.restart();
    }
    expect(killsWhileWriting, 'kills that fell while the producer was writing').toBeGreaterThan(0);

    // A topic that appears at the gateway while the bridge runs is followed too.
    const lateAdmin = kafkajsClient(source.bootstrap).admin();
    await lateAdmin.connect();
    await lateAdmin.createTopics({ topics: [{ topic: late, numPartitions: 3 }] });
    await lateAdmin.disconnect();
    expectDelivered(await produceAll(producer, late, planRecords({ label: late, partitions: 3, perPartition: 20, baseTimestamp: RECENT }), { timeoutMs: 60_000 }));

    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toMatch(new RegExp(`queen_bridge_records_copied_total\\{topic="${main}"\\} \\d+`));
    expect(metrics).toMatch(/# TYPE queen_bridge_lag_records gauge/);

    // The group's gateway offsets reach Kafka, translated, marked with the source offset they stand for.
    const sourceCommitted = new Map<number, number>();
    for (const m of firstPart) sourceCommitted.set(m.partition, Math.max(sourceCommitted.get(m.partition) ?? 0, m.offset + 1));
    await waitFor(
      async () => {
        const [topic] = await kafkaAdmin.fetchOffsets({ groupId: GROUP, topics: [main] });
        const onKafka = new Map((topic?.partitions ?? []).map((p) => [p.partition, p.metadata ?? '']));
        return [...sourceCommitted].every(([p, o]) => onKafka.get(p)?.replace(/\0$/, '') === `queen-bridge source=${o}`);
      },
      { what: "the group's gateway offsets translated to Kafka", timeoutMs: 120_000, intervalMs: 250, describe: () => running.logs.tail() },
    );

    // It carries on at Kafka, mid-stream, and reads every record once across the move.
    const atKafka = await groupConsumer(kafka.bootstrap, main);
    const secondPart = await consumeWhile(atKafka, (read) => firstPart.length + read.length >= plan.length, 'the group at Kafka', 120_000).catch(async (e: Error) => {
      // What was copied, partition by partition, says whether the copy or the translation fell short.
      const [atGateway, onKafka] = [await readLogs(source.bootstrap, main, PARTITIONS), await readLogs(kafka.bootstrap, main, PARTITIONS)];
      const committed = (await kafkaAdmin.fetchOffsets({ groupId: GROUP, topics: [main] }))[0]?.partitions;
      throw new Error(`${e.message}; first part ${firstPart.length}; gateway ${contents(atGateway).join(' ')}; Kafka ${contents(onKafka).join(' ')}; ends ${onKafka.map((l) => l.end).join(',')}; committed on Kafka ${JSON.stringify(committed)}\n${running.logs.tail()}`);
    });
    await disconnect(atKafka);
    await writing;
    const values = [...firstPart, ...secondPart].map((m) => m.value!.toString());
    expect(values.length - new Set(values).size, 'records the group read twice').toBe(0);
    expect(new Set(values)).toEqual(new Set(plan.map((r) => r.value)));

    // Once the group commits on Kafka itself, the bridge leaves it alone.
    await waitFor(() => running.logs.matching(`group ${GROUP} has moved to the target`).length > 0, { what: 'the bridge to notice the group moved', timeoutMs: 60_000, intervalMs: 100 });
    // A straggler of the group at the gateway commits there now: Kafka's offsets, the group's own, are not overwritten.
    const onKafkaOffsets = async () => (await kafkaAdmin.fetchOffsets({ groupId: GROUP, topics: [main] }))[0]?.partitions.map((p) => [p.partition, p.offset, p.metadata]);
    const movedOffsets = await onKafkaOffsets();
    const straggler = await groupConsumer(source.bootstrap, main);
    await consumeWhile(straggler, (read) => read.length >= 10, 'a straggler at the gateway');
    await disconnect(straggler);
    await sleep(3_000); // six refresh intervals of the bridge
    expect(await onKafkaOffsets(), "the moved group's offsets on Kafka").toEqual(movedOffsets);

    // Every partition of every topic on Kafka: the source's records in order, record for record, none twice.
    const copies = new Map<string, { atGateway: PartitionLog[]; copy: PartitionLog[] }>();
    for (const [topic, partitions] of [[main, PARTITIONS], [txn, 2], [late, 3]] as const) {
      const atGateway = await readLogs(source.bootstrap, topic, partitions);
      let copy: PartitionLog[] = [];
      await waitFor(
        async () => {
          copy = await readLogs(kafka.bootstrap, topic, partitions);
          return copy.every((log, i) => log.records.length >= atGateway[i]!.records.length);
        },
        { what: `${topic} copied to Kafka in full`, timeoutMs: 120_000, intervalMs: 1_000, describe: () => `gateway ${JSON.stringify(atGateway.map((l) => [l.end, l.records.map((r) => r.offset)]))}; Kafka ${JSON.stringify(copy.map((l) => [l.end, l.records.map((r) => r.offset)]))}\n${running.logs.tail()}` },
      );
      expect(contents(copy), `${topic}: Kafka vs the gateway`).toEqual(contents(atGateway));
      copies.set(topic, { atGateway, copy });
      if (topic === txn) {
        expect(atGateway.reduce((n, log) => n + gapCount(log), 0), 'the transactional topic has gaps at the gateway').toBeGreaterThan(0);
        expect(copy.reduce((n, log) => n + log.records.length, 0)).toBe(40);
      }
    }

    // The recorded mapping is exact: every gateway record is in one run, and each run's gateway offsets hold the records its Kafka offsets hold.
    const [mapLog] = await readLogs(kafka.bootstrap, OFFSET_MAP_TOPIC, 1);
    const entries = mapLog!.records.map((r) => JSON.parse(r.value) as { topic: string; partition: number; runs: [number, number, number][] });
    for (const [topic, { atGateway, copy }] of copies) {
      atGateway.forEach((log, partition) => {
        const byOffset = (l: PartitionLog) => new Map(l.records.map((r) => [r.offset, r.value]));
        const [gateway, kafkaCopy] = [byOffset(log), byOffset(copy[partition]!)];
        const mapped: [number, string | undefined][] = [];
        for (const e of entries.filter((e) => e.topic === topic && e.partition === partition)) {
          for (const [s, t, n] of e.runs) for (let i = 0; i < n; i++) mapped.push([s + i, kafkaCopy.get(t + i)]);
        }
        expect(mapped.map(([s]) => s), `${topic}/${partition}: source offsets in the mapping`).toEqual(log.records.map((r) => r.offset));
        expect(mapped.filter(([s, value]) => gateway.get(s) !== value), `${topic}/${partition}: mapped offsets holding another record`).toEqual([]);
      });
    }

    // The topic as the source has it: partition count and the config set on it.
    const [described] = (await kafkaAdmin.describeConfigs({ resources: [{ type: 2, name: main, configNames: ['retention.ms'] }], includeSynonyms: false })).resources;
    expect(described?.configEntries.find((c) => c.configName === 'retention.ms')?.configValue).toBe('604800000');
    expect((await kafkaAdmin.fetchTopicOffsets(main)).length).toBe(PARTITIONS);
    expect(await kafkaAdmin.listTopics()).toContain(OFFSET_MAP_TOPIC);
    await kafkaAdmin.disconnect();

    await disconnect(producer);
    expect(await running.stop()).toBe(0);
    expect(running.logs.lines.slice(-50).join('\n')).toMatch(/bridge stopped after [\d.]+ s: [\d,]+ records copied/);
  }, 900_000);
});

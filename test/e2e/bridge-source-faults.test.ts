/**
 * The bridge's source fails under it: the source is a cluster of two gateways
 * over one core (test/support/cluster.ts), its partitions led by both, and
 * one gateway is SIGKILLed while a producer writes and the bridge copies.
 * The bridge's fetches to it fail; it reads the metadata again, finds the
 * partitions' new leader (the survivor) and goes on there, and again when the
 * gateway is back. At the end every partition is the same at the source and
 * on the target, records and stored batch bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { openCore, type Core } from '../../src/core/index.js';
import { startBroker, type Broker } from '../../src/index.js';
import { Bridge } from '../../src/bridge/bridge.js';
import { KafkaClient } from '../../src/kafka-client/client.js';
import { startClusterRig, type ClusterRig } from '../support/cluster.js';
import { batchChecksums, checksums, readLogs } from '../support/bridge.js';
import { sleep, waitFor } from '../support/eventually.js';
import { findTestDatabase } from '../support/postgres.js';
import { redisServerMissing } from '../support/redis.js';
import { connectProducer, createTopic, disconnect, expectDelivered, produceAll } from '../support/rdkafka.js';
import { planRecords, uniqueTopic } from '../support/records.js';

const found = await findTestDatabase();
const missing = await redisServerMissing();
const skipReason = found.skipReason ?? missing;
const PARTITIONS = 6;
const PER_PARTITION = 400;

describe.skipIf(skipReason !== null)(`bridge: a source gateway SIGKILLed while it copies${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let rig: ClusterRig;
  let core: Core;
  let target: Broker;
  beforeAll(async () => {
    rig = await startClusterRig({ database: { url: found.database!.url, schema: found.database!.freshSchema('queen_bridge_faults') }, gatewayCores: [0, 0], cores: 1 });
    core = await openCore({ engine: 'memory' });
    target = await startBroker({ core, autoCreateTopics: false });
  }, 180_000);
  afterAll(async () => {
    await target?.stop();
    await core?.close();
    await rig?.stop();
    await found.database?.release();
  }, 60_000);

  async function sourceEnds(topic: string): Promise<number[]> {
    const client = await KafkaClient.connect({ bootstrap: rig.bootstrap, settings: {} });
    try {
      await client.refreshMetadata([topic]);
      return await client.listOffsets(Array.from({ length: PARTITIONS }, (_, partition) => ({ topic, partition })), -1, true);
    } finally {
      client.close();
    }
  }

  it('moves to the partitions\' new leader when one goes, and copies every partition offset for offset', async () => {
    await rig.converged();
    const topic = uniqueTopic('bridge-faults');
    await createTopic(rig.bootstrap, topic, PARTITIONS);
    const warnings: string[] = [];
    const log = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(line) });
    const bridge = await Bridge.start({ source: rig.bootstrap, sourceOptions: {}, topics: new RegExp(topic), groups: null, core, refreshIntervalMs: 500, log });
    try {
      const producer = await connectProducer(rig.bootstrap, { 'enable.idempotence': true, 'linger.ms': 5, 'message.timeout.ms': 120_000 });
      const plan = planRecords({ label: topic, partitions: PARTITIONS, perPartition: PER_PARTITION, headers: [] });
      const writing = (async () => {
        for (let at = 0; at < plan.length; at += 100) {
          expectDelivered(await produceAll(producer, topic, plan.slice(at, at + 100), { timeoutMs: 120_000 }));
          await sleep(50);
        }
      })();
      await waitFor(() => bridge.progress().copied > 300, { what: 'the bridge to copy the first records', timeoutMs: 60_000, intervalMs: 100 });
      const victim = rig.gateways[1]!;
      await victim.kill();
      await waitFor(() => warnings.some((w) => w.includes('fetching from source broker')), { what: 'the bridge to meet the killed gateway', timeoutMs: 60_000, intervalMs: 100, describe: () => warnings.slice(-5).join('') });
      await sleep(3_000);
      await victim.start();
      await writing;
      await disconnect(producer);
      const ends = await sourceEnds(topic);
      expect(ends.reduce((a, b) => a + b, 0)).toBe(PARTITIONS * PER_PARTITION);
      await waitFor(async () => {
        const { partitions } = await core.offsets({ partitions: ends.map((_, partition) => ({ queue: topic, partition })) });
        return partitions.every((p, i) => p.highWatermark === ends[i]);
      }, { what: `${topic} copied to the source's end`, timeoutMs: 120_000, intervalMs: 200, describe: () => warnings.slice(-5).join('') });
    } finally {
      await bridge.stop();
    }
    expect(checksums(await readLogs(target.bootstrap, topic, PARTITIONS))).toEqual(checksums(await readLogs(rig.bootstrap, topic, PARTITIONS)));
    expect(await batchChecksums(target.bootstrap, topic, PARTITIONS)).toEqual(await batchChecksums(rig.bootstrap, topic, PARTITIONS));
  }, 300_000);
});

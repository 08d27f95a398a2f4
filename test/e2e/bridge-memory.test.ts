/**
 * The bridge's memory stays within its budget whatever the source's backlog:
 * batches read and not yet written (the write that is out included) are held
 * to the budget plus one fetch answer (docs/bridge.md, "The source client, and
 * memory"). Here the budget is 1 MiB (the default is 64 MiB; the limits are
 * the same fractions of it), the source a gateway holding a backlog 24 times
 * that, and the target a core whose writes take 100 ms more than they would
 * (a slow target, as a loaded PostgreSQL is), so reading runs far ahead of
 * writing and the budget is what stops it. Sampled every few milliseconds,
 * the bytes held never pass the bound, reach most of the budget (so the
 * budget, not the source, is what limited them), and the copy ends complete.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { openCore, type Core } from '../../src/core/index.js';
import { startBroker, type Broker } from '../../src/index.js';
import { Bridge } from '../../src/bridge/bridge.js';
import { CoreTarget } from '../../src/bridge/to-core.js';
import type { BridgeTarget } from '../../src/bridge/target.js';
import { waitFor } from '../support/eventually.js';
import { connectProducer, createTopic, disconnect, expectDelivered, produceAll } from '../support/rdkafka.js';
import { uniqueTopic, type SentRecord } from '../support/records.js';

const BUDGET = 1024 * 1024;
const PARTITIONS = 12;
const RECORD_BYTES = 1024;
const RECORDS = 24 * 1024;
const WRITE_DELAY_MS = 100;

/** A core target whose every write takes WRITE_DELAY_MS longer. */
function slowed(target: BridgeTarget): BridgeTarget {
  return {
    name: target.name,
    takesMarkers: target.takesMarkers,
    follow: (...args) => target.follow(...args),
    write: async (writes) => {
      await new Promise((resolve) => setTimeout(resolve, WRITE_DELAY_MS));
      return target.write(writes);
    },
    passing: (e) => target.passing(e),
    copyGroup: (...args) => target.copyGroup(...args),
    close: () => target.close(),
  };
}

describe('bridge: memory bounded by the buffer budget', () => {
  let source: Broker;
  let core: Core;
  let bridge: Bridge | undefined;
  afterAll(async () => {
    await bridge?.stop();
    await source?.stop();
    await core?.close();
  });

  it(`holds at most the budget plus one fetch answer of a backlog ${RECORDS * RECORD_BYTES / BUDGET} times the budget, and copies it all`, async () => {
    source = await startBroker({ autoCreateTopics: false });
    core = await openCore({ engine: 'memory' });
    const topic = uniqueTopic('bridge-memory');
    await createTopic(source.bootstrap, topic, PARTITIONS);
    // Batches of at most 16 KiB: a broker may send one batch past a partition's fetch limit, and the bound counts them. Twelve partitions: their limits (an eighth of the budget each) add up past the budget, so the budget in all is what binds.
    const producer = await connectProducer(source.bootstrap, { 'linger.ms': 5, 'batch.size': 16 * 1024 });
    const value = 'v'.repeat(RECORD_BYTES);
    const records: SentRecord[] = Array.from({ length: RECORDS }, (_, i) => ({ partition: i % PARTITIONS, key: null, value, headers: [], timestamp: Date.now() }));
    try {
      for (let at = 0; at < RECORDS; at += 4096) expectDelivered(await produceAll(producer, topic, records.slice(at, at + 4096), { timeoutMs: 120_000 }));
    } finally {
      await disconnect(producer);
    }

    const log = pino({ level: 'warn' });
    const started = await Bridge.start({ source: source.bootstrap, sourceOptions: {}, topics: new RegExp(topic), groups: null, target: slowed(new CoreTarget(core, log)), refreshIntervalMs: 60_000, bufferBytes: BUDGET, log });
    bridge = started;
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, started.progress().bufferedBytes)), 2);
    try {
      const refs = Array.from({ length: PARTITIONS }, (_, partition) => ({ queue: topic, partition }));
      const copied = async () => (await core.offsets({ partitions: refs })).partitions.reduce((n, p) => n + p.highWatermark, 0);
      await waitFor(async () => (await copied()) === RECORDS, { what: `all ${RECORDS} records copied through the slowed target`, timeoutMs: 240_000, intervalMs: 200, describe: () => `most held so far ${most} B` });
    } finally {
      clearInterval(sampler);
    }
    console.log(`bridge memory: at most ${most} bytes of batches held (budget ${BUDGET}) while copying ${RECORDS * RECORD_BYTES} bytes of records`);
    expect(most, 'bytes held: the budget plus one fetch answer (a quarter of the budget) at most').toBeLessThanOrEqual(BUDGET + BUDGET / 4);
    expect(most, 'bytes held reached most of the budget: it was the budget that stopped the reading').toBeGreaterThan(BUDGET / 2);
    expect(started.progress().bufferedBytes, 'bytes held once all is copied').toBe(0);
  }, 300_000);
});

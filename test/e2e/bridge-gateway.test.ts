/**
 * The migration bridge with a second gateway instance as its source (the
 * issue's "the same with a second gateway instance as the source"): the
 * scenario of bridge-scenario.ts as with Apache Kafka (a live compressed topic
 * with headers through three SIGKILLs, a compacted topic, a topic with aborted
 * transactions, a group moving mid-stream, checksums per partition). The
 * source's compactor runs every 100 ms, as Kafka's cleaner is set to there.
 * The target is the PostgreSQL engine when there is one, else memory.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startBroker, type Broker } from '../../src/index.js';
import { startTarget, type Target } from '../support/bridge.js';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { prepareSourceTopics, runBridgeScenario } from './bridge-scenario.js';

const engines = await engineMatrix();
const postgres = engines.find((e) => e.name === 'postgres')!;
const engine = postgres.skipReason === null ? postgres : engines[0]!;
afterAll(releaseEngines);

/** Records per run; BRIDGE_RECORDS raises it (the full figure is 200,000). */
const RECORDS = Number(process.env['BRIDGE_RECORDS'] ?? 12_000);

describe(`bridge: a gateway as the source, ${engine.name} target`, () => {
  let source: Broker;
  let target: Target;
  afterAll(async () => {
    await target?.stop();
    await source?.stop();
  });

  it('copies live, compacted and transactional topics offset for offset through three SIGKILLs; a group moves mid-stream without a duplicate or a miss', async () => {
    source = await startBroker({ autoCreateTopics: false, groups: { initialRebalanceDelayMs: 0 }, compactionIntervalMs: 100 });
    target = await startTarget(engine.fresh());
    const { main, others } = await prepareSourceTopics(source.bootstrap);
    const { report } = await runBridgeScenario({ source: source.bootstrap, target, main, others, initialRecords: RECORDS / 2, ongoingRecords: RECORDS / 2 });
    expect(report).toContain(`group switching-group`);
  }, 900_000);
});

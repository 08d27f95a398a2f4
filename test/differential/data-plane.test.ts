/**
 * The data plane against Apache Kafka: produce and fetch with every codec,
 * LogAppendTime, records too large, unknown topics, fetch out of range,
 * ListOffsets, Metadata and DescribeCluster, the idempotent producer. Each
 * scenario runs on Apache Kafka and on the gateway (memory and PostgreSQL)
 * and the observations are compared field by field (./harness.ts), through
 * the table of deliberate differences (./differences.ts).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DATA_PLANE_SCENARIOS } from './scenarios/data-plane.js';
import { CLUSTER_SCENARIOS } from './scenarios/cluster.js';
import { IDEMPOTENT_SCENARIOS } from './scenarios/idempotent.js';
import { enginesLeftOut, expectSameAsKafka, startTargets, type RunningTargets } from './targets.js';
import { startReferenceKafka } from './reference.js';

const leftOut = await enginesLeftOut();

describe(`differential: data plane, gateway against Apache Kafka${leftOut}`, () => {
  let running: RunningTargets;
  beforeAll(async () => {
    running = await startTargets(startReferenceKafka);
  }, 240_000);
  afterAll(async () => {
    await running?.stop();
  });

  for (const scenario of [...DATA_PLANE_SCENARIOS, ...CLUSTER_SCENARIOS, ...IDEMPOTENT_SCENARIOS]) {
    it(scenario.name, async () => {
      await expectSameAsKafka(scenario, running);
    }, 120_000);
  }
});

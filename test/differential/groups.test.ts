/**
 * Consumer groups against Apache Kafka: kafkajs and librdkafka members, the
 * classic protocol raw (errors clients never provoke), static membership,
 * negative commits (kafkajs admin.resetOffsets), missing groups,
 * describe/list/delete, lag. Each scenario runs on Apache Kafka and on the
 * gateway (memory and PostgreSQL); observations are compared field by field
 * (./harness.ts) through the table of deliberate differences (./differences.ts).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { GROUP_SCENARIOS } from './scenarios/groups.js';
import { enginesLeftOut, expectSameAsKafka, startTargets, type RunningTargets } from './targets.js';
import { startReferenceKafka } from './reference.js';

const leftOut = await enginesLeftOut();

describe(`differential: consumer groups, gateway against Apache Kafka${leftOut}`, () => {
  let running: RunningTargets;
  beforeAll(async () => {
    running = await startTargets(startReferenceKafka);
  }, 240_000);
  afterAll(async () => {
    await running?.stop();
  });

  for (const scenario of GROUP_SCENARIOS) {
    it(scenario.name, async () => {
      await expectSameAsKafka(scenario, running);
    }, 180_000);
  }
});

/**
 * The brokers a differential test file runs its scenarios on: the gateway on
 * the memory engine, the gateway on PostgreSQL (left out, saying why in the
 * suite's title, when there is none), and Apache Kafka (started once per
 * file; a machine that cannot run it fails the file, as a missing PostgreSQL
 * under DATABASE_URL does). All listen on 127.0.0.1 on free ports and are
 * stopped by the file's afterAll.
 *
 * The gateways run with Kafka's defaults where a scenario can see them:
 * topics auto-created (auto.create.topics.enable=true) with one partition
 * (num.partitions=1).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { startGateway, type RunningGateway } from '../support/gateway.js';
import { describeVerdict, diffObservations, judge, observe, show, type Observation, type Scenario, type Target } from './harness.js';

export interface RunningTargets {
  kafka: Target;
  gateways: Target[];
  stop(): Promise<void>;
}

export interface ReferenceBroker {
  target: Target;
  stop(): Promise<void>;
}

/** What a suite's title says about engines left out ('' when none is). */
export async function enginesLeftOut(): Promise<string> {
  const out = (await engineMatrix()).filter((e) => e.skipReason).map((e) => `${e.name} left out: ${e.skipReason}`);
  return out.length > 0 ? ` (${out.join('; ')})` : '';
}

/** Starts what one test file compares, all at once: the reference and a gateway per engine. */
export async function startTargets(startReference: () => Promise<ReferenceBroker>): Promise<RunningTargets> {
  const stops: (() => Promise<void>)[] = [];
  const gateways: Target[] = [];
  const running: RunningTargets = {
    kafka: null as unknown as Target, // set below, before anyone reads it
    gateways,
    async stop() {
      await Promise.allSettled(stops.map((s) => s()));
      await releaseEngines();
    },
  };
  try {
    const starting: Promise<unknown>[] = [
      startReference().then((reference) => {
        running.kafka = reference.target;
        stops.push(reference.stop);
      }),
    ];
    for (const engine of await engineMatrix()) {
      if (engine.skipReason) continue;
      starting.push(
        startGateway({ engine: engine.fresh(), autoCreateTopics: true, defaultPartitions: 1, groups: { initialRebalanceDelayMs: 0 } }).then((gateway: RunningGateway) => {
          stops.push(() => gateway.stop());
          gateways.push({ name: engine.name, bootstrap: gateway.bootstrap, host: gateway.host, port: gateway.port, nodeId: 0 });
        }),
      );
    }
    await Promise.all(starting);
  } catch (e) {
    await running.stop();
    throw e;
  }
  gateways.sort((a, b) => a.name.localeCompare(b.name));
  return running;
}

/**
 * Runs the scenario on every target at once (they are separate clusters) and
 * fails with every unexplained difference: each gateway against Kafka through
 * the table of deliberate differences, and the PostgreSQL engine against the
 * memory engine exactly (the engines must agree, whatever Kafka does).
 */
export async function expectSameAsKafka(scenario: Scenario, running: RunningTargets): Promise<Record<string, Observation>> {
  const targets = [running.kafka, ...running.gateways];
  const observed = await Promise.all(targets.map((t) => observe(scenario, t).catch((e: Error) => Promise.reject(new Error(`scenario "${scenario.name}" failed on ${t.name}: ${e.message}`, { cause: e })))));
  const byName = Object.fromEntries(targets.map((t, i) => [t.name, observed[i]!]));
  dumpObservations(scenario.name, byName);
  const problems: string[] = [];
  for (const gateway of running.gateways) {
    const text = describeVerdict(scenario.name, gateway.name, judge(scenario.name, gateway.name, byName.kafka!, byName[gateway.name]!));
    if (text) problems.push(text);
  }
  if (byName.memory && byName.postgres) {
    const engines = diffObservations(byName.memory, byName.postgres);
    if (engines.length > 0) {
      problems.push(
        `scenario "${scenario.name}": the PostgreSQL engine differs from the memory engine:\n` +
          engines.map((d) => `  ${d.path}: memory ${show(d.reference)}, postgres ${show(d.candidate)}`).join('\n'),
      );
    }
  }
  expect(problems.join('\n\n'), 'observations differ').toBe('');
  return byName;
}

/**
 * DIFFERENTIAL_DUMP=<folder> writes every scenario's observations there as
 * JSON, one file per scenario: to read what Kafka answered while fixing a
 * difference.
 */
export function dumpObservations(scenario: string, observations: Record<string, Observation>): void {
  const folder = process.env.DIFFERENTIAL_DUMP;
  if (!folder) return;
  mkdirSync(folder, { recursive: true });
  const text = JSON.stringify(observations, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v), 2);
  writeFileSync(`${folder}/${scenario.replace(/[^a-z0-9]+/gi, '-')}.json`, text);
}

/**
 * One differential suite: Apache Kafka and the gateway's engines started once
 * for the file, then each scenario compared on all of them.
 */
export async function describeDifferential(title: string, scenarios: readonly Scenario[], startReference: () => Promise<ReferenceBroker>, scenarioTimeoutMs: number): Promise<void> {
  const leftOut = await enginesLeftOut();
  describe(`differential: ${title}, gateway against Apache Kafka${leftOut}`, () => {
    let running: RunningTargets;
    beforeAll(async () => {
      running = await startTargets(startReference);
    }, 240_000);
    afterAll(async () => {
      await running?.stop();
    });

    for (const scenario of scenarios) {
      it(scenario.name, async () => {
        await expectSameAsKafka(scenario, running);
      }, scenarioTimeoutMs);
    }
  });
}

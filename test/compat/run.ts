/**
 * `npm run compat`: every client's scenario program against the gateway on
 * the memory engine, the gateway on PostgreSQL and Apache Kafka, in one run;
 * writes docs/compatibility.md's table and bench-results/compat.json.
 *
 *   npm run compat                                    # everything
 *   npm run compat -- --client kafkajs --client kcat   # some clients
 *   npm run compat -- --target gateway-memory          # some targets
 *   npm run compat -- --no-write                       # print, write nothing
 *   npm run compat -- --update --client kcat           # rerun some, keep the other rows of bench-results/compat.json
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CLIENTS, ROOT, toolchains } from './clients.js';
import { runScenario, startTarget, type ScenarioRun, type TargetName } from './matrix.js';
import { markdown, writeResults } from './table.js';

const TARGETS: TargetName[] = ['gateway-memory', 'gateway-postgres', 'apache-kafka'];
const { values } = parseArgs({
  options: {
    client: { type: 'string', multiple: true },
    target: { type: 'string', multiple: true },
    'no-write': { type: 'boolean' },
    update: { type: 'boolean' },
    'timeout-s': { type: 'string' },
  },
});
const clients = values.client ? CLIENTS.filter((c) => values.client!.includes(c.name)) : CLIENTS;
const targets = values.target ? TARGETS.filter((t) => values.target!.includes(t)) : TARGETS;
if (clients.length === 0 || targets.length === 0) {
  console.error(`no client or no target chosen; clients: ${CLIENTS.map((c) => c.name).join(', ')}; targets: ${TARGETS.join(', ')}`);
  process.exit(2);
}
const timeoutMs = Number(values['timeout-s'] ?? 240) * 1000;

console.error('setting up the toolchains (scripts/compat-setup.sh; built once, then cached)...');
const tools = await toolchains(clients);
const runs: ScenarioRun[] = [];
for (const name of targets) {
  console.error(`starting ${name}...`);
  const target = await startTarget(name);
  try {
    for (const client of clients) {
      const result = await runScenario(client, tools, target, timeoutMs);
      const failed = result.steps.filter((s) => s.status === 'fail').map((s) => s.step);
      console.error(`  ${client.name} on ${name}: ${failed.length === 0 ? 'no step failed' : `failed ${failed.join(', ')}`} (${result.seconds} s)`);
      runs.push(result);
    }
  } finally {
    await target.stop();
  }
}
if (values.update) {
  const kept = (JSON.parse(readFileSync(`${ROOT}bench-results/compat.json`, 'utf8')) as { runs: ScenarioRun[] }).runs;
  runs.unshift(...kept.filter((old) => !runs.some((run) => run.client === old.client && run.target === old.target)));
}
const order = CLIENTS.filter((c) => runs.some((r) => r.client === c.name));
// Rows grouped by client, targets in the fixed order.
runs.sort((a, b) => order.findIndex((c) => c.name === a.client) - order.findIndex((c) => c.name === b.client) || TARGETS.indexOf(a.target) - TARGETS.indexOf(b.target));
if (values['no-write']) console.log(markdown(runs, new Date().toISOString()));
else writeResults(runs);
const failures = runs.reduce((n, r) => n + r.steps.filter((s) => s.status === 'fail').length, 0);
console.error(`${runs.length} runs, ${failures} failed steps${values['no-write'] ? '' : '; written to docs/compatibility.md and bench-results/compat.json'}`);
process.exit(0);

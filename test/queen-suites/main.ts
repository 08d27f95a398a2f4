/**
 * `npm run queen-suites`: Queen's official client test suites against the
 * gateway's HTTP API, on the memory engine and on PostgreSQL.
 *
 *   npm run queen-suites                         # JavaScript, Python, Go; both engines
 *   npm run queen-suites -- --engine memory --suite js
 *   npm run queen-suites -- --group stream       # the streams suites
 *   npm run queen-suites -- --only testPushEmptyArray,popWithWait --suite js
 *   npm run queen-suites -- --suite js --from testDLQ --skip testCgBootstrapNew
 *
 * Fetches the suites first (scripts/queen-suites-fetch.sh), starts one
 * gateway per engine and suite, prints each test's outcome and a summary,
 * writes .tmp/queen-suites/results.json, and exits 1 when a test that is not
 * skipped by name failed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runSuitesOnGateway, type SuiteReport } from './gateway-run.js';
import type { SuiteName } from './suites.js';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', multiple: true },
    suite: { type: 'string', multiple: true },
    group: { type: 'string', default: 'human' },
    only: { type: 'string' },
    skip: { type: 'string' },
    from: { type: 'string' },
    'timeout-s': { type: 'string', default: '600' },
    echo: { type: 'boolean', default: false },
  },
});

const engines = (values.engine ?? ['memory', 'postgres']) as Array<'memory' | 'postgres'>;
const suites = (values.suite ?? ['js', 'py', 'go']) as SuiteName[];
const group = values.group === 'stream' ? 'stream' : 'human';

execFileSync('bash', ['scripts/queen-suites-fetch.sh'], { stdio: 'inherit' });
const reports: SuiteReport[] = [];
for (const engine of engines) {
  for (const suite of suites) {
    console.log(`== ${suite} (${group}) on ${engine}`);
    const report = await runSuitesOnGateway({
      engine,
      suite,
      group,
      ...(values.only ? { only: values.only.split(',') } : {}),
      ...(values.skip ? { skip: values.skip.split(',') } : {}),
      ...(values.from ? { from: values.from } : {}),
      timeoutMs: Number(values['timeout-s']) * 1000,
      echo: values.echo,
    });
    reports.push(report);
    for (const r of report.results.filter((t) => t.outcome !== 'passed')) console.log(`  ${r.outcome.toUpperCase()} ${r.name}: ${r.detail.slice(0, 400)}`);
  }
}
console.log('\nsuite   engine    passed failed skipped');
for (const r of reports) {
  const count = (o: string) => r.results.filter((t) => t.outcome === o).length;
  console.log(`${r.suite.padEnd(7)} ${r.engine.padEnd(9)} ${String(count('passed')).padStart(6)} ${String(count('failed')).padStart(6)} ${String(count('skipped')).padStart(7)}`);
}
mkdirSync('.tmp/queen-suites', { recursive: true });
writeFileSync('.tmp/queen-suites/results.json', JSON.stringify(reports, null, 2));
process.exit(reports.some((r) => r.results.some((t) => t.outcome === 'failed')) ? 1 : 0);

/**
 * The small form of `npm run queen-suites` (docs/testing.md): a bounded set of
 * Queen's official JavaScript client tests (its streams tests included), unchanged, against the gateway's
 * HTTP API on both engines. Skipped, saying why, when the suites cannot be
 * fetched (no queen-mq/queen repository and no network).
 */
import { execFileSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { engineMatrix, releaseEngines } from '../support/engines.js';
import { runSuitesOnGateway } from './gateway-run.js';

/** Quick tests across the API: configure, push, pop, leases, groups, DLQ, transactions, subscriptions, and one of Queen's streams tests (a tumbling-window sum closed by the idle flush). */
const SMALL_FORM = [
  'createQueue',
  'configureQueue',
  'pushMessage',
  'testPushEmptyArray',
  'pushLargePayload',
  'popWithWait',
  'popV4SharedLeaseRenew',
  'consumerGroup',
  'testDLQ',
  'transactionBasicPushAck',
  'subscriptionModeAll',
  'tumblingBasicWindowSum',
];

let fetchProblem: string | null = null;
try {
  execFileSync('bash', ['scripts/queen-suites-fetch.sh'], { stdio: 'pipe', timeout: 300_000 });
} catch (e) {
  fetchProblem = `Queen's suites could not be fetched: ${String((e as { stderr?: Buffer }).stderr ?? e).slice(-400)}`;
}

const engines = await engineMatrix();
afterAll(releaseEngines);

for (const engine of engines) {
  const skip = fetchProblem ?? engine.skipReason;
  describe.skipIf(skip !== null)(`Queen's JavaScript suite (small form): ${engine.name}${skip ? ` (skipped: ${skip})` : ''}`, () => {
    it(`passes ${SMALL_FORM.length} of Queen's tests unchanged`, async () => {
      const report = await runSuitesOnGateway({ engine: engine.name, suite: 'js', group: 'human', only: SMALL_FORM, timeoutMs: 60_000 });
      const failed = report.results.filter((r) => r.outcome !== 'passed');
      expect(failed, failed.map((f) => `${f.name}: ${f.detail}`).join('\n')).toEqual([]);
      expect(report.results.map((r) => r.name).sort()).toEqual([...SMALL_FORM].sort());
    }, 240_000);
  });
}

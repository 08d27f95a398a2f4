/**
 * Ends every vitest run with one plain line of counts, `tests: N passed,
 * N failed, N skipped`, whatever the other reporters printed above it, so a
 * reader (or CI) finds the outcome in the last line. An expected failure
 * (`it.fails`) that failed as expected counts as passed, as vitest counts it.
 */
import type { Reporter, TestModule } from 'vitest/node';

export default class ClosingLineReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const testModule of testModules) {
      for (const test of testModule.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
      // A file that failed to load has no tests to count; it is a failure all the same.
      if (testModule.state() === 'failed' && testModule.children.size === 0) failed++;
    }
    failed += unhandledErrors.length;
    process.stdout.write(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped\n`);
  }
}

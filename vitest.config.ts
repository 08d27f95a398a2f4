import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // End-to-end suites start brokers and external clients; two cores are all CI has.
    maxWorkers: 2,
    reporters: ['default', './test/support/closing-line-reporter.ts'],
  },
});

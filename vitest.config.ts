import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    setupFiles: ['test/support/contract-setup.ts'],
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most files wait on processes, Postgres and Redis more than they compute: three at a time on two cores
    // (vitest's default here would be one).
    maxWorkers: 3,
    // A worker process keeps the modules it loaded for its next file: the app's graph is imported once per
    // worker, not once per file. Each file still has its own database, Redis prefix and users.
    isolate: false,
  },
});

import type { Reporter, TestModule } from 'vitest/node';

/** Prints the one closing line CI reads: `Tests: N passed, N failed`. */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    let passed = 0;
    let failed = unhandledErrors.length;
    for (const module of modules) {
      if (module.state() === 'failed' && [...module.children.allTests()].length === 0) failed += 1;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        if (state === 'failed') failed += 1;
      }
    }
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed\n`);
  }
}

import type { Reporter, TestModule } from 'vitest/node';
import { BROWSER_TEST_FILE, chromiumInstalled } from './chromium.js';

/** Prints the one closing line CI reads: `Tests: N passed, N failed` (and how many browser tests were skipped, and why). */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    let passed = 0;
    let failed = unhandledErrors.length;
    let browserSkipped = 0;
    for (const module of modules) {
      let failedHere = 0;
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed += 1;
        if (state === 'failed') failedHere += 1;
        if (state === 'skipped' && !chromiumInstalled && BROWSER_TEST_FILE.test(module.moduleId)) browserSkipped += 1;
      }
      // A file that failed outside its tests (an import, a beforeAll) counts once even though its tests were skipped.
      failed += module.state() === 'failed' && failedHere === 0 ? 1 : failedHere;
    }
    const note = browserSkipped > 0 ? ` (${browserSkipped} browser tests skipped: chromium not installed)` : '';
    process.stdout.write(`\nTests: ${passed} passed, ${failed} failed${note}\n`);
  }
}

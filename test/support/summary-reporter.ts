import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';
import { BROWSER_TEST_FILE, chromiumInstalled } from './chromium.js';

/** How many of the slowest files the closing table names. */
const SLOWEST = 10;

/** A file's wall time in its worker: environment, harness, setup files, import, then its tests and hooks. */
function wallMs(module: TestModule): number {
  const d = module.diagnostic();
  return d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1).padStart(7)} s`;
const fileOf = (module: TestModule) => relative(process.cwd(), module.moduleId);

/**
 * Prints each test file's wall time as it ends, the slowest files at the end, and the one closing line CI
 * reads: `Tests: N passed, N failed` (and how many browser tests were skipped, and why).
 */
export default class SummaryReporter implements Reporter {
  onTestModuleEnd(module: TestModule) {
    process.stdout.write(`[file time] ${seconds(wallMs(module))}  ${fileOf(module)}\n`);
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown>) {
    this.printSlowest(modules);
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

  private printSlowest(modules: ReadonlyArray<TestModule>) {
    if (modules.length === 0) return;
    const slowest = [...modules].sort((a, b) => wallMs(b) - wallMs(a)).slice(0, SLOWEST);
    const total = modules.reduce((sum, module) => sum + wallMs(module), 0);
    process.stdout.write(`\nThe ${slowest.length} slowest test files (of ${modules.length}, ${seconds(total).trim()} summed over files):\n`);
    for (const module of slowest) process.stdout.write(`${seconds(wallMs(module))}  ${fileOf(module)}\n`);
  }
}

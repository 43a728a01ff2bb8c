import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script, without types
import { buildIsStale, markBuilt } from '../scripts/build-if-stale.mjs';

/** `npm start` builds only when the build is missing or older than its sources (issue 33: every start rebuilt for 85 s). */
let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

function project(): string {
  root = mkdtempSync(join(tmpdir(), 'ap-build-'));
  mkdirSync(join(root, 'src/console'), { recursive: true });
  writeFileSync(join(root, 'src/app.ts'), 'export {};\n');
  writeFileSync(join(root, 'src/console/main.tsx'), 'export {};\n');
  return root;
}

function built(at: Date) {
  mkdirSync(join(root, 'dist/src'), { recursive: true });
  mkdirSync(join(root, 'dist/console'), { recursive: true });
  writeFileSync(join(root, 'dist/src/dev.js'), '');
  writeFileSync(join(root, 'dist/console/index.html'), '');
  markBuilt(root, at);
}

const past = (seconds: number) => new Date(Date.now() - seconds * 1000);

describe('build-if-stale', () => {
  it('builds a clean clone (no dist/) and a build that never finished (no stamp)', () => {
    project();
    expect(buildIsStale(root)).toBe(true);
    mkdirSync(join(root, 'dist/src'), { recursive: true });
    writeFileSync(join(root, 'dist/src/dev.js'), '');
    expect(buildIsStale(root)).toBe(true);
  });

  it('skips a build newer than every source, and builds again after a server or console source changes', () => {
    project();
    for (const file of ['src/app.ts', 'src/console/main.tsx', 'src/console', 'src']) utimesSync(join(root, file), past(60), past(60));
    built(past(30));
    expect(buildIsStale(root)).toBe(false);
    utimesSync(join(root, 'src/console/main.tsx'), past(10), past(10));
    expect(buildIsStale(root)).toBe(true);
    built(past(5));
    expect(buildIsStale(root)).toBe(false);
    writeFileSync(join(root, 'src/app.ts'), 'export const changed = 1;\n');
    expect(buildIsStale(root)).toBe(true);
  });

  it('builds again when the console build is missing', () => {
    project();
    for (const file of ['src/app.ts', 'src/console/main.tsx', 'src/console', 'src']) utimesSync(join(root, file), past(60), past(60));
    built(past(30));
    rmSync(join(root, 'dist/console'), { recursive: true });
    expect(buildIsStale(root)).toBe(true);
  });

  it('npm ci (prepare), npm test (pretest) and npm start (prestart) all build through it, so CI builds once', () => {
    root = mkdtempSync(join(tmpdir(), 'ap-build-'));
    const { scripts } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    for (const hook of ['prepare', 'pretest', 'prestart']) expect(scripts[hook], hook).toBe('node scripts/build-if-stale.mjs');
  });
});

// `npm ci` (prepare), `npm test` (pretest) and `npm start` (prestart): build only when the build is missing or older
// than its sources, so a start or a test run without changes begins at once instead of rebuilding for a minute and
// more (CI's `npm ci` then `npm test` built twice).
// `--mark` (the end of `npm run build`) records that a build just finished.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** What the build reads: the TypeScript and console sources, the copied assets, and the build's own settings. */
const INPUTS = ['src', 'workers', 'bench', 'migrations', 'scripts', 'test/support/pglite-server.mjs', 'tsconfig.json', 'knexfile.ts', 'package.json'];
export const STAMP = 'dist/.build-stamp';

function newestIn(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs; // a deleted file changes its directory
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestIn(join(path, entry)));
  return newest;
}

/** Whether `root`'s build is missing or older than any of its inputs. */
export function buildIsStale(root) {
  const stamp = join(root, STAMP);
  if (!existsSync(stamp) || !existsSync(join(root, 'dist/src/dev.js')) || !existsSync(join(root, 'dist/console/index.html'))) return true;
  const built = statSync(stamp).mtimeMs;
  return INPUTS.some((input) => newestIn(join(root, input)) > built);
}

/** Records a finished build; `at` is when it started, so a source saved during the build makes the next start build again. */
export function markBuilt(root, at = new Date()) {
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, STAMP), `${at.toISOString()}\n`);
  utimesSync(join(root, STAMP), at, at);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = fileURLToPath(new URL('..', import.meta.url));
  if (process.argv.includes('--mark')) {
    markBuilt(root);
  } else if (!buildIsStale(root)) {
    console.log('build is up to date (dist/ is newer than the sources); skipping it');
  } else {
    const started = new Date();
    const built = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit', shell: process.platform === 'win32' });
    if (built.status !== 0) process.exit(built.status ?? 1);
    markBuilt(root, started);
  }
}

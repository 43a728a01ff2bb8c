// tsc compiles only TypeScript; the files the compiled code reads at run time are copied beside it.
import { chmodSync, cpSync, rmSync } from 'node:fs';

// Replaced, not merged: a script renamed for its new key count (claimConversation-4 → -5) must not linger under its old name.
for (const scripts of ['src/shared/lua', 'src/engine/lua']) {
  rmSync(`dist/${scripts}`, { recursive: true, force: true });
  cpSync(scripts, `dist/${scripts}`, { recursive: true });
}
// The benchmarks run the PGlite server the tests use from the build.
cpSync('test/support/pglite-server.mjs', 'dist/test/support/pglite-server.mjs');
// tsc writes files without the run bit: `npx agentctl` (package.json "bin") needs it after every build, not only after npm install.
chmodSync('dist/src/cli.js', 0o755);

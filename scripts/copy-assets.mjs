// tsc compiles only TypeScript; the files the compiled code reads at run time are copied beside it.
import { chmodSync, cpSync } from 'node:fs';

cpSync('src/shared/lua', 'dist/src/shared/lua', { recursive: true });
// The benchmarks run the PGlite server the tests use from the build.
cpSync('test/support/pglite-server.mjs', 'dist/test/support/pglite-server.mjs');
// tsc writes files without the run bit: `npx agentctl` (package.json "bin") needs it after every build, not only after npm install.
chmodSync('dist/src/cli.js', 0o755);

// tsc compiles only TypeScript; the files the compiled code reads at run time are copied beside it.
import { cpSync } from 'node:fs';

cpSync('src/shared/lua', 'dist/src/shared/lua', { recursive: true });
// The benchmarks run the PGlite server the tests use from the build.
cpSync('test/support/pglite-server.mjs', 'dist/test/support/pglite-server.mjs');

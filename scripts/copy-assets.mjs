// tsc compiles only TypeScript; the files the compiled code reads at run time are copied beside it.
import { cpSync } from 'node:fs';

cpSync('src/shared/lua', 'dist/src/shared/lua', { recursive: true });

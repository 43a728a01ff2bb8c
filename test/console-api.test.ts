import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import openapiTS, { astToString } from 'openapi-typescript';
import { startTestApp, type TestApp } from './support/app.js';

/**
 * The console calls the API through types generated from /openapi.json (DESIGN §17). The
 * generated file is committed; this test fails when it no longer matches the document, and
 * `npm run console:api` rewrites it.
 */
const SCHEMA_FILE = fileURLToPath(new URL('../src/console/api/schema.d.ts', import.meta.url));
const HEADER = '/**\n * Generated from /openapi.json by openapi-typescript (`npm run console:api`). Do not edit.\n */\n\n';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe("the console's API client", () => {
  it('is generated from the current /openapi.json', async () => {
    const document = await (await fetch(`${app.url}/openapi.json`)).json();
    const generated = HEADER + astToString(await openapiTS(document, { alphabetize: true }));
    if (process.env.UPDATE_CONSOLE_API === '1') writeFileSync(SCHEMA_FILE, generated);
    const committed = readFileSync(SCHEMA_FILE, 'utf8');
    expect(committed === generated, 'src/console/api/schema.d.ts is stale: run `npm run console:api`').toBe(true);
  });
});

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Sealer } from '../src/crypto/sealed.js';
import { openHeaders } from '../src/connectors/secrets.js';
import { secretContext } from '../src/webhooks/service.js';
import { startTestApp, type TestApp } from './support/app.js';
import { createDatabase } from './support/database.js';

/** `agentctl secrets:rotate` on a database of its own (it rewrites every connector, so it may not share the run's). */

const run = promisify(execFile);
const cli = fileURLToPath(new URL('../dist/src/cli.js', import.meta.url));
const OLD = 'rotation-old-key-rotation-old-key-000001';
const NEW = 'rotation-new-key-rotation-new-key-000002';
const SECRET = 'sk-rotate-me-0a1b2c3d4e5f';

let database: Awaited<ReturnType<typeof createDatabase>>;

const agentctl = (env: Record<string, string>) =>
  run(process.execPath, [cli, 'secrets:rotate'], { env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', DATABASE_URL: database.url, ...env } });

let app: TestApp;
beforeAll(async () => {
  database = await createDatabase();
  app = await startTestApp({ env: { DATABASE_URL: database.url, ENCRYPTION_KEY: OLD } });
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

describe('agentctl secrets:rotate', () => {
  it('re-seals every header under the new key with the old one as ENCRYPTION_KEY_PREVIOUS; again is a no-op', async () => {
    const { token } = await app.signedInUser();
    const ids: string[] = [];
    for (const name of ['one', 'two']) {
      const res = await app.request('POST', '/api/connectors', { token, body: { name, kind: 'mcp', url: 'https://tools.example.com/mcp', headers: { 'X-Api-Key': SECRET, 'X-Other': `${name}-value` } } });
      ids.push(res.body.id);
    }
    await app.request('POST', '/api/connectors', { token, body: { name: 'bare', kind: 'mcp', url: 'https://tools.example.com/mcp' } });
    const webhook = await app.request('POST', '/api/webhooks', { token, body: { url: 'https://hooks.example.com/in', events: ['run.succeeded'] } });
    expect(webhook.status).toBe(201);

    // Without the old key the values cannot be opened: the rotation stops, naming the connector, and changes nothing.
    const before = await app.services.knex('connectors').orderBy('id');
    await expect(agentctl({ ENCRYPTION_KEY: NEW })).rejects.toMatchObject({ code: 2, stderr: expect.stringMatching(/agentctl: connectors [0-9a-f-]{36}: sealed value does not open/) });
    expect(await app.services.knex('connectors').orderBy('id')).toEqual(before);

    const rotated = await agentctl({ ENCRYPTION_KEY: NEW, ENCRYPTION_KEY_PREVIOUS: OLD });
    expect(rotated.stdout).toContain('checked 3 connector(s) and 1 webhook(s); re-sealed 5 secret value(s)');
    const current = new Sealer(NEW);
    const endpoint = await app.services.knex('webhook_endpoints').where({ id: webhook.body.id }).first();
    expect(current.open(endpoint.secret_sealed, secretContext(webhook.body.id))).toBe(webhook.body.secret);
    for (const id of ids) {
      const row = await app.services.knex('connectors').where({ id }).first();
      expect(openHeaders(current, id, row.secret_headers)).toMatchObject({ 'X-Api-Key': SECRET });
      expect(() => openHeaders(new Sealer(OLD), id, row.secret_headers)).toThrow();
    }

    expect((await agentctl({ ENCRYPTION_KEY: NEW, ENCRYPTION_KEY_PREVIOUS: OLD })).stdout).toContain('re-sealed 0 secret value(s)');
    expect((await agentctl({ ENCRYPTION_KEY: NEW })).stdout).toContain('re-sealed 0 secret value(s)');
  });
});

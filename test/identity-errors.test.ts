import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { generateApiKey } from '../src/auth/secrets.js';

/** Every row of the spec's service error table that the identity part can produce, over HTTP. */
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

const expectAuthError = (res: { status: number; body: any; headers: Headers }, status: number, error: string) => {
  expect(res.status).toBe(status);
  expect(res.body).toEqual({ error, message: expect.any(String) });
  if (status === 401) expect(res.headers.get('www-authenticate')).toBe('Bearer');
};

describe('service error table', () => {
  it('invalid query parameters → 422 in FastAPI shape', async () => {
    const { token } = await app.signedInUser();
    const res = await app.request('GET', '/api/me/api-keys?size=101', { token });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      detail: [{ loc: ['query', 'size'], msg: 'Input should be less than or equal to 100', type: 'less_than_equal', input: '101', ctx: { le: 100 } }],
    });
  });

  it('no Authorization header → unauthorized', async () => {
    expectAuthError(await app.request('GET', '/api/me/api-keys'), 401, 'unauthorized');
  });

  it('malformed, wrong-prefix, unknown and bad-checksum credentials → invalid_token', async () => {
    const unknown = generateApiKey();
    const badChecksum = unknown.slice(0, -1) + (unknown.endsWith('A') ? 'B' : 'A');
    for (const token of ['not-a-token', 'sk_live_abcdef', 'svc_short', unknown, badChecksum, 'eyJhbGciOiJIUzI1NiJ9.e30.x']) {
      expectAuthError(await app.request('GET', '/api/auth/verify', { token }), 401, 'invalid_token');
    }
    expectAuthError(await app.request('GET', '/api/auth/verify', { headers: { authorization: 'Basic abc' } }), 401, 'invalid_token');
  });

  it('a JWT signed with another secret or algorithm → invalid_token', async () => {
    const { user } = await app.createUser();
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const payload = Buffer.from(JSON.stringify({ sub: user.id, iss: 'agent-platform', aud: 'agent-platform-api', exp: 9999999999 })).toString('base64url');
    expectAuthError(await app.request('GET', '/api/auth/verify', { token: `${header}.${payload}.` }), 401, 'invalid_token');
  });

  it('an access token past its 7200 s lifetime → token_expired', async () => {
    const { user } = await app.createUser();
    const { token } = await app.services.jwt.sign(user.id, randomUUID(), Date.now() - 7201 * 1000);
    expectAuthError(await app.request('GET', '/api/auth/verify', { token }), 401, 'token_expired');
  });

  it('a disabled key → unauthorized; a key lacking the scope → forbidden; a restricted user → forbidden', async () => {
    const { token } = await app.signedInUser();
    const scoped = await app.request('POST', '/api/me/api-keys', { token, body: { name: 'kb only', scopes: 'kb' } });
    expectAuthError(await app.request('GET', '/api/me/api-keys', { token: scoped.body.key }), 403, 'forbidden');

    await app.request('PATCH', `/api/me/api-keys/${scoped.body.id}`, { token, body: { is_active: false } });
    expectAuthError(await app.request('GET', '/api/auth/verify', { token: scoped.body.key }), 401, 'unauthorized');

    const restricted = await app.signedInUser('restricted');
    expectAuthError(await app.request('POST', '/api/me/api-keys', { token: restricted.token, body: { name: 'x' } }), 403, 'forbidden');
    expect((await app.request('GET', '/api/me/api-keys', { token: restricted.token })).status).toBe(200);
  });

  it('unknown routes → 404 not_found; wrong method → 405', async () => {
    const res = await app.request('GET', '/api/nope');
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('not_found');
    expect((await app.request('PUT', '/api/auth/login', { body: {} })).status).toBe(405);
  });

  it('a body over the limit → 413 payload_too_large', async () => {
    const res = await app.request('POST', '/api/auth/login', { raw: JSON.stringify({ email: 'x'.repeat(2 * 1024 * 1024), password: 'y' }) });
    expectAuthError(res, 413, 'payload_too_large');
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ throttle: { perAccountAddress: 3, perAddress: 1000, perAccount: 1000, windowSeconds: 60 } });
});
afterAll(() => app.close());

describe('login, refresh and verify', () => {
  it('login answers the spec’s login response', async () => {
    const { email, password, user } = await app.createUser('admin');
    const res = await app.request('POST', '/api/auth/login', { body: { email: email.toUpperCase(), password } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      access_token: expect.any(String),
      refresh_token: expect.any(String),
      token_type: 'bearer',
      expires_in: 7200,
      user: { id: user.id, email, name: expect.any(String), role: 'admin', created_at: expect.any(String) },
    });
    const verify = await app.request('GET', '/api/auth/verify', { token: res.body.access_token });
    expect(verify.body).toMatchObject({ valid: true, token_type: 'jwt', user_id: user.id, scopes: null });
    expect(verify.body.expires_in).toBeGreaterThan(7100);
    expect(verify.body.expires_in).toBeLessThanOrEqual(7200);
  });

  it('an unknown email and a wrong password get the same answer', async () => {
    const { email } = await app.createUser();
    const wrong = await app.request('POST', '/api/auth/login', { body: { email, password: 'wrong-password' } });
    const unknown = await app.request('POST', '/api/auth/login', { body: { email: 'nobody@example.test', password: 'wrong-password' } });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body).toEqual(unknown.body);
  });

  it('repeated failures for one account from one address → 429 with Retry-After there, even with the right password', async () => {
    const { email, password } = await app.createUser();
    for (let i = 0; i < 3; i++) await app.request('POST', '/api/auth/login', { body: { email, password: 'nope' } });
    const blocked = await app.request('POST', '/api/auth/login', { body: { email, password } });
    expect(blocked.status).toBe(429);
    expect(blocked.body.error).toBe('rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('refresh rotates the pair; reusing a spent refresh token revokes its family', async () => {
    const { email, password } = await app.createUser();
    const first = await app.login(email, password);
    const second = await app.request('POST', '/api/auth/refresh', { body: { refresh_token: first.refresh_token } });
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect((await app.request('GET', '/api/auth/verify', { token: second.body.access_token })).status).toBe(200);

    const reuse = await app.request('POST', '/api/auth/refresh', { body: { refresh_token: first.refresh_token } });
    expect(reuse.status).toBe(401);
    expect(reuse.body.error).toBe('invalid_token');
    // The family is revoked: the newest token of the stolen session no longer works either.
    const afterRevoke = await app.request('POST', '/api/auth/refresh', { body: { refresh_token: second.body.refresh_token } });
    expect(afterRevoke.body.error).toBe('invalid_token');
    // A separate login is another family and unaffected.
    const other = await app.login(email, password);
    expect((await app.request('POST', '/api/auth/refresh', { body: { refresh_token: other.refresh_token } })).status).toBe(200);
  });

  it('two concurrent uses of one refresh token: one wins, the family is revoked', async () => {
    const { email, password } = await app.createUser();
    const { refresh_token } = await app.login(email, password);
    const results = await Promise.all([1, 2].map(() => app.request('POST', '/api/auth/refresh', { body: { refresh_token } })));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401]);
    const winner = results.find((r) => r.status === 200)!;
    expect((await app.request('POST', '/api/auth/refresh', { body: { refresh_token: winner.body.refresh_token } })).status).toBe(401);
  });

  it('stores only hashes of refresh tokens and keys', async () => {
    const { email, password, user } = await app.createUser();
    const { refresh_token, access_token } = await app.login(email, password);
    const key = (await app.request('POST', '/api/me/api-keys', { token: access_token, body: { name: 'h' } })).body.key;
    const dump = JSON.stringify([
      await app.services.knex('refresh_tokens').where({ user_id: user.id }),
      await app.services.knex('api_keys').where({ user_id: user.id }),
      await app.services.knex('users').where({ id: user.id }),
    ]);
    expect(dump).not.toContain(refresh_token);
    expect(dump).not.toContain(key);
    expect(dump).not.toContain(password);
  });
});

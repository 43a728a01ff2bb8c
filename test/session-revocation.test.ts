import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startTestApp, uniqueId, type TestApp } from './support/app.js';

/**
 * Reusing a spent refresh token revokes its family, and with it the family's access tokens (their
 * `sid`), on every web process — here two, sharing Postgres and Redis as deployed processes do.
 */
let web: TestApp[];
beforeAll(async () => {
  const env = { REDIS_KEY_PREFIX: `${inject('redisPrefix')}${uniqueId()}:` };
  web = await Promise.all([startTestApp({ env }), startTestApp({ env })]);
  // Each process hears invalidations on its shared subscriber, as src/server.ts wires it.
  await Promise.all(web.map((app) => app.services.cache.listen(app.services.subscriber)));
});
afterAll(() => Promise.all(web.map((app) => app.close())));

const verify = (app: TestApp, token: string) => app.request('GET', '/api/auth/verify', { token });

/** Asks until the answer is 401; the cache's own TTL (30 s) is far beyond the wait, so only the invalidation can make it. */
async function until401(app: TestApp, token: string, deadlineMs = 5000) {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const res = await verify(app, token);
    if (res.status === 401 || Date.now() > deadline) return res;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('session revocation', () => {
  it('refresh-token reuse ends the family’s access tokens on every web process; other sessions live on', async () => {
    const [a, b] = web as [TestApp, TestApp];
    const { email, password } = await a.createUser();
    const stolen = await a.login(email, password);
    const rotated = await a.request('POST', '/api/auth/refresh', { body: { refresh_token: stolen.refresh_token } });
    expect(rotated.status).toBe(200);
    const other = await b.login(email, password);
    // Warm on both processes: every one of these tokens is cached as live.
    for (const app of web) for (const token of [stolen.access_token, rotated.body.access_token, other.access_token]) expect((await verify(app, token)).status).toBe(200);

    const reuse = await a.request('POST', '/api/auth/refresh', { body: { refresh_token: stolen.refresh_token } });
    expect(reuse.status).toBe(401);

    for (const app of web) {
      for (const token of [stolen.access_token, rotated.body.access_token]) {
        const res = await until401(app, token);
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 'invalid_token', message: expect.stringContaining('revoked') });
      }
      expect((await verify(app, other.access_token)).status).toBe(200);
    }
  });

  it('a process that never saw the token learns of the revocation from Postgres', async () => {
    const [a, b] = web as [TestApp, TestApp];
    const { email, password } = await a.createUser();
    const first = await a.login(email, password);
    await a.request('POST', '/api/auth/refresh', { body: { refresh_token: first.refresh_token } });
    await a.request('POST', '/api/auth/refresh', { body: { refresh_token: first.refresh_token } });
    const res = await verify(b, first.access_token);
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  });
});

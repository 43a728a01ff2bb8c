import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:net';
import { startTestApp, type TestApp } from './support/app.js';

describe('health', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app.close());

  it('healthz and readyz answer when Postgres and Redis are up', async () => {
    expect((await app.request('GET', '/healthz')).body).toEqual({ status: 'ok' });
    const ready = await app.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ postgres: 'ok', redis: 'ok' });
  });
});

describe('when Redis is unreachable', () => {
  let app: TestApp;
  let blackhole: Server;
  beforeAll(async () => {
    // A port that accepts TCP but never speaks Redis: the worst kind of outage (no fast refusal).
    blackhole = createServer(() => {}).listen(0, '127.0.0.1');
    await new Promise((resolve) => blackhole.once('listening', resolve));
    const port = (blackhole.address() as { port: number }).port;
    app = await startTestApp({ env: { REDIS_URL: `redis://127.0.0.1:${port}` }, waitForRedis: false });
  });
  afterAll(async () => {
    await app.close();
    blackhole.close();
  });

  it('readyz and Redis-backed endpoints answer 503 quickly, never 500', async () => {
    const started = Date.now();
    const ready = await app.request('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.error).toBe('unavailable');
    const login = await app.request('POST', '/api/auth/login', { body: { email: 'a@b.c', password: 'x' } });
    expect(login.status).toBe(503);
    expect(login.body).toEqual({ error: 'unavailable', message: expect.any(String) });
    for (const res of [ready, login]) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(5000);
    expect((await app.request('GET', '/healthz')).status).toBe(200);
  });
});

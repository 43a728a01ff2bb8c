import { afterAll, describe, expect, inject, it } from 'vitest';
import { createServer, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { startTestApp, type TestApp } from './support/app.js';
import { ThrowawayRedis } from './support/redis-server.js';
import { TcpProxy } from './support/tcp-proxy.js';
import { startStack } from './support/stack.js';
import { createKnex } from '../src/db/knex.js';
import { bindModels } from '../src/db/models.js';
import { classifyDependencyFailure } from '../src/shared/outage.js';
import { ofType, stream } from './support/sse.js';

/**
 * DESIGN §12 "Overload is not an outage": a busy pool or a Redis backlog answers 429 with
 * Retry-After; 503 (also with Retry-After) only when the dependency cannot be reached; every
 * refusal is logged with its cause.
 */
const apps: TestApp[] = [];
afterAll(() => Promise.all(apps.map((app) => app.close())));

const refusalsIn = (app: TestApp) =>
  app.logs.map((line) => JSON.parse(line)).filter((entry: { msg?: string }) => entry.msg === 'request refused') as { status: number; cause: string }[];

describe('overload on the web tier', () => {
  it('every pooled connection busy → 429 with Retry-After after a bounded wait, logged as saturation', async () => {
    const app = await startTestApp({ poolMax: 1 });
    apps.push(app);
    const { token } = await app.signedInUser();
    expect((await app.request('GET', '/api/conversations', { token })).status).toBe(200);
    const held = await app.services.knex.transaction();
    try {
      const busy = await app.request('GET', '/api/conversations?page=2', { token });
      expect({ status: busy.status, body: busy.body }).toEqual({ status: 429, body: { error: 'rate_limited', message: expect.any(String) } });
      expect(Number(busy.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await held.rollback();
    }
    expect((await app.request('GET', '/api/conversations', { token })).status).toBe(200);
    expect(refusalsIn(app)).toEqual([expect.objectContaining({ status: 429, cause: expect.stringMatching(/^postgres saturated: connection pool busy/) })]);
  });

  it('Postgres unreachable → 503 with Retry-After, logged as unreachable', async () => {
    const url = new URL(inject('databaseUrl'));
    const proxy = await new TcpProxy({ host: url.hostname, port: Number(url.port || 5432) }).start();
    url.port = String(proxy.port);
    await proxy.cut();
    const app = await startTestApp({ env: { DATABASE_URL: url.toString() } });
    apps.push(app);
    const res = await app.request('POST', '/api/auth/refresh', { body: { refresh_token: 'x'.repeat(40) } });
    expect({ status: res.status, body: res.body }).toEqual({ status: 503, body: { error: 'unavailable', message: expect.any(String) } });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refusalsIn(app)).toEqual([expect.objectContaining({ status: 503, cause: expect.stringMatching(/^postgres unreachable: /) })]);
  });

  it('a Redis command backlog → 429 with Retry-After; a stopped Redis → 503', async () => {
    const redis = await ThrowawayRedis.start();
    const app = await startTestApp({ env: { REDIS_URL: redis.url } });
    const pauser = new Redis(redis.url);
    pauser.on('error', () => {});
    try {
      const { email, password } = await app.createUser();
      // Redis stops answering every client for 4 s (the web's command timeout is 2 s); the connection stays up.
      await pauser.client('PAUSE', 4000, 'ALL');
      const backlog = await app.request('POST', '/api/auth/login', { body: { email, password } });
      expect({ status: backlog.status, body: backlog.body }).toEqual({ status: 429, body: { error: 'rate_limited', message: expect.any(String) } });
      expect(Number(backlog.headers.get('retry-after'))).toBeGreaterThan(0);
      await pauser.client('UNPAUSE');
      expect((await app.request('POST', '/api/auth/login', { body: { email, password } })).status).toBe(200);
      await redis.stop();
      const down = await app.request('POST', '/api/auth/login', { body: { email, password } });
      expect({ status: down.status, body: down.body }).toEqual({ status: 503, body: { error: 'unavailable', message: expect.any(String) } });
      expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(refusalsIn(app).map((r) => [r.status, r.cause.split(':')[0]])).toEqual([
        [429, 'redis saturated'],
        [503, 'redis unreachable'],
      ]);
    } finally {
      pauser.disconnect();
      await app.close();
      await redis.destroy();
    }
  });
});

describe('what a real failure is classified as', () => {
  it('a query past its client-side timeout (knex puts the statement in front of the message) is saturation', async () => {
    const knex = createKnex(inject('databaseUrl'), { poolMax: 1, queryTimeoutMs: 100 });
    try {
      const err = await knex.raw('select pg_sleep(2)').then(() => undefined, (e: unknown) => e);
      expect((err as Error).message).toMatch(/^select pg_sleep\(2\) - Query read timeout$/);
      expect(classifyDependencyFailure(err)).toEqual({ kind: 'saturated', dependency: 'postgres', cause: 'query timed out' });
    } finally {
      await knex.destroy();
    }
  });

  it('a connection Postgres takes but does not answer in time (its handshake late under load) is saturation, not a bug', async () => {
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const url = new URL(inject('databaseUrl'));
    url.port = String((silent.address() as { port: number }).port);
    const knex = createKnex(url.toString(), { poolMax: 1, connectTimeoutMs: 100 });
    try {
      const err = await knex.raw('select 1').then(() => undefined, (e: unknown) => e);
      expect((err as Error).message).toBe('timeout expired');
      expect(classifyDependencyFailure(err)).toEqual({ kind: 'saturated', dependency: 'postgres', cause: 'connecting timed out' });
    } finally {
      await knex.destroy();
      for (const socket of held) socket.destroy();
      silent.close();
    }
  });

  it('a statement Postgres cancelled, as objection wraps it, is saturation; a bug is nothing', async () => {
    const knex = createKnex(inject('databaseUrl'), { poolMax: 1 });
    try {
      const { User } = bindModels(knex);
      const cancelled = await knex.transaction(async (trx) => {
        await trx.raw("set local statement_timeout = '50ms'");
        return User.query(trx).whereRaw('pg_sleep(1) is not null').then(() => undefined, (e: unknown) => e);
      }).catch((e: unknown) => e);
      expect(classifyDependencyFailure(cancelled)).toMatchObject({ kind: 'saturated', dependency: 'postgres', cause: expect.stringMatching(/^57014: canceling statement/) });
      const bug = await User.query(knex).where('no_such_column', 1).then(() => undefined, (e: unknown) => e);
      expect(bug).toBeInstanceOf(Error);
      expect(classifyDependencyFailure(bug)).toBeUndefined();
    } finally {
      await knex.destroy();
    }
  });
});

describe('a burst against a tiny pool', () => {
  it('300 runs at once on a web process with one Postgres connection: only 200 or 429 with Retry-After, and every accepted run finishes', async () => {
    const stack = await startStack({ env: { WEB_DATABASE_POOL_MAX: '1', RUNS_PER_USER_LIMIT: '1000', LOCAL_MODEL_TOKEN_DELAY_MS: '0' } });
    try {
      const { key } = await stack.user();
      const results = await Promise.all(
        Array.from({ length: 300 }, (_, i) => stream(`${stack.url}/api/react`, { token: key, body: { q: `What is ${i}+2?` } })),
      );
      const unexpected = results.filter((r) => r.status !== 200 && !(r.status === 429 && r.headers.get('retry-after')));
      expect(unexpected.map((r) => ({ status: r.status, body: r.body }))).toEqual([]);
      const accepted = results.filter((r) => r.status === 200);
      expect(accepted.length).toBeGreaterThan(0);
      for (const r of accepted) {
        expect(r.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'succeeded' } });
        expect(ofType(r.events, 'answer')).toHaveLength(1);
      }
      const runIds = accepted.map((r) => r.headers.get('x-run-id')!);
      const finished = await stack.knex('runs').whereIn('id', runIds).where({ status: 'succeeded' }).count('* as n').first();
      expect(Number(finished!.n)).toBe(accepted.length);
      // A refused run left nothing behind that holds the user's slots or conversations.
      const refused = results.length - accepted.length;
      const web = stack.webs[0]!.output.join('');
      expect(web.match(/"status":429[^\n]*"cause":"postgres saturated/g)?.length ?? 0).toBe(refused);
      expect(web).not.toMatch(/"status":503/);
    } finally {
      await stack.stop();
    }
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../src/auth/users.js';
import { startStack, type Stack } from './support/stack.js';
import { eventually } from './support/eventually.js';
import { FIXTURE_PASSWORD_COST, uniqueId } from './support/app.js';
import { redisEnv } from './support/redis-modes.js';

/**
 * Rate limits (DESIGN §18) through built web processes: one credential's requests are counted in
 * Redis whichever web process they reach, so a key limited to N rpm gets exactly N answers from two
 * processes together, then 429s; a JWT is limited by its user; DEFAULT_RATE_LIMIT_RPM applies where
 * neither sets a limit; /v1 and /mcp count too; a changed limit reaches the other process's warm
 * cache. Small limits, no sleeping: the GCRA state shows in the RateLimit fields.
 */
let stack: Stack;
let admin: { user: { id: string }; key: string };
beforeAll(async () => {
  stack = await startStack({ webs: 2, workers: 0 });
  admin = await stack.user('admin');
});
afterAll(() => stack?.stop());

interface Answer {
  status: number;
  body: any;
  policy: string | null;
  limit: string | null;
  retryAfter: string | null;
}

async function call(url: string, token: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // an event stream (/mcp)
  }
  return { status: res.status, body: parsed, policy: res.headers.get('ratelimit-policy'), limit: res.headers.get('ratelimit'), retryAfter: res.headers.get('retry-after') };
}

/** `count` requests, alternating between the two web processes. */
async function alternate(count: number, token: string, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer[]> {
  const answers: Answer[] = [];
  for (let i = 0; i < count; i++) answers.push(await call(stack.urls[i % 2]!, token, method, path, body, headers));
  return answers;
}

/** The RateLimit field's parameters. */
function fields(answer: Answer): { r: number; t: number } {
  const match = /^"rpm";r=(\d+);t=(\d+)$/.exec(answer.limit ?? '');
  if (!match) throw new Error(`no RateLimit field: ${answer.limit}`);
  return { r: Number(match[1]), t: Number(match[2]) };
}

async function limitedKey(userId: string, rpm: number | null) {
  return stack.identity.apiKeys.create(userId, { name: `rpm ${rpm}`, rate_limit_rpm: rpm });
}

async function member() {
  return createUser(stack.identity.models, { email: `limits-${uniqueId()}@example.test`, password: `pw-${uniqueId()}`, passwordCost: FIXTURE_PASSWORD_COST });
}

const jwtOf = async (userId: string) => (await stack.identity.jwt.sign(userId, randomUUID())).token;

describe('across two web processes', () => {
  it('a key limited to 3 rpm gets exactly 3 answers, then 429 rate_limited with Retry-After and the RateLimit fields', async () => {
    const user = await member();
    const { key } = await limitedKey(user.id, 3);
    const answers = await alternate(7, key, 'GET', '/api/auth/verify');
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 429, 429, 429, 429]);
    for (const answer of answers) expect(answer.policy).toBe('"rpm";q=3;w=60');
    // GCRA: the whole limit at once, then one request back every 20 s. While some remain, t is
    // when all are back; at none, when the next one is (what Retry-After says).
    const [first, second, third] = answers.map(fields);
    expect(first).toEqual({ r: 2, t: 20 });
    expect(second!.r).toBe(1);
    expect(second!.t).toBeGreaterThanOrEqual(39);
    expect(second!.t).toBeLessThanOrEqual(40);
    expect(third!.r).toBe(0);
    expect(third!.t).toBeGreaterThanOrEqual(19);
    expect(third!.t).toBeLessThanOrEqual(20);
    for (const refused of answers.slice(3)) {
      expect(refused.body).toEqual({ error: 'rate_limited', message: expect.stringContaining('3 requests per minute') });
      const retryAfter = Number(refused.retryAfter);
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(20);
      expect(refused.limit).toBe(`"rpm";r=0;t=${retryAfter}`);
    }
  });

  it("a JWT is limited by its user's rate_limit_rpm; each of the user's keys is capped by it and counted on its own", async () => {
    const user = await member();
    // A key with a higher limit of its own, set before the user's.
    const { key } = await limitedKey(user.id, 50);
    const set = await call(stack.urls[1]!, admin.key, 'PATCH', `/api/admin/users/${user.id}`, { rate_limit_rpm: 2 });
    expect(set.status).toBe(200);
    const jwt = await jwtOf(user.id);
    const answers = await alternate(4, jwt, 'GET', '/api/auth/verify');
    expect(answers.map((a) => a.status)).toEqual([200, 200, 429, 429]);
    expect(answers[0]!.policy).toBe('"rpm";q=2;w=60');
    // The key is held to the user's limit, and counted on its own (the JWT's requests are not its).
    const keyed = await alternate(3, key, 'GET', '/api/auth/verify');
    expect(keyed.map((a) => a.status)).toEqual([200, 200, 429]);
    expect(keyed[0]!.policy).toBe('"rpm";q=2;w=60');
  });

  it('/v1/models (in OpenAI\'s error shape) and /mcp are counted too', async () => {
    const user = await member();
    const { key: openAi } = await limitedKey(user.id, 2);
    const models = await alternate(3, openAi, 'GET', '/v1/models');
    expect(models.map((a) => a.status)).toEqual([200, 200, 429]);
    expect(models[0]!.policy).toBe('"rpm";q=2;w=60');
    expect(models[2]!.body).toEqual({ error: { message: expect.stringContaining('2 requests per minute'), type: 'rate_limit_error', code: 'rate_limited', param: null } });
    expect(Number(models[2]!.retryAfter)).toBeGreaterThanOrEqual(1);

    const { key: mcp } = await limitedKey(user.id, 2);
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const calls = await alternate(3, mcp, 'POST', '/mcp', list, { accept: 'application/json, text/event-stream' });
    expect(calls.map((a) => a.status)).toEqual([200, 200, 429]);
    expect(calls.map((a) => a.policy)).toEqual(Array(3).fill('"rpm";q=2;w=60'));
    expect(calls[2]!.body).toMatchObject({ error: 'rate_limited' });
    expect(Number(calls[2]!.retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('an unlimited credential gets no RateLimit fields; a limited one gets them on errors too', async () => {
    const user = await member();
    const { key: free } = await limitedKey(user.id, null);
    const missing = `/api/agents/${randomUUID()}`;
    for (const answer of [...(await alternate(2, free, 'GET', '/api/auth/verify')), ...(await alternate(2, free, 'GET', missing))]) {
      expect(answer.status).toBeLessThan(500);
      expect(answer.policy).toBeNull();
      expect(answer.limit).toBeNull();
    }
    const { key: limited } = await limitedKey(user.id, 100);
    const notFound = await call(stack.urls[0]!, limited, 'GET', missing);
    expect(notFound.status).toBe(404);
    expect(notFound.policy).toBe('"rpm";q=100;w=60');
    const invalid = await call(stack.urls[1]!, limited, 'POST', '/api/agents', { name: '' });
    expect(invalid.status).toBe(422);
    expect(fields(invalid).r).toBe(98);
  });

  it('a key of 100,000 rpm is reserved in batches of 100 per process: answered, r counts the batch the other process holds', async () => {
    const user = await member();
    const { key } = await limitedKey(user.id, 100_000);
    const started = performance.now();
    const [first, second] = [await call(stack.urls[0]!, key, 'GET', '/api/auth/verify'), await call(stack.urls[1]!, key, 'GET', '/api/auth/verify')];
    const elapsed = performance.now() - started;
    const answers = [first!, second!, ...(await alternate(30, key, 'GET', '/api/auth/verify'))];
    for (const answer of answers) {
      expect(answer.status).toBe(200);
      expect(answer.policy).toBe('"rpm";q=100000;w=60');
      expect(fields(answer).r).toBeLessThanOrEqual(99_999);
      expect(fields(answer).r).toBeGreaterThan(99_500);
    }
    // The first process reserved 100 (r: 99,900 left in Redis + the 99 it holds); the second reserves 100
    // more, so sees at most 99,800 left + a request back per 0.6 ms since, + its own 99.
    expect(fields(first!)).toEqual({ r: 99_999, t: 1 });
    expect(fields(second!).r).toBeLessThanOrEqual(99_899 + Math.floor(elapsed / 0.6) + 1);
  });

  it("a changed limit reaches the other process's warm cache: a key's, then its user's (JWT too), then cleared", async () => {
    const user = await member();
    const { id, key } = await limitedKey(user.id, null);
    const jwt = await jwtOf(user.id);
    // Both processes hold the key and the user in their caches.
    for (const answer of [...(await alternate(2, key, 'GET', '/api/auth/verify')), ...(await alternate(2, jwt, 'GET', '/api/auth/verify'))]) {
      expect(answer.policy).toBeNull();
    }
    const policyOn = (url: string, token: string, expected: string | null) =>
      eventually(async () => (await call(url, token, 'GET', '/api/auth/verify')).policy === expected, `policy ${expected} on ${url}`, { timeoutMs: 5000 });

    expect((await call(stack.urls[0]!, key, 'PATCH', `/api/me/api-keys/${id}`, { rate_limit_rpm: 50 })).status).toBe(200);
    await policyOn(stack.urls[1]!, key, '"rpm";q=50;w=60');

    expect((await call(stack.urls[1]!, admin.key, 'PATCH', `/api/admin/users/${user.id}`, { rate_limit_rpm: 40 })).status).toBe(200);
    await policyOn(stack.urls[0]!, key, '"rpm";q=40;w=60');
    await policyOn(stack.urls[0]!, jwt, '"rpm";q=40;w=60');

    expect((await call(stack.urls[0]!, admin.key, 'PATCH', `/api/admin/api-keys/${id}`, { rate_limit_rpm: 30 })).status).toBe(200);
    await policyOn(stack.urls[1]!, key, '"rpm";q=30;w=60');

    expect((await call(stack.urls[0]!, admin.key, 'PATCH', `/api/admin/users/${user.id}`, { rate_limit_rpm: null })).status).toBe(200);
    await policyOn(stack.urls[1]!, jwt, null);
    expect((await call(stack.urls[1]!, admin.key, 'PATCH', `/api/admin/api-keys/${id}`, { rate_limit_rpm: null })).status).toBe(200);
    await policyOn(stack.urls[0]!, key, null);
  });
});

/** On a Redis Cluster (DESIGN §13): the script's one key carries the user's hash tag. */
describe('DEFAULT_RATE_LIMIT_RPM (on a Redis Cluster)', () => {
  let limited: Stack;
  beforeAll(async () => {
    limited = await startStack({ webs: 1, workers: 0, env: { DEFAULT_RATE_LIMIT_RPM: '4', ...redisEnv('cluster') } });
  });
  afterAll(() => limited?.stop());

  it('applies to a key and a JWT whose key and user set none; a limit of their own (higher or lower) replaces it', async () => {
    const user = await createUser(limited.identity.models, { email: `default-${uniqueId()}@example.test`, password: `pw-${uniqueId()}`, passwordCost: FIXTURE_PASSWORD_COST });
    const { key } = await limited.identity.apiKeys.create(user.id, { name: 'no limit of its own' });
    const answers: Answer[] = [];
    for (let i = 0; i < 5; i++) answers.push(await call(limited.url, key, 'GET', '/api/auth/verify'));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 429]);
    expect(answers[0]!.policy).toBe('"rpm";q=4;w=60');

    const jwt = (await limited.identity.jwt.sign(user.id, randomUUID())).token;
    expect((await call(limited.url, jwt, 'GET', '/api/auth/verify')).policy).toBe('"rpm";q=4;w=60');

    const { key: own } = await limited.identity.apiKeys.create(user.id, { name: 'own', rate_limit_rpm: 10 });
    expect((await call(limited.url, own, 'GET', '/api/auth/verify')).policy).toBe('"rpm";q=10;w=60');
    const { key: lower } = await limited.identity.apiKeys.create(user.id, { name: 'lower', rate_limit_rpm: 2 });
    expect((await call(limited.url, lower, 'GET', '/api/auth/verify')).policy).toBe('"rpm";q=2;w=60');
  });
});

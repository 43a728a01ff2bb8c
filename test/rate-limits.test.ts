import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_HELD, RateLimiter, rateLimitBatch, type LimitedCaller, type RateDecision } from '../src/limits/rate-limits.js';
import { startTestApp, uniqueId, type TestApp } from './support/app.js';

/**
 * Limits on keys and users (DESIGN §18): `rate_limit_rpm` and `token_budget` as settings: who may
 * set them, what is refused (in FastAPI's 422 shape), what the records show, the audit log, and the
 * rate limit itself on one web process (test/rate-limits.e2e.test.ts has it across two), and the
 * limiter's batches against the real Redis (limiters standing in for web processes).
 */
let app: TestApp;
let admin: { token: string; user: { id: string } };

beforeAll(async () => {
  app = await startTestApp();
  admin = await app.signedInUser('admin');
});
afterAll(() => app.close());

const ISO = /^\d{4}-\d{2}-\d{2}T00:00:00\.000Z$/;

/** A signed-in member with a full-access key. */
async function member(role: 'member' | 'restricted' = 'member') {
  const signed = await app.signedInUser(role);
  return signed;
}

async function ownKey(token: string, body: Record<string, unknown> = {}) {
  const res = await app.request('POST', '/api/me/api-keys', { token, body: { name: 'limited', ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body as { id: string; key: string } & Record<string, unknown>;
}

const patchUser = (id: string, body: unknown, token = admin.token) => app.request('PATCH', `/api/admin/users/${id}`, { token, body });

describe('settings on keys', () => {
  it('a key is created with both limits, shows them with its token usage, and a PATCH changes or clears them', async () => {
    const { token } = await member();
    const created = await ownKey(token, { rate_limit_rpm: 120, token_budget: { limit: 50_000, period: 'day' } });
    expect(created).toMatchObject({ rate_limit_rpm: 120, token_budget: { limit: 50_000, period: 'day' } });
    expect(created.token_usage).toEqual({ used: 0, period_start: expect.stringMatching(ISO), resets_at: expect.stringMatching(ISO) });
    const usage = created.token_usage as { period_start: string; resets_at: string };
    expect(Date.parse(usage.resets_at) - Date.parse(usage.period_start)).toBe(24 * 3600 * 1000);

    const monthly = await app.request('PATCH', `/api/me/api-keys/${created.id}`, { token, body: { token_budget: { limit: 7, period: 'month' } } });
    expect(monthly.status).toBe(200);
    expect(monthly.body).toMatchObject({ rate_limit_rpm: 120, token_budget: { limit: 7, period: 'month' } });
    expect(monthly.body.token_usage.period_start).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);

    const cleared = await app.request('PATCH', `/api/me/api-keys/${created.id}`, { token, body: { rate_limit_rpm: null, token_budget: null } });
    expect(cleared.body).toMatchObject({ rate_limit_rpm: null, token_budget: null, token_usage: null });

    const plain = await ownKey(token);
    expect(plain).toMatchObject({ rate_limit_rpm: null, token_budget: null, token_usage: null });
    const list = await app.request('GET', '/api/me/api-keys', { token });
    expect(list.body.items.map((k: { id: string }) => k.id).sort()).toEqual([created.id, plain.id].sort());
    for (const item of list.body.items) expect(item).toHaveProperty('token_usage', null);
  });

  it('token_usage shows what runs charged to the budget this period', async () => {
    const { token, user } = await member();
    const key = await ownKey(token, { token_budget: { limit: 1000, period: 'day' } });
    // A model call's use, settled as a call that held no reservation is (DESIGN §21).
    await app.services.budgets.settle([{ scope: 'key', id: key.id, userId: user.id, limit: 1000, period: 'day' }], { callId: 'call', tokens: 0 }, 321);
    const list = await app.request('GET', '/api/me/api-keys', { token });
    expect(list.body.items[0].token_usage.used).toBe(321);
    const adminList = await app.request('GET', `/api/admin/api-keys?user_id=${user.id}`, { token: admin.token });
    expect(adminList.body.items[0]).toMatchObject({ user_id: user.id, token_budget: { limit: 1000, period: 'day' }, token_usage: { used: 321 } });
  });

  it('an admin sets any key\'s limits; the admin key list shows them', async () => {
    const { token, user } = await member();
    const key = await ownKey(token);
    const patched = await app.request('PATCH', `/api/admin/api-keys/${key.id}`, { token: admin.token, body: { rate_limit_rpm: 30, token_budget: { limit: 10, period: 'month' } } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ user_id: user.id, rate_limit_rpm: 30, token_budget: { limit: 10, period: 'month' }, token_usage: { used: 0 } });
    const listed = await app.request('GET', `/api/admin/api-keys?user_id=${user.id}`, { token: admin.token });
    expect(listed.body.items[0]).toMatchObject({ id: key.id, rate_limit_rpm: 30 });
  });
});

const BAD_RPM: [string, unknown, string][] = [
  ['zero', 0, 'greater_than_equal'],
  ['above 100,000', 100_001, 'less_than_equal'],
  ['a fraction', 1.5, 'int_from_float'],
  ['a string', '10', 'int_type'],
  ['negative', -5, 'greater_than_equal'],
  ['a boolean', true, 'int_type'],
  ['an object', { rpm: 5 }, 'int_type'],
  ['past a double', 1e308, 'less_than_equal'],
];
const BAD_BUDGETS: [string, unknown, (string | number)[], string][] = [
  ['limit 0', { limit: 0, period: 'day' }, ['body', 'token_budget', 'limit'], 'greater_than_equal'],
  ['limit above 10^12', { limit: 1e12 + 1, period: 'day' }, ['body', 'token_budget', 'limit'], 'less_than_equal'],
  ['a fractional limit', { limit: 2.5, period: 'day' }, ['body', 'token_budget', 'limit'], 'int_from_float'],
  ['a string limit', { limit: '100', period: 'day' }, ['body', 'token_budget', 'limit'], 'int_type'],
  ['an unknown period', { limit: 10, period: 'week' }, ['body', 'token_budget', 'period'], 'literal_error'],
  ['no period', { limit: 10 }, ['body', 'token_budget', 'period'], 'missing'],
  ['an extra field', { limit: 10, period: 'day', rollover: true }, ['body', 'token_budget', 'rollover'], 'extra_forbidden'],
  ['a number', 1000, ['body', 'token_budget'], 'model_attributes_type'],
  // valibot reads a list as an object without fields: still a 422 at the budget, by its first field.
  ['a list', [1000, 'day'], ['body', 'token_budget', 'limit'], 'missing'],
];

describe('out-of-range limits → 422 in FastAPI shape, on every endpoint that takes them', () => {
  let token: string;
  let keyId: string;
  let userId: string;
  beforeAll(async () => {
    const signed = await member();
    token = signed.token;
    userId = signed.user.id;
    keyId = (await ownKey(token)).id;
  });
  const endpoints = () =>
    [
      ['POST /api/me/api-keys', (body: Record<string, unknown>) => app.request('POST', '/api/me/api-keys', { token, body: { name: 'bad', ...body } })],
      ['PATCH /api/me/api-keys/{id}', (body: Record<string, unknown>) => app.request('PATCH', `/api/me/api-keys/${keyId}`, { token, body })],
      ['PATCH /api/admin/api-keys/{id}', (body: Record<string, unknown>) => app.request('PATCH', `/api/admin/api-keys/${keyId}`, { token: admin.token, body })],
      ['PATCH /api/admin/users/{id}', (body: Record<string, unknown>) => patchUser(userId, body)],
    ] as const;

  it.each(BAD_RPM)('rate_limit_rpm %s', async (_name, value, type) => {
    for (const [where, send] of endpoints()) {
      const res = await send({ rate_limit_rpm: value });
      expect(res.status, where).toBe(422);
      expect(res.body.detail[0], where).toMatchObject({ loc: ['body', 'rate_limit_rpm'], type });
    }
  });

  it.each(BAD_BUDGETS)('token_budget with %s', async (_name, value, loc, type) => {
    for (const [where, send] of endpoints()) {
      const res = await send({ token_budget: value });
      expect(res.status, where).toBe(422);
      expect(res.body.detail[0], where).toMatchObject({ loc, type });
    }
  });

  it('the bounds themselves are accepted (1 and 100,000 rpm; a budget of 1 and of 10^12)', async () => {
    for (const [where, send] of endpoints()) {
      for (const body of [{ rate_limit_rpm: 1, token_budget: { limit: 1, period: 'day' } }, { rate_limit_rpm: 100_000, token_budget: { limit: 1e12, period: 'month' } }]) {
        const res = await send(body);
        expect(res.status, `${where} ${res.text}`).toBeLessThan(300);
        expect(res.body, where).toMatchObject(body);
      }
      if (where !== 'POST /api/me/api-keys') await send({ rate_limit_rpm: null, token_budget: null });
    }
  });

  it('a number too large for JSON (1e400) and a limit typed as text are refused, not stored', async () => {
    const raw = await app.request('PATCH', `/api/me/api-keys/${keyId}`, { token, raw: '{"rate_limit_rpm": 1e400}' });
    expect(raw.status).toBe(422);
    const text = await app.request('PATCH', `/api/me/api-keys/${keyId}`, { token, raw: '{"token_budget": {"limit": "1e3", "period": "day"}}' });
    expect(text.status).toBe(422);
    const stored = await app.services.models.ApiKey.query().findById(keyId);
    expect(stored).toMatchObject({ rate_limit_rpm: null, token_budget: null });
  });
});

describe('who may set limits', () => {
  it('a restricted user cannot set limits on keys (it cannot write keys at all)', async () => {
    const restricted = await member('restricted');
    const key = await app.services.apiKeys.create(restricted.user.id, { name: 'given' });
    const create = await app.request('POST', '/api/me/api-keys', { token: restricted.token, body: { name: 'x', rate_limit_rpm: 10 } });
    expect(create.status).toBe(403);
    expect(create.body.error).toBe('forbidden');
    const patch = await app.request('PATCH', `/api/me/api-keys/${key.id}`, { token: restricted.token, body: { rate_limit_rpm: null } });
    expect(patch.status).toBe(403);
    const viaKey = await app.request('PATCH', `/api/me/api-keys/${key.id}`, { token: key.key, body: { rate_limit_rpm: 100_000 } });
    expect(viaKey.status).toBe(403);
  });

  it('a member cannot change their own user limits: PATCH /api/admin/users/{own id} → 403, nothing changes', async () => {
    const { token, user } = await member();
    await patchUser(user.id, { rate_limit_rpm: 5 });
    const key = await ownKey(token);
    for (const credential of [token, key.key]) {
      const res = await patchUser(user.id, { rate_limit_rpm: 100_000, token_budget: null }, credential);
      expect(res.status).toBe(403);
      expect(res.body.error).toBe('forbidden');
    }
    expect((await app.services.models.User.query().findById(user.id))!.rate_limit_rpm).toBe(5);
  });

  it('a scoped key cannot lift its own limit (changing keys needs full access)', async () => {
    const { token } = await member();
    const chat = await ownKey(token, { scopes: 'chat', rate_limit_rpm: 2 });
    const res = await app.request('PATCH', `/api/me/api-keys/${chat.id}`, { token: chat.key, body: { rate_limit_rpm: null } });
    expect(res.status).toBe(403);
  });
});

describe("a key may not exceed its user's limits", () => {
  it("rate_limit_rpm above the user's → 422 naming the user's limit (create, own PATCH and admin PATCH); at or below it is fine", async () => {
    const { token, user } = await member();
    expect((await patchUser(user.id, { rate_limit_rpm: 10 })).body.rate_limit_rpm).toBe(10);
    const over = await app.request('POST', '/api/me/api-keys', { token, body: { name: 'greedy', rate_limit_rpm: 11 } });
    expect(over.status).toBe(422);
    expect(over.body.detail).toEqual([
      { loc: ['body', 'rate_limit_rpm'], msg: expect.stringContaining('10'), type: 'less_than_equal', input: 11, ctx: { le: 10 } },
    ]);
    expect(over.body.detail[0].msg).toMatch(/user/);
    const key = await ownKey(token, { rate_limit_rpm: 10 });
    expect((await app.request('PATCH', `/api/me/api-keys/${key.id}`, { token, body: { rate_limit_rpm: 100_000 } })).status).toBe(422);
    expect((await app.request('PATCH', `/api/admin/api-keys/${key.id}`, { token: admin.token, body: { rate_limit_rpm: 11 } })).status).toBe(422);
    expect((await app.request('PATCH', `/api/me/api-keys/${key.id}`, { token, body: { rate_limit_rpm: 3 } })).body.rate_limit_rpm).toBe(3);
    // Clearing is always allowed: the user's limit then applies.
    expect((await app.request('PATCH', `/api/me/api-keys/${key.id}`, { token, body: { rate_limit_rpm: null } })).status).toBe(200);
  });

  it("a token budget above the user's of the same period → 422; another period, or at most the user's, is fine", async () => {
    const { token, user } = await member();
    await patchUser(user.id, { token_budget: { limit: 1000, period: 'day' } });
    const over = await app.request('POST', '/api/me/api-keys', { token, body: { name: 'greedy', token_budget: { limit: 1001, period: 'day' } } });
    expect(over.status).toBe(422);
    expect(over.body.detail[0]).toMatchObject({ loc: ['body', 'token_budget', 'limit'], type: 'less_than_equal', ctx: { le: 1000 } });
    expect(over.body.detail[0].msg).toContain('1000');
    expect((await ownKey(token, { token_budget: { limit: 1000, period: 'day' } })).token_budget).toEqual({ limit: 1000, period: 'day' });
    expect((await ownKey(token, { token_budget: { limit: 5000, period: 'month' } })).token_budget).toEqual({ limit: 5000, period: 'month' });
  });

  it("lowering a user's limit below its keys' is allowed: the lower one binds (the principal takes the minimum)", async () => {
    const { token, user } = await member();
    const key = await ownKey(token, { rate_limit_rpm: 50 });
    expect((await patchUser(user.id, { rate_limit_rpm: 5 })).status).toBe(200);
    const verify = await app.request('GET', '/api/auth/verify', { token: key.key });
    expect(verify.headers.get('ratelimit-policy')).toBe('"rpm";q=5;w=60');
  });
});

describe('settings on users (admin)', () => {
  it('PATCH sets and clears both; every admin user record shows them with token_usage; the audit log records each change', async () => {
    const { user } = await member();
    const set = await patchUser(user.id, { rate_limit_rpm: 600, token_budget: { limit: 2_000_000, period: 'month' } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ id: user.id, rate_limit_rpm: 600, token_budget: { limit: 2_000_000, period: 'month' }, token_usage: { used: 0 } });
    expect(set.body.token_usage.period_start).toMatch(/^\d{4}-\d{2}-01T00:00:00\.000Z$/);
    const read = await app.request('GET', `/api/admin/users/${user.id}`, { token: admin.token });
    expect(read.body).toMatchObject({ rate_limit_rpm: 600, token_budget: { limit: 2_000_000, period: 'month' }, counts: { api_keys: 0 } });
    const listed = await app.request('GET', `/api/admin/users?q=${encodeURIComponent(user.email)}`, { token: admin.token });
    expect(listed.body.items[0]).toMatchObject({ id: user.id, rate_limit_rpm: 600, token_usage: { used: 0 } });
    const created = await app.request('POST', '/api/admin/users', { token: admin.token, body: { email: `new-${user.id}@example.test`, role: 'member' } });
    expect(created.body).toMatchObject({ rate_limit_rpm: null, token_budget: null, token_usage: null });

    const cleared = await patchUser(user.id, { rate_limit_rpm: null, token_budget: null });
    expect(cleared.body).toMatchObject({ rate_limit_rpm: null, token_budget: null, token_usage: null });

    const log = await app.request('GET', `/api/admin/audit-log?target_id=${user.id}&action=user.update`, { token: admin.token });
    const details = log.body.items.map((e: { details: Record<string, unknown> }) => e.details).reverse();
    expect(details).toEqual([
      { email: user.email, rate_limit_rpm: { from: null, to: 600 }, token_budget: { from: null, to: { limit: 2_000_000, period: 'month' } } },
      { email: user.email, rate_limit_rpm: { from: 600, to: null }, token_budget: { from: { limit: 2_000_000, period: 'month' }, to: null } },
    ]);
  });

  it("a key's limit changes are audited as api_key.update with their before and after", async () => {
    const { token } = await member();
    const key = await ownKey(token, { rate_limit_rpm: 7 });
    await app.request('PATCH', `/api/me/api-keys/${key.id}`, { token, body: { rate_limit_rpm: 8, token_budget: { limit: 9, period: 'day' } } });
    // The same values again: no change to record.
    await app.request('PATCH', `/api/me/api-keys/${key.id}`, { token, body: { token_budget: { limit: 9, period: 'day' } } });
    const log = await app.request('GET', `/api/admin/audit-log?target_id=${key.id}`, { token: admin.token });
    const [second, first, create] = log.body.items as { action: string; details: Record<string, any> }[];
    expect(create!.action).toBe('api_key.create');
    expect(create!.details).toMatchObject({ rate_limit_rpm: 7 });
    expect(first!.details.changes).toEqual({ rate_limit_rpm: { from: 7, to: 8 }, token_budget: { from: null, to: { limit: 9, period: 'day' } } });
    expect(second!.details.changes).toEqual({});
  });
});

describe('the rate limit on one web process', () => {
  it('a key limited to 3 rpm: 3 answers, then 429 rate_limited with Retry-After and the RateLimit fields', async () => {
    const { token } = await member();
    const key = await ownKey(token, { rate_limit_rpm: 3 });
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await app.request('GET', '/api/auth/verify', { token: key.key }));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 429, 429]);
    expect(answers.map((r) => r.headers.get('ratelimit-policy'))).toEqual(Array(5).fill('"rpm";q=3;w=60'));
    expect(answers.map((r) => /r=(\d+)/.exec(r.headers.get('ratelimit')!)![1])).toEqual(['2', '1', '0', '0', '0']);
    const refused = answers[3]!;
    expect(refused.body).toEqual({ error: 'rate_limited', message: expect.stringContaining('3 requests per minute') });
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(19);
    expect(retryAfter).toBeLessThanOrEqual(20);
    expect(refused.headers.get('ratelimit')).toBe(`"rpm";r=0;t=${retryAfter}`);
    expect(app.logs.join('')).toMatch(/"cause":"rate limit: 3 rpm for key svc_/);
  });

  it('a credential without a limit gets no RateLimit fields, and its requests touch no rate state', async () => {
    const { token, user } = await member();
    const key = await ownKey(token);
    const res = await app.request('GET', '/api/auth/verify', { token: key.key });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toBeNull();
    expect(res.headers.get('ratelimit-policy')).toBeNull();
    expect(await app.services.redis.exists(app.services.keys.rateLimit(user.id, 'key', key.id))).toBe(0);
  });
});

describe('browsers', () => {
  it('with CORS_ORIGINS set, a page may read RateLimit and RateLimit-Policy (and Retry-After)', async () => {
    const origin = 'http://app.example.test';
    const cors = await startTestApp({ env: { CORS_ORIGINS: origin } });
    try {
      const { token } = await cors.signedInUser();
      const { key } = (await cors.request('POST', '/api/me/api-keys', { token, body: { name: 'page', rate_limit_rpm: 60 } })).body;
      const res = await cors.request('GET', '/api/auth/verify', { token: key, headers: { origin } });
      expect(res.headers.get('ratelimit')).toMatch(/^"rpm";r=59;t=\d+$/);
      const exposed = (res.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
      expect(exposed).toEqual(expect.arrayContaining(['ratelimit', 'ratelimit-policy', 'retry-after']));
    } finally {
      await cors.close();
    }
  });
});

/** A limiter on the app's Redis that counts its script calls (the wanted count of each), on `clock` if given. */
function countingLimiter(clock?: TestClock) {
  const redis = app.services.redis;
  const calls: number[] = [];
  const limiter = new RateLimiter(
    {
      rateLimit: (key, limit, periodMs, wanted) => {
        calls.push(wanted);
        return redis.rateLimit(key, limit, periodMs, wanted);
      },
    },
    app.services.keys,
    clock?.nowUs,
  );
  return { limiter, calls };
}

/**
 * A limiter's clock (µs) that the test moves, so no assertion depends on how fast the machine is: real
 * time plus what the test added (never behind Redis's clock, so GCRA's bound still holds), or `frozen`
 * at its start plus what the test added.
 */
function testClock(mode: 'real' | 'frozen' = 'real') {
  const startUs = performance.now() * 1000;
  let addedUs = 0;
  return {
    nowUs: () => (mode === 'frozen' ? startUs : performance.now() * 1000) + addedUs,
    advance: (ms: number) => void (addedUs += ms * 1000),
  };
}
type TestClock = ReturnType<typeof testClock>;

const caller = (rpm: number): LimitedCaller => ({ user: { id: `u-${uniqueId()}` }, kind: 'api_key', keyId: randomUUID(), keyPrefix: 'svc_test', rateLimitRpm: rpm });
const admittedOf = (decisions: (RateDecision | undefined)[]) => decisions.filter((d) => d!.admitted).length;
async function sequential(limiter: RateLimiter, who: LimitedCaller, count: number) {
  const decisions: RateDecision[] = [];
  for (let i = 0; i < count; i++) decisions.push((await limiter.take(who))!);
  return decisions;
}
const concurrent = (limiter: RateLimiter, who: LimitedCaller, count: number) => Promise.all(Array.from({ length: count }, () => limiter.take(who)));
/** GCRA's interval in ms for a limit per minute. */
const intervalMs = (rpm: number) => Math.ceil(60_000_000 / rpm) / 1000;

describe('batches: a web process reserves limit/1000 requests at a time (real Redis)', () => {
  it('the batch is 0.1 % of the limit, at least 1: every limit below 2,000 rpm is counted request by request', () => {
    expect([1, 3, 999, 1000, 1999, 2000, 2999, 60_000, 100_000].map(rateLimitBatch)).toEqual([1, 1, 1, 1, 1, 2, 2, 60, 100]);
  });

  it('a small limit stays exact: N admitted, then refused, one script call each, nothing held', async () => {
    const { limiter, calls } = countingLimiter();
    const who = caller(5);
    const decisions = await sequential(limiter, who, 7);
    expect(decisions.map((d) => d.admitted)).toEqual([true, true, true, true, true, false, false]);
    expect(decisions.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0, 0, 0]);
    expect(decisions[5]!.waitSeconds).toBeGreaterThanOrEqual(11);
    expect(decisions[5]!.waitSeconds).toBeLessThanOrEqual(12);
    expect(calls).toEqual([1, 1, 1, 1, 1, 1, 1]);
    expect(limiter.size).toBe(0);
  });

  it('concurrent requests of a small limit: one call at a time, the waiting ones asked for together; exactly the limit admitted', async () => {
    const { limiter, calls } = countingLimiter();
    const decisions = await concurrent(limiter, caller(10), 25);
    expect(admittedOf(decisions)).toBe(10);
    // The first request's call, then one for the 24 that arrived while it was out.
    expect(calls).toEqual([1, 24]);
    expect(decisions.slice(0, 10).map((d) => d!.remaining)).toEqual([9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    for (const refused of decisions.slice(10)) expect(refused).toMatchObject({ admitted: false, remaining: 0, waitSeconds: 6 });
  });

  it('a large limit (100,000 rpm) costs one script call per batch of 100', async () => {
    const { limiter, calls } = countingLimiter();
    const decisions = await sequential(limiter, caller(100_000), 500);
    expect(admittedOf(decisions)).toBe(500);
    expect(calls.length).toBeGreaterThanOrEqual(5);
    expect(calls.length).toBeLessThanOrEqual(Math.ceil(500 / 100) + 2);
    for (const wanted of calls) expect(wanted).toBe(100);
    // r: Redis's remaining at the reservation plus what this process still holds.
    expect(decisions[0]).toMatchObject({ admitted: true, limit: 100_000, remaining: 99_999, waitSeconds: 0 });
    // (Held requests whose moments passed during the round trip are dropped: r may step by a few.)
    expect(decisions[1]!.remaining).toBeLessThanOrEqual(99_998);
    expect(decisions[1]!.remaining).toBeGreaterThan(99_900);
    for (const d of decisions) expect(d.remaining).toBeLessThanOrEqual(99_999);
  });

  it('concurrent requests of one credential coalesce into one reservation', async () => {
    const { limiter, calls } = countingLimiter();
    const decisions = await concurrent(limiter, caller(100_000), 60);
    expect(admittedOf(decisions)).toBe(60);
    expect(calls).toEqual([100]);
    // 250 at once: the first one's batch serves up to 100 (less what passed during the round trip), the
    // rest are asked for together in one more call.
    const more = countingLimiter();
    const many = await concurrent(more.limiter, caller(100_000), 250);
    expect(admittedOf(many)).toBe(250);
    expect(more.calls).toHaveLength(2);
    expect(more.calls[0]).toBe(100);
    expect(more.calls[1]).toBeGreaterThanOrEqual(150);
    expect(more.calls[1]).toBeLessThan(249);
    // r is this process's view (README): what it holds plus Redis's count at its last call, so it may repeat across the two batches.
    for (const d of many) expect(d!.remaining).toBeGreaterThan(99_000);
  });

  it('two limiters (two web processes) on one Redis never admit more than GCRA allows in total, and not much less', async () => {
    const rpm = 3000; // a batch of 3, a request back every 20 ms
    const a = countingLimiter();
    const b = countingLimiter();
    const who = caller(rpm);
    const hammer = async (limiter: RateLimiter) => {
      let admitted = 0;
      let refusedRounds = 0;
      while (refusedRounds < 3) {
        const round = admittedOf(await concurrent(limiter, who, 7));
        admitted += round;
        if (round === 0) refusedRounds++;
      }
      return admitted;
    };
    const started = performance.now();
    const [fromA, fromB] = await Promise.all([hammer(a.limiter), hammer(b.limiter)]);
    const elapsed = performance.now() - started;
    const total = fromA + fromB;
    expect(fromA).toBeGreaterThan(0);
    expect(fromB).toBeGreaterThan(0);
    expect(total).toBeLessThanOrEqual(rpm + Math.floor(elapsed / intervalMs(rpm)));
    // Refused early by at most what the other process holds (a batch).
    expect(total).toBeGreaterThanOrEqual(rpm - 2 * rateLimitBatch(rpm));
    // Batches: far fewer calls than requests.
    expect(a.calls.length + b.calls.length).toBeLessThan(total / 2);
  });

  it('a leftover lapses as its moments pass: after its batch\'s span the next request calls Redis again', async () => {
    const clock = testClock('frozen');
    const { limiter, calls } = countingLimiter(clock);
    const who = caller(100_000); // 100 requests, 0.6 ms apart: a fresh batch spans 60 ms
    await sequential(limiter, who, 2);
    expect(calls).toHaveLength(1);
    clock.advance(90);
    expect((await limiter.take(who))!.admitted).toBe(true);
    expect(calls).toHaveLength(2);
  });

  it('a leftover never adds to a fresh full burst: another process taking everything Redis has left plus this one spending its leftover stay within GCRA\'s bound', async () => {
    const rpm = 100_000;
    const clock = testClock();
    const a = countingLimiter(clock);
    const who = caller(rpm);
    expect((await a.limiter.take(who))!.admitted).toBe(true); // A holds 99 more, their moments 0.6 ms apart
    clock.advance(30); // on A's clock the moments of 50 of them pass
    // Another process takes all the room Redis has now, at once.
    const started = performance.now();
    const key = app.services.keys.rateLimit(who.user.id, 'key', who.keyId!);
    const [granted] = await app.services.redis.rateLimit(key, rpm, 60_000, 1_000_000);
    const callsBefore = a.calls.length;
    let fromA = 0;
    let fromLeftover = 0;
    for (let i = 0; i < 99; i++) {
      if (!(await a.limiter.take(who))!.admitted) continue;
      fromA++;
      if (a.calls.length === callsBefore) fromLeftover++;
    }
    const elapsed = performance.now() - started;
    expect(granted + fromA).toBeLessThanOrEqual(rpm + Math.floor(elapsed / intervalMs(rpm)));
    // Keeping all 99 would have been 50 too many: what A spent before asking Redis again is only what had not passed
    // (a slower machine only lets more pass; what Redis grants A afterwards is counted in the bound above).
    expect(fromLeftover).toBeLessThanOrEqual(99 - 50);
  });

  it('a changed limit drops what was held under the old one', async () => {
    const { limiter, calls } = countingLimiter();
    const who = caller(100_000);
    await limiter.take(who);
    const lower = await limiter.take({ ...who, rateLimitRpm: 50_000 });
    expect(lower).toMatchObject({ admitted: true, limit: 50_000 });
    expect(calls).toEqual([100, 50]);
  });

  it(`the limiter keeps at most ${MAX_HELD} credentials' reservations`, async () => {
    const { limiter } = countingLimiter();
    const count = MAX_HELD + 500;
    for (let i = 0; i < count; i += 500) {
      await Promise.all(Array.from({ length: Math.min(500, count - i) }, () => limiter.take(caller(100_000))));
      expect(limiter.size).toBeLessThanOrEqual(MAX_HELD);
    }
    expect(limiter.size).toBeGreaterThan(0);
  }, 30_000);
});

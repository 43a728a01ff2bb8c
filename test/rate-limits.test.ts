import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

/**
 * Limits on keys and users (DESIGN §18): `rate_limit_rpm` and `token_budget` as settings: who may
 * set them, what is refused (in FastAPI's 422 shape), what the records show, the audit log, and the
 * rate limit itself on one web process (test/rate-limits.e2e.test.ts has it across two).
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
    await app.services.budgets.charge([{ scope: 'key', id: key.id, userId: user.id, limit: 1000, period: 'day' }], 321);
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

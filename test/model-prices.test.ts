import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueId, type TestApp } from './support/app.js';
import { createDatabase } from './support/database.js';
import { RunStore } from '../src/engine/run-store.js';
import type { Usage } from '../src/shared/events.js';

/**
 * Model prices and run cost (DESIGN §18) on a database of its own, so its prices touch no other
 * test's runs: the admin endpoints' contract, who may call them, their audit entries and hostile
 * input; the cost the run store fixes when a run ends; and the usage report's cost, from the
 * rollup's whole days and from runs at the window's edges.
 */
let database: Awaited<ReturnType<typeof createDatabase>>;
let app: TestApp;
let admin: { token: string; user: { id: string } };

beforeAll(async () => {
  database = await createDatabase();
  app = await startTestApp({ env: { DATABASE_URL: database.url } });
  admin = await app.signedInUser('admin');
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

const PRICES = '/api/admin/model-prices';
const at = (model: string) => `${PRICES}/${encodeURIComponent(model)}`;
const model = () => `model-${uniqueId()}`;
const knex = () => app.services.knex;

const as = (token: string) => ({
  get: (path: string) => app.request('GET', path, { token }),
  put: (path: string, body?: unknown) => app.request('PUT', path, { token, body }),
  delete: (path: string) => app.request('DELETE', path, { token }),
});

describe('model prices: create, replace, read, list, delete', () => {
  it('PUT creates (201) then replaces (200); GET reads; DELETE → 204, then 404', async () => {
    const api = as(admin.token);
    const name = model();
    const created = await api.put(at(name), { input_per_million: 2.5, output_per_million: 10 });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ model: name, input_per_million: 2.5, output_per_million: 10, updated_at: expect.any(String) });
    const replaced = await api.put(at(name), { input_per_million: 0.15, output_per_million: 0.6 });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ model: name, input_per_million: 0.15, output_per_million: 0.6 });
    expect(Date.parse(replaced.body.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.updated_at));
    expect((await api.get(at(name))).body).toEqual(replaced.body);

    expect((await api.delete(at(name))).status).toBe(204);
    const gone = await api.get(at(name));
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual({ error: 'not_found', message: expect.stringContaining(name) });
    expect((await api.delete(at(name))).status).toBe(404);
    expect((await api.get(at(model()))).status).toBe(404);
  });

  it('keeps exact decimals, zero and the bounds', async () => {
    const api = as(admin.token);
    for (const [input, output] of [[0, 0], [1e-7, 0.000123], [1_000_000, 999_999.999999], [3.3, 1234.5678]]) {
      const name = model();
      const res = await api.put(at(name), { input_per_million: input, output_per_million: output });
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ input_per_million: input, output_per_million: output });
      expect((await api.get(at(name))).body).toMatchObject({ input_per_million: input, output_per_million: output });
    }
  });

  it('lists by model name, paged like every admin list', async () => {
    const api = as(admin.token);
    const prefix = `list-${uniqueId()}`;
    const names = ['c', 'a', 'b'].map((suffix) => `${prefix}-${suffix}`);
    for (const name of names) expect((await api.put(at(name), { input_per_million: 1, output_per_million: 2 })).status).toBe(201);
    const all = await api.get(`${PRICES}?size=100`);
    expect(all.status).toBe(200);
    const listed = all.body.items.map((p: { model: string }) => p.model);
    expect(listed).toEqual([...listed].sort());
    expect(listed.filter((m: string) => m.startsWith(prefix))).toEqual([...names].sort());
    const paged = await api.get(`${PRICES}?size=2&page=2`);
    expect(paged.body).toMatchObject({ page: 2, size: 2, total: all.body.total, pages: Math.ceil(all.body.total / 2) });
    expect(paged.body.items).toEqual(all.body.items.slice(2, 4));
    expect((await api.get(`${PRICES}?size=101`)).status).toBe(422);
    expect((await api.get(`${PRICES}?page=0`)).status).toBe(422);
  });

  it('a model name with "/" is sent as %2F; a raw "/" is another path', async () => {
    const api = as(admin.token);
    const name = `openai/gpt-4o-${uniqueId()}`;
    const created = await api.put(`${PRICES}/${name.replace('/', '%2F')}`, { input_per_million: 2.5, output_per_million: 10 });
    expect(created.status).toBe(201);
    expect(created.body.model).toBe(name);
    expect((await api.get(`${PRICES}/${name.replace('/', '%2f')}`)).body.model).toBe(name);
    // Unencoded, the slash splits the path: no route there.
    expect((await api.get(`${PRICES}/${name}`)).status).toBe(404);
    expect((await api.put(`${PRICES}/${name}`, { input_per_million: 1, output_per_million: 1 })).status).toBe(404);
    expect((await api.delete(at(name))).status).toBe(204);
  });

  it('two administrators creating one model at once: one 201, one 200, both recorded', async () => {
    const name = model();
    const second = await app.signedInUser('admin');
    const [a, b] = await Promise.all([
      as(admin.token).put(at(name), { input_per_million: 1, output_per_million: 1 }),
      as(second.token).put(at(name), { input_per_million: 2, output_per_million: 2 }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    const log = await as(admin.token).get(`/api/admin/audit-log?target_id=${name}`);
    expect(log.body.total).toBe(2);
    const [replace, create] = log.body.items;
    expect(create.details).not.toHaveProperty('from');
    expect(replace.details.from).toEqual(create.details.to);
  });
});

describe('who may set prices', () => {
  it('members, restricted users, keys without scope admin → 403; none → 401; an admin key of scope admin → allowed', async () => {
    const name = model();
    expect((await as(admin.token).put(at(name), { input_per_million: 1, output_per_million: 1 })).status).toBe(201);
    const member = await app.signedInUser('member');
    const restricted = await app.signedInUser('restricted');
    const memberKey = (await app.request('POST', '/api/me/api-keys', { token: member.token, body: { name: 'full' } })).body.key;
    const adminChatKey = (await app.request('POST', '/api/me/api-keys', { token: admin.token, body: { name: 'chat', scopes: 'chat kb agents connectors' } })).body.key;
    const adminKey = (await app.request('POST', '/api/me/api-keys', { token: admin.token, body: { name: 'ops', scopes: 'admin' } })).body.key;
    for (const token of [member.token, restricted.token, memberKey, adminChatKey]) {
      for (const [method, path, body] of [
        ['GET', PRICES],
        ['GET', at(name)],
        ['PUT', at(name), { input_per_million: 0, output_per_million: 0 }],
        ['PUT', at(model()), { input_per_million: 0, output_per_million: 0 }],
        ['DELETE', at(name)],
      ] as const) {
        const res = await app.request(method, path, { token, body });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect(res.body.error).toBe('forbidden');
      }
    }
    expect((await app.request('PUT', at(name), { body: { input_per_million: 0, output_per_million: 0 } })).status).toBe(401);
    // Nothing changed.
    expect((await as(admin.token).get(at(name))).body).toMatchObject({ input_per_million: 1, output_per_million: 1 });
    expect((await as(adminKey).put(at(name), { input_per_million: 3, output_per_million: 4 })).status).toBe(200);
    expect((await as(adminKey).get(PRICES)).status).toBe(200);
    expect((await as(adminKey).delete(at(name))).status).toBe(204);
  });
});

describe('the audit log', () => {
  it('records each set (with what it replaced) and each delete, by whom and with which credential', async () => {
    const ops = await app.signedInUser('admin');
    const key = (await app.request('POST', '/api/me/api-keys', { token: ops.token, body: { name: 'prices', scopes: 'admin' } })).body;
    const name = `vendor/${model()}`;
    await as(ops.token).put(at(name), { input_per_million: 1.25, output_per_million: 5 });
    await as(key.key).put(at(name), { input_per_million: 2, output_per_million: 8 });
    await as(ops.token).delete(at(name));
    // Refused changes leave no entry.
    await as(ops.token).put(at(name), { input_per_million: -1, output_per_million: 8 });
    await as(ops.token).delete(at(name));

    const log = await as(ops.token).get(`/api/admin/audit-log?actor_id=${ops.user.id}&target_id=${encodeURIComponent(name)}`);
    expect(log.status).toBe(200);
    const entries = [...log.body.items].reverse();
    expect(entries.map((e: { action: string; credential: string }) => `${e.action} ${e.credential}`)).toEqual([
      'model_price.set jwt',
      `model_price.set ${key.key_prefix}`,
      'model_price.delete jwt',
    ]);
    for (const entry of entries) expect(entry).toMatchObject({ actor_user_id: ops.user.id, target_type: 'model_price', target_id: name, ip: expect.any(String), request_id: expect.any(String) });
    expect(entries[0].details).toEqual({ model: name, to: { input_per_million: 1.25, output_per_million: 5 } });
    expect(entries[1].details).toEqual({ model: name, from: { input_per_million: 1.25, output_per_million: 5 }, to: { input_per_million: 2, output_per_million: 8 } });
    expect(entries[2].details).toEqual({ model: name, input_per_million: 2, output_per_million: 8 });
    expect((await as(ops.token).get('/api/admin/audit-log?action=model_price.delete')).body.total).toBeGreaterThanOrEqual(1);
  });
});

describe('hostile input', () => {
  it('bad prices and bodies → 422 naming the field, and nothing is stored', async () => {
    const api = as(admin.token);
    const name = model();
    const valid = { input_per_million: 1, output_per_million: 1 };
    const cases: [string, unknown, (string | number)[], string][] = [
      ['negative', { ...valid, input_per_million: -0.01 }, ['body', 'input_per_million'], 'greater_than_equal'],
      ['over the bound', { ...valid, output_per_million: 1_000_000.5 }, ['body', 'output_per_million'], 'less_than_equal'],
      ['a numeric string', { ...valid, input_per_million: '10' }, ['body', 'input_per_million'], 'float_type'],
      ['"NaN"', { ...valid, input_per_million: 'NaN' }, ['body', 'input_per_million'], 'float_type'],
      ['"Infinity"', { ...valid, output_per_million: 'Infinity' }, ['body', 'output_per_million'], 'float_type'],
      ['null', { ...valid, output_per_million: null }, ['body', 'output_per_million'], 'float_type'],
      ['a boolean', { ...valid, input_per_million: true }, ['body', 'input_per_million'], 'float_type'],
      ['an object', { ...valid, input_per_million: { $gt: 0 } }, ['body', 'input_per_million'], 'float_type'],
      ['missing output', { input_per_million: 1 }, ['body', 'output_per_million'], 'missing'],
      ['empty', {}, ['body', 'input_per_million'], 'missing'],
      ['an extra field', { ...valid, currency: 'EUR' }, ['body', 'currency'], 'extra_forbidden'],
      ['an extra model field', { ...valid, model: 'other' }, ['body', 'model'], 'extra_forbidden'],
    ];
    for (const [label, body, loc, type] of cases) {
      const res = await api.put(at(name), body);
      expect(res.status, label).toBe(422);
      expect(res.body.detail, label).toEqual(expect.arrayContaining([expect.objectContaining({ loc, type })]));
    }
    const raws: [string, string, string][] = [
      ['1e400 (Infinity once parsed)', '{"input_per_million": 1e400, "output_per_million": 1}', 'finite_number'],
      ['-1e400', '{"input_per_million": 1, "output_per_million": -1e400}', 'finite_number'],
      ['a 400-digit number', `{"input_per_million": ${'9'.repeat(400)}, "output_per_million": 1}`, 'finite_number'],
      ['NaN', '{"input_per_million": NaN, "output_per_million": 1}', 'json_invalid'],
      ['Infinity', '{"input_per_million": Infinity, "output_per_million": 1}', 'json_invalid'],
      ['an array', '[1, 2]', 'model_attributes_type'],
      ['a bare number', '5', 'model_attributes_type'],
    ];
    for (const [label, raw, type] of raws) {
      const res = await app.request('PUT', at(name), { token: admin.token, raw });
      expect(res.status, label).toBe(422);
      expect(res.body.detail.map((d: { type: string }) => d.type), label).toContain(type);
    }
    const bodiless = await app.request('PUT', at(name), { token: admin.token });
    expect(bodiless.status).toBe(422);
    expect(bodiless.body.detail[0]).toMatchObject({ loc: ['body'], type: 'missing' });
    expect((await api.get(at(name))).status).toBe(404);
    expect(await knex()('audit_log').where({ target_id: name }).first()).toBeUndefined();
  });

  it('model names: 200 characters are fine; longer, empty of meaning or of other characters → 422; unknown → 404', async () => {
    const api = as(admin.token);
    const longest = `m${'x'.repeat(199)}`;
    expect((await api.put(at(longest), { input_per_million: 1, output_per_million: 1 })).status).toBe(201);
    expect((await api.delete(at(longest))).status).toBe(204);
    const bad = [`m${'x'.repeat(200)}`, 'x'.repeat(10_000), 'gpt 4o', 'gpt*', 'a\u0000b', 'ünïcode', '<script>', "o'brien;--", '%E0%A4%A'];
    for (const name of bad) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const path = name === '%E0%A4%A' ? `${PRICES}/${name}` : at(name);
        const res = await app.request(method, path, { token: admin.token, body: method === 'PUT' ? { input_per_million: 1, output_per_million: 1 } : undefined });
        expect(res.status, `${method} ${name.slice(0, 20)}`).toBe(422);
        expect(res.body.detail[0].loc, name.slice(0, 20)).toEqual(['path', 'model']);
      }
    }
    for (const path of ['1e400', '%2E%2E', '..%2F..%2Fetc%2Fpasswd', '-1', 'no-such-model', randomUUID()].map((name) => `${PRICES}/${name}`)) {
      expect((await app.request('GET', path, { token: admin.token })).status, path).toBe(404);
      expect((await app.request('DELETE', path, { token: admin.token })).status, path).toBe(404);
    }
    expect(await knex()('model_prices').whereIn('model', bad.filter((name) => !name.includes('\u0000'))).first()).toBeUndefined();
  });
});

describe('cost', () => {
  const usage = (prompt: number, completion: number, reasoning = 0): Usage => ({ prompt_tokens: prompt, completion_tokens: completion, reasoning_tokens: reasoning, total_tokens: prompt + completion });

  /** A run stored, claimed and ended by the run store, as a worker ends one. */
  async function endedRun(userId: string, end: { model: string; usage: Usage; status: 'succeeded' | 'failed' | 'cancelled' }) {
    const store = new RunStore(knex(), app.services.models);
    const run = await store.create({ runId: randomUUID(), userId, conversationId: randomUUID(), agentId: null, mode: 'react', query: 'q', userMetadata: null, docMode: null, attachments: [] });
    expect(await store.claimAttempt(run.id, 1, 0)).toBe(true);
    Object.assign(run, { attempt: 1 });
    if (end.status === 'succeeded') await store.succeed(run, { answer: 'a', citations: [], finishReason: 'stop', usage: end.usage, durationMs: 1, model: end.model });
    else await store.fail(run, { status: end.status, error: null, usage: end.usage, durationMs: 1, model: end.model });
    return (await app.request('GET', `/api/admin/runs?user_id=${userId}&size=100`, { token: admin.token })).body.items.find((r: { id: string }) => r.id === run.id);
  }

  it('is fixed when a run ends, succeeded or not, at the price of that moment: (prompt × input + completion × output) / 1e6; null without a price', async () => {
    const { user } = await app.createUser();
    const priced = model();
    const free = model();
    await as(admin.token).put(at(priced), { input_per_million: 3, output_per_million: 15.5 });
    await as(admin.token).put(at(free), { input_per_million: 0, output_per_million: 0 });

    const succeeded = await endedRun(user.id, { model: priced, usage: usage(1200, 340, 100), status: 'succeeded' });
    // Reasoning tokens are part of the completion tokens: not charged twice.
    expect(succeeded.cost).toBeCloseTo((1200 * 3 + 340 * 15.5) / 1e6, 12);
    const cancelled = await endedRun(user.id, { model: priced, usage: usage(10, 0), status: 'cancelled' });
    expect(cancelled.cost).toBeCloseTo((10 * 3) / 1e6, 12);
    expect((await endedRun(user.id, { model: free, usage: usage(500, 500), status: 'failed' })).cost).toBe(0);
    expect((await endedRun(user.id, { model: model(), usage: usage(500, 500), status: 'succeeded' })).cost).toBeNull();
    // Names match exactly.
    expect((await endedRun(user.id, { model: priced.toUpperCase(), usage: usage(5, 5), status: 'succeeded' })).cost).toBeNull();

    // A later price change leaves ended runs as they were.
    await as(admin.token).put(at(priced), { input_per_million: 300, output_per_million: 300 });
    const reread = (await app.request('GET', `/api/admin/runs?user_id=${user.id}&size=100`, { token: admin.token })).body.items.find((r: { id: string }) => r.id === succeeded.id);
    expect(reread.cost).toBe(succeeded.cost);
    expect((await endedRun(user.id, { model: priced, usage: usage(1000, 1000), status: 'succeeded' })).cost).toBeCloseTo(0.6, 12);
  });

  it('the usage report sums known costs per row (rollup days and edge runs alike); null where no run had a price', async () => {
    const alice = await app.createUser();
    const bob = await app.createUser();
    const conversation = async (userId: string) => {
      const id = randomUUID();
      await knex()('conversations').insert({ id, user_id: userId, title: 't' });
      return id;
    };
    const seed = async (userId: string, rows: { createdAt: string; cost: number | null; status?: string }[]) => {
      const conversationId = await conversation(userId);
      for (const row of rows) {
        await knex()('runs').insert({ id: randomUUID(), user_id: userId, conversation_id: conversationId, mode: 'react', status: row.status ?? 'succeeded', query: 'q', cost: row.cost, created_at: row.createdAt });
      }
    };
    await seed(alice.user.id, [
      { createdAt: '2026-04-01T10:00:00Z', cost: 0.25 },
      { createdAt: '2026-04-01T11:00:00Z', cost: null },
      { createdAt: '2026-04-02T10:00:00Z', cost: 0 },
      { createdAt: '2026-04-03T00:10:00Z', cost: 1.5 },
      { createdAt: '2026-04-03T00:20:00Z', cost: null, status: 'running' },
    ]);
    await seed(bob.user.id, [{ createdAt: '2026-04-01T12:00:00Z', cost: null }, { createdAt: '2026-04-02T12:00:00Z', cost: null }]);
    const api = as(admin.token);
    const report = async (query: string) => {
      const res = await api.get(`/api/admin/usage?${query}&size=100`);
      expect(res.status, `${query}: ${res.text}`).toBe(200);
      return res.body.items as { key: string; cost: number | null }[];
    };

    // Whole days from the rollup.
    const byUser = await report('from=2026-04-01&to=2026-04-04&group_by=user');
    expect(byUser.find((r) => r.key === alice.user.id)?.cost).toBeCloseTo(1.75, 12);
    expect(byUser.find((r) => r.key === bob.user.id)?.cost).toBeNull();
    expect((await report(`from=2026-04-01&to=2026-04-04&group_by=day&user_id=${alice.user.id}`)).map((r) => [r.key, r.cost])).toEqual([
      ['2026-04-01', 0.25],
      ['2026-04-02', 0],
      ['2026-04-03', 1.5],
    ]);
    // Partial days at both edges from runs, the whole day between from the rollup: the same sums.
    expect((await report(`from=2026-04-01T10:30:00Z&to=2026-04-03T00:15:00Z&group_by=day&user_id=${alice.user.id}`)).map((r) => [r.key, r.cost])).toEqual([
      ['2026-04-01', null],
      ['2026-04-02', 0],
      ['2026-04-03', 1.5],
    ]);
    expect((await report(`from=2026-04-01T09:00:00Z&to=2026-04-01T12:30:00Z&group_by=user`)).find((r) => r.key === bob.user.id)?.cost).toBeNull();

    // A run that ends later with a cost moves the rollup's sum (the update trigger), and a null stays out of it.
    await knex()('runs').where({ user_id: alice.user.id, status: 'running' }).update({ status: 'succeeded', cost: 0.5 });
    expect((await report(`from=2026-04-03&to=2026-04-04&user_id=${alice.user.id}`))[0]?.cost).toBeCloseTo(2, 12);
    // The rollup is striped over slots (migration 024): a (day, user) is the sum of its rows.
    const day = await knex()('usage_daily').where({ user_id: alice.user.id, day: '2026-04-03' }).sum({ cost: 'cost', priced_runs: 'priced_runs', runs: 'runs' }).first();
    expect({ cost: Number(day.cost), priced_runs: Number(day.priced_runs), runs: Number(day.runs) }).toEqual({ cost: 2, priced_runs: 2, runs: 2 });
    // The rollup agrees with the runs it sums, day by day.
    const fromRuns = await knex().raw(
      `select (created_at at time zone 'UTC')::date::text as day, coalesce(sum(cost), 0)::float8 as cost, count(cost)::int as priced from runs where user_id = ? group by 1 order by 1`,
      [alice.user.id],
    );
    const rollup = await knex().raw(`select day::text, sum(cost)::float8 as cost, sum(priced_runs)::int as priced from usage_daily where user_id = ? group by day order by day`, [alice.user.id]);
    expect(rollup.rows).toEqual(fromRuns.rows);
  });
});

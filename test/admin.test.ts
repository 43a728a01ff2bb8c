import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, uniqueId, type TestApp } from './support/app.js';
import { createDatabase } from './support/database.js';

/**
 * Administration (DESIGN §9) on a database of its own, so the admin roster and the audit log hold
 * only what these tests made: every endpoint's contract, filters and pagination, who may call them,
 * the last-admin rule, delete cascades, the audit log after a scripted session, and malformed input.
 */
let database: Awaited<ReturnType<typeof createDatabase>>;
let app: TestApp;
let admin: { token: string; user: { id: string }; email: string; password: string };

beforeAll(async () => {
  database = await createDatabase();
  app = await startTestApp({ env: { DATABASE_URL: database.url } });
  admin = await app.signedInUser('admin');
});
afterAll(async () => {
  await app.close();
  await database.drop();
});

const as = (token: string) => ({
  get: (path: string) => app.request('GET', path, { token }),
  post: (path: string, body?: unknown) => app.request('POST', path, { token, body: body ?? {} }),
  patch: (path: string, body: unknown) => app.request('PATCH', path, { token, body }),
  delete: (path: string) => app.request('DELETE', path, { token }),
});
const email = () => `admin-test-${uniqueId()}@example.test`;
const knex = () => app.services.knex;

async function seedRuns(userId: string, runs: { status: string; mode: string; createdAt: string; prompt?: number }[]) {
  const conversation = randomUUID();
  await knex()('conversations').insert({ id: conversation, user_id: userId, title: 't' });
  for (const run of runs) {
    const usage = run.prompt === undefined ? null : JSON.stringify({ prompt_tokens: run.prompt, completion_tokens: 2, reasoning_tokens: 1, total_tokens: run.prompt + 3 });
    await knex()('runs').insert({ id: randomUUID(), user_id: userId, conversation_id: conversation, mode: run.mode, status: run.status, query: 'q', usage, created_at: run.createdAt });
  }
}

describe('users', () => {
  it('create (generated password shown once), read with counts, list with filters and pages, update', async () => {
    const api = as(admin.token);
    const address = email();
    const created = await api.post('/api/admin/users', { email: address, role: 'member', name: 'Ada' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email: address, name: 'Ada', role: 'member', is_active: true, password: expect.stringMatching(/^[\w-]{24}$/) });
    expect(created.body).not.toHaveProperty('password_hash');
    // The generated password works, and is never shown again.
    await app.login(address, created.body.password);
    const read = await api.get(`/api/admin/users/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.body).not.toHaveProperty('password');
    expect(read.body.counts).toEqual({ api_keys: 0, agents: 0, conversations: 0, runs: 0, active_runs: 0, knowledge_bases: 0, connectors: 0 });

    const given = await api.post('/api/admin/users', { email: email(), role: 'restricted', password: 'a-long-password' });
    expect(given.status).toBe(201);
    expect(given.body).not.toHaveProperty('password');

    const duplicate = await api.post('/api/admin/users', { email: address.toUpperCase(), role: 'member' });
    expect(duplicate.status).toBe(422);
    expect(duplicate.body.detail[0].loc).toEqual(['body', 'email']);

    const restricted = await api.get('/api/admin/users?role=restricted');
    expect(restricted.body.items.map((u: { id: string }) => u.id)).toContain(given.body.id);
    expect(restricted.body.items.every((u: { role: string }) => u.role === 'restricted')).toBe(true);
    const byEmail = await api.get(`/api/admin/users?q=${encodeURIComponent(address.slice(0, 20).toUpperCase())}`);
    expect(byEmail.body).toMatchObject({ total: 1, items: [{ id: created.body.id }] });
    const paged = await api.get('/api/admin/users?size=1&page=2');
    expect(paged.body).toMatchObject({ page: 2, size: 1, items: [expect.any(Object)] });
    expect(paged.body.total).toBeGreaterThanOrEqual(3);

    const renamed = await api.patch(`/api/admin/users/${created.body.id}`, { name: 'Ada L.', role: 'admin' });
    expect(renamed.body).toMatchObject({ name: 'Ada L.', role: 'admin' });
    expect((await api.get('/api/admin/users?is_active=false')).body.items.some((u: { id: string }) => u.id === created.body.id)).toBe(false);
    expect((await api.patch(`/api/admin/users/${created.body.id}`, { role: 'member' })).status).toBe(200);
    expect((await api.get(`/api/admin/users/${randomUUID()}`)).status).toBe(404);
  });

  it('the last active admin cannot be demoted, disabled or deleted (409 last_admin); another admin can be', async () => {
    const api = as(admin.token);
    for (const [method, body] of [['PATCH', { role: 'member' }], ['PATCH', { is_active: false }], ['DELETE', undefined]] as const) {
      const res = await app.request(method, `/api/admin/users/${admin.user.id}`, { token: admin.token, body });
      expect(res.status, `${method} ${JSON.stringify(body)}`).toBe(409);
      expect(res.body).toEqual({ error: 'last_admin', message: expect.any(String) });
    }
    // Two admins demoting each other at once: one wins; the other is refused (409 when its change raced the
    // winner's, 403 when the winner's had already landed before it was authorised); one admin is left.
    const second = await app.signedInUser('admin');
    const [a, b] = await Promise.all([
      api.patch(`/api/admin/users/${second.user.id}`, { role: 'member' }),
      as(second.token).patch(`/api/admin/users/${admin.user.id}`, { role: 'member' }),
    ]);
    const [won, lost] = a.status === 200 ? [a, b] : [b, a];
    expect(won.status).toBe(200);
    expect([403, 409]).toContain(lost.status);
    const admins = await knex()('users').where({ role: 'admin', is_active: true }).count({ n: '*' });
    expect(Number(admins[0]!.n)).toBe(1);
    // Restore: whoever is left promotes the other back.
    const survivor = a.status === 200 ? admin : second;
    const demoted = a.status === 200 ? second : admin;
    expect((await as(survivor.token).patch(`/api/admin/users/${demoted.user.id}`, { role: 'admin' })).status).toBe(200);
    if (survivor !== admin) expect((await as(admin.token).get('/api/admin/users')).status).toBe(200);
    const leaving = await app.signedInUser('admin');
    expect((await api.delete(`/api/admin/users/${leaving.user.id}`)).status).toBe(204);
  });

  it('delete removes the user and everything they own', async () => {
    const { user, token } = await app.signedInUser();
    const key = (await as(token).post('/api/me/api-keys', { name: 'k' })).body;
    expect((await as(token).post('/api/agents', { name: 'a' })).status).toBe(201);
    expect((await as(token).post('/api/knowledge-bases', { name: 'kb' })).status).toBe(201);
    await seedRuns(user.id, [{ status: 'succeeded', mode: 'react', createdAt: new Date().toISOString(), prompt: 5 }]);
    const counts = (await as(admin.token).get(`/api/admin/users/${user.id}`)).body.counts;
    expect(counts).toMatchObject({ api_keys: 1, agents: 1, knowledge_bases: 1, conversations: 1, runs: 1 });

    expect((await as(admin.token).delete(`/api/admin/users/${user.id}`)).status).toBe(204);
    for (const table of ['users', 'api_keys', 'agents', 'knowledge_bases', 'conversations', 'runs', 'refresh_tokens', 'usage_daily']) {
      const column = table === 'users' ? 'id' : 'user_id';
      expect(Number((await knex()(table).where(column, user.id).count({ n: '*' }))[0]!.n), table).toBe(0);
    }
    expect((await app.request('GET', '/api/auth/verify', { token: key.key })).status).toBe(401);
    expect((await app.request('GET', '/api/auth/verify', { token })).status).toBe(401);
    expect((await as(admin.token).delete(`/api/admin/users/${user.id}`)).status).toBe(404);
  });
});

describe('who may call the admin endpoints', () => {
  it('members, restricted users, scoped keys without admin, and a member’s JWT → 403; an admin key of scope admin → 200', async () => {
    const member = await app.signedInUser('member');
    const restricted = await app.signedInUser('restricted');
    const memberKey = (await as(member.token).post('/api/me/api-keys', { name: 'full' })).body.key;
    const adminChatKey = (await as(admin.token).post('/api/me/api-keys', { name: 'chat', scopes: 'chat kb agents connectors' })).body.key;
    const adminScoped = (await as(admin.token).post('/api/me/api-keys', { name: 'ops', scopes: 'admin' })).body.key;
    const paths = ['/api/admin/users', '/api/admin/api-keys', '/api/admin/runs', '/api/admin/usage', '/api/admin/queues', '/api/admin/audit-log'];
    const target = `/api/admin/users/${member.user.id}`;
    for (const token of [member.token, restricted.token, memberKey, adminChatKey]) {
      for (const path of paths) {
        const res = await app.request('GET', path, { token });
        expect(res.status, path).toBe(403);
        expect(res.body.error).toBe('forbidden');
      }
      expect((await app.request('PATCH', target, { token, body: { role: 'admin' } })).status).toBe(403);
      expect((await app.request('DELETE', target, { token })).status).toBe(403);
      expect((await app.request('POST', '/api/admin/users', { token, body: { email: email(), role: 'admin' } })).status).toBe(403);
    }
    expect((await app.request('GET', '/api/admin/users', {})).status).toBe(401);
    for (const path of paths) expect((await app.request('GET', path, { token: adminScoped })).status, path).toBe(200);
    // The member is unchanged.
    expect((await as(admin.token).get(target)).body.role).toBe('member');
  });

  it('only an admin may create a key with scope admin', async () => {
    const member = await app.signedInUser('member');
    const res = await as(member.token).post('/api/me/api-keys', { name: 'sneaky', scopes: 'chat admin' });
    expect(res.status).toBe(403);
    expect(res.body.error).toBe('forbidden');
    expect((await as(admin.token).post('/api/me/api-keys', { name: 'ok', scopes: 'admin' })).status).toBe(201);
  });
});

describe('keys, runs, usage, queues', () => {
  it("lists any user's keys with filters, and changes or deletes them (never the full key)", async () => {
    const { user, token } = await app.signedInUser();
    const keys = [];
    for (const name of ['one', 'two', 'three']) keys.push((await as(token).post('/api/me/api-keys', { name })).body);
    const api = as(admin.token);
    const list = await api.get(`/api/admin/api-keys?user_id=${user.id}&size=2`);
    expect(list.body).toMatchObject({ total: 3, pages: 2, size: 2 });
    expect(list.body.items[0]).toMatchObject({ user_id: user.id, key_prefix: expect.any(String) });
    expect(list.text).not.toContain(keys[0].key);
    const disabled = await api.patch(`/api/admin/api-keys/${keys[0].id}`, { is_active: false });
    expect(disabled.body).toMatchObject({ id: keys[0].id, is_active: false, user_id: user.id });
    expect((await app.request('GET', '/api/auth/verify', { token: keys[0].key })).body.error).toBe('unauthorized');
    expect((await api.get(`/api/admin/api-keys?user_id=${user.id}&is_active=false`)).body).toMatchObject({ total: 1, items: [{ id: keys[0].id }] });
    expect((await api.delete(`/api/admin/api-keys/${keys[1].id}`)).status).toBe(204);
    expect((await app.request('GET', '/api/auth/verify', { token: keys[1].key })).status).toBe(401);
    expect((await api.delete(`/api/admin/api-keys/${keys[1].id}`)).status).toBe(404);
  });

  it('lists runs across users with filters and pages, and usage per user and per day from the recorded tokens', async () => {
    const alice = await app.createUser();
    const bob = await app.createUser();
    await seedRuns(alice.user.id, [
      { status: 'succeeded', mode: 'react', createdAt: '2026-03-01T10:00:00Z', prompt: 10 },
      { status: 'failed', mode: 'dag', createdAt: '2026-03-02T23:30:00Z', prompt: 20 },
      { status: 'cancelled', mode: 'react', createdAt: '2026-03-03T00:15:00Z', prompt: 40 },
      { status: 'running', mode: 'react', createdAt: '2026-03-04T12:00:00Z' },
    ]);
    await seedRuns(bob.user.id, [{ status: 'succeeded', mode: 'dag', createdAt: '2026-03-02T12:00:00Z', prompt: 100 }]);
    const api = as(admin.token);
    const window = 'from=2026-03-01&to=2026-03-05';
    const all = await api.get(`/api/admin/runs?${window}&size=2`);
    expect(all.body).toMatchObject({ total: 5, pages: 3 });
    expect(all.body.items.map((r: { created_at: string }) => r.created_at)).toEqual(['2026-03-04T12:00:00.000Z', '2026-03-03T00:15:00.000Z']);
    expect(all.body.items[0]).toMatchObject({ user_id: alice.user.id, status: 'running' });
    expect(all.body.items[0]).not.toHaveProperty('checkpoint');
    expect((await api.get(`/api/admin/runs?${window}&mode=dag`)).body.total).toBe(2);
    expect((await api.get(`/api/admin/runs?${window}&status=failed&user_id=${alice.user.id}`)).body.total).toBe(1);
    expect((await api.get(`/api/admin/runs?${window}&user_id=${bob.user.id}`)).body.items).toHaveLength(1);
    expect((await api.get('/api/admin/runs?from=2026-03-02T00:00:00Z&to=2026-03-03T00:00:00Z')).body.total).toBe(2);

    const byUser = await api.get(`/api/admin/usage?${window}&group_by=user`);
    const row = (key: string) => byUser.body.items.find((r: { key: string }) => r.key === key);
    expect(row(alice.user.id)).toEqual({ key: alice.user.id, runs: 4, succeeded: 1, failed: 1, cancelled: 1, prompt_tokens: 70, completion_tokens: 6, reasoning_tokens: 3, cost: null });
    expect(row(bob.user.id)).toMatchObject({ runs: 1, succeeded: 1, prompt_tokens: 100 });
    expect(byUser.body).toMatchObject({ from: '2026-03-01T00:00:00.000Z', to: '2026-03-05T00:00:00.000Z', group_by: 'user' });
    // Partial days at both edges come from the runs; whole days from the rollup: the sums agree.
    const byDay = await api.get(`/api/admin/usage?from=2026-03-01T12:00:00Z&to=2026-03-03T00:30:00Z&group_by=day&user_id=${alice.user.id}`);
    expect(byDay.body.items).toEqual([
      { key: '2026-03-02', runs: 1, succeeded: 0, failed: 1, cancelled: 0, prompt_tokens: 20, completion_tokens: 2, reasoning_tokens: 1, cost: null },
      { key: '2026-03-03', runs: 1, succeeded: 0, failed: 0, cancelled: 1, prompt_tokens: 40, completion_tokens: 2, reasoning_tokens: 1, cost: null },
    ]);
    const paged = await api.get(`/api/admin/usage?${window}&group_by=day&size=2&page=2`);
    expect(paged.body).toMatchObject({ total: 4, page: 2, items: [{ key: '2026-03-03' }, { key: '2026-03-04' }] });
    // A run that finishes later moves its counts from running to succeeded, with its tokens.
    await knex()('runs').where({ user_id: alice.user.id, status: 'running' }).update({ status: 'succeeded', usage: JSON.stringify({ prompt_tokens: 7, completion_tokens: 1, reasoning_tokens: 0, total_tokens: 8 }) });
    const after = await api.get(`/api/admin/usage?from=2026-03-04&to=2026-03-05&user_id=${alice.user.id}`);
    expect(after.body.items).toEqual([{ key: alice.user.id, runs: 1, succeeded: 1, failed: 0, cancelled: 0, prompt_tokens: 7, completion_tokens: 1, reasoning_tokens: 0, cost: null }]);
    // Defaults: the last 30 days.
    const defaults = await api.get('/api/admin/usage');
    expect(Date.parse(defaults.body.to) - Date.parse(defaults.body.from)).toBe(30 * 24 * 3600 * 1000);
  });

  it('cancels any user’s run (202), and a finished one → 409; queue counts per queue', async () => {
    const { user } = await app.createUser();
    await seedRuns(user.id, [{ status: 'succeeded', mode: 'react', createdAt: new Date().toISOString() }]);
    const run = await knex()('runs').where({ user_id: user.id }).first();
    const res = await as(admin.token).post(`/api/admin/runs/${run.id}/cancel`);
    expect(res.status).toBe(409);
    expect(res.body.error).toBe('no_active_execution');
    expect((await as(admin.token).post(`/api/admin/runs/${randomUUID()}/cancel`)).status).toBe(404);
    const queues = await as(admin.token).get('/api/admin/queues');
    expect(queues.status).toBe(200);
    expect(queues.body.queues.map((q: { name: string }) => q.name)).toEqual(['agent-runs', 'kb-ingest', 'webhook-deliveries', 'evals']);
    expect(queues.body.queues[0]).toEqual({ name: 'agent-runs', waiting: expect.any(Number), active: 0, delayed: 0, failed: 0, completed: 0, paused: 0, is_paused: false, workers: 0 });
  });
});

describe('the audit log', () => {
  it('holds exactly the entries of a scripted session, newest first, filterable, with no secret', async () => {
    const started = new Date();
    const secrets: string[] = [];
    const ops = await app.signedInUser('admin');
    // Login (success and failure), a key's life, a user's life, a connector's, an admin cancel, refresh reuse.
    const login = await app.login(ops.email, ops.password);
    secrets.push(login.access_token, login.refresh_token, ops.password, ops.token);
    expect((await app.request('POST', '/api/auth/login', { body: { email: ops.email, password: 'wrong-password' } })).status).toBe(401);
    const api = as(login.access_token);
    const key = (await api.post('/api/me/api-keys', { name: 'audited' })).body;
    secrets.push(key.key);
    await as(key.key).patch(`/api/me/api-keys/${key.id}`, { name: 'renamed' });
    const member = (await api.post('/api/admin/users', { email: email(), role: 'member' })).body;
    secrets.push(member.password);
    await api.patch(`/api/admin/users/${member.id}`, { role: 'restricted', is_active: false });
    const connector = (await api.post('/api/connectors', { name: 'audited', kind: 'mcp', url: 'https://tools.example.test/mcp?api_key=sk-in-url', headers: { 'X-Api-Key': 'sk-header-secret-1234' } })).body;
    secrets.push('sk-header-secret-1234', 'sk-in-url');
    await api.delete(`/api/connectors/${connector.id}`);
    await api.delete(`/api/admin/users/${member.id}`);
    await api.delete(`/api/me/api-keys/${key.id}`);
    const rotated = await app.request('POST', '/api/auth/refresh', { body: { refresh_token: login.refresh_token } });
    secrets.push(rotated.body.refresh_token);
    await app.request('POST', '/api/auth/refresh', { body: { refresh_token: login.refresh_token } });

    // The reuse revoked the login's session; the earlier session reads the log.
    const reader = as(ops.token);
    const log = await reader.get(`/api/admin/audit-log?actor_id=${ops.user.id}&from=${started.toISOString()}&size=100`);
    expect(log.status).toBe(200);
    const entries = [...log.body.items].reverse();
    expect(entries.map((e: { action: string; credential: string }) => `${e.action} ${e.credential}`)).toEqual([
      'auth.login password', // signedInUser
      'auth.login password',
      'auth.login_failed password',
      'api_key.create jwt',
      `api_key.update ${key.key_prefix}`,
      'user.create jwt',
      'user.role_change jwt',
      'user.disable jwt',
      'connector.create jwt',
      'connector.delete jwt',
      'user.delete jwt',
      'api_key.delete jwt',
      'auth.refresh_reuse refresh_token',
    ]);
    for (const entry of entries) expect(entry).toMatchObject({ actor_user_id: ops.user.id, ip: expect.any(String), request_id: expect.any(String), at: expect.any(String) });
    expect(entries.find((e: { action: string }) => e.action === 'user.role_change').details).toEqual({ email: member.email, role: { from: 'member', to: 'restricted' } });
    expect(entries.find((e: { action: string }) => e.action === 'connector.create').details).toMatchObject({ name: 'audited', host: 'tools.example.test', header_names: ['X-Api-Key'] });
    expect(entries.find((e: { action: string }) => e.action === 'api_key.update').details.changes).toEqual({ name: { from: 'audited', to: 'renamed' } });
    expect(entries.at(-1)).toMatchObject({ target_type: 'session' });
    const text = JSON.stringify(log.body);
    for (const secret of secrets) expect(text, 'a secret in the audit log').not.toContain(secret);

    // Filters: action, target, time; newest first.
    const disables = await reader.get(`/api/admin/audit-log?action=user.disable&target_id=${member.id}`);
    expect(disables.body).toMatchObject({ total: 1, items: [{ action: 'user.disable', target_type: 'user', target_id: member.id }] });
    expect((await reader.get(`/api/admin/audit-log?to=${started.toISOString()}&actor_id=${ops.user.id}`)).body.total).toBe(0);
    const ids = log.body.items.map((e: { id: number }) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });

  it('is append-only: the table refuses UPDATE and DELETE, and no endpoint changes it', async () => {
    await expect(knex()('audit_log').update({ action: 'x' })).rejects.toThrow(/append-only/);
    await expect(knex()('audit_log').delete()).rejects.toThrow(/append-only/);
    for (const method of ['DELETE', 'PATCH', 'PUT', 'POST']) {
      expect((await app.request(method, '/api/admin/audit-log', { token: admin.token, body: {} })).status).toBe(405);
    }
  });
});

describe('malformed admin requests', () => {
  it('answer 4xx with a documented body, never 5xx', async () => {
    const victim = await app.createUser();
    const cases: [string, string, unknown?][] = [
      ['GET', '/api/admin/users?page=0'],
      ['GET', '/api/admin/users?size=101'],
      ['GET', '/api/admin/users?page=1e400'],
      ['GET', '/api/admin/users?role=root'],
      ['GET', '/api/admin/users?is_active=yes'],
      ['GET', `/api/admin/users?q=${'x'.repeat(400)}`],
      ['GET', '/api/admin/users/not-a-uuid'],
      ['GET', `/api/admin/users/${'9'.repeat(40)}`],
      ['POST', '/api/admin/users', { email: 'not-an-email', role: 'member' }],
      ['POST', '/api/admin/users', { email: email(), role: 'superuser' }],
      ['POST', '/api/admin/users', { email: email() }],
      ['POST', '/api/admin/users', { email: email(), role: 'member', password: 'short' }],
      ['POST', '/api/admin/users', { email: email(), role: 'member', is_active: false }],
      ['POST', '/api/admin/users', { email: `${'a'.repeat(400)}@example.test`, role: 'member' }],
      ['POST', '/api/admin/users', { email: ['x@example.test'], role: 'member' }],
      ['POST', '/api/admin/users', { email: 'nul\u0000@example.test', role: 'member' }],
      ['PATCH', `/api/admin/users/${victim.user.id}`, {}],
      ['PATCH', `/api/admin/users/${victim.user.id}`, { is_active: 'false' }],
      ['PATCH', `/api/admin/users/${victim.user.id}`, { role: null }],
      ['PATCH', `/api/admin/users/${victim.user.id}`, { email: 'new@example.test' }],
      ['PATCH', `/api/admin/users/${victim.user.id}`, { password_hash: 'x' }],
      ['DELETE', '/api/admin/users/%00'],
      ['GET', '/api/admin/api-keys?user_id=123'],
      ['GET', '/api/admin/api-keys?is_active=1'],
      ['PATCH', `/api/admin/api-keys/${randomUUID()}`, { is_active: false }],
      ['PATCH', `/api/admin/api-keys/${randomUUID()}`, { scopes: 'admin' }],
      ['DELETE', '/api/admin/api-keys/1%27%20or%201=1--'],
      ['GET', '/api/admin/runs?status=lost'],
      ['GET', '/api/admin/runs?mode=chain'],
      ['GET', '/api/admin/runs?from=yesterday'],
      ['GET', '/api/admin/runs?from=2026-13-45'],
      ['GET', '/api/admin/runs?from=2026-03-02&to=2026-03-01'],
      ['GET', '/api/admin/runs?from=99999-01-01'],
      ['GET', '/api/admin/runs?to=0001-01-01'],
      ['POST', '/api/admin/runs/not-a-run/cancel'],
      ['GET', '/api/admin/usage?group_by=week'],
      ['GET', '/api/admin/usage?from=2020-01-01&to=2026-01-01'],
      ['GET', '/api/admin/usage?from=2026-01-02&to=2026-01-01'],
      ['GET', '/api/admin/usage?user_id=../../etc'],
      ['GET', '/api/admin/usage?from=2026-01-01T00:00:00'],
      ['GET', '/api/admin/audit-log?action=DROP%20TABLE'],
      ['GET', '/api/admin/audit-log?actor_id=admin'],
      ['GET', `/api/admin/audit-log?target_id=${'t'.repeat(300)}`],
      ['GET', '/api/admin/audit-log?from=2026-02-30T25:00:00Z'],
      ['PUT', '/api/admin/queues'],
    ];
    expect(cases.length).toBeGreaterThanOrEqual(30);
    const failures: string[] = [];
    for (const [method, path, body] of cases) {
      const res = await app.request(method, path, { token: admin.token, body });
      const documented = res.status === 422 ? Array.isArray(res.body?.detail) : typeof res.body?.error === 'string';
      if (res.status < 400 || res.status >= 500 || !documented) failures.push(`${method} ${path.slice(0, 60)} ${JSON.stringify(body)?.slice(0, 60)} → ${res.status} ${res.text.slice(0, 120)}`);
    }
    expect(failures).toEqual([]);
    // The victim was not changed by any of them.
    expect((await as(admin.token).get(`/api/admin/users/${victim.user.id}`)).body).toMatchObject({ email: victim.email, role: 'member', is_active: true });
  });
});

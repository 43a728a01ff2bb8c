import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app.close());

describe('API keys', () => {
  it('full lifecycle: create → use → disable → enable → expire → delete', async () => {
    const { token } = await app.signedInUser();
    const created = await app.request('POST', '/api/me/api-keys', { token, body: { name: 'ci', scopes: 'chat,kb' } });
    expect(created.status).toBe(201);
    const key: string = created.body.key;
    expect(key).toMatch(/^svc_[0-9A-Za-z]{49}$/);
    expect(created.body).toMatchObject({
      name: 'ci',
      key_prefix: key.slice(0, 8),
      scopes: 'chat kb',
      is_active: true,
      expires_at: null,
      last_used_at: null,
      total_requests: 0,
    });
    const id = created.body.id;

    const verify = await app.request('GET', '/api/auth/verify', { token: key });
    expect(verify.status).toBe(200);
    expect(verify.body).toMatchObject({ valid: true, token_type: 'api_key', scopes: 'chat kb', expires_at: null });

    expect((await app.request('PATCH', `/api/me/api-keys/${id}`, { token, body: { is_active: false } })).body.is_active).toBe(false);
    expect((await app.request('GET', '/api/auth/verify', { token: key })).body.error).toBe('unauthorized');

    await app.request('PATCH', `/api/me/api-keys/${id}`, { token, body: { is_active: true } });
    expect((await app.request('GET', '/api/auth/verify', { token: key })).status).toBe(200);

    const past = new Date(Date.now() - 1000).toISOString();
    await app.request('PATCH', `/api/me/api-keys/${id}`, { token, body: { expires_at: past } });
    expect((await app.request('GET', '/api/auth/verify', { token: key })).body.error).toBe('token_expired');

    expect((await app.request('DELETE', `/api/me/api-keys/${id}`, { token })).status).toBe(204);
    expect((await app.request('GET', '/api/auth/verify', { token: key })).body.error).toBe('invalid_token');
    expect((await app.request('DELETE', `/api/me/api-keys/${id}`, { token })).status).toBe(404);

    // The full key was shown once: no later response and no log line carries it.
    const list = await app.request('GET', '/api/me/api-keys', { token });
    expect(list.text).not.toContain(key);
    expect(app.logs.join('')).not.toContain(key);
    expect(app.logs.join('')).not.toContain(key.slice(4));
  });

  it('counts use without a write per request, and shows it in the list', async () => {
    const { token } = await app.signedInUser();
    const { body } = await app.request('POST', '/api/me/api-keys', { token, body: { name: 'counted' } });
    for (let i = 0; i < 3; i++) await app.request('GET', '/api/auth/verify', { token: body.key });
    const list = await app.request('GET', '/api/me/api-keys', { token });
    const info = list.body.items.find((k: { id: string }) => k.id === body.id);
    expect(info.total_requests).toBe(3);
    expect(Date.parse(info.last_used_at)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('an unscoped key has full access; a scoped key cannot manage keys, so it cannot mint broader ones', async () => {
    const { token } = await app.signedInUser();
    const full = (await app.request('POST', '/api/me/api-keys', { token, body: { name: 'full' } })).body.key;
    const chat = (await app.request('POST', '/api/me/api-keys', { token: full, body: { name: 'chat', scopes: 'chat' } })).body;
    expect(chat.scopes).toBe('chat');
    const escalate = await app.request('POST', '/api/me/api-keys', { token: chat.key, body: { name: 'more', scopes: 'chat kb' } });
    expect(escalate.status).toBe(403);
    expect(escalate.body.error).toBe('forbidden');
    const same = await app.request('POST', '/api/me/api-keys', { token: chat.key, body: { name: 'same', scopes: 'chat' } });
    expect(same.status).toBe(403);
    expect((await app.request('GET', '/api/auth/verify', { token: chat.key })).status).toBe(200);
  });

  it('another user’s key answers 404 and is left unchanged', async () => {
    const alice = await app.signedInUser();
    const bob = await app.signedInUser();
    const key = (await app.request('POST', '/api/me/api-keys', { token: alice.token, body: { name: 'alice' } })).body;
    expect((await app.request('PATCH', `/api/me/api-keys/${key.id}`, { token: bob.token, body: { is_active: false } })).status).toBe(404);
    expect((await app.request('DELETE', `/api/me/api-keys/${key.id}`, { token: bob.token })).status).toBe(404);
    expect((await app.request('GET', '/api/auth/verify', { token: key.key })).status).toBe(200);
    const bobs = await app.request('GET', '/api/me/api-keys', { token: bob.token });
    expect(bobs.body.total).toBe(0);
  });

  it('paginates with the spec envelope', async () => {
    const { token } = await app.signedInUser();
    for (let i = 0; i < 5; i++) await app.request('POST', '/api/me/api-keys', { token, body: { name: `k${i}` } });
    const page2 = await app.request('GET', '/api/me/api-keys?page=2&size=2', { token });
    expect(page2.body).toMatchObject({ total: 5, page: 2, size: 2, pages: 3 });
    expect(page2.body.items).toHaveLength(2);
    const beyond = await app.request('GET', '/api/me/api-keys?page=9&size=2', { token });
    expect(beyond.body).toMatchObject({ items: [], total: 5, page: 9, pages: 3 });
    const defaults = await app.request('GET', '/api/me/api-keys', { token });
    expect(defaults.body).toMatchObject({ page: 1, size: 20, pages: 1 });
  });

  it('a key created with an expiry reports it through verify', async () => {
    const { token } = await app.signedInUser();
    const expires = new Date(Date.now() + 3600_000).toISOString();
    const key = (await app.request('POST', '/api/me/api-keys', { token, body: { name: 'temp', expires_at: expires } })).body;
    const verify = await app.request('GET', '/api/auth/verify', { token: key.key });
    expect(verify.body.expires_at).toBe(expires);
    expect(verify.body.expires_in).toBeGreaterThan(3500);
  });
});

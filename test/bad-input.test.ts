import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';

/** Malformed requests at the auth and key endpoints: never a 500, always a documented body. */
let app: TestApp;
let token: string;
let keyId: string;
beforeAll(async () => {
  app = await startTestApp({ throttle: { perAccount: 1000, perAddress: 1000, windowSeconds: 60 } });
  token = (await app.signedInUser()).token;
  keyId = (await app.request('POST', '/api/me/api-keys', { token, body: { name: 'target' } })).body.id;
});
afterAll(() => app.close());

interface Case {
  name: string;
  method: string;
  path: string | (() => string);
  body?: unknown;
  raw?: string;
  headers?: Record<string, string>;
  auth?: boolean;
  status: number;
  type?: string;
}

const huge = 'x'.repeat(100_000);
const unknownId = '00000000-0000-4000-8000-000000000000';
const cases: Case[] = [
  // login
  { name: 'login: no body', method: 'POST', path: '/api/auth/login', status: 422, type: 'missing' },
  { name: 'login: bad JSON', method: 'POST', path: '/api/auth/login', raw: '{"email":', status: 422, type: 'json_invalid' },
  { name: 'login: trailing comma', method: 'POST', path: '/api/auth/login', raw: '{"email":"a","password":"b",}', status: 422, type: 'json_invalid' },
  { name: 'login: array body', method: 'POST', path: '/api/auth/login', body: [], status: 422, type: 'model_attributes_type' },
  { name: 'login: string body', method: 'POST', path: '/api/auth/login', body: 'hello', status: 422, type: 'model_attributes_type' },
  { name: 'login: null body', method: 'POST', path: '/api/auth/login', raw: 'null', status: 422, type: 'model_attributes_type' },
  { name: 'login: number body', method: 'POST', path: '/api/auth/login', raw: '42', status: 422, type: 'model_attributes_type' },
  { name: 'login: missing password', method: 'POST', path: '/api/auth/login', body: { email: 'a@b.c' }, status: 422, type: 'missing' },
  { name: 'login: missing email', method: 'POST', path: '/api/auth/login', body: { password: 'x' }, status: 422, type: 'missing' },
  { name: 'login: email number', method: 'POST', path: '/api/auth/login', body: { email: 1, password: 'x' }, status: 422, type: 'string_type' },
  { name: 'login: password object', method: 'POST', path: '/api/auth/login', body: { email: 'a', password: {} }, status: 422, type: 'string_type' },
  { name: 'login: password null', method: 'POST', path: '/api/auth/login', body: { email: 'a', password: null }, status: 422, type: 'string_type' },
  { name: 'login: empty email', method: 'POST', path: '/api/auth/login', body: { email: '', password: 'x' }, status: 422, type: 'string_too_short' },
  { name: 'login: huge email', method: 'POST', path: '/api/auth/login', body: { email: huge, password: 'x' }, status: 422, type: 'string_too_long' },
  { name: 'login: huge password', method: 'POST', path: '/api/auth/login', body: { email: 'a', password: huge }, status: 422, type: 'string_too_long' },
  { name: 'login: unknown field', method: 'POST', path: '/api/auth/login', body: { email: 'a', password: 'b', admin: true }, status: 422, type: 'extra_forbidden' },
  { name: 'login: form encoded', method: 'POST', path: '/api/auth/login', raw: 'email=a&password=b', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 422, type: 'model_attributes_type' },
  { name: 'login: text/plain JSON', method: 'POST', path: '/api/auth/login', raw: '{"email":"a","password":"b"}', headers: { 'content-type': 'text/plain' }, status: 422, type: 'model_attributes_type' },
  { name: 'login: NUL bytes', method: 'POST', path: '/api/auth/login', body: { email: 'a\u0000b', password: '\u0000' }, status: 422, type: 'string_pattern_mismatch' },
  { name: 'login: unicode', method: 'POST', path: '/api/auth/login', body: { email: '😀@😀', password: 'ü' }, status: 401 },
  { name: 'login: body too large', method: 'POST', path: '/api/auth/login', raw: `"${'x'.repeat(1_100_000)}"`, status: 413 },
  // refresh
  { name: 'refresh: no body', method: 'POST', path: '/api/auth/refresh', status: 422, type: 'missing' },
  { name: 'refresh: wrong type', method: 'POST', path: '/api/auth/refresh', body: { refresh_token: 12 }, status: 422, type: 'string_type' },
  { name: 'refresh: empty', method: 'POST', path: '/api/auth/refresh', body: { refresh_token: '' }, status: 422, type: 'string_too_short' },
  { name: 'refresh: huge', method: 'POST', path: '/api/auth/refresh', body: { refresh_token: huge }, status: 422, type: 'string_too_long' },
  { name: 'refresh: unknown token', method: 'POST', path: '/api/auth/refresh', body: { refresh_token: 'nope' }, status: 401 },
  { name: 'refresh: bad JSON', method: 'POST', path: '/api/auth/refresh', raw: '{{', status: 422, type: 'json_invalid' },
  { name: 'refresh: extra field', method: 'POST', path: '/api/auth/refresh', body: { refresh_token: 'a', x: 1 }, status: 422, type: 'extra_forbidden' },
  // verify
  { name: 'verify: empty bearer', method: 'GET', path: '/api/auth/verify', headers: { authorization: 'Bearer ' }, status: 401 },
  { name: 'verify: two tokens', method: 'GET', path: '/api/auth/verify', headers: { authorization: 'Bearer a b' }, status: 401 },
  { name: 'verify: huge token', method: 'GET', path: '/api/auth/verify', headers: { authorization: `Bearer ${'a'.repeat(8000)}` }, status: 401 },
  { name: 'verify: key with unicode', method: 'GET', path: '/api/auth/verify', headers: { authorization: 'Bearer svc_ÿÿÿ' }, status: 401 },
  // key list
  { name: 'list: size=0', method: 'GET', path: '/api/me/api-keys?size=0', auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'list: size=101', method: 'GET', path: '/api/me/api-keys?size=101', auth: true, status: 422, type: 'less_than_equal' },
  { name: 'list: size=-1', method: 'GET', path: '/api/me/api-keys?size=-1', auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'list: size=abc', method: 'GET', path: '/api/me/api-keys?size=abc', auth: true, status: 422, type: 'int_parsing' },
  { name: 'list: size=1.5', method: 'GET', path: '/api/me/api-keys?size=1.5', auth: true, status: 422, type: 'int_parsing' },
  { name: 'list: size empty', method: 'GET', path: '/api/me/api-keys?size=', auth: true, status: 422, type: 'int_parsing' },
  { name: 'list: page=0', method: 'GET', path: '/api/me/api-keys?page=0', auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'list: page=-5', method: 'GET', path: '/api/me/api-keys?page=-5', auth: true, status: 422, type: 'greater_than_equal' },
  { name: 'list: page=x', method: 'GET', path: '/api/me/api-keys?page=x', auth: true, status: 422, type: 'int_parsing' },
  { name: 'list: page huge', method: 'GET', path: '/api/me/api-keys?page=99999999999999999999', auth: true, status: 422, type: 'int_parsing' },
  { name: 'list: page twice', method: 'GET', path: '/api/me/api-keys?page=1&page=2', auth: true, status: 422, type: 'string_type' },
  { name: 'list: NUL in query', method: 'GET', path: '/api/me/api-keys?page=1%00', auth: true, status: 422, type: 'string_pattern_mismatch' },
  { name: 'list: page 1e3', method: 'GET', path: '/api/me/api-keys?page=1e3', auth: true, status: 422, type: 'int_parsing' },
  // key create
  { name: 'create: no body', method: 'POST', path: '/api/me/api-keys', auth: true, status: 422, type: 'missing' },
  { name: 'create: missing name', method: 'POST', path: '/api/me/api-keys', auth: true, body: {}, status: 422, type: 'missing' },
  { name: 'create: name number', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 5 }, status: 422, type: 'string_type' },
  { name: 'create: blank name', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: '   ' }, status: 422, type: 'string_too_short' },
  { name: 'create: huge name', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: huge }, status: 422, type: 'string_too_long' },
  { name: 'create: unknown scope', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', scopes: 'root' }, status: 422, type: 'value_error' },
  { name: 'create: empty scopes', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', scopes: ' , ' }, status: 422, type: 'value_error' },
  { name: 'create: scopes array', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', scopes: ['chat'] }, status: 422, type: 'string_type' },
  { name: 'create: bad expiry', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', expires_at: 'tomorrow' }, status: 422, type: 'datetime_parsing' },
  { name: 'create: expiry number', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', expires_at: 1700000000 }, status: 422, type: 'string_type' },
  { name: 'create: past expiry', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', expires_at: '2001-01-01T00:00:00Z' }, status: 422, type: 'value_error' },
  { name: 'create: unknown field', method: 'POST', path: '/api/me/api-keys', auth: true, body: { name: 'a', is_admin: true }, status: 422, type: 'extra_forbidden' },
  { name: 'create: bad JSON', method: 'POST', path: '/api/me/api-keys', auth: true, raw: "{'name':'a'}", status: 422, type: 'json_invalid' },
  { name: 'create: no auth', method: 'POST', path: '/api/me/api-keys', body: { name: 'a' }, status: 401 },
  // key update / delete
  { name: 'patch: bad id', method: 'PATCH', path: '/api/me/api-keys/not-a-uuid', auth: true, body: { name: 'a' }, status: 422, type: 'uuid_parsing' },
  { name: 'patch: sql in id', method: 'PATCH', path: "/api/me/api-keys/1'%20or%201=1--", auth: true, body: { name: 'a' }, status: 422, type: 'uuid_parsing' },
  { name: 'patch: empty body object', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: {}, status: 422, type: 'value_error' },
  { name: 'patch: is_active string', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: { is_active: 'no' }, status: 422, type: 'bool_type' },
  { name: 'patch: is_active number', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: { is_active: 0 }, status: 422, type: 'bool_type' },
  { name: 'patch: key field', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: { key_hash: 'x' }, status: 422, type: 'extra_forbidden' },
  { name: 'patch: scopes not patchable', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: { scopes: 'chat' }, status: 422, type: 'extra_forbidden' },
  { name: 'patch: bad expiry', method: 'PATCH', path: () => `/api/me/api-keys/${keyId}`, auth: true, body: { expires_at: '2024-13-45T99:00:00Z' }, status: 422, type: 'datetime_parsing' },
  { name: 'patch: unknown uuid', method: 'PATCH', path: '/api/me/api-keys/00000000-0000-4000-8000-000000000000', auth: true, body: { name: 'a' }, status: 404 },
  { name: 'delete: bad id', method: 'DELETE', path: '/api/me/api-keys/123', auth: true, status: 422, type: 'uuid_parsing' },
  { name: 'delete: unknown uuid', method: 'DELETE', path: '/api/me/api-keys/00000000-0000-4000-8000-000000000000', auth: true, status: 404 },
  // runs
  { name: 'run: malformed id', method: 'GET', path: '/api/runs/not-a-uuid', auth: true, status: 422, type: 'uuid_parsing' },
  { name: 'run: unknown id', method: 'GET', path: `/api/runs/${unknownId}`, auth: true, status: 404 },
  { name: 'run: no credential', method: 'GET', path: `/api/runs/${unknownId}`, status: 401 },
  { name: 'run events: malformed id', method: 'GET', path: '/api/runs/123/events', auth: true, status: 422, type: 'uuid_parsing' },
  { name: 'run events: unknown run', method: 'GET', path: `/api/runs/${unknownId}/events`, auth: true, status: 404 },
  { name: 'run events: after not an id', method: 'GET', path: `/api/runs/${unknownId}/events?after=abc`, auth: true, status: 422, type: 'string_pattern_mismatch' },
  { name: 'run events: after repeated', method: 'GET', path: `/api/runs/${unknownId}/events?after=1-0&after=2-0`, auth: true, status: 422 },
  { name: 'run events: Last-Event-ID garbage', method: 'GET', path: `/api/runs/${unknownId}/events`, headers: { 'last-event-id': '../../etc' }, auth: true, status: 422, type: 'string_pattern_mismatch' },
  { name: 'run events: Last-Event-ID huge', method: 'GET', path: `/api/runs/${unknownId}/events`, headers: { 'last-event-id': `${'9'.repeat(40)}-0` }, auth: true, status: 422, type: 'string_pattern_mismatch' },
  { name: 'run cancel: malformed id', method: 'POST', path: '/api/runs/%00/cancel', auth: true, status: 422 },
  { name: 'run cancel: unknown run', method: 'POST', path: `/api/runs/${unknownId}/cancel`, auth: true, status: 404 },
  { name: 'run cancel: wrong method', method: 'GET', path: `/api/runs/${unknownId}/cancel`, auth: true, status: 405 },
];

describe('malformed requests', () => {
  it('has at least 50 cases', () => expect(cases.length).toBeGreaterThanOrEqual(50));

  it.each(cases)('$name → $status', async (c) => {
    const path = typeof c.path === 'function' ? c.path() : c.path;
    const res = await app.request(c.method, path, { token: c.auth ? token : undefined, body: c.body, raw: c.raw, headers: c.headers });
    expect(res.status).toBe(c.status);
    if (res.status === 422) {
      expect(Array.isArray(res.body.detail)).toBe(true);
      for (const d of res.body.detail) {
        expect(d).toEqual(expect.objectContaining({ loc: expect.any(Array), msg: expect.any(String), type: expect.any(String) }));
        expect(['body', 'query', 'path', 'header']).toContain(d.loc[0]);
      }
      if (c.type) expect(res.body.detail.map((d: { type: string }) => d.type)).toContain(c.type);
    } else {
      expect(res.body).toEqual(expect.objectContaining({ error: expect.any(String), message: expect.any(String) }));
    }
  });

  it('left the target key unchanged', async () => {
    const list = await app.request('GET', '/api/me/api-keys', { token });
    expect(list.body.items.find((k: { id: string }) => k.id === keyId)).toMatchObject({ name: 'target', is_active: true, expires_at: null });
  });
});

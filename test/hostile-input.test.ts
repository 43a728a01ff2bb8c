import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import Router from '@koa/router';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiRouters, apiRoutes } from '../src/app.js';
import { speaksOpenAi } from '../src/http/openai-errors.js';
import { startTestApp, type Response, type TestApp } from './support/app.js';

/**
 * Every registered route × hostile input (DESIGN §4: no input, however malformed, produces a 5xx).
 * The routes come from the routers themselves, so a route added later is walked too.
 */
let app: TestApp;
let token: string;
let routes: { path: string; methods: string[] }[];

const JWT_SECRET = new TextEncoder().encode('test-secret-test-secret-test-secret-0123');
const signed = (claims: Record<string, unknown>) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer('agent-platform')
    .setAudience('agent-platform-api')
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(JWT_SECRET);

beforeAll(async () => {
  app = await startTestApp({
    throttle: { perAccountAddress: 1000, perAddress: 1000, perAccount: 1000, windowSeconds: 60 },
    extraRoutes: () => {
      const router = new Router({ prefix: '/test-only' });
      router.get('/throws', () => {
        throw new Error('a bug');
      });
      // Koa serialises the body after every middleware has run: this fails there, past the error middleware.
      router.get('/unserialisable', (ctx) => {
        ctx.body = { n: 1n };
      });
      return [router];
    },
  });
  token = (await app.signedInUser()).token;
  routes = apiRouters(app.services)
    .flatMap((router) => router.stack)
    .filter((layer) => layer.methods.length > 0)
    .map((layer) => ({ path: layer.path, methods: layer.methods.filter((m) => m !== 'HEAD') }));
});
afterAll(() => app.close());

/** A JSON-RPC error response: `{jsonrpc: "2.0", error: {code, message}, id}`. */
const isJsonRpcError = (body: unknown) => {
  const { jsonrpc, error } = (body ?? {}) as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } };
  return jsonrpc === '2.0' && typeof error?.code === 'number' && typeof error.message === 'string';
};

/**
 * A documented error body: DESIGN §4's {error, message}, or FastAPI's 422 {detail: [...]}; on
 * /v1/* OpenAI's {error: {message, type, code}} with the same statuses (DESIGN §16); on /mcp a JSON-RPC error too.
 */
function documentedError(res: Response, path = ''): string | undefined {
  if (res.status >= 500) return `answered ${res.status}: ${res.text.slice(0, 200)}`;
  if (res.status < 400) return `answered ${res.status}: hostile input was accepted`;
  if (!(res.headers.get('content-type') ?? '').startsWith('application/json')) return `answered ${res.status} as ${res.headers.get('content-type')}`;
  if (res.headers.get('x-content-type-options') !== 'nosniff') return 'no X-Content-Type-Options: nosniff';
  if (speaksOpenAi(path)) {
    const error = (res.body as { error?: { message?: unknown; type?: unknown; code?: unknown } }).error;
    if (typeof error?.message !== 'string' || typeof error.type !== 'string' || typeof error.code !== 'string') return `${res.status} without OpenAI's {error: {message, type, code}}: ${res.text.slice(0, 200)}`;
  } else if (path === '/mcp' && isJsonRpcError(res.body)) {
    // The MCP SDK's transport refuses what is not MCP (wrong Accept or Content-Type, malformed JSON-RPC) in JSON-RPC's shape.
  } else if (res.status === 422) {
    const detail = (res.body as { detail?: { loc?: unknown; msg?: unknown; type?: unknown }[] }).detail;
    const wellFormed = Array.isArray(detail) && detail.length > 0 && detail.every((d) => Array.isArray(d.loc) && typeof d.msg === 'string' && typeof d.type === 'string');
    return wellFormed ? undefined : `422 without a FastAPI detail list: ${res.text.slice(0, 200)}`;
  } else {
    const body = res.body as { error?: unknown; message?: unknown };
    if (typeof body?.error !== 'string' || typeof body?.message !== 'string') return `${res.status} without {error, message}: ${res.text.slice(0, 200)}`;
  }
  if ((res.status === 429 || res.status === 503) && !res.headers.get('retry-after')) return `${res.status} without Retry-After`;
  if (res.status === 401 && res.headers.get('www-authenticate') !== 'Bearer') return '401 without WWW-Authenticate: Bearer';
  return undefined;
}

/** An error body's code and message, whichever dialect the path speaks. */
function errorOf(path: string, body: unknown): { error?: unknown; message?: unknown } | undefined {
  if (!speaksOpenAi(path)) return body as { error?: unknown; message?: unknown } | undefined;
  const error = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
  return error && { error: error.code, message: error.message };
}

const fill = (path: string, value: string) => path.replace(/:[A-Za-z]+/g, value);
const validPath = (path: string) => fill(path, '00000000-0000-4000-8000-000000000000');

const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

const HOSTILE_IDS = [
  'not-a-uuid',
  '%00',
  '99999999999999999999',
  '-1',
  '1e400',
  'x'.repeat(3000),
  '..%2F..%2Fetc%2Fpasswd',
  '%E0%A4%A',
  '%F0%9F%98%80',
  "1'%20or%201=1--",
  '00000000-0000-4000-8000-00000000000g',
  '{{7*7}}',
];

const HOSTILE_BODIES: { name: string; raw: string; headers?: Record<string, string> }[] = [
  { name: 'arrays 10,000 deep', raw: nested(10_000) },
  { name: 'arrays 100,000 deep', raw: nested(100_000) },
  { name: 'objects 10,000 deep', raw: nestedObjects(10_000) },
  { name: 'a number past double range', raw: '{"q": 1e400, "name": 1e400}' },
  { name: 'an integer past 64 bits', raw: '{"q": 18446744073709551616, "top_k": 18446744073709551616}' },
  { name: 'a tiny negative number', raw: '{"size": -1e-400, "page": -0}' },
  { name: 'NaN', raw: '{"q": NaN}' },
  { name: 'Infinity', raw: '{"q": Infinity}' },
  { name: 'a 10,000-digit number', raw: `{"chunk_size": ${'9'.repeat(10_000)}}` },
  { name: '__proto__ pollution', raw: '{"__proto__": {"role": "admin"}, "constructor": {"prototype": {"x": 1}}}' },
  { name: 'duplicate keys', raw: '{"name": "a", "name": {"x": 1}}' },
  { name: 'lone surrogates', raw: '{"name": "\\ud800", "q": "\\udfff"}' },
  { name: 'an empty object', raw: '{}' },
  { name: 'a bare string', raw: '"hello"' },
  { name: 'declared as UTF-16', raw: '{"x": "a"}', headers: { 'content-type': 'application/json; charset=utf-16' } },
  { name: 'declared as multipart without a boundary', raw: 'x', headers: { 'content-type': 'multipart/form-data' } },
];

const UNUSUAL_METHODS = ['PROPFIND', 'TRACE', 'SEARCH', 'PURGE', 'LOCK', 'MKCOL', 'REPORT', 'PUT', 'PATCH', 'DELETE', 'POST', 'GET'];

const HOSTILE_HEADERS: { name: string; headers: () => Promise<Record<string, string>> }[] = [
  { name: 'a signed JWT whose sub is not a UUID', headers: async () => ({ authorization: `Bearer ${await signed({ sub: 'admin', sid: randomUUID() })}` }) },
  { name: 'a signed JWT whose sub is an object', headers: async () => ({ authorization: `Bearer ${await signed({ sub: { $ne: 1 }, sid: randomUUID() })}` }) },
  { name: 'a signed JWT without a session', headers: async () => ({ authorization: `Bearer ${await signed({ sub: randomUUID() })}` }) },
  { name: 'a signed JWT whose sid is SQL', headers: async () => ({ authorization: `Bearer ${await signed({ sub: randomUUID(), sid: "' or 1=1--" })}` }) },
  { name: 'an unsigned JWT', headers: async () => ({ authorization: `Bearer ${Buffer.from('{"alg":"none"}').toString('base64url')}.${Buffer.from('{"sub":"x"}').toString('base64url')}.` }) },
  { name: 'Basic credentials', headers: async () => ({ authorization: 'Basic YWRtaW46YWRtaW4=' }) },
  { name: 'a huge API key', headers: async () => ({ authorization: `Bearer svc_${'a'.repeat(6000)}` }) },
  { name: 'a Bearer with a tab inside', headers: async () => ({ authorization: 'Bearer abc\tdef' }) },
  { name: 'a Bearer of 8 KB', headers: async () => ({ authorization: `Bearer ${'e'.repeat(8000)}.${'f'.repeat(100)}.x` }) },
];

/** One request written by hand on a fresh socket (fetch refuses TRACE, CONNECT and methods Node does not know). */
function rawExchange(request: string): Promise<{ status: number; headers: string; body: unknown }> {
  const url = new URL(app.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => socket.end(request));
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const split = text.indexOf('\r\n\r\n');
      const body = text.slice(split + 4);
      resolve({ status: Number(text.slice(9, 12)), headers: text.slice(0, split), body: body ? JSON.parse(body) : undefined });
    });
  });
}

async function failuresFor(path: string, method: string, options: Parameters<TestApp['request']>[2]): Promise<string[]> {
  const res = await app.request(method, path, options);
  const problem = documentedError(res, path);
  return problem ? [`${method} ${path.slice(0, 80)}: ${problem}`] : [];
}

describe('hostile input over every route', () => {
  it('walks a real route table', () => {
    expect(routes.length).toBeGreaterThanOrEqual(25);
    expect(routes.map((r) => r.path)).toEqual(expect.arrayContaining(['/healthz', '/api/auth/login', '/api/runs/:id/events']));
  });

  it('methods a path does not implement → 405 with Allow and a JSON body', async () => {
    const failures: string[] = [];
    for (const route of routes) {
      const path = validPath(route.path);
      const allowedHere = new Set(routes.filter((r) => validPath(r.path) === path).flatMap((r) => r.methods));
      for (const method of UNUSUAL_METHODS.filter((m) => !allowedHere.has(m))) {
        const res = await rawExchange(`${method} ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`);
        const allow = new Set(/\r\nAllow: ([^\r]*)/i.exec(res.headers)?.[1]?.split(', '));
        const body = errorOf(path, res.body);
        if (res.status !== 405) failures.push(`${method} ${path}: ${res.status} ${String(JSON.stringify(res.body)).slice(0, 120)}`);
        else if (![...allowedHere].every((m) => allow.has(m))) failures.push(`${method} ${path}: Allow is "${[...allow].join(', ')}"`);
        else if (body?.error !== 'method_not_allowed' || typeof body.message !== 'string') failures.push(`${method} ${path}: body ${JSON.stringify(body)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('OPTIONS names the allowed methods', async () => {
    const res = await app.request('OPTIONS', '/api/me/api-keys');
    expect(res.status).toBe(204);
    expect(res.headers.get('allow')?.split(', ').sort()).toEqual(['GET', 'HEAD', 'OPTIONS', 'POST']);
  });

  it('an unknown path with an unusual method → 404 JSON', async () => {
    const res = await app.request('PROPFIND', '/no/such/path');
    expect(res.status).toBe(404);
    expect(documentedError(res)).toBeUndefined();
  });

  it('hostile path ids, with and without a credential', async () => {
    const failures: string[] = [];
    for (const route of routes.filter((r) => r.path.includes(':'))) {
      for (const id of HOSTILE_IDS) {
        for (const method of route.methods) {
          const path = fill(route.path, id);
          failures.push(...(await failuresFor(path, method, { token, body: method === 'GET' ? undefined : {} })));
          failures.push(...(await failuresFor(path, method, {})));
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('hostile bodies on every route that takes one', async () => {
    const failures: string[] = [];
    for (const route of routes) {
      for (const method of route.methods.filter((m) => m !== 'GET')) {
        for (const body of HOSTILE_BODIES) {
          const found = await failuresFor(validPath(route.path), method, { token, raw: body.raw, headers: body.headers });
          failures.push(...found.map((f) => `${f} (${body.name})`));
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('a lone UTF-16 surrogate in a field a route otherwise accepts → 422 naming its place, in values and in keys (Postgres cannot store it)', async () => {
    const key = (await app.request('POST', '/api/me/api-keys', { token, body: { name: 'k' } })).body;
    const cases: [string, string, string, (string | number)[]][] = [
      ['POST', '/api/auth/login', '{"email": "a\\ud800@example.test", "password": "password-1"}', ['body', 'email']],
      ['PATCH', `/api/me/api-keys/${key.id}`, '{"name": "key \\udfff"}', ['body', 'name']],
      ['POST', '/api/agents', '{"name": "agent", "instructions": "x\\ud83d"}', ['body', 'instructions']],
      ['POST', '/api/runs', '{"mode": "react", "q": "hi", "user_metadata": "\\ud800\\ud800"}', ['body', 'user_metadata']],
      ['POST', '/api/agents', '{"name": "agent", "model_settings": {"\\ud800": 1}}', ['body', 'model_settings', '\ud800']],
    ];
    for (const [method, path, raw, loc] of cases) {
      const res = await app.request(method, path, { token, raw });
      expect({ path, status: res.status }).toEqual({ path, status: 422 });
      expect(res.body.detail[0]).toMatchObject({ loc, type: 'string_pattern_mismatch' });
      expect(res.body.detail[0].msg).toMatch(/lone UTF-16 surrogate/);
    }
    // A pair is a character, not a surrogate: accepted.
    expect((await app.request('PATCH', `/api/me/api-keys/${key.id}`, { token, raw: '{"name": "key \\ud83d\\ude00"}' })).status).toBe(200);
  });

  it('deep nesting → 422 json_invalid everywhere: before authentication where the body may carry the credential, after it elsewhere', async () => {
    const cases: [string, string | undefined][] = [['/api/auth/login', undefined], ['/api/auth/refresh', undefined], ['/api/react', undefined], ['/api/knowledge-bases', token]];
    for (const [path, as] of cases) {
      for (const raw of [nested(10_000), nested(100_000), nestedObjects(10_000)]) {
        const res = await app.request('POST', path, { raw, token: as });
        expect(res.status).toBe(422);
        expect(res.body.detail[0]).toMatchObject({ loc: ['body'], type: 'json_invalid', ctx: { max_depth: 64 } });
      }
    }
    // DESIGN §21: without a credential the body of a route that does not take one in it is never read.
    expect((await app.request('POST', '/api/knowledge-bases', { raw: nested(10_000) })).status).toBe(401);
    // Nesting within the bound is parsed as usual (and refused by the schema, not the depth check).
    const ok = await app.request('POST', '/api/auth/login', { raw: `{"email": ${nested(60)}, "password": "x"}` });
    expect(ok.status).toBe(422);
    expect(ok.body.detail[0].type).toBe('string_type');
  });

  it('brackets inside strings do not count as nesting', async () => {
    const res = await app.request('POST', '/api/auth/login', { raw: JSON.stringify({ email: '['.repeat(300), password: '{'.repeat(300) }) });
    expect(res.status).toBe(401);
  });

  it('hostile credentials on every route that needs one → 401 invalid_token', async () => {
    const failures: string[] = [];
    const open = new Set(apiRoutes(app.services).filter((r) => r.auth === 'public').map((r) => r.path));
    expect([...open]).toEqual(expect.arrayContaining(['/healthz', '/readyz', '/api/auth/login', '/api/auth/refresh', '/openapi.json', '/docs']));
    const guarded = routes.filter((r) => !open.has(r.path));
    for (const header of HOSTILE_HEADERS) {
      const headers = await header.headers();
      for (const route of guarded) {
        for (const method of route.methods) {
          const res = await app.request(method, validPath(route.path), { headers, body: method === 'GET' ? undefined : {} });
          const problem = documentedError(res, route.path) ?? (res.status === 401 || res.status === 422 ? undefined : `expected 401, got ${res.status}`);
          if (problem) failures.push(`${method} ${route.path} with ${header.name}: ${problem}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('hostile headers a route reads, on every GET route', async () => {
    const failures: string[] = [];
    const headerSets: Record<string, string>[] = [
      { 'last-event-id': '../../etc' },
      { 'last-event-id': '99999999999999999999-99999999999999999999' },
      { 'last-event-id': '-1' },
      { 'last-event-id': 'x'.repeat(4000) },
      { 'x-request-id': 'x'.repeat(4000) },
      { 'x-request-id': '../\u00e9' },
      { 'x-forwarded-for': 'not-an-address, ::ffff:999.1.1.1, ' },
      { 'content-type': 'application/json; charset=klingon' },
      { accept: '*/*;q=NaN' },
      { range: 'bytes=0-1,1-2' },
    ];
    for (const route of routes.filter((r) => r.methods.includes('GET') && r.path.includes(':'))) {
      for (const headers of headerSets) {
        for (const query of ['', '?after=abc', '?after=1-0&after=2-0', '?page=1e400']) {
          const res = await app.request('GET', `${validPath(route.path)}${query}`, { token, headers });
          const problem = documentedError(res, route.path);
          if (problem) failures.push(`GET ${route.path}${query} with ${JSON.stringify(headers).slice(0, 60)}: ${problem}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('a correctly signed JWT whose sub is not a UUID → 401 invalid_token', async () => {
    const res = await app.request('GET', '/api/auth/verify', { headers: { authorization: `Bearer ${await signed({ sub: 'not-a-uuid', sid: randomUUID() })}` } });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_token');
  });

  it('event ids past 64 bits → 422 (Last-Event-ID and ?after=)', async () => {
    const run = '/api/runs/00000000-0000-4000-8000-000000000000/events';
    for (const id of ['99999999999999999999-0', '18446744073709551616-0', '0-18446744073709551616']) {
      const header = await app.request('GET', run, { token, headers: { 'last-event-id': id } });
      expect(header.status).toBe(422);
      expect(header.body.detail[0].loc).toEqual(['header', 'last-event-id']);
      const query = await app.request('GET', `${run}?after=${id}`, { token });
      expect(query.status).toBe(422);
      expect(query.body.detail[0].loc).toEqual(['query', 'after']);
    }
    // An id of now is well-formed: the unknown run answers 404.
    expect((await app.request('GET', `${run}?after=${Date.now()}-0`, { token })).status).toBe(404);
  });

  it('event ids from the future (the edge of 64 bits included) → 422 at once, not a stream that never starts (issue 22 audit)', async () => {
    const started = await app.request('POST', '/api/runs', { token, body: { mode: 'react', q: 'hi' } });
    const events = `/api/runs/${started.body.run_id}/events`;
    for (const id of ['18446744073709551615-184', '18446744073709551615-18446744073709551615', `${Date.now() + 2 * 24 * 3600 * 1000}-0`]) {
      const query = await app.request('GET', `${events}?after=${id}`, { token });
      expect(query.status).toBe(422);
      expect(query.body.detail[0]).toMatchObject({ loc: ['query', 'after'], msg: expect.stringContaining('in the future') });
      const header = await app.request('GET', events, { token, headers: { 'last-event-id': id } });
      expect(header.status).toBe(422);
      expect(header.body.detail[0].loc).toEqual(['header', 'last-event-id']);
    }
  });

  it('extreme numbers in query strings → 422', async () => {
    for (const query of ['page=1e400', 'size=Infinity', 'page=0x10', 'size=-0', 'page=18446744073709551616', 'size=%2B%2B1']) {
      const res = await app.request('GET', `/api/knowledge-bases?${query}`, { token });
      expect(res.status, query).toBe(422);
    }
  });

  it('requests Node itself rejects still answer JSON', async () => {
    for (const [line, status, error] of [
      ['CONNECT 127.0.0.1:22 HTTP/1.1', 405, 'method_not_allowed'],
      ['FROBNICATE /healthz HTTP/1.1', 400, 'bad_request'],
      ['GET /healthz HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2', 400, 'bad_request'],
      [`GET /healthz HTTP/1.1\r\nX-Big: ${'b'.repeat(20_000)}`, 431, 'headers_too_large'],
    ] as const) {
      const answer = await rawExchange(`${line}\r\nHost: x\r\n\r\n`);
      expect(answer.status, line.slice(0, 60)).toBe(status);
      expect(answer.body, line.slice(0, 60)).toEqual({ error, message: expect.any(String) });
    }
  });

  it('a bug answers 500 {error: internal_error, message, request_id} JSON, never plain text', async () => {
    for (const path of ['/test-only/throws', '/test-only/unserialisable']) {
      const res = await app.request('GET', path, { headers: { 'x-request-id': 'req-123' } });
      expect(res.status, path).toBe(500);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
      expect(res.body, path).toEqual({ error: 'internal_error', message: expect.any(String), request_id: 'req-123' });
    }
  });
});

describe('headers', () => {
  it('token responses are not cacheable; every response says nosniff', async () => {
    const { email, password } = await app.createUser();
    const login = await app.request('POST', '/api/auth/login', { body: { email, password } });
    const refresh = await app.request('POST', '/api/auth/refresh', { body: { refresh_token: login.body.refresh_token } });
    const key = await app.request('POST', '/api/me/api-keys', { token: login.body.access_token, body: { name: 'k' } });
    for (const res of [login, refresh, key]) {
      expect(res.status).toBeLessThan(300);
      expect(res.headers.get('cache-control')).toBe('no-store');
    }
    for (const res of [login, refresh, key, await app.request('GET', '/healthz'), await app.request('GET', '/nope')]) {
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });
});

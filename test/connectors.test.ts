import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { startTestApp, type RequestOptions, type Response, type TestApp } from './support/app.js';
import { EverythingServer, LocalServer } from './support/mcp-server.js';

/** Connector CRUD, scopes, ownership, the connection test against the reference MCP server, and where secrets go. */

const SECRET = 'sk-conn-4b1d9e7f2a6c8035e1f4';
const OTHER_SECRET = 'sk-conn-second-value-99c1a7e3';
let app: TestApp;
let server: EverythingServer;
let proxy: LocalServer;
let token: string;
/** Every response body the tests saw: none may carry a secret. */
const responses: string[] = [];

async function call<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<Response<T>> {
  const res = await app.request<T>(method, path, options);
  responses.push(`${[...res.headers].join('\n')}\n${res.text}`);
  return res;
}

beforeAll(async () => {
  [app, server] = await Promise.all([startTestApp({ env: { CONNECTOR_TIMEOUT_MS: '20000' } }), EverythingServer.start()]);
  proxy = await LocalServer.recordingProxy(server.url);
  token = (await app.signedInUser()).token;
});
afterAll(async () => {
  await Promise.allSettled([app.close(), proxy.stop(), server.stop()]);
});

const connectorBody = (overrides: Record<string, unknown> = {}) => ({
  name: `everything-${Math.random().toString(36).slice(2, 8)}`,
  kind: 'mcp',
  url: proxy.url(),
  headers: { 'X-Api-Key': SECRET },
  ...overrides,
});

async function createConnector(as = token, overrides: Record<string, unknown> = {}) {
  const res = await call('POST', '/api/connectors', { token: as, body: connectorBody(overrides) });
  expect(res.status).toBe(201);
  return res.body;
}

describe('connector records', () => {
  it('create → 201 with the record of DESIGN §8: header names only, never values', async () => {
    const res = await call('POST', '/api/connectors', { token, body: connectorBody({ name: 'Everything', description: 'reference server', headers: { 'X-Api-Key': SECRET, Authorization: `Bearer ${OTHER_SECRET}` } }) });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(
      ['created_at', 'description', 'id', 'is_active', 'kind', 'last_checked_at', 'last_error', 'name', 'secret_headers', 'status', 'tools', 'transport', 'updated_at', 'url'].sort(),
    );
    expect(res.body).toMatchObject({
      name: 'Everything',
      kind: 'mcp',
      url: proxy.url(),
      transport: 'streamable_http',
      description: 'reference server',
      is_active: true,
      secret_headers: ['Authorization', 'X-Api-Key'],
      status: 'unknown',
      last_error: null,
      last_checked_at: null,
      tools: [],
    });
    const row = await app.services.knex('connectors').where({ id: res.body.id }).first();
    expect(JSON.stringify(row)).not.toContain(SECRET);
    expect(JSON.stringify(row)).not.toContain(OTHER_SECRET);
  });

  it('list (page/size envelope, newest first), get, patch, delete', async () => {
    const { token: mine } = await app.signedInUser();
    const first = await createConnector(mine, { name: 'first' });
    const second = await createConnector(mine, { name: 'second', transport: 'sse', is_active: false });
    const list = await call('GET', '/api/connectors?size=1&page=1', { token: mine });
    expect(list.body).toMatchObject({ total: 2, page: 1, size: 1, pages: 2 });
    expect(list.body.items.map((c: { id: string }) => c.id)).toEqual([second.id]);
    expect((await call('GET', '/api/connectors?page=2&size=1', { token: mine })).body.items[0].id).toBe(first.id);
    expect((await call('GET', `/api/connectors/${second.id}`, { token: mine })).body).toMatchObject({ name: 'second', transport: 'sse', is_active: false });

    const patched = await call('PATCH', `/api/connectors/${first.id}`, { token: mine, body: { name: 'renamed', description: 'd', is_active: false } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'renamed', description: 'd', is_active: false, secret_headers: ['X-Api-Key'] });

    expect((await call('DELETE', `/api/connectors/${first.id}`, { token: mine })).status).toBe(204);
    expect((await call('GET', `/api/connectors/${first.id}`, { token: mine })).status).toBe(404);
    expect((await call('DELETE', `/api/connectors/${first.id}`, { token: mine })).status).toBe(404);
    expect((await call('GET', '/api/connectors', { token: mine })).body.total).toBe(1);
  });

  it('PATCH headers replaces or removes single headers (names ignore case); the others stay sealed as they were', async () => {
    const created = await createConnector(token, { headers: { 'X-Api-Key': SECRET, 'X-Team': 'team-one-value' } });
    const before = await app.services.knex('connectors').where({ id: created.id }).first();
    const replaced = await call('PATCH', `/api/connectors/${created.id}`, { token, body: { headers: { 'x-api-key': OTHER_SECRET } } });
    expect(replaced.body.secret_headers).toEqual(['X-Team', 'x-api-key']);
    const after = await app.services.knex('connectors').where({ id: created.id }).first();
    expect(after.secret_headers['X-Team']).toBe(before.secret_headers['X-Team']);
    expect(after.secret_headers['x-api-key']).not.toBe(before.secret_headers['X-Api-Key']);

    const removed = await call('PATCH', `/api/connectors/${created.id}`, { token, body: { headers: { 'X-TEAM': null, 'X-Absent': null } } });
    expect(removed.body.secret_headers).toEqual(['x-api-key']);

    const many = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`X-H${i}`, 'value-long-enough']));
    const tooMany = await call('PATCH', `/api/connectors/${created.id}`, { token, body: { headers: many } });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail[0]).toMatchObject({ loc: ['body', 'headers'], type: 'value_error' });
  });

  it('names are unique per user, compared as tool prefixes (case and punctuation aside) → 422; another user may reuse one', async () => {
    await createConnector(token, { name: 'GitHub Tools' });
    for (const name of ['GitHub Tools', 'github tools', 'github_tools', 'GitHub: Tools!']) {
      const res = await call('POST', '/api/connectors', { token, body: connectorBody({ name }) });
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'name'], type: 'value_error' });
    }
    const other = await createConnector(token, { name: 'Other' });
    expect((await call('PATCH', `/api/connectors/${other.id}`, { token, body: { name: 'github-tools ' } })).status).toBe(200);
    expect((await call('PATCH', `/api/connectors/${other.id}`, { token, body: { name: 'GITHUB TOOLS' } })).status).toBe(422);
    const stranger = await app.signedInUser();
    await createConnector(stranger.token, { name: 'GitHub Tools' });
  });
});

describe('access', () => {
  let connector: { id: string };
  beforeAll(async () => {
    connector = await createConnector();
  });

  it('scope "connectors" reads and writes; other scopes are forbidden', async () => {
    const scoped = (await call('POST', '/api/me/api-keys', { token, body: { name: 'c', scopes: 'connectors' } })).body.key;
    expect((await call('GET', '/api/connectors', { token: scoped })).status).toBe(200);
    expect((await call('GET', `/api/connectors/${connector.id}`, { token: scoped })).status).toBe(200);
    const made = await call('POST', '/api/connectors', { token: scoped, body: connectorBody() });
    expect(made.status).toBe(201);
    expect((await call('PATCH', `/api/connectors/${made.body.id}`, { token: scoped, body: { description: 'x' } })).status).toBe(200);
    expect((await call('DELETE', `/api/connectors/${made.body.id}`, { token: scoped })).status).toBe(204);

    const agentsOnly = (await call('POST', '/api/me/api-keys', { token, body: { name: 'a', scopes: 'agents chat kb' } })).body.key;
    for (const [method, path] of [
      ['GET', '/api/connectors'],
      ['GET', `/api/connectors/${connector.id}`],
      ['POST', '/api/connectors'],
      ['PATCH', `/api/connectors/${connector.id}`],
      ['DELETE', `/api/connectors/${connector.id}`],
      ['POST', `/api/connectors/${connector.id}/test`],
    ] as const) {
      const res = await call(method, path, { token: agentsOnly, body: method === 'GET' || method === 'DELETE' ? undefined : {} });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toBe('forbidden');
    }
    expect((await call('GET', '/api/connectors')).status).toBe(401);
  });

  it('restricted users read but never write', async () => {
    const restricted = await app.signedInUser('restricted');
    expect((await call('GET', '/api/connectors', { token: restricted.token })).body).toMatchObject({ items: [], total: 0 });
    const own = await app.services.connectors.create(restricted.user.id, { name: 'seeded', kind: 'mcp', url: proxy.url(), transport: 'streamable_http', description: '', is_active: true, headers: {} });
    expect((await call('GET', `/api/connectors/${own.id}`, { token: restricted.token })).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/api/connectors', connectorBody()],
      ['PATCH', `/api/connectors/${own.id}`, { name: 'x' }],
      ['DELETE', `/api/connectors/${own.id}`, undefined],
      ['POST', `/api/connectors/${own.id}/test`, undefined],
    ] as const) {
      const res = await call(method, path, { token: restricted.token, body });
      expect(res.status, `${method} ${path}`).toBe(403);
      expect(res.body.error).toBe('forbidden');
    }
    expect((await app.services.knex('connectors').where({ id: own.id }).first()).name).toBe('seeded');
  });

  it('another user’s connector answers 404 to every verb and is left untouched', async () => {
    const stranger = await app.signedInUser();
    for (const [method, path, body] of [
      ['GET', `/api/connectors/${connector.id}`, undefined],
      ['PATCH', `/api/connectors/${connector.id}`, { name: 'stolen', headers: { 'X-Api-Key': 'mine-now-123' } }],
      ['DELETE', `/api/connectors/${connector.id}`, undefined],
      ['POST', `/api/connectors/${connector.id}/test`, undefined],
    ] as const) {
      const res = await call(method, path, { token: stranger.token, body });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body).toEqual({ error: 'not_found', message: 'Connector not found' });
    }
    expect((await call('GET', '/api/connectors', { token: stranger.token })).body.total).toBe(0);
    const mine = await call('GET', `/api/connectors/${connector.id}`, { token });
    expect(mine.body).toMatchObject({ status: 'unknown', secret_headers: ['X-Api-Key'] });
    expect(mine.body.name).not.toBe('stolen');
  });
});

describe('POST /api/connectors/{id}/test', () => {
  it('connects to the real MCP server, lists its tools and records the outcome; the secret header reaches it', async () => {
    const connector = await createConnector();
    const seenBefore = proxy.requests.length;
    const res = await call('POST', `/api/connectors/${connector.id}/test`, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', latency_ms: expect.any(Number) });
    expect(res.body.error).toBeUndefined();
    const echo = res.body.tools.find((t: { name: string }) => t.name === 'echo');
    expect(echo).toEqual({ name: 'echo', description: 'Echoes back the input string', input_schema: expect.objectContaining({ type: 'object', properties: { message: expect.any(Object) } }) });
    const seen = proxy.requests.slice(seenBefore);
    expect(seen.length).toBeGreaterThan(1);
    for (const request of seen) expect(request.headers['x-api-key']).toBe(SECRET);

    const record = (await call('GET', `/api/connectors/${connector.id}`, { token })).body;
    expect(record).toMatchObject({ status: 'ok', last_error: null });
    expect(Date.parse(record.last_checked_at)).not.toBeNaN();
    expect(record.tools).toContainEqual({ name: 'echo', description: 'Echoes back the input string' });
    expect(record.updated_at).toBe(connector.updated_at);

    const moved = await call('PATCH', `/api/connectors/${connector.id}`, { token, body: { url: server.url } });
    expect(moved.body).toMatchObject({ status: 'unknown', last_checked_at: null, tools: [] });
  });

  it('a legacy SSE server (transport "sse") is tested over SSE', async () => {
    const legacy = await EverythingServer.start('sse');
    try {
      const connector = await createConnector(token, { url: legacy.url, transport: 'sse', headers: {} });
      const res = await call('POST', `/api/connectors/${connector.id}/test`, { token });
      expect(res.body.status).toBe('ok');
      expect(res.body.tools.map((t: { name: string }) => t.name)).toContain('echo');
    } finally {
      await legacy.stop();
    }
  });

  it('a server that is down: 200 with status "error" and the reason, recorded on the connector', async () => {
    const gone = await LocalServer.start(() => {});
    const url = gone.url();
    await gone.stop();
    const connector = await createConnector(token, { url });
    const res = await call('POST', `/api/connectors/${connector.id}/test`, { token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'error', tools: [], error: expect.stringContaining('ECONNREFUSED') });
    expect((await call('GET', `/api/connectors/${connector.id}`, { token })).body).toMatchObject({ status: 'error', last_error: res.body.error });
  });

  it('a server that never answers: status "error" after CONNECTOR_TIMEOUT_MS; a third concurrent test of one user → 429', async () => {
    const [hanging, quick] = await Promise.all([LocalServer.hanging(), startTestApp({ env: { CONNECTOR_TIMEOUT_MS: '500' } })]);
    try {
      const { token: quickToken } = await quick.signedInUser();
      const created = await quick.request('POST', '/api/connectors', { token: quickToken, body: connectorBody({ url: hanging.url() }) });
      const test = () => quick.request('POST', `/api/connectors/${created.body.id}/test`, { token: quickToken });
      const running = [test(), test()];
      await hanging.waitFor(() => hanging.requests.length >= 2);
      const third = await test();
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toBe('1');
      for (const res of await Promise.all(running)) {
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ status: 'error', error: 'timed out after 500 ms' });
      }
      expect((await test()).status).toBe(200);
    } finally {
      await Promise.all([hanging.stop(), quick.close()]);
    }
  });

  it('a redirect is not followed: status "error", and the place it points to is never reached', async () => {
    const target = await LocalServer.start((_req, res) => res.end());
    const redirecting = await LocalServer.redirecting(target.url('/internal'));
    try {
      const connector = await createConnector(token, { url: redirecting.url() });
      const res = await call('POST', `/api/connectors/${connector.id}/test`, { token });
      expect(res.body).toMatchObject({ status: 'error', error: expect.stringContaining('refused to follow a redirect (302') });
      expect(redirecting.requests.length).toBeGreaterThan(0);
      expect(target.requests).toHaveLength(0);
    } finally {
      await Promise.all([target.stop(), redirecting.stop()]);
    }
  });
});

describe('the outbound policy with private destinations refused (as in production)', () => {
  let strict: TestApp;
  let strictToken: string;
  beforeAll(async () => {
    strict = await startTestApp({ env: { OUTBOUND_ALLOW_PRIVATE: 'false' } });
    strictToken = (await strict.signedInUser()).token;
  });
  afterAll(() => strict.close());

  it.each(['http://127.0.0.1/mcp', 'http://2130706433/', 'http://0177.0.0.1/', 'http://0x7f.1/', 'http://10.0.0.8/', 'http://169.254.169.254/latest', 'http://100.64.1.1/', 'http://[::1]/', 'http://[::ffff:127.0.0.1]/', 'http://[fd00::1]/', 'http://[fe80::1]/', 'http://0.0.0.0/'])(
    'an IP literal %s → 422 at save time',
    async (url) => {
      const res = await strict.request('POST', '/api/connectors', { token: strictToken, body: { name: 'x', kind: 'mcp', url } });
      expect(res.status).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'url'], type: 'value_error', msg: expect.stringContaining('must not point to a') });
    },
  );

  it('a name resolving to loopback is saved, then refused when connecting: the server sees nothing', async () => {
    const created = await strict.request('POST', '/api/connectors', { token: strictToken, body: { name: 'sneaky', kind: 'mcp', url: `http://localhost:${proxy.port}/mcp` } });
    expect(created.status).toBe(201);
    const before = proxy.requests.length;
    const res = await strict.request('POST', `/api/connectors/${created.body.id}/test`, { token: strictToken });
    expect(res.body).toMatchObject({ status: 'error', error: expect.stringContaining('non-public addresses') });
    expect(proxy.requests.length).toBe(before);
    const patched = await strict.request('PATCH', `/api/connectors/${created.body.id}`, { token: strictToken, body: { url: 'http://[::ffff:a9fe:a9fe]/' } });
    expect(patched.status).toBe(422);
  });
});

describe('agents take connector_ids', () => {
  it('own connectors only (else 422 per id); deleting a connector takes it off its agents', async () => {
    const mine = await createConnector();
    const kept = await createConnector();
    const stranger = await app.signedInUser();
    const theirs = await createConnector(stranger.token);
    const unknown = '00000000-0000-4000-8000-000000000000';
    const refused = await call('POST', '/api/agents', { token, body: { name: 'a', connector_ids: [mine.id, theirs.id, unknown] } });
    expect(refused.status).toBe(422);
    expect(refused.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'connector_ids', 1],
      ['body', 'connector_ids', 2],
    ]);
    const agent = await call('POST', '/api/agents', { token, body: { name: 'a', connector_ids: [mine.id, kept.id, mine.id] } });
    expect(agent.status).toBe(201);
    expect(agent.body.connector_ids).toEqual([mine.id, kept.id]);
    expect((await call('POST', '/api/agents', { token, body: { name: 'b', connector_ids: ['nope'] } })).status).toBe(422);
    expect((await call('POST', '/api/agents', { token, body: { name: 'b' } })).body.connector_ids).toEqual([]);

    await call('DELETE', `/api/connectors/${mine.id}`, { token });
    expect((await call('GET', `/api/agents/${agent.body.id}`, { token })).body.connector_ids).toEqual([kept.id]);
  });
});

const uuid = '00000000-0000-4000-8000-000000000000';
const createBodies: [string, unknown, string][] = [
  ['no body fields', {}, 'missing'],
  ['no kind', { name: 'a', url: 'http://example.com/' }, 'missing'],
  ['no url', { name: 'a', kind: 'mcp' }, 'missing'],
  ['name empty', { name: '', kind: 'mcp', url: 'http://example.com/' }, 'string_too_short'],
  ['name blank', { name: '   ', kind: 'mcp', url: 'http://example.com/' }, 'string_too_short'],
  ['name 65 chars', { name: 'n'.repeat(65), kind: 'mcp', url: 'http://example.com/' }, 'string_too_long'],
  ['name number', { name: 5, kind: 'mcp', url: 'http://example.com/' }, 'string_type'],
  ['name null', { name: null, kind: 'mcp', url: 'http://example.com/' }, 'string_type'],
  ['kind unknown', { name: 'a', kind: 'openapi', url: 'http://example.com/' }, 'literal_error'],
  ['kind array', { name: 'a', kind: ['mcp'], url: 'http://example.com/' }, 'literal_error'],
  ['url number', { name: 'a', kind: 'mcp', url: 80 }, 'string_type'],
  ['url not a URL', { name: 'a', kind: 'mcp', url: 'not a url' }, 'value_error'],
  ['url relative', { name: 'a', kind: 'mcp', url: '/mcp' }, 'value_error'],
  ['url ftp', { name: 'a', kind: 'mcp', url: 'ftp://example.com/' }, 'value_error'],
  ['url file', { name: 'a', kind: 'mcp', url: 'file:///etc/passwd' }, 'value_error'],
  ['url javascript', { name: 'a', kind: 'mcp', url: 'javascript:alert(1)' }, 'value_error'],
  ['url with credentials', { name: 'a', kind: 'mcp', url: 'https://user:pw@example.com/' }, 'value_error'],
  ['url huge', { name: 'a', kind: 'mcp', url: `https://example.com/${'a'.repeat(3000)}` }, 'string_too_long'],
  ['transport unknown', { name: 'a', kind: 'mcp', url: 'http://example.com/', transport: 'websocket' }, 'literal_error'],
  ['description huge', { name: 'a', kind: 'mcp', url: 'http://example.com/', description: 'd'.repeat(2001) }, 'string_too_long'],
  ['description object', { name: 'a', kind: 'mcp', url: 'http://example.com/', description: {} }, 'string_type'],
  ['is_active string', { name: 'a', kind: 'mcp', url: 'http://example.com/', is_active: 'yes' }, 'bool_type'],
  ['headers array', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: ['abc'] }, 'value_error'],
  ['headers array of pairs', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: [['X-A', 'b']] }, 'value_error'],
  ['headers string', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: 'X-A: b' }, 'value_error'],
  ['header value number', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: { 'X-A': 1 } }, 'string_type'],
  ['header value null', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: { 'X-A': null } }, 'string_type'],
  ['header value empty', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: { 'X-A': '' } }, 'string_too_short'],
  ['header value with CRLF', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: { 'X-A': 'ok\r\nX-Injected: 1' } }, 'string_pattern_mismatch'],
  ['header value huge', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: { 'X-A': 'v'.repeat(9000) } }, 'string_too_long'],
  ['header name with space', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: { 'X A': 'v' } }, 'string_pattern_mismatch'],
  ['header name with colon', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: { 'X-A:': 'v' } }, 'string_pattern_mismatch'],
  ['header name reserved', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: { 'Mcp-Session-Id': 'v' } }, 'value_error'],
  ['header name Host', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: { host: 'internal' } }, 'value_error'],
  ['headers differing only in case', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: { 'X-A': 'one-value', 'x-a': 'two-value' } }, 'value_error'],
  ['eleven headers', { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`X-${i}`, 'v'])) }, 'value_error'],
  ['unknown field', { name: 'a', kind: 'mcp', url: 'http://example.com/', secret: 'x' }, 'extra_forbidden'],
  ['id given', { id: uuid, name: 'a', kind: 'mcp', url: 'http://example.com/' }, 'extra_forbidden'],
  ['status given', { name: 'a', kind: 'mcp', url: 'http://example.com/', status: 'ok' }, 'extra_forbidden'],
  ['array body', [{ name: 'a', kind: 'mcp', url: 'http://example.com/' }], 'model_attributes_type'],
  ['string body', 'connector', 'model_attributes_type'],
  ['NUL in name', { name: 'a\u0000', kind: 'mcp', url: 'http://example.com/' }, 'string_pattern_mismatch'],
];
const patchBodies: [string, unknown, string][] = [
  ['name empty', { name: '' }, 'string_too_short'],
  ['url private scheme', { url: 'gopher://x/' }, 'value_error'],
  ['transport number', { transport: 1 }, 'literal_error'],
  ['headers value number', { headers: { 'X-A': 5 } }, 'string_type'],
  ['header name reserved', { headers: { 'Content-Type': 'text/plain' } }, 'value_error'],
  ['unknown field', { tool_prefix: 'x' }, 'extra_forbidden'],
  ['secret_headers given', { secret_headers: ['X-A'] }, 'extra_forbidden'],
  ['is_active null', { is_active: null }, 'bool_type'],
];

describe('malformed connector requests answer 4xx, never 5xx, and store nothing', () => {
  let target: { id: string; name: string };
  let count: number;
  beforeAll(async () => {
    target = await createConnector();
    count = Number((await app.services.knex('connectors').count('* as n').first())!.n);
  });

  it.each(createBodies.map(([name, body, type]) => [name, type, body] as const))('POST %s → 422 %s', async (_name, type, body) => {
    const res = await call('POST', '/api/connectors', { token, body });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { type: string }) => d.type)).toContain(type);
  });

  it.each(patchBodies.map(([name, body, type]) => [name, type, body] as const))('PATCH %s → 422 %s', async (_name, type, body) => {
    const res = await call('PATCH', `/api/connectors/${target.id}`, { token, body });
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { type: string }) => d.type)).toContain(type);
  });

  it('refused header values are not echoed back', async () => {
    const res = await call('POST', '/api/connectors', { token, body: { name: 'a', kind: 'mcp', url: 'http://example.com/', headers: { 'X-A': `${SECRET}\n` } } });
    expect(res.status).toBe(422);
    const missing = await call('POST', '/api/connectors', { token, body: { kind: 'mcp', url: 'http://example.com/', headers: { 'X-A': SECRET } } });
    expect(missing.status).toBe(422);
    expect(res.text + missing.text).not.toContain(SECRET);
  });

  it('hostile transport-level input', async () => {
    const nested = `${'{"a":'.repeat(500)}1${'}'.repeat(500)}`;
    const cases: [string, string, RequestOptions][] = [
      ['POST', '/api/connectors', { token, raw: '{"name": "a", "kind": "mcp", "url": ' }],
      ['POST', '/api/connectors', { token, raw: nested }],
      ['POST', '/api/connectors', { token, raw: '{"name":"a","kind":"mcp","url":"http://example.com/","is_active":1e999}' }],
      ['POST', '/api/connectors', { token, raw: 'name=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } }],
      ['POST', '/api/connectors', { token }],
      ['PATCH', `/api/connectors/${target.id}`, { token, raw: '[]' }],
      ['GET', '/api/connectors/not-a-uuid', { token }],
      ['GET', `/api/connectors/${'9'.repeat(400)}`, { token }],
      ['GET', "/api/connectors/1' or '1'='1", { token }],
      ['POST', '/api/connectors/not-a-uuid/test', { token }],
      ['DELETE', '/api/connectors/%00', { token }],
      ['GET', '/api/connectors?size=0', { token }],
      ['GET', '/api/connectors?size=101', { token }],
      ['GET', `/api/connectors?page=${'9'.repeat(30)}`, { token }],
      ['GET', '/api/connectors?page=-1', { token }],
      ['PUT', `/api/connectors/${target.id}`, { token, body: {} }],
      ['POST', `/api/connectors/${target.id}`, { token, body: {} }],
      ['GET', `/api/connectors/${target.id}/test`, { token }],
      ['GET', '/api/connectors', { token: 'svc_notarealkey' }],
      ['GET', '/api/connectors', { headers: { authorization: 'Basic Zm9vOmJhcg==' } }],
    ];
    for (const [method, path, options] of cases) {
      const res = await call(method, path, options);
      expect(res.status, `${method} ${path} ${res.text.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${method} ${path}`).toBeLessThan(500);
    }
  });

  it('nothing was stored by any of them, and the target is unchanged', async () => {
    expect(Number((await app.services.knex('connectors').count('* as n').first())!.n)).toBe(count);
    expect((await call('GET', `/api/connectors/${target.id}`, { token })).body).toMatchObject({ name: target.name, secret_headers: ['X-Api-Key'] });
  });
});

describe('the secret header values appear nowhere but at the server', () => {
  it('not in any response, any log line, or a pg_dump of the database', async () => {
    expect(proxy.requests.some((r) => r.headers['x-api-key'] === SECRET)).toBe(true);
    expect(responses.length).toBeGreaterThan(50);
    for (const text of responses) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(OTHER_SECRET);
    }
    const logs = app.logs.join('');
    expect(logs.length).toBeGreaterThan(0);
    expect(logs).not.toContain(SECRET);
    expect(logs).not.toContain(OTHER_SECRET);

    const database = new URL(inject('databaseUrl')).pathname.slice(1);
    const { stdout } = await promisify(execFile)('pg_dump', ['-h', '127.0.0.1', '-U', 'postgres', '--data-only', '--table=connectors', database], { maxBuffer: 64 << 20 });
    const someConnector = await app.services.knex('connectors').first();
    expect(stdout).toContain(someConnector.id);
    expect(stdout).toContain('X-Api-Key');
    expect(stdout).not.toContain(SECRET);
    expect(stdout).not.toContain(OTHER_SECRET);
    const whole = await promisify(execFile)('pg_dump', ['-h', '127.0.0.1', '-U', 'postgres', database], { maxBuffer: 256 << 20 });
    expect(whole.stdout).not.toContain(SECRET);
    expect(whole.stdout).not.toContain(OTHER_SECRET);
  });
});

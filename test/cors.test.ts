import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { stream } from './support/sse.js';

/** DESIGN §12: CORS for the origins of CORS_ORIGINS only; none configured → no CORS headers at all. */
const APP_ORIGIN = 'http://app.example.test';
const OTHER_ORIGIN = 'http://127.0.0.1:5173';
const FOREIGN_ORIGIN = 'http://evil.example.test';

const corsHeaders = (headers: Headers) => [...headers.keys()].filter((name) => name.startsWith('access-control-'));
const list = (value: string | null) => (value ?? '').split(',').map((item) => item.trim().toLowerCase());

const preflight = (app: TestApp, path: string, origin: string, method: string, headers = 'authorization,content-type') =>
  app.request('OPTIONS', path, { headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers } });

describe('with CORS_ORIGINS set', () => {
  let app: TestApp;
  let token: string;
  beforeAll(async () => {
    app = await startTestApp({ env: { CORS_ORIGINS: ` ${APP_ORIGIN}, ${OTHER_ORIGIN} `, LOCAL_MODEL_TOKEN_DELAY_MS: '0' } });
    ({ token } = await app.signedInUser());
  });
  afterAll(() => app.close());

  it.each([
    ['/api/react', 'POST', 'authorization,content-type'],
    ['/api/dag', 'POST', 'content-type'],
    ['/api/runs/5b1f8ad6-3f6d-4a53-9b8c-1f2e3d4c5b6a/events', 'GET', 'authorization,last-event-id'],
    ['/api/runs/5b1f8ad6-3f6d-4a53-9b8c-1f2e3d4c5b6a/cancel', 'POST', 'authorization'],
    ['/api/agents/5b1f8ad6-3f6d-4a53-9b8c-1f2e3d4c5b6a', 'PATCH', 'authorization,content-type'],
    ['/api/auth/verify', 'GET', 'authorization,x-request-id'],
    ['/mcp', 'POST', 'authorization,content-type,mcp-protocol-version'],
    ['/v1/chat/completions', 'POST', 'authorization,content-type'],
  ])('preflight of %s (%s) from a listed origin → 204 with what the browser needs', async (path, method, requested) => {
    const res = await preflight(app, path, OTHER_ORIGIN, method, requested);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(OTHER_ORIGIN);
    expect(list(res.headers.get('access-control-allow-methods'))).toContain(method.toLowerCase());
    const allowed = list(res.headers.get('access-control-allow-headers'));
    for (const name of requested.split(',')) expect(allowed).toContain(name);
    expect(allowed).toEqual(expect.arrayContaining(['authorization', 'content-type', 'last-event-id']));
    expect(Number(res.headers.get('access-control-max-age'))).toBeGreaterThan(0);
    expect(list(res.headers.get('vary'))).toContain('origin');
    // No credentials mode: keys travel in Authorization, never in cookies.
    expect(res.headers.get('access-control-allow-credentials')).toBeNull();
  });

  it('an actual request from a listed origin may read the body and the exposed headers', async () => {
    const res = await app.request('GET', '/api/auth/verify', { token, headers: { origin: APP_ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(list(res.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(['x-run-id', 'x-conversation-id', 'x-request-id', 'retry-after']));
  });

  it('error responses carry the CORS headers too, so a page can read why it was refused', async () => {
    const unauthorized = await app.request('GET', '/api/auth/verify', { headers: { origin: APP_ORIGIN } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    const invalid = await app.request('POST', '/api/react', { token, body: { q: '' }, headers: { origin: APP_ORIGIN } });
    expect(invalid.status).toBe(422);
    expect(invalid.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    // The method/405 middleware still answers methods no route has, with CORS headers on the 405.
    const wrongMethod = await app.request('DELETE', '/api/auth/verify', { token, headers: { origin: APP_ORIGIN } });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
  });

  it('a run streamed to a listed origin exposes its run and conversation ids', async () => {
    // No worker here: the run stays queued, so the client leaves after its first event.
    const leave = new AbortController();
    const res = await stream(`${app.url}/api/react`, { token, body: { q: 'What is 2+2?' }, headers: { origin: APP_ORIGIN }, signal: leave.signal, onEvent: () => leave.abort() });
    expect(res.events[0]!.type).toBe('run');
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(res.headers.get('x-run-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(list(res.headers.get('access-control-expose-headers'))).toEqual(expect.arrayContaining(['x-run-id', 'x-conversation-id']));
  });

  it('a foreign origin gets no CORS headers, so the browser refuses the response', async () => {
    const pre = await preflight(app, '/api/react', FOREIGN_ORIGIN, 'POST');
    expect(corsHeaders(pre.headers)).toEqual([]);
    // Not a CORS answer: the method middleware's own OPTIONS reply.
    expect(pre.status).toBe(204);
    expect(pre.headers.get('allow')).toContain('POST');
    const actual = await app.request('GET', '/api/auth/verify', { token, headers: { origin: FOREIGN_ORIGIN } });
    expect(actual.status).toBe(200);
    expect(corsHeaders(actual.headers)).toEqual([]);
    // An origin is compared whole: a listed host on another port or scheme is foreign.
    const otherPort = await preflight(app, '/api/react', 'http://app.example.test:8080', 'POST');
    expect(corsHeaders(otherPort.headers)).toEqual([]);
  });

  it('OPTIONS without a preflight header is still answered by the method middleware (Allow)', async () => {
    const res = await app.request('OPTIONS', '/api/auth/verify', { headers: { origin: APP_ORIGIN } });
    expect(res.status).toBe(204);
    expect(list(res.headers.get('allow')).sort()).toEqual(['get', 'head', 'options']);
    expect(corsHeaders(res.headers)).toEqual([]);
  });
});

describe('with CORS_ORIGINS empty', () => {
  let app: TestApp;
  let token: string;
  beforeAll(async () => {
    app = await startTestApp({ env: { CORS_ORIGINS: '' } });
    ({ token } = await app.signedInUser());
  });
  afterAll(() => app.close());

  it('no response carries a CORS header, preflight or not', async () => {
    const pre = await preflight(app, '/api/react', APP_ORIGIN, 'POST');
    expect(pre.status).toBe(204);
    expect(corsHeaders(pre.headers)).toEqual([]);
    const actual = await app.request('GET', '/api/auth/verify', { token, headers: { origin: APP_ORIGIN } });
    expect(actual.status).toBe(200);
    expect(corsHeaders(actual.headers)).toEqual([]);
    expect(actual.headers.get('vary')).toBeNull();
  });
});

describe('CORS_ORIGINS configuration', () => {
  it.each(['app.example.test', 'https://app.example.test/', 'https://app.example.test/path', 'ftp://files.example.test', 'https://ok.example.test,*'])('refuses %s with one line naming the variable', (value) => {
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(ConfigError);
    expect(() => loadConfig({ CORS_ORIGINS: value })).toThrow(/CORS_ORIGINS/);
  });

  it('reads a comma-separated list, trimming blanks', () => {
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example.test, http://127.0.0.1:3000,' }).corsOrigins).toEqual(['https://a.example.test', 'http://127.0.0.1:3000']);
    expect(loadConfig({}).corsOrigins).toEqual([]);
  });
});

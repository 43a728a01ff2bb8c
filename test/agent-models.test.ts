import type dns from 'node:dns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from './support/app.js';
import type { LookupFunction } from '../src/net/outbound.js';

/** An agent's model settings are checked when it is saved (422), not when it runs (DESIGN §6). */
let app: TestApp;
let bare: TestApp;
let token: string;
beforeAll(async () => {
  // The gateway is never called on save; its address only has to be configured.
  app = await startTestApp({ env: { GATEWAY_URL: 'http://127.0.0.1:9', GATEWAY_API_KEY: 'unused' } });
  bare = await startTestApp();
  ({ token } = await app.signedInUser());
});
afterAll(() => Promise.all([app.close(), bare.close()]));

const save = (body: Record<string, unknown>, on = app, as = token) => on.request('POST', '/api/agents', { token: as, body: { name: 'a', ...body } });

describe('agent model settings', () => {
  it('defaults: no model of its own (the deployment’s default when it runs), chat format, no options', async () => {
    const res = await save({});
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ model: null, api_format: 'chat', reasoning_effort: null, thinking_budget: null, max_tokens: null, gateway_tools: [] });
  });

  it('stores every field it accepts', async () => {
    const tools = [{ type: 'web_search_preview' }, { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.test/sse' }];
    const res = await save({ model: 'o3-deep-research', api_format: 'responses', reasoning_effort: 'medium', max_tokens: 4000, gateway_tools: tools });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ model: 'o3-deep-research', api_format: 'responses', reasoning_effort: 'medium', max_tokens: 4000, gateway_tools: tools });
    const native = await save({ model: 'gemini-2.5-pro', api_format: 'native', thinking_budget: 1024 });
    expect(native.body).toMatchObject({ api_format: 'native', thinking_budget: 1024 });
    expect((await save({ model: 'gpt-5-mini', reasoning_effort: 'minimal' })).status).toBe(201);
  });

  it.each([
    ['minimal effort outside its model family', { model: 'gpt-4.1', reasoning_effort: 'minimal' }, 'reasoning_effort'],
    ['a deep-research model with no gateway tool', { model: 'o3-deep-research', api_format: 'responses' }, 'gateway_tools'],
    ['reasoning_effort on the native format', { model: 'gemini-2.5-pro', api_format: 'native', reasoning_effort: 'low' }, 'reasoning_effort'],
    ['thinking_budget on the chat format', { model: 'gpt-4.1', thinking_budget: 100 }, 'thinking_budget'],
    ['gateway tools on the native format', { model: 'gemini-2.5-pro', api_format: 'native', gateway_tools: [{ type: 'web_search_preview' }] }, 'gateway_tools'],
    ['an unknown format', { model: 'gpt-4.1', api_format: 'xml' }, 'api_format'],
    ['an unknown effort', { model: 'gpt-4.1', reasoning_effort: 'extreme' }, 'reasoning_effort'],
    ['a fractional thinking budget', { model: 'gemini-2.5-pro', api_format: 'native', thinking_budget: 1.5 }, 'thinking_budget'],
    ['max_tokens of 0', { model: 'gpt-4.1', max_tokens: 0 }, 'max_tokens'],
    ['max_tokens as text', { model: 'gpt-4.1', max_tokens: '100' }, 'max_tokens'],
    ['an mcp tool without server_url', { model: 'gpt-4.1', gateway_tools: [{ type: 'mcp', server_label: 'x' }] }, 'gateway_tools'],
    ['an mcp tool with a non-http URL', { model: 'gpt-4.1', gateway_tools: [{ type: 'mcp', server_label: 'x', server_url: 'ftp://x.test' }] }, 'gateway_tools'],
    ['an unknown gateway tool', { model: 'gpt-4.1', gateway_tools: [{ type: 'code_interpreter' }] }, 'gateway_tools'],
    ['gateway tools that are not a list', { model: 'gpt-4.1', gateway_tools: { type: 'web_search_preview' } }, 'gateway_tools'],
    ['a model name with spaces', { model: 'gpt 4' }, 'model'],
  ])('%s → 422 at %s', async (_what, body, field) => {
    const res = await save(body);
    expect(res.status).toBe(422);
    expect(res.body.detail.map((d: { loc: unknown[] }) => d.loc[1])).toContain(field);
  });

  it('a gateway model where no gateway is configured → 422 naming GATEWAY_URL', async () => {
    const { token: bareToken, user } = await bare.signedInUser();
    const res = await save({ model: 'gpt-4.1' }, bare, bareToken);
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'model'], msg: expect.stringContaining('GATEWAY_URL') });
    expect(await bare.services.models.Agent.query().where({ user_id: user.id }).resultSize()).toBe(0);
  });
});

describe('gateway mcp tools and the outbound policy (DESIGN §8)', () => {
  /** A resolver with fixed answers (there is no DNS here): unknown names do not resolve; every name asked is kept. */
  const ANSWERS: Record<string, string[]> = {
    'mcp.example.test': ['93.184.215.14'],
    'tools.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
    '169.254.169.254.nip.io': ['169.254.169.254'],
    '127.0.0.1.nip.io': ['127.0.0.1'],
    'split.example.com': ['93.184.215.14', '10.0.0.5'],
    'mapped.example.com': ['::ffff:192.168.1.1'],
    'v6.example.com': ['::1'],
    // Never asked: names local by definition are refused without a lookup.
    'metadata.google.internal': ['93.184.215.14'],
    localhost: ['93.184.215.14'],
  };
  const asked: string[] = [];
  const lookup = ((name: string, options: dns.LookupOptions, callback: (err: NodeJS.ErrnoException | null, addresses: dns.LookupAddress[]) => void) => {
    asked.push(name);
    if (!options.all) return callback(Object.assign(new Error('the check must ask for every address'), { code: 'EINVAL' }), []);
    const answer = ANSWERS[name];
    if (!answer) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' }), []);
    callback(null, answer.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  }) as unknown as LookupFunction;

  let strict: TestApp;
  let strictToken: string;
  beforeAll(async () => {
    strict = await startTestApp({ env: { GATEWAY_URL: 'http://127.0.0.1:9', GATEWAY_API_KEY: 'unused', OUTBOUND_ALLOW_PRIVATE: 'false' }, lookup });
    ({ token: strictToken } = await strict.signedInUser());
  });
  afterAll(() => strict.close());

  const mcp = (server_url: string) => ({ model: 'gpt-4.1', gateway_tools: [{ type: 'web_search_preview' }, { type: 'mcp', server_label: 'x', server_url }] });

  it('refuses a server_url in a private, loopback or metadata range where private destinations are not allowed', async () => {
    for (const url of ['http://169.254.169.254/latest/meta-data', 'http://127.0.0.1:8080/mcp', 'http://10.0.0.7/mcp', 'http://[::1]/mcp', 'http://2130706433/mcp']) {
      const res = await save(mcp(url), strict, strictToken);
      expect(res.status, url).toBe(422);
      expect(res.body.detail[0]).toMatchObject({ loc: ['body', 'gateway_tools', 1, 'server_url'], type: 'value_error' });
    }
    expect((await save(mcp('https://mcp.example.test/sse'), strict, strictToken)).status).toBe(201);
    // Where private destinations are allowed (the default outside production), a local server is fine, and no name is resolved.
    expect((await save(mcp('http://127.0.0.1:8080/mcp'))).status).toBe(201);
    expect((await save(mcp('http://localhost:8080/mcp'))).status).toBe(201);
    expect((await save(mcp('http://nowhere.invalid/mcp'))).status).toBe(201);
  });

  it.each([
    ['a link-local IP literal (cloud metadata)', 'http://169.254.169.254/latest/meta-data/', 'link-local address (169.254.169.254)', []],
    ['a wildcard-DNS name for the metadata address', 'http://169.254.169.254.nip.io/', '169.254.169.254.nip.io resolves to 169.254.169.254 (link-local)', ['169.254.169.254.nip.io']],
    ['a wildcard-DNS name for loopback', 'http://127.0.0.1.nip.io', '127.0.0.1.nip.io resolves to 127.0.0.1 (loopback)', ['127.0.0.1.nip.io']],
    ['the metadata service’s name', 'http://metadata.google.internal/', 'metadata.google.internal is a private-use name (.internal)', []],
    ['localhost', 'http://localhost:8080/', 'localhost is a loopback name', []],
    ['localhost spelt with capitals and a trailing dot', 'http://LOCALHOST./mcp', 'localhost is a loopback name', []],
    ['a subdomain of localhost', 'http://mcp.localhost/', 'mcp.localhost is a loopback name', []],
    ['an mDNS name', 'http://printer.local/', 'printer.local is a link-local (mDNS) name', []],
    ['a single-label name', 'http://metadata/computeMetadata/v1/', 'metadata is a single-label name', []],
    ['an IPv6 loopback literal', 'http://[::1]/', 'loopback or IPv4-compatible address (::1)', []],
    ['a name with one public and one private address', 'https://split.example.com/mcp', 'split.example.com resolves to 10.0.0.5 (private)', ['split.example.com']],
    ['a name resolving to an IPv4-mapped private address', 'https://mapped.example.com/mcp', 'mapped.example.com resolves to ::ffff:192.168.1.1 (private)', ['mapped.example.com']],
    ['a name resolving to IPv6 loopback', 'https://v6.example.com/mcp', 'v6.example.com resolves to ::1 (unspecified, loopback or IPv4-compatible)', ['v6.example.com']],
    ['a name that does not resolve', 'https://nowhere.example.com/mcp', 'nowhere.example.com does not resolve', ['nowhere.example.com']],
  ])('%s → 422 at gateway_tools[1].server_url', async (_what, url, message, lookedUp) => {
    asked.length = 0;
    const res = await save(mcp(url), strict, strictToken);
    expect(res.status, url).toBe(422);
    expect(res.body.detail).toEqual([{ loc: ['body', 'gateway_tools', 1, 'server_url'], msg: expect.stringContaining(message), type: 'value_error', input: url }]);
    expect(asked).toEqual(lookedUp);
  });

  it('a name resolving only to public addresses is accepted; each mcp tool is judged at its own index', async () => {
    const ok = await save(mcp('https://tools.example.com/mcp'), strict, strictToken);
    expect(ok.status).toBe(201);
    expect(ok.body.gateway_tools[1]).toEqual({ type: 'mcp', server_label: 'x', server_url: 'https://tools.example.com/mcp' });
    const tools = [
      { type: 'mcp', server_label: 'a', server_url: 'https://tools.example.com/mcp' },
      { type: 'mcp', server_label: 'b', server_url: 'https://split.example.com/mcp' },
      { type: 'mcp', server_label: 'c', server_url: 'http://localhost/' },
    ];
    const mixed = await save({ model: 'gpt-4.1', gateway_tools: tools }, strict, strictToken);
    expect(mixed.status).toBe(422);
    expect(mixed.body.detail.map((d: { loc: unknown[] }) => d.loc)).toEqual([
      ['body', 'gateway_tools', 1, 'server_url'],
      ['body', 'gateway_tools', 2, 'server_url'],
    ]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundClient } from '../src/net/outbound.js';
import { Sealer } from '../src/crypto/sealed.js';
import { loadConnectorEndpoints } from '../workers/connectors/load.js';
import { startTestApp } from './support/app.js';
import { ConnectorSessions, ToolListCache, type ConnectorEndpoint, type ConnectorSessionOptions } from '../workers/connectors/sessions.js';
import { EverythingServer, LocalServer, type SeenRequest } from './support/mcp-server.js';

/** The worker's connector client against the reference MCP server, run by the test on 127.0.0.1. */

const SECRET = 'sk-live-7f3c9a1e5d2b4c6a8e0f';
let server: EverythingServer;
let proxy: LocalServer;
let outbound: OutboundClient;
beforeAll(async () => {
  server = await EverythingServer.start();
  proxy = await LocalServer.recordingProxy(server.url);
  outbound = new OutboundClient({ allowPrivate: true }, { maxResponseBytes: 16 << 20 });
});
afterAll(async () => {
  await Promise.allSettled([outbound.close(), proxy.stop(), server.stop()]);
});

let serial = 0;
function endpoint(overrides: Partial<ConnectorEndpoint> = {}): ConnectorEndpoint {
  serial += 1;
  return {
    id: `00000000-0000-4000-8000-${String(serial).padStart(12, '0')}`,
    name: 'everything',
    prefix: 'everything',
    url: proxy.url(),
    transport: 'streamable_http',
    headers: { 'X-Api-Key': SECRET },
    updatedAt: new Date('2026-11-22T10:00:00Z'),
    storedTools: [],
    ...overrides,
  };
}

function options(overrides: Partial<ConnectorSessionOptions> = {}): ConnectorSessionOptions {
  return { fetch: outbound.fetch, cache: new ToolListCache(), timeoutMs: 10_000, maxOutputBytes: 65536, ...overrides };
}

const rpc = (method: string) => (r: SeenRequest) => r.method === 'POST' && r.body.includes(`"method":"${method}"`);
const rpcCount = (method: string) => proxy.requests.filter((r) => r.ended && rpc(method)(r)).length;

describe('a run’s connector sessions', () => {
  it('lists the tools under prefixed names, calls echo, and the secret header reaches the server', async () => {
    const connector = endpoint();
    const sessions = new ConnectorSessions([connector], options(), new AbortController().signal);
    const { tools, index, problems } = await sessions.toolset();
    expect(problems).toEqual([]);
    const echo = tools.find((t) => t.tool === 'echo')!;
    expect(echo).toMatchObject({ name: 'everything__echo', description: 'Echoes back the input string', connectorId: connector.id });
    expect(echo.parameters).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    expect(tools.map((t) => t.name)).toContain('everything__trigger-long-running-operation');
    expect(index.resolve('everything__get-sum')).toEqual({ connectorId: connector.id, tool: 'get-sum' });

    expect(await sessions.call(connector.id, 'echo', { message: 'hello there' })).toEqual({ output: 'Echo: hello there', isError: false });
    const seen = proxy.requests.filter((r) => r.ended && r.method === 'POST');
    expect(seen.length).toBeGreaterThan(0);
    for (const request of seen) expect(request.headers['x-api-key']).toBe(SECRET);
    await sessions.close();
    // The session is ended on the server too (DELETE, as the spec asks).
    expect(proxy.requests.some((r) => r.method === 'DELETE' && r.headers['x-api-key'] === SECRET)).toBe(true);
  });

  it('a tool output that carries a header value is masked; long output is cut with a note', async () => {
    const connector = endpoint();
    const sessions = new ConnectorSessions([connector], options({ maxOutputBytes: 1024 }), new AbortController().signal);
    expect((await sessions.call(connector.id, 'echo', { message: `key=${SECRET}` })).output).toBe('Echo: key=[redacted]');
    // "Echo: a" is 7 bytes, then 2 bytes a character: 1024 would cut one in half.
    const long = await sessions.call(connector.id, 'echo', { message: `a${'é'.repeat(3000)}` });
    expect(long.isError).toBe(false);
    expect(long.output).toMatch(/\n\[output cut: 1023 of 6007 bytes shown\]$/);
    expect(Buffer.byteLength(long.output.split('\n[output cut')[0]!)).toBeLessThanOrEqual(1024);
    expect(long.output).not.toContain('\uFFFD');
    await sessions.close();
  });

  it('tool lists are cached per worker for the connector’s configuration; a changed connector is listed again', async () => {
    const cache = new ToolListCache();
    const connector = endpoint();
    const before = rpcCount('tools/list');
    const first = new ConnectorSessions([connector], options({ cache }), new AbortController().signal);
    await first.toolset();
    await first.close();
    expect(rpcCount('tools/list')).toBe(before + 1);

    const second = new ConnectorSessions([connector], options({ cache }), new AbortController().signal);
    expect((await second.toolset()).tools.length).toBeGreaterThan(5);
    await second.close();
    expect(rpcCount('tools/list')).toBe(before + 1);

    const changed = { ...connector, updatedAt: new Date('2026-11-22T11:00:00Z') };
    const third = new ConnectorSessions([changed], options({ cache }), new AbortController().signal);
    await third.toolset();
    await third.close();
    expect(rpcCount('tools/list')).toBe(before + 2);
  });

  it('a cache entry expires after its time to live', () => {
    let now = 0;
    const cache = new ToolListCache(60_000, 10, () => now);
    const connector = endpoint();
    cache.set(connector, [{ name: 'echo', description: '', input_schema: {} }]);
    now = 59_999;
    expect(cache.get(connector)).toHaveLength(1);
    now = 60_000;
    expect(cache.get(connector)).toBeUndefined();
  });

  it('errors of the server become error results and the session goes on', async () => {
    const connector = endpoint();
    const sessions = new ConnectorSessions([connector], options(), new AbortController().signal);
    const invalid = await sessions.call(connector.id, 'get-sum', { a: 'one', b: 2 });
    expect(invalid.isError).toBe(true);
    expect(invalid.output).toMatch(/invalid|expected number/i);
    const unknown = await sessions.call(connector.id, 'no-such-tool', {});
    expect(unknown).toMatchObject({ isError: true, output: expect.stringContaining('no-such-tool') });
    expect(await sessions.call(connector.id, 'get-sum', { a: 40, b: 2 })).toEqual({ output: 'The sum of 40 and 2 is 42.', isError: false });
    expect(await sessions.call('00000000-0000-4000-8000-999999999999', 'echo', {})).toMatchObject({ isError: true, output: expect.stringContaining('unknown connector') });
    await sessions.close();
  });

  it('a server that is down: its stored tools are offered, and calls are error results', async () => {
    const gone = await LocalServer.start(() => {});
    const url = gone.url();
    await gone.stop();
    const connector = endpoint({ url, storedTools: [{ name: 'echo', description: 'Echoes', input_schema: { type: 'object' } }] });
    const sessions = new ConnectorSessions([connector], options(), new AbortController().signal);
    const { tools, problems } = await sessions.toolset();
    expect(tools.map((t) => t.name)).toEqual(['everything__echo']);
    expect(problems).toEqual([{ connectorId: connector.id, name: 'everything', error: expect.stringContaining('ECONNREFUSED') }]);
    const result = await sessions.call(connector.id, 'echo', { message: 'hi' });
    expect(result).toMatchObject({ isError: true, output: expect.stringContaining('could not reach connector "everything"') });
    expect(result.output).toContain('ECONNREFUSED');
    await sessions.close();
  });

  it('a server that never answers: the call is an error result after CONNECTOR_TIMEOUT_MS', async () => {
    const hanging = await LocalServer.hanging();
    const connector = endpoint({ url: hanging.url() });
    const sessions = new ConnectorSessions([connector], options({ timeoutMs: 300 }), new AbortController().signal);
    expect(await sessions.call(connector.id, 'echo', { message: 'hi' })).toEqual({
      output: 'could not reach connector "everything": timed out after 300 ms',
      isError: true,
    });
    expect(hanging.requests.length).toBeGreaterThan(0);
    await sessions.close();
    await hanging.stop();
  });

  it('a slow tool past the timeout is an error result; the session still serves the next call', async () => {
    const connector = endpoint();
    const sessions = new ConnectorSessions([connector], options({ timeoutMs: 3000 }), new AbortController().signal);
    await sessions.call(connector.id, 'echo', { message: 'warm' });
    const slow = await sessions.call(connector.id, 'trigger-long-running-operation', { duration: 30, steps: 30 });
    expect(slow).toMatchObject({ isError: true, output: expect.stringContaining('timed out after 3000 ms') });
    expect(await sessions.call(connector.id, 'echo', { message: 'after' })).toEqual({ output: 'Echo: after', isError: false });
    await sessions.close();
  });

  it('cancelling the run aborts a slow tool call in flight: the abort propagates, it is no error result', async () => {
    const connector = endpoint();
    const run = new AbortController();
    const sessions = new ConnectorSessions([connector], options({ timeoutMs: 120_000 }), run.signal);
    const call = sessions.call(connector.id, 'trigger-long-running-operation', { duration: 120, steps: 120 });
    await proxy.waitFor((r) => rpc('tools/call')(r) && r.body.includes('"duration":120'));
    const reason = new Error('run cancelled');
    run.abort(reason);
    await expect(call).rejects.toBe(reason);
    // The server is told the request was cancelled.
    await proxy.waitFor(rpc('notifications/cancelled'));
    await expect(sessions.call(connector.id, 'echo', { message: 'x' })).rejects.toBe(reason);
    await sessions.close();
  });

  it('a legacy SSE server: used as is with transport "sse", and reached by fallback from streamable_http', async () => {
    const legacy = await EverythingServer.start('sse');
    try {
      for (const transport of ['sse', 'streamable_http'] as const) {
        const connector = endpoint({ url: legacy.url, transport });
        const sessions = new ConnectorSessions([connector], options(), new AbortController().signal);
        expect(await sessions.call(connector.id, 'echo', { message: transport })).toEqual({ output: `Echo: ${transport}`, isError: false });
        await sessions.close();
      }
    } finally {
      await legacy.stop();
    }
  });

  it('the outbound policy applies: a private destination is refused when private addresses are not allowed', async () => {
    const closedOutbound = new OutboundClient({ allowPrivate: false }, { maxResponseBytes: 1 << 20 });
    const connector = endpoint();
    const before = proxy.requests.length;
    const sessions = new ConnectorSessions([connector], options({ fetch: closedOutbound.fetch }), new AbortController().signal);
    const result = await sessions.call(connector.id, 'echo', { message: 'hi' });
    expect(result).toMatchObject({ isError: true, output: expect.stringContaining('refused to connect to 127.0.0.1') });
    expect(proxy.requests.length).toBe(before);
    await sessions.close();
    await closedOutbound.close();
  });
});

describe('loading an agent’s connectors for a run', () => {
  it('own, active connectors in the agent’s order with headers unsealed; one that does not open is reported, not fatal', async () => {
    const app = await startTestApp();
    try {
      const { user, token } = await app.signedInUser();
      const create = async (name: string, extra: Record<string, unknown> = {}) =>
        (await app.request('POST', '/api/connectors', { token, body: { name, kind: 'mcp', url: proxy.url(), headers: { 'X-Api-Key': SECRET }, ...extra } })).body.id as string;
      const [first, second, inactive, broken] = [await create('first'), await create('second'), await create('inactive', { is_active: false }), await create('broken')];
      const stranger = await app.signedInUser();
      const theirs = (await app.request('POST', '/api/connectors', { token: stranger.token, body: { name: 'theirs', kind: 'mcp', url: proxy.url() } })).body.id as string;
      await app.services.knex('connectors').where({ id: broken }).update({ secret_headers: JSON.stringify({ 'X-Api-Key': new Sealer('another-key-another-key-another-key-9').seal('x', 'y') }) });

      const sealer = new Sealer(app.services.config.encryptionKey);
      const { endpoints, problems } = await loadConnectorEndpoints(app.services.models, sealer, user.id, [second, theirs, inactive, first, broken]);
      expect(endpoints.map((e) => e.id)).toEqual([second, first]);
      expect(endpoints[0]).toMatchObject({ name: 'second', prefix: 'second', url: proxy.url(), transport: 'streamable_http', headers: { 'X-Api-Key': SECRET }, storedTools: [] });
      expect(problems).toEqual([{ connectorId: broken, name: 'broken', error: expect.stringContaining('does not open') }]);

      // What a run does with them: offer the tools, call one.
      const sessions = new ConnectorSessions(endpoints, options(), new AbortController().signal);
      const { tools } = await sessions.toolset();
      expect(tools.filter((t) => t.tool === 'echo').map((t) => t.name)).toEqual(['second__echo', 'first__echo']);
      const ref = (await sessions.toolset()).index.resolve('first__echo')!;
      expect(await sessions.call(ref.connectorId, ref.tool, { message: 'from a run' })).toEqual({ output: 'Echo: from a run', isError: false });
      await sessions.close();
    } finally {
      await app.close();
    }
  });
});

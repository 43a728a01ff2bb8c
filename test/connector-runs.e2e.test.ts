import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { killAtFirstToken, startStack, type Stack } from './support/stack.js';
import { ofType, stream, type ReceivedEvent, type StreamResult } from './support/sse.js';
import { EverythingServer, LocalServer, type SeenRequest } from './support/mcp-server.js';
import { TestGateway } from './support/gateway.js';
import { chat } from './support/gateway-frames.js';
import { uniqueId } from './support/app.js';

/**
 * Agents with connectors end to end (DESIGN §8): built web and worker processes, the reference MCP server
 * (server-everything over Streamable HTTP) on 127.0.0.1 behind a recording proxy, and the local model calling its tools.
 */

const SECRET = 'sk-run-5e8a1c3f9b7d2e4a6c0f';
/** Fast failure detection for the kill -9 case, as in the fault tests. */
const FAST_RECOVERY = { JOB_LOCK_MS: '2000', JOB_STALLED_INTERVAL_MS: '1000' };
/** Far above a local connection, far below a hanging call. */
const SHORT_TIMEOUT_MS = 5000;

let server: EverythingServer;
let proxy: LocalServer;
/** Every response body a client of the platform received in this file. */
const responses: string[] = [];

beforeAll(async () => {
  server = await EverythingServer.start();
  proxy = await LocalServer.recordingProxy(server.url);
});
afterAll(async () => {
  await Promise.allSettled([proxy.stop(), server.stop()]);
});

const toolCalls = (match: (body: string) => boolean) => (r: SeenRequest) => r.method === 'POST' && r.body.includes('"method":"tools/call"') && match(r.body);
const countAtServer = (match: (body: string) => boolean) => proxy.requests.filter((r) => r.ended && toolCalls(match)(r)).length;

interface Client {
  stack: Stack;
  key: string;
}

async function api(client: Client, method: string, path: string, body?: unknown) {
  const res = await fetch(`${client.stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${client.key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  responses.push(text);
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

async function run(client: Client, agentId: string, q: string, options: { mode?: 'react' | 'dag'; onEvent?: (e: ReceivedEvent) => void; signal?: AbortSignal } = {}) {
  const result = await stream(`${client.stack.url}/api/${options.mode ?? 'react'}`, { token: client.key, body: { q, agent_id: agentId }, onEvent: options.onEvent, signal: options.signal });
  responses.push(JSON.stringify(result.events));
  return result;
}

/** A connector to `url` with the secret header, tested (so its tools are recorded), and an agent that uses it. */
async function connectorAgent(client: Client, name: string, url = proxy.url(), agent: Record<string, unknown> = {}) {
  const created = await api(client, 'POST', '/api/connectors', { name, kind: 'mcp', url, headers: { 'X-Api-Key': SECRET } });
  expect(created.status).toBe(201);
  const tested = await api(client, 'POST', `/api/connectors/${created.body.id}/test`);
  expect(tested.body).toMatchObject({ status: 'ok' });
  const made = await api(client, 'POST', '/api/agents', { name: `agent-${name}`, connector_ids: [created.body.id], ...agent });
  expect(made.status).toBe(201);
  return { connectorId: created.body.id as string, agentId: made.body.id as string, tools: tested.body.tools as { name: string; input_schema: unknown }[] };
}

const answerOf = (res: StreamResult) => ofType(res.events, 'answer')[0]?.data.content;
const doneOf = (res: StreamResult) => ofType(res.events, 'done')[0]?.data;
const runIdOf = (res: StreamResult) => res.headers.get('x-run-id')!;

async function expectSecretNowhere(stack: Stack) {
  const logs = [...stack.webs, ...stack.workers].flatMap((p) => p.output).join('');
  expect(logs).toContain('"msg":"tool executed"');
  expect(logs).not.toContain(SECRET);
  for (const text of responses) expect(text).not.toContain(SECRET);
  const database = new URL(inject('databaseUrl')).pathname.slice(1);
  const dump = await promisify(execFile)('pg_dump', ['-h', '127.0.0.1', '-U', 'postgres', database], { maxBuffer: 256 << 20 });
  expect(dump.stdout).toContain('X-Api-Key');
  expect(dump.stdout).not.toContain(SECRET);
}

describe('an agent with a connector', () => {
  let gateway: TestGateway;
  let client: Client;
  let agentId: string;

  beforeAll(async () => {
    gateway = await TestGateway.start();
    // The local model stays the default; agents may name gateway models.
    const stack = await startStack({ env: { OUTBOUND_ALLOW_PRIVATE: 'true', GATEWAY_URL: gateway.url, GATEWAY_API_KEY: 'gw-test-key' } });
    client = { stack, key: (await stack.user()).key };
    ({ agentId } = await connectorAgent(client, 'everything'));
  });
  afterAll(async () => {
    await client.stack.stop();
    await gateway.close();
  });

  it('the connector test lists the server’s tools with their schemas', async () => {
    const { tools } = await connectorAgent(client, 'listed');
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'trigger-long-running-operation']));
    expect(tools.find((t) => t.name === 'echo')!.input_schema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
  });

  it('a run calls echo (by its full or its own name) with the JSON object, and the answer quotes the output', async () => {
    for (const [spoken, message] of [['everything__echo', `full ${uniqueId()}`], ['echo', `plain ${uniqueId()}`]] as const) {
      const res = await run(client, agentId, `Please ${spoken} {"message": "${message}"} for me`);
      expect(ofType(res.events, 'thought')[0]!.data.text).toContain('everything__echo');
      expect(ofType(res.events, 'tool_call').map((e) => e.data)).toEqual([expect.objectContaining({ name: 'everything__echo', arguments: { message } })]);
      expect(ofType(res.events, 'tool_result').map((e) => e.data)).toEqual([expect.objectContaining({ name: 'everything__echo', output: `Echo: ${message}`, is_error: false })]);
      expect(answerOf(res)).toContain(`"Echo: ${message}"`);
      expect(doneOf(res)).toMatchObject({ status: 'succeeded' });
      expect(countAtServer((body) => body.includes(message))).toBe(1);
    }
  });

  it('a tool call in a DAG node reaches the server too; the synthesis quotes it', async () => {
    const message = `dag ${uniqueId()}`;
    const res = await run(client, agentId, `everything__echo {"message": "${message}"}`, { mode: 'dag' });
    expect(ofType(res.events, 'tool_result').map((e) => e.data.output)).toEqual([`Echo: ${message}`]);
    expect(answerOf(res)).toContain(`Echo: ${message}`);
    expect(countAtServer((body) => body.includes(message))).toBe(1);
  });

  it('a tool that answers with an error: tool_result is_error, and the run goes on to an answer', async () => {
    const res = await run(client, agentId, 'Add them: everything__get-sum {"a": "one", "b": 2}');
    const [result] = ofType(res.events, 'tool_result');
    expect(result!.data).toMatchObject({ name: 'everything__get-sum', is_error: true });
    expect(String(result!.data.output)).toMatch(/invalid|expected number/i);
    expect(answerOf(res)).toMatch(/^The everything__get-sum tool failed: "/);
    expect(doneOf(res)).toMatchObject({ status: 'succeeded' });
  });

  it('a server that is down: its stored tools are offered, the call is an error result, the run goes on', async () => {
    const doomed = await LocalServer.recordingProxy(server.url);
    const { agentId: downAgent } = await connectorAgent(client, 'gone', doomed.url());
    await doomed.stop();
    const res = await run(client, downAgent, 'gone__echo {"message": "anyone there?"}');
    const [result] = ofType(res.events, 'tool_result');
    expect(result!.data).toMatchObject({ name: 'gone__echo', is_error: true });
    expect(String(result!.data.output)).toContain('could not reach connector "gone"');
    expect(String(result!.data.output)).toContain('ECONNREFUSED');
    expect(answerOf(res)).toMatch(/^The gone__echo tool failed: "could not reach connector/);
    expect(doneOf(res)).toMatchObject({ status: 'succeeded' });
    await client.stack.workers[0]!.waitFor(/"msg":"connector unavailable to the run"/);
  });

  it('cancel during a slow tool call aborts it at the server; the run ends cancelled', async () => {
    const duration = 600 + Math.floor(Math.random() * 1000);
    const before = proxy.requests.length;
    const after = (match: (r: SeenRequest) => boolean) => proxy.waitFor((r) => proxy.requests.indexOf(r) >= before && match(r));
    const inFlight = after(toolCalls((body) => body.includes(`"duration":${duration}`)));
    let runId = '';
    let cancelled: Promise<number> | undefined;
    const res = await run(client, agentId, `everything__trigger-long-running-operation {"duration": ${duration}, "steps": ${duration}}`, {
      onEvent: (e) => {
        if (e.type === 'run') runId = e.data.run_id;
        if (e.type === 'tool_call') {
          cancelled = inFlight.then(async () => (await fetch(`${client.stack.url}/api/runs/${runId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${client.key}` } })).status);
        }
      },
    });
    expect(await cancelled).toBe(202);
    expect(doneOf(res)).toMatchObject({ status: 'cancelled' });
    expect(ofType(res.events, 'tool_result')).toHaveLength(0);
    expect(answerOf(res)).toBeUndefined();
    // The server is told its request was cancelled.
    await after((r) => r.method === 'POST' && r.body.includes('"method":"notifications/cancelled"'));
    expect(await client.stack.knex('runs').where({ id: runIdOf(res) }).first()).toMatchObject({ status: 'cancelled' });
  });

  it('a gateway model is offered the connector’s tools with their schemas, and sees the output', async () => {
    const model = `model-${uniqueId()}`;
    const { agentId: gatewayAgent } = await connectorAgent(client, 'remote', proxy.url(), { model });
    const message = `gateway ${uniqueId()}`;
    gateway.script(model, { frames: chat.toolCall('call_1', 'remote__echo', [`{"message": "${message}"}`]) }, { frames: chat.text(['Done.']) });
    const res = await run(client, gatewayAgent, 'Echo something');
    expect(ofType(res.events, 'tool_result')[0]!.data).toMatchObject({ name: 'remote__echo', output: `Echo: ${message}`, is_error: false });
    expect(answerOf(res)).toBe('Done.');
    const [first, second] = gateway.requestsFor(model);
    const echo = first!.body.tools.find((t: any) => t.function.name === 'remote__echo');
    expect(echo.function).toMatchObject({ description: 'Echoes back the input string', parameters: { type: 'object', properties: { message: { type: 'string' } } } });
    expect(second!.body.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_1', content: `Echo: ${message}` });
  });

  it('the secret header reaches the server, and nothing else: no response, log line or pg_dump holds it', async () => {
    const posts = proxy.requests.filter((r) => r.ended && r.method === 'POST');
    expect(posts.length).toBeGreaterThan(0);
    for (const request of posts) expect(request.headers['x-api-key']).toBe(SECRET);
    await expectSecretNowhere(client.stack);
  });
});

describe('an agent with a connector, when things go wrong in time', () => {
  let client: Client;
  let agentId: string;

  beforeAll(async () => {
    const stack = await startStack({ env: { OUTBOUND_ALLOW_PRIVATE: 'true', CONNECTOR_TIMEOUT_MS: String(SHORT_TIMEOUT_MS), LOCAL_MODEL_TOKEN_DELAY_MS: '100', ...FAST_RECOVERY } });
    client = { stack, key: (await stack.user()).key };
    ({ agentId } = await connectorAgent(client, 'everything'));
  });
  afterAll(async () => {
    await client.stack.stop();
  });

  it('a tool that hangs past CONNECTOR_TIMEOUT_MS: tool_result is_error, and the run goes on to an answer', async () => {
    const res = await run(client, agentId, 'everything__trigger-long-running-operation {"duration": 300, "steps": 300}');
    const [result] = ofType(res.events, 'tool_result');
    expect(result!.data).toMatchObject({ name: 'everything__trigger-long-running-operation', is_error: true });
    expect(String(result!.data.output)).toContain(`timed out after ${SHORT_TIMEOUT_MS} ms`);
    expect(answerOf(res)).toMatch(/^The everything__trigger-long-running-operation tool failed: ".*timed out/);
    expect(doneOf(res)).toMatchObject({ status: 'succeeded' });
  });

  it('kill -9 the worker after the tool call: the resumed run does not call the tool again', async () => {
    const message = `once ${uniqueId()}`;
    const first = await run(client, agentId, `everything__echo {"message": "${message}"}`, killAtFirstToken(client.stack.workers[0]!));
    expect(ofType(first.events, 'tool_result')).toHaveLength(1);
    expect(countAtServer((body) => body.includes(message))).toBe(1);
    await client.stack.startWorker();
    const runId = runIdOf(first);
    const rest = await stream(`${client.stack.url}/api/runs/${runId}/events`, { method: 'GET', token: client.key, headers: { 'Last-Event-ID': first.events.at(-1)!.id } });
    responses.push(JSON.stringify(rest.events));
    const seen = [...first.events, ...rest.events];
    expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
    expect(ofType(rest.events, 'status').map((e) => e.data.status)).toEqual(['resumed']);
    expect(ofType(seen, 'tool_call')).toHaveLength(1);
    expect(answerOf(rest)).toContain(`"Echo: ${message}"`);
    expect(doneOf(rest)).toMatchObject({ status: 'succeeded' });
    expect(countAtServer((body) => body.includes(message))).toBe(1);
    expect(await client.stack.knex('runs').where({ id: runId }).first()).toMatchObject({ status: 'succeeded', crashes: 1 });
    await expectSecretNowhere(client.stack);
  });
});

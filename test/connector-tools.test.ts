import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutboundClient } from '../src/net/outbound.js';
import { Sealer } from '../src/crypto/sealed.js';
import { LocalModel } from '../workers/models/local.js';
import { findToolMentions, spokenToolNames } from '../workers/models/tool-mentions.js';
import type { ChatMessage, ModelResult } from '../workers/models/types.js';
import { runTool, toolsFor } from '../workers/tools/registry.js';
import type { Tool } from '../workers/tools/tool.js';
import { openToolset, type ConnectorRuntime } from '../workers/tools/toolset.js';
import { ToolListCache } from '../workers/connectors/sessions.js';
import { DEFAULT_SETTINGS } from '../src/shared/model-settings.js';
import { createLogger } from '../src/logger.js';
import { startTestApp, type TestApp } from './support/app.js';
import { EverythingServer, LocalServer } from './support/mcp-server.js';

/** Per-agent tool sets: how the local model reads connector calls from a question, and how a run's tools are resolved. */

function connectorTool(connector: string, tool: string): Tool {
  return { name: `${connector}__${tool}`, mcpName: tool, description: '', parameters: { type: 'object' }, run: async () => '' };
}

describe('tool mentions in a question', () => {
  const tools = [...toolsFor(['calculator']), connectorTool('a', 'echo'), connectorTool('b', 'echo'), connectorTool('a', 'get-sum'), connectorTool('a', 'calculator')];
  const names = spokenToolNames(tools);

  it('a tool is named by its full name, or by its MCP name when no other tool has that name', () => {
    expect(Object.fromEntries(names)).toEqual({
      a__echo: 'a__echo',
      b__echo: 'b__echo',
      'a__get-sum': 'a__get-sum',
      'get-sum': 'a__get-sum',
      a__calculator: 'a__calculator',
    });
  });

  it('finds each name followed by a JSON object, in order; a mention inside another’s arguments does not count', () => {
    const text = 'First a__echo {"message": "x {y} get-sum {\\"a\\": 1}"}, then get-sum{"a": 1, "b": 2} and b__echo {"message": "z"}.';
    expect(findToolMentions(text, names).map(({ tool, args }) => ({ tool, args }))).toEqual([
      { tool: 'a__echo', args: { message: 'x {y} get-sum {"a": 1}' } },
      { tool: 'a__get-sum', args: { a: 1, b: 2 } },
      { tool: 'b__echo', args: { message: 'z' } },
    ]);
  });

  it('not a mention: part of a longer name, no object after it, broken JSON, an array', () => {
    for (const text of ['xa__echo {"m": 1}', 'a__echo please {"m": 1}', 'a__echo {"m": 1', 'a__echo {m: 1}', 'get-sum [1, 2]', 'echo {"message": "ambiguous"}']) {
      expect(findToolMentions(text, names), text).toEqual([]);
    }
  });

  it('hostile input is bounded', () => {
    expect(findToolMentions('a__echo {"a": 1} '.repeat(2000), names)).toHaveLength(20);
    expect(findToolMentions(`a__echo ${'{'.repeat(30_000)}`, names)).toEqual([]);
    expect(findToolMentions('a__echo {'.repeat(3500), names)).toEqual([]);
    expect(findToolMentions(`a__echo {"a": "${'\\"'.repeat(10_000)}"}`, names)).toEqual([]);
  });
});

describe('the local model with connector tools', () => {
  const model = new LocalModel(0);
  const tools = [...toolsFor(['calculator', 'current_time']), connectorTool('everything', 'echo')];

  async function complete(messages: ChatMessage[], offered = tools): Promise<ModelResult & { thoughts: string[] }> {
    const thoughts: string[] = [];
    const sink = { token: async () => {}, thought: async (text: string) => thoughts.push(text), notice: async () => {} };
    const result = await model.complete({ model: 'local', settings: DEFAULT_SETTINGS, messages, tools: offered, signal: new AbortController().signal }, sink);
    return { ...result, thoughts };
  }

  it('calls the named tool with the object (a thought first), then the calculator; the answer quotes the output', async () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'echo {"message": "2+2 is not here"} and what is 6*7?' }];
    const first = await complete(messages);
    expect(first.thoughts).toEqual(['The message asks for the everything__echo tool with these arguments; I will call it.']);
    expect(first.toolCalls).toEqual([{ id: 'call_mcp_1', name: 'everything__echo', arguments: { message: '2+2 is not here' } }]);
    messages.push({ role: 'assistant', content: '', toolCalls: first.toolCalls }, { role: 'tool', name: 'everything__echo', toolCallId: 'call_mcp_1', content: 'Echo: 2+2 is not here' });
    const second = await complete(messages);
    // The arithmetic inside the tool's arguments is not taken for a question.
    expect(second.toolCalls).toEqual([expect.objectContaining({ name: 'calculator', arguments: { expression: '6*7' } })]);
    messages.push({ role: 'assistant', content: '', toolCalls: second.toolCalls }, { role: 'tool', name: 'calculator', toolCallId: second.toolCalls[0]!.id, content: '42' });
    const answer = await complete(messages);
    expect(answer.toolCalls).toEqual([]);
    expect(answer.text).toBe('The everything__echo tool returned "Echo: 2+2 is not here". The result of 6*7 is 42.');
  });

  it('a failed call is said to have failed', async () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'everything__echo {}' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_mcp_1', name: 'everything__echo', arguments: {} }] },
      { role: 'tool', name: 'everything__echo', toolCallId: 'call_mcp_1', content: 'invalid arguments', isError: true },
    ];
    expect((await complete(messages)).text).toBe('The everything__echo tool failed: "invalid arguments".');
  });

  it('without connector tools nothing changes: the same question is arithmetic only', async () => {
    const result = await complete([{ role: 'user', content: 'echo {"message": "2+2"}' }], toolsFor(['calculator', 'current_time']));
    expect(result.toolCalls).toEqual([{ id: 'call_1', name: 'calculator', arguments: { expression: '2+2' } }]);
  });

  it('with nothing to call, its answer says how to call a connector tool', async () => {
    expect((await complete([{ role: 'user', content: 'hello' }])).text).toContain('as in everything__echo {}');
  });
});

describe('a run’s tool set', () => {
  const SECRET = 'sk-toolset-0c9e2b7d4a1f';
  let app: TestApp;
  let server: EverythingServer;
  let proxy: LocalServer;
  let outbound: OutboundClient;
  let runtime: ConnectorRuntime;
  let userId: string;
  let connectorId: string;
  const logger = createLogger('silent', 'test');

  beforeAll(async () => {
    [app, server] = await Promise.all([startTestApp(), EverythingServer.start()]);
    proxy = await LocalServer.recordingProxy(server.url);
    outbound = new OutboundClient({ allowPrivate: true }, { maxResponseBytes: 1 << 24 });
    const sealer = new Sealer(app.services.config.encryptionKey);
    runtime = { models: app.services.models, sealer, sessions: { fetch: outbound.fetch, cache: new ToolListCache(), timeoutMs: 30_000, maxOutputBytes: 65536 } };
    const { user, token } = await app.signedInUser();
    userId = user.id;
    const created = await app.request('POST', '/api/connectors', { token, body: { name: 'srv', kind: 'mcp', url: proxy.url(), headers: { 'X-Api-Key': SECRET } } });
    connectorId = created.body.id;
  });
  afterAll(async () => {
    await Promise.allSettled([outbound.close(), proxy.stop(), server.stop(), app.close()]);
  });

  function countQueries() {
    const seen: string[] = [];
    const listener = (q: { sql: string }) => seen.push(q.sql);
    app.services.knex.on('query', listener);
    return { seen, stop: () => app.services.knex.off('query', listener) };
  }

  const request = (connectorIds: string[], signal = new AbortController().signal) => ({ runId: 'run', userId, tools: ['calculator'], connectorIds, signal });

  it('an agent without connectors: the built-in tools, no query, no session', async () => {
    const queries = countQueries();
    const before = proxy.requests.length;
    const toolset = openToolset(request([]), runtime, logger);
    expect((await toolset.tools).map((t) => t.name)).toEqual(['calculator']);
    await toolset.close();
    queries.stop();
    expect(queries.seen).toEqual([]);
    expect(proxy.requests.length).toBe(before);
  });

  it('an agent with a connector: one query, its tools as <connector>__<tool>; calls, error results and close', async () => {
    const queries = countQueries();
    const toolset = openToolset(request([connectorId]), runtime, logger);
    const tools = await toolset.tools;
    queries.stop();
    expect(queries.seen).toHaveLength(1);
    expect(tools.map((t) => t.name)).toEqual(expect.arrayContaining(['calculator', 'srv__echo', 'srv__get-sum']));
    expect(tools.find((t) => t.name === 'srv__echo')).toMatchObject({ mcpName: 'echo', description: 'Echoes back the input string' });
    const context = { signal: new AbortController().signal, now: () => new Date(), searchKnowledge: async () => [] };
    expect(await runTool(tools, { id: 'c1', name: 'srv__echo', arguments: { message: 'hi' } }, context)).toEqual({ output: 'Echo: hi', isError: false });
    const failed = await runTool(tools, { id: 'c2', name: 'srv__get-sum', arguments: { a: 'x', b: 1 } }, context);
    expect(failed.isError).toBe(true);
    await toolset.close();
    expect(proxy.requests.some((r) => r.method === 'DELETE' && r.headers['x-api-key'] === SECRET)).toBe(true);
  });

  it('an attempt that ends while a server is still being listed stops the listing: close does not wait for the timeout', async () => {
    const hanging = await LocalServer.hanging();
    try {
      const { user, token } = await app.signedInUser();
      const created = await app.request('POST', '/api/connectors', { token, body: { name: 'slow', kind: 'mcp', url: hanging.url() } });
      const patient = { ...runtime, sessions: { ...runtime.sessions, timeoutMs: 600_000 } };
      const toolset = openToolset({ ...request([created.body.id]), userId: user.id }, patient, logger);
      await hanging.waitFor((r) => r.method === 'POST');
      await toolset.close();
      await expect(toolset.tools).rejects.toThrow('the run attempt ended');
    } finally {
      await hanging.stop();
    }
  });

  it('a cancel aborts a connector call in flight with the run’s reason', async () => {
    const run = new AbortController();
    const toolset = openToolset(request([connectorId], run.signal), runtime, logger);
    const tools = await toolset.tools;
    const context = { signal: run.signal, now: () => new Date(), searchKnowledge: async () => [] };
    const call = runTool(tools, { id: 'c1', name: 'srv__trigger-long-running-operation', arguments: { duration: 321, steps: 321 } }, context);
    await proxy.waitFor((r) => r.body.includes('"duration":321'));
    const reason = new Error('cancelled');
    run.abort(reason);
    await expect(call).rejects.toBe(reason);
    await toolset.close();
  });
});

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { killAtFirstToken, startStack, type Stack } from './support/stack.js';
import { ofType, stream } from './support/sse.js';
import { inTrace, OtlpReceiver, SPAN_KIND, type ReceivedSpan } from './support/otlp-receiver.js';
import { eventually } from './support/eventually.js';
import { TestGateway } from './support/gateway.js';
import { chat } from './support/gateway-frames.js';

/**
 * Traces (DESIGN §18) end to end: built web and worker processes export OTLP/HTTP to a receiver
 * this test runs on 127.0.0.1; a run is one trace from the request's span to its model and tool calls.
 */

const TRACE_ID = /^[0-9a-f]{32}$/;
/** Spans leave in batches this often, so they arrive while the test waits (it polls, with a deadline). */
const FAST_BATCHES = { OTEL_BSP_SCHEDULE_DELAY: '50' };

const hexId = (bytes: number) => randomBytes(bytes).toString('hex');

const byName = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);
const one = (spans: ReceivedSpan[], name: string) => {
  const found = byName(spans, name);
  expect(found, `one span named ${name}`).toHaveLength(1);
  return found[0]!;
};

/** A run's trace once its worker attempt has ended (`invoke_agent` is the last of its spans to end). */
const finishedTrace = (receiver: OtlpReceiver, traceId: string, extra: (spans: ReceivedSpan[]) => boolean = () => true) =>
  receiver.waitFor(`the spans of trace ${traceId}`, (spans) => {
    const trace = inTrace(spans, traceId);
    return trace.some((s) => s.name.startsWith('invoke_agent')) && trace.some((s) => s.kind === SPAN_KIND.server) && extra(trace) && trace;
  });

async function react(stack: Stack, key: string, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await stream(`${stack.url}/api/react`, { token: key, body, headers });
  expect(res.status).toBe(200);
  expect(ofType(res.events, 'done')[0]!.data.status).toBe('succeeded');
  const runEvent = ofType(res.events, 'run')[0]!.data;
  const record = await stack.api(key, 'GET', `/api/runs/${runEvent.run_id}`);
  expect(record.status).toBe(200);
  return { res, runEvent, record: record.body };
}

describe('tracing on (OTLP/HTTP JSON)', () => {
  let receiver: OtlpReceiver;
  let gateway: TestGateway;
  let stack: Stack;
  let key: string;
  let userId: string;
  beforeAll(async () => {
    [receiver, gateway] = await Promise.all([OtlpReceiver.start(), TestGateway.start()]);
    stack = await startStack({
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', GATEWAY_URL: gateway.url, GATEWAY_API_KEY: 'gw-test-key', GATEWAY_MAX_RETRIES: '0', ...FAST_BATCHES },
    });
    const owner = await stack.user();
    ({ key } = owner);
    userId = owner.user.id;
  });
  afterAll(async () => {
    await stack?.stop();
    await Promise.all([receiver?.close(), gateway?.close()]);
  });

  it('a run is one trace: the request → invoke_agent → chat local (GenAI attributes, tokens) and execute_tool calculator', async () => {
    const { res, runEvent, record } = await react(stack, key, { q: 'What is 12*7?' });
    const traceId = runEvent.trace_id!;
    expect(traceId).toMatch(TRACE_ID);
    expect(record.trace_id).toBe(traceId);
    const admin = await stack.user('admin');
    const listed = await stack.api(admin.key, 'GET', `/api/admin/runs?user_id=${userId}`);
    expect(listed.body.items.find((r: { id: string }) => r.id === runEvent.run_id)).toMatchObject({ trace_id: traceId });
    const trace = await finishedTrace(receiver, traceId, (spans) => spans.some((s) => s.name === 'execute_tool calculator'));
    expect(receiver.requests.every((r) => r.contentType === 'application/json')).toBe(true);

    const request = one(trace, 'POST /api/react');
    expect(request).toMatchObject({ kind: SPAN_KIND.server, parentSpanId: '', status: { code: 0 } });
    expect(request.resource['service.name']).toBe('agent-platform-web');
    expect(request.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/api/react', 'url.path': '/api/react', 'http.response.status_code': 200, 'url.scheme': 'http' });

    const agent = one(trace, 'invoke_agent default');
    expect(agent.parentSpanId).toBe(request.spanId);
    expect(agent.resource['service.name']).toBe('agent-platform-worker');
    expect(agent.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'default',
      'gen_ai.conversation.id': runEvent.conversation_id,
      'gen_ai.provider.name': 'local',
      'gen_ai.request.model': 'local',
      'agent_platform.run.id': runEvent.run_id,
      'agent_platform.run.outcome': 'succeeded',
    });
    expect(agent.attributes).not.toHaveProperty('gen_ai.agent.id');

    const chats = byName(trace, 'chat local');
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.parentSpanId).toBe(agent.spanId);
      expect(chat.kind).toBe(SPAN_KIND.internal);
      expect(chat.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'local',
        'gen_ai.request.model': 'local',
        'gen_ai.conversation.id': runEvent.conversation_id,
        'gen_ai.response.finish_reasons': ['stop'],
      });
      expect(chat.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
      expect(chat.attributes['gen_ai.usage.output_tokens']).toBeGreaterThan(0);
      // Content is opt-in.
      expect(chat.attributes).not.toHaveProperty('gen_ai.input.messages');
      expect(chat.attributes).not.toHaveProperty('gen_ai.output.messages');
    }
    const sum = (attribute: string) => chats.reduce((total, chat) => total + (chat.attributes[attribute] as number), 0);
    expect(sum('gen_ai.usage.input_tokens')).toBe(record.usage.prompt_tokens);
    expect(sum('gen_ai.usage.output_tokens')).toBe(record.usage.completion_tokens);
    expect(agent.attributes['gen_ai.usage.input_tokens']).toBe(record.usage.prompt_tokens);

    const tool = one(trace, 'execute_tool calculator');
    const call = ofType(res.events, 'tool_call')[0]!.data;
    expect(tool.parentSpanId).toBe(agent.spanId);
    expect(tool.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'calculator', 'gen_ai.tool.call.id': call.call_id, 'gen_ai.tool.type': 'function' });
    expect(tool.attributes).not.toHaveProperty('gen_ai.tool.call.arguments');
    expect(tool.attributes).not.toHaveProperty('gen_ai.tool.call.result');
    expect(tool.status.code).toBe(0);
  });

  it('a gateway model: a CLIENT chat span named by the model, provider openai, its tokens; a failed call and run are errors', async () => {
    const model = `model-${hexId(4)}`;
    const agent = await stack.api(key, 'POST', '/api/agents', { name: 'gw', model, api_format: 'chat' });
    expect(agent.status).toBe(201);
    gateway.script(model, { frames: chat.text(['Hello', ' there.'], { usage: { prompt: 12, completion: 5, reasoning: 0 } }) });
    const ok = await react(stack, key, { q: 'hi', agent_id: agent.body.id });
    const trace = await finishedTrace(receiver, ok.runEvent.trace_id!);
    const call = one(trace, `chat ${model}`);
    expect(call.kind).toBe(SPAN_KIND.client);
    expect(call.attributes).toMatchObject({ 'gen_ai.provider.name': 'openai', 'gen_ai.request.model': model, 'gen_ai.usage.input_tokens': 12, 'gen_ai.usage.output_tokens': 5, 'gen_ai.response.finish_reasons': ['stop'] });
    expect(one(trace, 'invoke_agent gw').attributes).toMatchObject({ 'gen_ai.agent.id': agent.body.id, 'gen_ai.provider.name': 'openai' });

    gateway.script(model, { status: 404, body: { error: { code: 'model_not_found', message: `model ${model} not found`, type: 'test' } } });
    const failed = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'hi', agent_id: agent.body.id } });
    expect(ofType(failed.events, 'done')[0]!.data.status).toBe('failed');
    const code = ofType(failed.events, 'error')[0]!.data.code;
    const failedTrace = await finishedTrace(receiver, ofType(failed.events, 'run')[0]!.data.trace_id!);
    const failedCall = one(failedTrace, `chat ${model}`);
    expect(failedCall.status.code).toBe(2);
    expect(failedCall.attributes['error.type']).toBe(code);
    expect(failedCall.events.map((e) => e.name)).toContain('exception');
    const invoke = one(failedTrace, 'invoke_agent gw');
    expect(invoke.status.code).toBe(2);
    expect(invoke.attributes).toMatchObject({ 'error.type': code, 'agent_platform.run.outcome': 'failed' });
  });

  it("an incoming traceparent is the request span's parent: the run's trace is the caller's", async () => {
    const traceId = hexId(16);
    const parentId = hexId(8);
    // A tracestate, even a hostile one, rides along without harm.
    const tracestate = `vendor=opaque-value,${'k'.repeat(5000)}=v,bad key=1,=,@@`;
    const { runEvent, record } = await react(stack, key, { q: 'What is 2+3?' }, { traceparent: `00-${traceId}-${parentId}-01`, tracestate });
    expect(runEvent.trace_id).toBe(traceId);
    expect(record.trace_id).toBe(traceId);
    const trace = await finishedTrace(receiver, traceId);
    expect(one(trace, 'POST /api/react').parentSpanId).toBe(parentId);
    expect(byName(trace, 'chat local').length).toBeGreaterThan(0);
  });

  it('a malformed traceparent is ignored: the request succeeds in a trace of its own', async () => {
    const zeros = `00-${'0'.repeat(32)}-${hexId(8)}-01`;
    for (const traceparent of ['zz-not-a-trace', zeros, `00-${hexId(16).toUpperCase()}-${hexId(8)}-01`, `00-${hexId(16)}-${hexId(8)}-01-extra`]) {
      const { runEvent, record } = await react(stack, key, { q: 'hello' }, { traceparent });
      expect(runEvent.trace_id).toMatch(TRACE_ID);
      expect(traceparent).not.toContain(runEvent.trace_id);
      expect(record.trace_id).toBe(runEvent.trace_id);
      const trace = await finishedTrace(receiver, runEvent.trace_id!);
      expect(one(trace, 'POST /api/react').parentSpanId).toBe('');
    }
  });

  it('a request that starts no run has its span too, named by its route; a 4xx is not a server error', async () => {
    const traceId = hexId(16);
    const missing = await fetch(`${stack.url}/api/runs/${crypto.randomUUID()}`, { headers: { authorization: `Bearer ${key}`, traceparent: `00-${traceId}-${hexId(8)}-01` } });
    expect(missing.status).toBe(404);
    const [span] = await receiver.waitFor('the 404 span', (spans) => inTrace(spans, traceId).length > 0 && inTrace(spans, traceId));
    expect(span).toMatchObject({ name: 'GET /api/runs/:id', kind: SPAN_KIND.server, status: { code: 0 } });
    expect(span!.attributes).toMatchObject({ 'http.route': '/api/runs/:id', 'http.response.status_code': 404 });
  });

  it('DAG: the plan, every node and the synthesis are model calls of the one trace', async () => {
    const res = await stream(`${stack.url}/api/dag`, { token: key, body: { q: 'What is 2+2 and what is 3*3?' } });
    expect(ofType(res.events, 'done')[0]!.data.status).toBe('succeeded');
    const traceId = ofType(res.events, 'run')[0]!.data.trace_id!;
    const nodes = ofType(res.events, 'plan')[0]!.data.nodes;
    const trace = await finishedTrace(receiver, traceId, (spans) => byName(spans, 'dag_node synthesis').length === 1);
    const agent = one(trace, 'invoke_agent default');
    const chats = byName(trace, 'chat local');
    // The plan, at least one call per work node, and the synthesis.
    expect(chats.length).toBeGreaterThanOrEqual(nodes.length + 1);
    const spanById = new Map(trace.map((s) => [s.spanId, s]));
    const ancestors = (span: ReceivedSpan): string[] => {
      const parent = spanById.get(span.parentSpanId);
      return parent ? [parent.name, ...ancestors(parent)] : [];
    };
    for (const chat of chats) expect(ancestors(chat)).toContain(agent.name);
    for (const node of nodes) expect(byName(trace, `dag_node ${node.id}`)).toHaveLength(1);
    const calculators = byName(trace, 'execute_tool calculator');
    expect(calculators.length).toBeGreaterThan(0);
    for (const tool of calculators) expect(ancestors(tool)[0]).toMatch(/^dag_node /);
  });
});

describe('tracing on (OTLP/HTTP protobuf, content captured)', () => {
  let receiver: OtlpReceiver;
  let stack: Stack;
  let key: string;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    stack = await startStack({
      env: {
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`,
        OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=s3cret%20value,x-tenant=acme',
        OTEL_SERVICE_NAME: 'agents-test',
        OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true',
        // Slow tokens, so a worker can be killed while the run streams.
        LOCAL_MODEL_TOKEN_DELAY_MS: '40',
        JOB_LOCK_MS: '2000',
        JOB_STALLED_INTERVAL_MS: '1000',
        ...FAST_BATCHES,
      },
    });
    ({ key } = await stack.user());
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  it('protobuf requests (the default) carry the configured headers and service name; prompts, answers and tool calls are recorded', async () => {
    const { runEvent } = await react(stack, key, { q: 'What is 12*7?' });
    const trace = await finishedTrace(receiver, runEvent.trace_id!);
    expect(receiver.requests.length).toBeGreaterThan(0);
    for (const request of receiver.requests) {
      expect(request.path).toBe('/v1/traces');
      expect(request.contentType).toBe('application/x-protobuf');
      expect(request.headers).toMatchObject({ 'x-collector-key': 's3cret value', 'x-tenant': 'acme' });
    }
    expect(new Set(trace.map((s) => s.resource['service.name']))).toEqual(new Set(['agents-test']));

    const [first, last] = byName(trace, 'chat local');
    const input = JSON.parse(first!.attributes['gen_ai.input.messages'] as string);
    expect(input).toEqual([{ role: 'user', parts: [{ type: 'text', content: 'What is 12*7?' }] }]);
    const firstOutput = JSON.parse(first!.attributes['gen_ai.output.messages'] as string);
    expect(firstOutput).toEqual([{ role: 'assistant', parts: [{ type: 'tool_call', id: expect.any(String), name: 'calculator', arguments: { expression: '12*7' } }], finish_reason: 'stop' }]);
    const lastInput = JSON.parse(last!.attributes['gen_ai.input.messages'] as string);
    expect(lastInput.at(-1)).toEqual({ role: 'tool', parts: [{ type: 'tool_call_response', id: firstOutput[0].parts[0].id, response: '84' }] });
    const answer = JSON.parse(last!.attributes['gen_ai.output.messages'] as string);
    expect(answer[0].parts[0].content).toContain('84');

    const tool = one(trace, 'execute_tool calculator');
    expect(JSON.parse(tool.attributes['gen_ai.tool.call.arguments'] as string)).toEqual({ expression: '12*7' });
    expect(tool.attributes['gen_ai.tool.call.result']).toBe('84');
  });

  it('a long prompt is recorded bounded in size', async () => {
    const q = `What is 1+1? ${'word '.repeat(4000)}`;
    const { runEvent } = await react(stack, key, { q });
    const trace = await finishedTrace(receiver, runEvent.trace_id!);
    const recorded = byName(trace, 'chat local')[0]!.attributes['gen_ai.input.messages'] as string;
    expect(recorded.length).toBeLessThanOrEqual(32 * 1024);
    const content = JSON.parse(recorded)[0].parts[0].content as string;
    expect(content.startsWith('What is 1+1?')).toBe(true);
    expect(content.endsWith('…[truncated]')).toBe(true);
  });

  it('an agent with a knowledge base: invoke_agent names it; the search is a retrieval span under its tool call', async () => {
    const kb = await stack.api(key, 'POST', '/api/knowledge-bases', { name: 'Router docs' });
    expect(kb.status).toBe(201);
    const form = new FormData();
    form.append('file', new Blob(['To restore the router administrator passphrase, hold the reset button for ten seconds.'], { type: 'text/plain' }), 'router.txt');
    const uploaded = await fetch(`${stack.url}/api/knowledge-bases/${kb.body.id}/documents`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
    expect(uploaded.status).toBeLessThan(300);
    await eventually(async () => (await stack.api(key, 'GET', `/api/knowledge-bases/${kb.body.id}/documents`)).body.items.every((d: { status: string }) => d.status === 'ready'), 'the document to be ingested');
    const agent = await stack.api(key, 'POST', '/api/agents', { name: 'Router helper', knowledge_base_ids: [kb.body.id] });
    expect(agent.status).toBe(201);
    const { runEvent } = await react(stack, key, { q: 'How do I restore the router passphrase?', agent_id: agent.body.id });
    const trace = await finishedTrace(receiver, runEvent.trace_id!, (spans) => spans.some((s) => s.name.startsWith('retrieval')));
    const invoke = one(trace, 'invoke_agent Router helper');
    expect(invoke.attributes).toMatchObject({ 'gen_ai.agent.id': agent.body.id, 'gen_ai.agent.name': 'Router helper' });
    const tool = one(trace, 'execute_tool knowledge_base_retrieve');
    expect(tool.attributes['gen_ai.tool.type']).toBe('datastore');
    const retrieval = one(trace, `retrieval ${kb.body.id}`);
    expect(retrieval.parentSpanId).toBe(tool.spanId);
    expect(retrieval.attributes).toMatchObject({ 'gen_ai.operation.name': 'retrieval', 'gen_ai.data_source.id': kb.body.id, 'agent_platform.knowledge_base.count': 1 });
    expect(retrieval.attributes['gen_ai.request.top_k']).toBeGreaterThan(0);
    expect(retrieval.attributes['agent_platform.retrieval.hits']).toBeGreaterThan(0);
    expect(retrieval.attributes['gen_ai.retrieval.query.text']).toEqual(expect.stringContaining('router'));
  });

  it("a run resumed after its worker is killed continues the same trace (the job keeps the request's context)", async () => {
    const first = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'What is 6*7?' }, ...killAtFirstToken(stack.workers[0]!) });
    const runEvent = ofType(first.events, 'run')[0]!.data;
    await stack.startWorker();
    const rest = await stream(`${stack.url}/api/runs/${runEvent.run_id}/events`, { method: 'GET', token: key });
    expect(ofType(rest.events, 'done')[0]!.data.status).toBe('succeeded');
    const trace = await finishedTrace(receiver, runEvent.trace_id!);
    const request = one(trace, 'POST /api/react');
    // The killed attempt's span never ended (its process died); the resumed one is the request's child.
    const resumed = one(trace, 'invoke_agent default');
    expect(resumed.parentSpanId).toBe(request.spanId);
    expect(resumed.attributes['agent_platform.run.attempt']).toBe(2);
    expect(byName(trace, 'chat local').length).toBeGreaterThan(0);
  });
});

describe('tracing off', () => {
  let receiver: OtlpReceiver;
  let stack: Stack;
  let key: string;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    // An endpoint is set, but the SDK is disabled: exactly like no endpoint at all.
    stack = await startStack({ env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true', ...FAST_BATCHES } });
    ({ key } = await stack.user());
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.close();
  });

  it('a run has no trace_id (record and run event), and nothing is sent, not even at shutdown', async () => {
    const { runEvent, record } = await react(stack, key, { q: 'What is 12*7?' }, { traceparent: `00-${hexId(16)}-${hexId(8)}-01` });
    expect(runEvent.trace_id).toBeNull();
    expect(record.trace_id).toBeNull();
    expect(stack.webs[0]!.output.join('')).not.toContain('tracing:');
    // A stopping process flushes its spans: had there been any, they would have arrived by now.
    await Promise.all([...stack.webs, ...stack.workers].map((p) => p.stop()));
    expect(receiver.requests).toEqual([]);
  });
});

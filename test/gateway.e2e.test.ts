import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream, type ReceivedEvent, type StreamResult } from './support/sse.js';
import { TestGateway, type Reply } from './support/gateway.js';
import { chat, native, responses } from './support/gateway-frames.js';
import { uniqueId } from './support/app.js';

/**
 * The gateway provider end to end: built web + worker processes under MODEL_PROVIDER=gateway,
 * against a scripted gateway on 127.0.0.1. Every row of the spec's gateway error table has a case.
 */
const IDLE_TIMEOUT_MS = 1000;
const MAX_RETRIES = 3;
let gateway: TestGateway;
let stack: Stack;
let key: string;

const gatewayEnv = () => ({
  MODEL_PROVIDER: 'gateway',
  GATEWAY_URL: gateway.url,
  GATEWAY_API_KEY: 'gw-test-key',
  GATEWAY_MODEL: 'default-model',
  GATEWAY_FALLBACK_MODEL: 'fallback-model',
  GATEWAY_MAX_RETRIES: String(MAX_RETRIES),
  GATEWAY_RETRY_BASE_MS: '5',
  GATEWAY_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
});

beforeAll(async () => {
  gateway = await TestGateway.start();
  stack = await startStack({ env: gatewayEnv() });
  ({ key } = await stack.user());
});
afterAll(async () => {
  await stack.stop();
  await gateway.close();
});

/** An agent on a model name of its own, so each test's script is its own. */
async function agent(fields: Record<string, unknown> = {}, on = { url: stack.url, key }) {
  const model = `model-${uniqueId()}`;
  const res = await fetch(`${on.url}/api/agents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${on.key}` },
    body: JSON.stringify({ name: 'gw', model, ...fields }),
  });
  expect(res.status).toBe(201);
  const body = (await res.json()) as { id: string; model: string };
  return { id: body.id, model: body.model };
}

const run = (agentId: string, q: string, mode: 'react' | 'dag' = 'react', onEvent?: (e: ReceivedEvent) => void) =>
  stream(`${stack.url}/api/${mode}`, { token: key, body: { q, agent_id: agentId }, onEvent });

const runRow = (res: StreamResult) => stack.knex('runs').where({ id: res.headers.get('x-run-id') }).first();
const tokens = (res: StreamResult) => ofType(res.events, 'token').map((e) => e.data.text).join('');
const answerOf = (res: StreamResult) => ofType(res.events, 'answer')[0]?.data;
const errorOf = (res: StreamResult) => ofType(res.events, 'error')[0]?.data;
const doneOf = (res: StreamResult) => ofType(res.events, 'done')[0]!.data;

/** A run that ended on an error: the error event, done failed last, nothing stored as the answer. */
async function expectFailed(res: StreamResult, code: string, retryable: boolean) {
  expect(errorOf(res)).toMatchObject({ code, retryable });
  expect(res.events.at(-1)).toMatchObject({ type: 'done', data: { status: 'failed' } });
  expect(answerOf(res)).toBeUndefined();
  const row = await runRow(res);
  expect(row).toMatchObject({ status: 'failed', answer: null, error: { code } });
  return errorOf(res)!;
}

describe('chat format', () => {
  it('MODEL_PROVIDER=gateway: a run without an agent streams the gateway model’s tokens, with usage in done and the row', async () => {
    gateway.script('default-model', { frames: chat.text(['Hello', ' from', ' the gateway.'], { usage: { prompt: 12, completion: 5, reasoning: 2 } }) });
    const res = await stream(`${stack.url}/api/react`, { token: key, body: { q: 'Say hello' } });
    expect(ofType(res.events, 'token').map((e) => e.data.text)).toEqual(['Hello', ' from', ' the gateway.']);
    expect(answerOf(res)).toMatchObject({ content: 'Hello from the gateway.', finish_reason: 'stop' });
    const usage = { prompt_tokens: 12, completion_tokens: 5, reasoning_tokens: 2, total_tokens: 17 };
    expect(doneOf(res)).toMatchObject({ status: 'succeeded', usage });
    expect(await runRow(res)).toMatchObject({ status: 'succeeded', answer: 'Hello from the gateway.', finish_reason: 'stop', usage });
    const [request] = gateway.requestsFor('default-model');
    expect(request!.path).toBe('/v1/chat/completions');
    expect(request!.headers.authorization).toBe('Bearer gw-test-key');
    expect(request!.body).toMatchObject({ model: 'default-model', stream: true, messages: [{ role: 'user', content: 'Say hello' }] });
    expect(request!.body.tools.map((t: any) => t.function.name)).toEqual(['calculator', 'current_time']);
  });

  it('assembles a tool call split across chunks, runs it, and sums the usage of both calls', async () => {
    const { id, model } = await agent({ instructions: 'Use tools.', reasoning_effort: 'high', max_tokens: 500 });
    gateway.script(
      model,
      { frames: chat.toolCall('call_abc', 'calculator', ['{"expre', 'ssion": "12', '*7"}'], { prompt: 10, completion: 4 }) },
      { frames: chat.text(['12*7 is ', '84.'], { reasoning: ['The tool said 84.'], usage: { prompt: 20, completion: 6, reasoning: 3 } }) },
    );
    const res = await run(id, 'What is 12*7?');
    expect(ofType(res.events, 'tool_call')[0]!.data).toMatchObject({ call_id: 'call_abc', name: 'calculator', arguments: { expression: '12*7' } });
    expect(ofType(res.events, 'tool_result')[0]!.data).toMatchObject({ call_id: 'call_abc', output: 84, is_error: false });
    expect(ofType(res.events, 'thought').map((e) => e.data.text)).toContain('The tool said 84.');
    expect(answerOf(res)!.content).toBe('12*7 is 84.');
    expect(tokens(res)).toBe('12*7 is 84.');
    const usage = { prompt_tokens: 30, completion_tokens: 10, reasoning_tokens: 3, total_tokens: 40 };
    expect(doneOf(res).usage).toEqual(usage);
    expect((await runRow(res)).usage).toEqual(usage);
    const [first, second] = gateway.requestsFor(model);
    expect(first!.body).toMatchObject({ reasoning_effort: 'high', max_tokens: 500, messages: [{ role: 'system', content: 'Use tools.' }, { role: 'user', content: 'What is 12*7?' }] });
    expect(second!.body.messages.slice(2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_abc', type: 'function', function: { name: 'calculator', arguments: '{"expression":"12*7"}' } }] },
      { role: 'tool', tool_call_id: 'call_abc', content: '84' },
    ]);
  });

  it('arguments that are not JSON become an error result the model reads, not a crash', async () => {
    const { id, model } = await agent();
    gateway.script(model, { frames: chat.toolCall('call_bad', 'calculator', ['{"expression": ']) }, { frames: chat.text(['Sorry.']) });
    const res = await run(id, 'What is 1+1?');
    expect(ofType(res.events, 'tool_result')[0]!.data).toMatchObject({ call_id: 'call_bad', is_error: true });
    expect(answerOf(res)!.content).toBe('Sorry.');
  });

  it('truncation: finish_reason length → answer.finish_reason "length"; content_filter → "content_filter"', async () => {
    for (const finish of ['length', 'content_filter'] as const) {
      const { id, model } = await agent();
      gateway.script(model, { frames: chat.text(['Cut off'], { finish }) });
      const res = await run(id, 'Tell me everything');
      expect(answerOf(res)).toMatchObject({ content: 'Cut off', finish_reason: finish });
      expect(doneOf(res).status).toBe('succeeded');
      expect((await runRow(res)).finish_reason).toBe(finish);
    }
  });

  it('reasoning that uses up max_tokens with nothing visible → an error event that says so, not an empty success', async () => {
    const { id, model } = await agent({ max_tokens: 64, reasoning_effort: 'high' });
    gateway.script(model, { frames: chat.text([], { finish: 'length', usage: { prompt: 9, completion: 64, reasoning: 64 } }) });
    const res = await run(id, 'Think hard');
    const error = await expectFailed(res, 'empty_answer', false);
    expect(error.message).toMatch(/max_tokens 64.*64 reasoning tokens/);
    expect(doneOf(res).usage.reasoning_tokens).toBe(64);
  });
});

describe('the gateway error table', () => {
  it('429 → retried after Retry-After, then succeeds', async () => {
    const { id, model } = await agent();
    gateway.script(model, { status: 429, headers: { 'retry-after': '1' }, body: { error: { message: 'rate limited', type: 'rate_limit' } } }, { frames: chat.text(['ok']) });
    const res = await run(id, 'hi');
    expect(answerOf(res)!.content).toBe('ok');
    const [first, second] = gateway.requestsFor(model);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1000);
  });

  it('500 → retried with backoff, then succeeds', async () => {
    const { id, model } = await agent();
    gateway.script(model, { status: 500, body: { error: { message: 'boom' } } }, { status: 500 }, { frames: chat.text(['fine']) });
    const res = await run(id, 'hi');
    expect(answerOf(res)!.content).toBe('fine');
    expect(gateway.requestsFor(model)).toHaveLength(3);
  });

  it('503 through every retry → GATEWAY_FALLBACK_MODEL, announced in a thought', async () => {
    const { id, model } = await agent();
    const unavailable: Reply = { status: 503, body: { error: { message: 'upstream maintenance' } } };
    gateway.script(model, ...Array.from({ length: MAX_RETRIES + 1 }, () => unavailable));
    gateway.script('fallback-model', { frames: chat.text(['Fallback answer.']) });
    const res = await run(id, 'hi');
    expect(gateway.requestsFor(model)).toHaveLength(MAX_RETRIES + 1);
    expect(ofType(res.events, 'thought').map((e) => e.data.text).join(' ')).toContain('fallback model "fallback-model"');
    expect(answerOf(res)!.content).toBe('Fallback answer.');
    expect(gateway.requestsFor('fallback-model').at(-1)!.body.messages.at(-1)).toEqual({ role: 'user', content: 'hi' });
  });

  it('503 on the fallback too → error gateway_unavailable (retryable)', async () => {
    const { id, model } = await agent();
    const unavailable: Reply = { status: 503, body: { error: { message: 'overloaded' } } };
    gateway.script(model, ...Array.from({ length: MAX_RETRIES + 1 }, () => unavailable));
    gateway.script('fallback-model', ...Array.from({ length: MAX_RETRIES + 1 }, () => unavailable));
    const error = await expectFailed(await run(id, 'hi'), 'gateway_unavailable', true);
    expect(error.message).toContain('fallback-model');
  });

  it.each([
    [400, 'gateway_bad_request'],
    [401, 'gateway_unauthorized'],
    [404, 'gateway_not_found'],
    [413, 'gateway_request_too_large'],
  ])('%i → no retry; error %s', async (status, code) => {
    const { id, model } = await agent();
    gateway.script(model, { status, body: { error: { message: `refused with ${status}`, type: 'test' } } });
    const error = await expectFailed(await run(id, 'hi'), code, false);
    expect(error.message).toContain(`refused with ${status}`);
    expect(gateway.requestsFor(model)).toHaveLength(1);
  });

  it('model_not_found → error naming the model, never retried, no fallback (even when sent with 503)', async () => {
    const { id, model } = await agent();
    const message = `model ${model} not found in group default`;
    gateway.script(model, { status: 503, body: { error: { code: 'model_not_found', message, type: 'new_api_error' } } });
    const error = await expectFailed(await run(id, 'hi'), 'model_not_found', false);
    expect(error.message).toContain(model);
    expect(gateway.requestsFor(model)).toHaveLength(1);
  });

  it('a stall mid-stream → the idle timeout ends the run with gateway_timeout (what streamed is not repeated)', async () => {
    const { id, model } = await agent();
    gateway.script(model, { frames: chat.text(['Partial']).slice(0, 2), stall: true });
    const started = Date.now();
    const res = await run(id, 'hi');
    await expectFailed(res, 'gateway_timeout', true);
    expect(tokens(res)).toBe('Partial');
    expect(Date.now() - started).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS);
    expect(gateway.requestsFor(model)).toHaveLength(1);
  });

  it('keep-alive comments count as life; a gateway that never answers is retried', async () => {
    const { id, model } = await agent();
    const slow = [{ comment: 'keep-alive' }, ...chat.text(['late'])];
    gateway.script(model, { hang: true }, { frames: slow });
    const res = await run(id, 'hi');
    expect(answerOf(res)!.content).toBe('late');
    expect(gateway.requestsFor(model)).toHaveLength(2);
  });

  it('malformed chunks: before any output → retried; after output → error gateway_bad_response', async () => {
    const first = await agent();
    gateway.script(first.model, { frames: [{ raw: '{not json' }] }, { frames: chat.text(['recovered']) });
    expect(answerOf(await run(first.id, 'hi'))!.content).toBe('recovered');
    const second = await agent();
    const frames = chat.text(['Half']);
    gateway.script(second.model, { frames: [...frames.slice(0, 2), { raw: '{"choices": [{"delta": ' }] });
    const res = await run(second.id, 'hi');
    await expectFailed(res, 'gateway_bad_response', true);
    expect(tokens(res)).toBe('Half');
  });

  it('a cancel aborts the gateway call in flight', async () => {
    const { id, model } = await agent();
    gateway.script(model, { frames: chat.text(['Thinking']).slice(0, 2), stall: true });
    let runId = '';
    const res = await run(id, 'hi', 'react', (e) => {
      if (e.type === 'run') runId = e.data.run_id;
      if (e.type === 'token') void fetch(`${stack.url}/api/runs/${runId}/cancel`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
    });
    // Cancelled, not timed out: the abort reached the request before the idle timeout could.
    expect(doneOf(res).status).toBe('cancelled');
    expect(gateway.requestsFor(model)).toHaveLength(1);
  });
});

describe('responses format', () => {
  it('sends input, tools (functions and gateway tools) and reasoning.effort; streams reasoning, a function call and text', async () => {
    const gatewayTools = [{ type: 'web_search_preview' }, { type: 'mcp', server_label: 'docs', server_url: 'https://mcp.example.test/sse' }];
    const { id, model } = await agent({ api_format: 'responses', reasoning_effort: 'low', max_tokens: 900, gateway_tools: gatewayTools });
    gateway.script(
      model,
      { frames: responses.functionCall('call_r1', 'calculator', ['{"expression":', '"6*7"}'], { prompt: 7, completion: 3 }) },
      { frames: responses.text(['It is ', '42.'], { reasoning: ['Checking the result.'], usage: { prompt: 15, completion: 8, reasoning: 4 } }) },
    );
    const res = await run(id, 'What is 6*7?');
    expect(ofType(res.events, 'tool_result')[0]!.data).toMatchObject({ call_id: 'call_r1', output: 42 });
    expect(ofType(res.events, 'thought').map((e) => e.data.text)).toContain('Checking the result.');
    expect(answerOf(res)).toMatchObject({ content: 'It is 42.', finish_reason: 'stop' });
    expect(doneOf(res).usage).toEqual({ prompt_tokens: 22, completion_tokens: 11, reasoning_tokens: 4, total_tokens: 33 });
    const [first, second] = gateway.requestsFor(model);
    expect(first!.path).toBe('/v1/responses');
    expect(first!.body).toMatchObject({ model, stream: true, input: [{ role: 'user', content: 'What is 6*7?' }], reasoning: { effort: 'low' }, max_output_tokens: 900 });
    expect(first!.body.tools).toEqual([
      { type: 'function', name: 'calculator', description: expect.any(String), parameters: expect.any(Object), strict: false },
      { type: 'function', name: 'current_time', description: expect.any(String), parameters: expect.any(Object), strict: false },
      ...gatewayTools,
    ]);
    expect(second!.body.input.slice(1)).toEqual([
      { type: 'function_call', call_id: 'call_r1', name: 'calculator', arguments: '{"expression":"6*7"}' },
      { type: 'function_call_output', call_id: 'call_r1', output: '42' },
    ]);
  });

  it('status incomplete with max_output_tokens → answer.finish_reason "length"', async () => {
    const { id, model } = await agent({ api_format: 'responses' });
    gateway.script(model, { frames: responses.text(['Trunc'], { incomplete: 'max_output_tokens' }) });
    const res = await run(id, 'long');
    expect(answerOf(res)).toMatchObject({ content: 'Trunc', finish_reason: 'length' });
  });

  it('an error object mid-stream with model_not_found ends the run, not retried', async () => {
    const { id, model } = await agent({ api_format: 'responses' });
    gateway.script(model, { frames: [{ event: 'error', data: { type: 'error', code: 'model_not_found', message: `The model ${model} does not exist` } }] });
    await expectFailed(await run(id, 'hi'), 'model_not_found', false);
    expect(gateway.requestsFor(model)).toHaveLength(1);
  });
});

describe('native format', () => {
  it('key in x-goog-api-key, contents with roles and parts, thinkingConfig; thoughts become thought events', async () => {
    const { id, model } = await agent({ api_format: 'native', thinking_budget: 256, max_tokens: 1000, instructions: 'Be exact.' });
    gateway.script(
      model,
      { frames: native.functionCall('calculator', { expression: '3*3' }) },
      { frames: native.text(['Nine', ' it is.'], { thoughts: ['3 times 3.'], usage: { prompt: 11, completion: 9, reasoning: 5 } }) },
    );
    const res = await run(id, 'What is 3*3?');
    expect(ofType(res.events, 'tool_result')[0]!.data).toMatchObject({ name: 'calculator', output: 9 });
    expect(ofType(res.events, 'thought').map((e) => e.data.text)).toContain('3 times 3.');
    expect(answerOf(res)!.content).toBe('Nine it is.');
    // The function call's chunk carries no usage: it is charged the estimate (DESIGN §21) beside the answer's reported usage.
    const usage = doneOf(res).usage;
    expect(usage).toMatchObject({ reasoning_tokens: 5, estimated: true });
    expect(usage.prompt_tokens).toBeGreaterThan(11);
    expect(usage.completion_tokens).toBeGreaterThan(9);
    const [first, second] = gateway.requestsFor(model);
    expect(first!.path).toBe(`/v1beta/models/${model}:streamGenerateContent?alt=sse`);
    expect(first!.headers['x-goog-api-key']).toBe('gw-test-key');
    expect(first!.headers.authorization).toBeUndefined();
    expect(first!.body).toMatchObject({
      contents: [{ role: 'user', parts: [{ text: 'What is 3*3?' }] }],
      systemInstruction: { parts: [{ text: 'Be exact.' }] },
      generationConfig: { maxOutputTokens: 1000, thinkingConfig: { includeThoughts: true, thinkingBudget: 256 } },
    });
    expect(first!.body.tools[0].functionDeclarations.map((f: any) => f.name)).toEqual(['calculator', 'current_time']);
    expect(second!.body.contents.slice(1)).toEqual([
      { role: 'model', parts: [{ functionCall: { name: 'calculator', args: { expression: '3*3' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'calculator', response: { output: '9' } } }] },
    ]);
  });

  it('MAX_TOKENS → "length"; SAFETY → "content_filter"; a 401 is not retried', async () => {
    for (const [finish, expected] of [['MAX_TOKENS', 'length'], ['SAFETY', 'content_filter']] as const) {
      const { id, model } = await agent({ api_format: 'native' });
      gateway.script(model, { frames: native.text(['Some'], { finish }) });
      expect(answerOf(await run(id, 'hi'))!.finish_reason).toBe(expected);
    }
    const { id, model } = await agent({ api_format: 'native' });
    gateway.script(model, { status: 401, body: { error: { code: 401, message: 'API key not valid', status: 'UNAUTHENTICATED' } } });
    await expectFailed(await run(id, 'hi'), 'gateway_unauthorized', false);
    expect(gateway.requestsFor(model)).toHaveLength(1);
  });
});

describe('DAG on the gateway', () => {
  it('the model plans sub-tasks as JSON; nodes run on it; the synthesis streams tokens', async () => {
    const { id, model } = await agent();
    const plan = JSON.stringify({ tasks: [{ id: 'a', task: 'What is 2+2?' }, { id: 'b', task: 'What is 3*3?' }] });
    gateway.script(
      model,
      { frames: chat.text([plan], { usage: { prompt: 30, completion: 20 } }) },
      { frames: chat.text(['four']) },
      { frames: chat.text(['nine']) },
      { frames: chat.text(['2+2 is 4', ' and 3*3 is 9.']) },
    );
    const res = await run(id, 'What is 2+2 and what is 3*3?', 'dag');
    expect(ofType(res.events, 'plan')[0]!.data.nodes).toEqual([
      { id: 'a', task: 'What is 2+2?', depends_on: [] },
      { id: 'b', task: 'What is 3*3?', depends_on: [] },
      { id: 'synthesis', task: expect.any(String), depends_on: ['a', 'b'] },
    ]);
    const outputs = ofType(res.events, 'node').filter((n) => n.data.status === 'succeeded' && n.data.node_id !== 'synthesis').map((n) => n.data.output);
    expect(outputs.sort()).toEqual(['four', 'nine']);
    expect(tokens(res)).toBe('2+2 is 4 and 3*3 is 9.');
    expect(answerOf(res)!.content).toBe('2+2 is 4 and 3*3 is 9.');
    expect(doneOf(res).usage.prompt_tokens).toBeGreaterThanOrEqual(30);
    const requests = gateway.requestsFor(model);
    expect(requests).toHaveLength(4);
    expect(requests[0]!.body.messages[0].role).toBe('system');
    const synthesis = requests[3]!.body.messages;
    expect(synthesis.at(-1).content).toMatch(/Sub-task a:\n(four|nine)/);
  });
});

describe('a gateway run whose worker dies', () => {
  it('kill -9 mid-answer: after status resumed the interrupted step streams anew; no tool call is repeated', async () => {
    const faulty = await startStack({ env: { ...gatewayEnv(), JOB_LOCK_MS: '2000', JOB_STALLED_INTERVAL_MS: '1000' } });
    try {
      const { key: faultyKey } = await faulty.user();
      const { id, model } = await agent({}, { url: faulty.url, key: faultyKey });
      gateway.script(
        model,
        { frames: chat.toolCall('call_k', 'calculator', ['{"expression":"12*7"}']) },
        { frames: chat.text(['Partial ', 'words']).slice(0, 2), stall: true },
        { frames: chat.text(['The answer', ' is 84.']) },
      );
      const [workerA] = faulty.workers;
      const controller = new AbortController();
      const first = await stream(`${faulty.url}/api/react`, {
        token: faultyKey,
        body: { q: 'What is 12*7?', agent_id: id },
        signal: controller.signal,
        onEvent: (e) => {
          if (e.type === 'token' && !controller.signal.aborted) {
            workerA!.child.kill('SIGKILL');
            controller.abort();
          }
        },
      });
      expect(tokens(first)).toBe('Partial ');
      await faulty.startWorker();
      const runId = first.headers.get('x-run-id')!;
      const rest = await stream(`${faulty.url}/api/runs/${runId}/events`, { method: 'GET', token: faultyKey, headers: { 'Last-Event-ID': first.events.at(-1)!.id } });
      const seen = [...first.events, ...rest.events];
      expect(new Set(seen.map((e) => e.id)).size).toBe(seen.length);
      expect(seen.filter((e) => e.type === 'done')).toHaveLength(1);
      const resumedAt = seen.findIndex((e) => e.type === 'status' && e.data.status === 'resumed');
      expect(resumedAt).toBeGreaterThan(0);
      const after = seen.slice(resumedAt);
      expect(ofType(after, 'token').map((e) => e.data.text).join('')).toBe('The answer is 84.');
      expect(answerOf({ ...rest, events: seen })!.content).toBe('The answer is 84.');
      expect(ofType(seen, 'tool_call')).toHaveLength(1);
      expect(gateway.requestsFor(model)).toHaveLength(3);
      expect(await faulty.knex('runs').where({ id: runId }).first()).toMatchObject({ status: 'succeeded', answer: 'The answer is 84.', crashes: 1 });
    } finally {
      await faulty.stop();
    }
  });
});

describe('tool approval with a gateway model (DESIGN §11)', () => {
  it('two calls in one response wait together; approve one, reject the other; the model sees both results on resume', async () => {
    const { id, model } = await agent({ tool_approval: ['calculator'] });
    gateway.script(
      model,
      { frames: chat.toolCalls([{ id: 'call_a', name: 'calculator', arguments: { expression: '2+2' } }, { id: 'call_b', name: 'calculator', arguments: { expression: '3*3' } }]) },
      { frames: chat.text(['Four, ', 'and no nine.']) },
    );
    let runId = '';
    let decided: Promise<unknown> | undefined;
    const approvals: string[] = [];
    const decide = (callId: string, decision: string, message?: string) =>
      fetch(`${stack.url}/api/runs/${runId}/approvals`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ call_id: callId, decision, message }) }).then((r) => r.json());
    const res = await run(id, 'sums', 'react', (event) => {
      if (event.type === 'run') runId = event.data.run_id;
      if (event.type === 'approval_required') approvals.push(event.data.call_id);
      if (event.type === 'status' && event.data.status === 'waiting' && !decided) {
        decided = decide('call_a', 'approve').then((first) => {
          expect(first).toMatchObject({ status: 'recorded' });
          return decide('call_b', 'reject', 'no');
        });
      }
    });
    expect(await decided).toMatchObject({ status: 'resuming' });
    expect(approvals).toEqual(['call_a', 'call_b']);
    expect(ofType(res.events, 'tool_result').map((e) => [e.data.call_id, e.data.output, e.data.is_error])).toEqual([
      ['call_a', 4, false],
      ['call_b', 'rejected: no', true],
    ]);
    expect(tokens(res)).toBe('Four, and no nine.');
    expect(doneOf(res).status).toBe('succeeded');
    const [, second] = gateway.requestsFor(model);
    const toolMessages = second!.body.messages.filter((m: { role: string }) => m.role === 'tool');
    expect(toolMessages).toEqual([expect.objectContaining({ tool_call_id: 'call_a', content: '4' }), expect.objectContaining({ tool_call_id: 'call_b', content: 'rejected: no' })]);
    expect(gateway.requestsFor(model)).toHaveLength(2);
  });
});

describe("an OpenAI client's sampling parameters (DESIGN §16)", () => {
  const complete = (agentId: string, extra: Record<string, unknown>) =>
    fetch(`${stack.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: `agent:${agentId}`, messages: [{ role: 'user', content: 'Say hello' }], ...extra }),
    });
  const sampling = { temperature: 0.3, top_p: 0.8, stop: ['END'], seed: 11, presence_penalty: 0.1, frequency_penalty: 0.2 };

  it('reach each format as it spells them; max_tokens only lowers the agent’s limit', async () => {
    const formats = [
      { api_format: 'chat', frames: chat.text(['Hi']), expected: { ...sampling, max_tokens: 50 } },
      { api_format: 'responses', frames: responses.text(['Hi']), expected: { temperature: 0.3, top_p: 0.8, max_output_tokens: 50 } },
      { api_format: 'native', frames: native.text(['Hi']), expected: { generationConfig: expect.objectContaining({ temperature: 0.3, topP: 0.8, stopSequences: ['END'], seed: 11, presencePenalty: 0.1, frequencyPenalty: 0.2, maxOutputTokens: 50 }) } },
    ];
    for (const { api_format, frames, expected } of formats) {
      const { id, model } = await agent({ api_format, max_tokens: 100 });
      gateway.script(model, { frames }, { frames });
      expect((await complete(id, { ...sampling, max_tokens: 50 })).status).toBe(200);
      expect(gateway.requestsFor(model)[0]!.body).toMatchObject(expected);
      expect((await complete(id, { max_tokens: 500 })).status).toBe(200);
      const raised = gateway.requestsFor(model)[1]!.body;
      expect(raised.max_tokens ?? raised.max_output_tokens ?? raised.generationConfig.maxOutputTokens).toBe(100);
      expect(raised.temperature ?? raised.generationConfig?.temperature).toBeUndefined();
    }
  });

  it('an agent that reasons keeps its own: only max_tokens applies', async () => {
    const { id, model } = await agent({ reasoning_effort: 'high', max_tokens: 100 });
    gateway.script(model, { frames: chat.text(['Hi']) });
    expect((await complete(id, { ...sampling, max_completion_tokens: 40 })).status).toBe(200);
    const [request] = gateway.requestsFor(model);
    expect(request!.body).toMatchObject({ reasoning_effort: 'high', max_tokens: 40 });
    for (const name of Object.keys(sampling)) expect(request!.body).not.toHaveProperty(name);
  });
});

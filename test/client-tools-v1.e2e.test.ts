import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { TestGateway } from './support/gateway.js';
import { chat } from './support/gateway-frames.js';
import { uniqueId } from './support/app.js';

/**
 * Client tools on the OpenAI-compatible endpoints (DESIGN §23), driven by the official `openai`
 * SDK against built processes: a call to the client's function parks the run, the SDK gets
 * `tool_calls` / `function_call` items, and its tool results resume the same run — on the local
 * model and on a gateway model, streaming and not, and after the web and worker were replaced.
 */
let gateway: TestGateway;
let stack: Stack;
beforeAll(async () => {
  gateway = await TestGateway.start();
  stack = await startStack({ env: { GATEWAY_URL: gateway.url, GATEWAY_MODEL: 'unused-default' } });
});
afterAll(async () => {
  await stack.stop();
  await gateway.close();
});

const OUTPUT = 'sunny, 21 degrees';
const parameters = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const chatTools: OpenAI.Chat.ChatCompletionTool[] = [{ type: 'function', function: { name: 'get_weather', description: 'The weather of a city', parameters } }];
const responseTools: OpenAI.Responses.FunctionTool[] = [{ type: 'function', name: 'get_weather', description: 'The weather of a city', parameters, strict: false }];
const CALL_ID = /^call_[0-9a-f]{24}$/;

async function userWith(model: string) {
  const user = await stack.user();
  const agent = await stack.api(user.key, 'POST', '/api/agents', { name: 'Tool user', instructions: 'Use the tools.', model });
  expect(agent.status).toBe(201);
  return { key: user.key, model: `agent:${agent.body.id as string}`, client: new OpenAI({ apiKey: user.key, baseURL: `${stack.url}/v1`, maxRetries: 0 }) };
}

/** A gateway model of its own that asks for get_weather first, then answers quoting the tool's result. */
function gatewayModel(): string {
  const model = `gw-${uniqueId()}`;
  gateway.script(model, { frames: chat.toolCall('model_call_1', 'get_weather', ['{"city":', '"Paris"}'], { prompt: 30, completion: 8 }) }, { frames: chat.text(['The weather: ', OUTPUT, '.']) });
  return model;
}

/** What the gateway's second request read back: the tool message with the client's output. */
function expectGatewayReadOutput(model: string) {
  const [first, second] = gateway.requestsFor(model);
  expect(first!.body.tools.map((t: { function: { name: string } }) => t.function.name)).toContain('get_weather');
  const toolMessage = second!.body.messages.find((m: { role: string }) => m.role === 'tool');
  expect(JSON.stringify(toolMessage.content)).toContain(OUTPUT);
}

const runStatus = async (key: string, runId: string) => (await stack.api(key, 'GET', `/api/runs/${runId}`)).body.status as string;
const waitRun = async (key: string, runId: string) => (await stack.api(key, 'GET', `/api/runs/${runId}?wait=30`)).body;

/** The chat history a client sends back: its question, the assistant's tool calls, a result per call. */
function withResults(question: string, message: OpenAI.Chat.ChatCompletionMessage): OpenAI.Chat.ChatCompletionMessageParam[] {
  const calls = message.tool_calls ?? [];
  return [{ role: 'user', content: question }, { role: 'assistant', content: message.content, tool_calls: calls }, ...calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, content: OUTPUT }))];
}

async function chatRoundTrip(model: 'local' | 'gateway') {
  const gwModel = model === 'gateway' ? gatewayModel() : 'local';
  const { client, model: agent, key } = await userWith(gwModel);
  const question = 'Use get_weather for Paris';
  const { data, response } = await client.chat.completions.create({ model: agent, messages: [{ role: 'user', content: question }], tools: chatTools }).withResponse();
  const runId = response.headers.get('x-run-id')!;
  const choice = data.choices[0]!;
  expect(choice.finish_reason).toBe('tool_calls');
  expect(data.usage!.total_tokens).toBeGreaterThan(0);
  const call = choice.message.tool_calls![0]!;
  expect(call).toMatchObject({ type: 'function', function: { name: 'get_weather' } });
  expect(call.id).toMatch(CALL_ID);
  expect(JSON.parse((call as { function: { arguments: string } }).function.arguments)).toMatchObject({ city: expect.any(String) });
  expect(await runStatus(key, runId)).toBe('requires_action');

  const resumed = await client.chat.completions.create({ model: agent, messages: withResults(question, choice.message), tools: chatTools }).withResponse();
  expect(resumed.response.headers.get('x-run-id')).toBe(runId);
  expect(resumed.data.choices[0]).toMatchObject({ finish_reason: 'stop' });
  expect(resumed.data.choices[0]!.message.content).toContain(OUTPUT);
  expect((await waitRun(key, runId)).status).toBe('succeeded');
  if (model === 'gateway') expectGatewayReadOutput(gwModel);
}

async function streamedChatRoundTrip(model: 'local' | 'gateway') {
  const gwModel = model === 'gateway' ? gatewayModel() : 'local';
  const { client, model: agent, key } = await userWith(gwModel);
  const question = 'Use get_weather for Paris';
  const first = await client.chat.completions.create({ model: agent, messages: [{ role: 'user', content: question }], tools: chatTools, stream: true, stream_options: { include_usage: true } }).withResponse();
  const runId = first.response.headers.get('x-run-id')!;
  const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
  for await (const chunk of first.data) chunks.push(chunk);
  // Assembled as SDKs do: the call opened with its id and name, then its arguments appended.
  const calls = new Map<number, { id: string; name: string; arguments: string }>();
  for (const delta of chunks.flatMap((c) => c.choices.flatMap((choice) => choice.delta.tool_calls ?? []))) {
    const call = calls.get(delta.index) ?? { id: '', name: '', arguments: '' };
    calls.set(delta.index, { id: delta.id ?? call.id, name: delta.function?.name ?? call.name, arguments: call.arguments + (delta.function?.arguments ?? '') });
  }
  const call = calls.get(0)!;
  expect(call.id).toMatch(CALL_ID);
  expect(call.name).toBe('get_weather');
  expect(JSON.parse(call.arguments)).toMatchObject({ city: expect.any(String) });
  expect(chunks.flatMap((c) => c.choices.map((choice) => choice.finish_reason)).filter(Boolean)).toEqual(['tool_calls']);
  // The usage so far: the model call that asked for the function.
  expect(chunks.at(-1)!.choices).toEqual([]);
  expect(chunks.at(-1)!.usage!.total_tokens).toBeGreaterThan(0);
  // The stream ended; the run is parked, not cancelled.
  expect(await runStatus(key, runId)).toBe('requires_action');

  const message = { role: 'assistant' as const, content: null, refusal: null, tool_calls: [{ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } }] };
  const resumed = await client.chat.completions.create({ model: agent, messages: withResults(question, message), tools: chatTools, stream: true }).withResponse();
  expect(resumed.response.headers.get('x-run-id')).toBe(runId);
  let text = '';
  const reasons: (string | null)[] = [];
  for await (const chunk of resumed.data) {
    text += chunk.choices[0]?.delta.content ?? '';
    reasons.push(chunk.choices[0]?.finish_reason ?? null);
  }
  expect(text).toContain(OUTPUT);
  expect(reasons.filter(Boolean)).toEqual(['stop']);
  if (model === 'gateway') expectGatewayReadOutput(gwModel);
}

async function responsesRoundTrip(model: 'local' | 'gateway', streamed: boolean) {
  const gwModel = model === 'gateway' ? gatewayModel() : 'local';
  const { client, model: agent } = await userWith(gwModel);
  let parked: OpenAI.Responses.Response;
  if (streamed) {
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of await client.responses.create({ model: agent, input: 'Use get_weather for Paris', tools: responseTools, stream: true })) events.push(event);
    const types = events.map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['response.output_item.added', 'response.function_call_arguments.delta', 'response.function_call_arguments.done', 'response.output_item.done']));
    expect(types.at(-1)).toBe('response.completed');
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    parked = (events.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response;
  } else {
    parked = await client.responses.create({ model: agent, input: 'Use get_weather for Paris', tools: responseTools });
  }
  expect(parked.status).toBe('completed');
  const call = parked.output.find((o): o is OpenAI.Responses.ResponseFunctionToolCall => o.type === 'function_call')!;
  expect(call).toMatchObject({ name: 'get_weather', status: 'completed' });
  expect(call.call_id).toMatch(CALL_ID);
  expect(JSON.parse(call.arguments)).toMatchObject({ city: expect.any(String) });
  const stored = await client.responses.retrieve(parked.id);
  expect(stored.output).toEqual([expect.objectContaining({ type: 'function_call', call_id: call.call_id, arguments: call.arguments })]);

  const input = [{ type: 'function_call_output' as const, call_id: call.call_id, output: OUTPUT }];
  let text: string;
  if (streamed) {
    const deltas: string[] = [];
    for await (const event of await client.responses.create({ model: agent, previous_response_id: parked.id, input, tools: responseTools, stream: true })) {
      if (event.type === 'response.output_text.delta') deltas.push(event.delta);
    }
    text = deltas.join('');
  } else {
    const answered = await client.responses.create({ model: agent, previous_response_id: parked.id, input, tools: responseTools });
    expect(answered.id).toBe(parked.id);
    text = answered.output_text;
  }
  expect(text).toContain(OUTPUT);
  if (model === 'gateway') expectGatewayReadOutput(gwModel);
}

describe.each(['local', 'gateway'] as const)('a client tool round trip on the %s model', (model) => {
  it('chat completions', () => chatRoundTrip(model));
  it('chat completions, streamed', () => streamedChatRoundTrip(model));
  it('responses', () => responsesRoundTrip(model, false));
  it('responses, streamed', () => responsesRoundTrip(model, true));
});

describe('hostile client tools', () => {
  const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (err: unknown) => err as InstanceType<typeof OpenAI.APIError>);
  const messages = [{ role: 'user' as const, content: 'hi' }];

  it('answers 400 in OpenAI\'s shape for tools it cannot take', async () => {
    const { client, model } = await userWith('local');
    const bad = async (body: Record<string, unknown>, param: string) => {
      const err = await failure(client.chat.completions.create({ model, messages, ...body } as never));
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      expect(err!.error).toMatchObject({ type: 'invalid_request_error', param });
    };
    await bad({ tools: { type: 'function' } }, 'tools');
    await bad({ tools: Array.from({ length: 65 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })) }, 'tools');
    await bad({ tools: [{ type: 'function', function: { name: 'no spaces allowed' } }] }, 'tools[0].function.name');
    await bad({ tools: [{ type: 'function', function: { name: 'f', parameters: 'object' } }] }, 'tools[0].function.parameters');
    await bad({ tools: chatTools, tool_choice: { type: 'function', function: { name: 'not_a_tool' } } }, 'tool_choice');
    await bad({ functions: [{ name: 'f' }] }, 'functions');
    await bad({ tools: [{ type: 'function', function: { name: 'calculator' } }] }, 'tools[0]');
    const responses = await failure(client.responses.create({ model, input: 'hi', tools: [{ type: 'function', name: 'bad name', parameters: {}, strict: false }] }));
    expect(responses).toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('results for calls no parked run made start a new run over the history', async () => {
    const { client, model } = await userWith('local');
    const message = { role: 'assistant' as const, content: null, refusal: null, tool_calls: [{ id: 'call_000000000000000000000000', type: 'function' as const, function: { name: 'get_weather', arguments: '{}' } }] };
    const { data, response } = await client.chat.completions.create({ model, messages: withResults('What is 6*7?', message) }).withResponse();
    expect(response.headers.get('x-run-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(data.choices[0]!.finish_reason).toBe('stop');
  });

  it('outputs for a response that awaits none, or for unknown calls, are 400; another user\'s response is 404', async () => {
    const { client, model } = await userWith('local');
    const done = await client.responses.create({ model, input: 'What is 6*7?' });
    const notAwaiting = await failure(client.responses.create({ model, previous_response_id: done.id, input: [{ type: 'function_call_output', call_id: 'call_x', output: 'x' }] }));
    expect(notAwaiting).toBeInstanceOf(OpenAI.BadRequestError);
    const parked = await client.responses.create({ model, input: 'Use get_weather for Paris', tools: responseTools });
    expect(parked.output.some((o) => o.type === 'function_call')).toBe(true);
    const unknown = await failure(client.responses.create({ model, previous_response_id: parked.id, input: [{ type: 'function_call_output', call_id: 'call_unknown', output: 'x' }] }));
    expect(unknown).toBeInstanceOf(OpenAI.BadRequestError);
    const other = await userWith('local');
    const foreign = await failure(other.client.responses.create({ model: other.model, previous_response_id: parked.id, input: [{ type: 'function_call_output', call_id: 'call_unknown', output: 'x' }] }));
    expect(foreign).toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('a round trip across a restart', () => {
  it('the tool results sent to a new web and worker resume the same run', async () => {
    const { client, model, key } = await userWith('local');
    const question = 'Use get_weather for Paris';
    const { data, response } = await client.chat.completions.create({ model, messages: [{ role: 'user', content: question }], tools: chatTools }).withResponse();
    const runId = response.headers.get('x-run-id')!;
    expect(data.choices[0]!.finish_reason).toBe('tool_calls');

    await Promise.all([...stack.webs.splice(0), ...stack.workers.splice(0)].map((proc) => proc.stop()));
    stack.urls.splice(0);
    await stack.start();
    // Just booted: the client retries a 429 as the SDK does by default.
    const fresh = new OpenAI({ apiKey: key, baseURL: `${stack.url}/v1`, maxRetries: 2 });
    const resumed = await fresh.chat.completions.create({ model, messages: withResults(question, data.choices[0]!.message), tools: chatTools }).withResponse();
    expect(resumed.response.headers.get('x-run-id')).toBe(runId);
    expect(resumed.data.choices[0]!.message.content).toContain(OUTPUT);
  });
});

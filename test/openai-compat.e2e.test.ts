import OpenAI, { APIUserAbortError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { png } from './support/images.js';

/**
 * The OpenAI-compatible endpoints (DESIGN §16), driven by the official `openai` SDK as any client
 * that takes an OpenAI base URL would: agents as models, chat completions and responses as runs
 * through the platform's own path (queue, worker, relay), errors as the SDK's typed errors.
 */
let stack: Stack;
let slow: Stack;
beforeAll(async () => {
  [stack, slow] = await Promise.all([
    startStack({ workers: 1 }),
    // Tokens 100 ms apart: long enough to leave mid-run.
    startStack({ workers: 1, env: { LOCAL_MODEL_TOKEN_DELAY_MS: '100' } }),
  ]);
});
afterAll(() => Promise.all([stack.stop(), slow.stop()]));

const clientOf = (on: Stack, key: string) => new OpenAI({ apiKey: key, baseURL: `${on.url}/v1`, maxRetries: 0 });
const runOf = (on: Stack, key: string, runId: string, wait = 0) => on.api(key, 'GET', `/api/runs/${runId}${wait ? `?wait=${wait}` : ''}`);

async function userWithAgent(on = stack) {
  const user = await on.user();
  const agent = await on.api(user.key, 'POST', '/api/agents', { name: 'Arithmetic helper', instructions: 'Answer briefly.', model: 'local' });
  expect(agent.status).toBe(201);
  return { ...user, agentId: agent.body.id as string, client: clientOf(on, user.key) };
}

describe('GET /v1/models', () => {
  it("lists agent:default and the caller's agents, never another user's", async () => {
    const mine = await userWithAgent();
    const theirs = await userWithAgent();
    const ids = [];
    for await (const model of mine.client.models.list()) ids.push(model.id);
    expect(ids).toEqual(['agent:default', `agent:${mine.agentId}`]);
    const one = await mine.client.models.retrieve(`agent:${mine.agentId}`);
    expect(one).toMatchObject({ id: `agent:${mine.agentId}`, object: 'model', owned_by: expect.any(String), created: expect.any(Number) });
    const refused = await mine.client.models.retrieve(`agent:${theirs.agentId}`).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect((refused as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'not_found_error', code: 'model_not_found' });
  });
});

describe('POST /v1/chat/completions', () => {
  it('answers one chat.completion from a run the platform records, with usage and finish_reason', async () => {
    const { client, key, agentId } = await userWithAgent();
    const { data, response } = await client.chat.completions.create({ model: `agent:${agentId}`, messages: [{ role: 'user', content: 'What is 12*7?' }] }).withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.model).toBe(`agent:${agentId}`);
    expect(data.choices).toHaveLength(1);
    expect(data.choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', message: { role: 'assistant' } });
    expect(data.choices[0]!.message.content).toContain('84');
    expect(data.usage!.total_tokens).toBe(data.usage!.prompt_tokens + data.usage!.completion_tokens);
    const runId = response.headers.get('x-run-id')!;
    expect(data.id).toBe(`chatcmpl-${runId}`);
    const run = await runOf(stack, key, runId);
    expect(run.body).toMatchObject({ status: 'succeeded', agent_id: agentId, mode: 'react', query: 'What is 12*7?' });
    expect(run.body.answer).toBe(data.choices[0]!.message.content);
  });

  it("keeps the earlier messages as the run's conversation (the client's system prompt included)", async () => {
    const { client, key } = await userWithAgent();
    const question = { role: 'user' as const, content: 'And what is 2+3?' };
    const alone = await client.chat.completions.create({ model: 'agent:default', messages: [question] });
    const { data, response } = await client.chat.completions
      .create({
        model: 'agent:default',
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'user', content: 'What is 1+1?' },
          { role: 'assistant', content: 'The result of 1+1 is 2.' },
          question,
        ],
      })
      .withResponse();
    expect(data.choices[0]!.message.content).toContain('5');
    expect(data.usage!.prompt_tokens).toBeGreaterThan(alone.usage!.prompt_tokens);
    const conversation = await stack.api(key, 'GET', `/api/conversations/${response.headers.get('x-conversation-id')}`);
    expect(conversation.body.messages.map((m: { role: string; content: string }) => [m.role, m.content])).toEqual([
      ['system', 'You are terse.'],
      ['user', 'What is 1+1?'],
      ['assistant', 'The result of 1+1 is 2.'],
      ['user', 'And what is 2+3?'],
      ['assistant', data.choices[0]!.message.content],
    ]);
  });

  it('streams chunks: the role first, the tokens, the finish reason, the usage chunk with empty choices, then [DONE]', async () => {
    const { client, key } = await userWithAgent();
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'agent:default', messages: [{ role: 'user', content: 'What is 6*7?' }], stream: true, stream_options: { include_usage: true } })
      .withResponse();
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta).toEqual({ role: 'assistant', content: '' });
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    const finish = chunks.filter((c) => c.choices[0]?.finish_reason);
    expect(finish.map((c) => c.choices[0]!.finish_reason)).toEqual(['stop']);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.total_tokens).toBeGreaterThan(0);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const run = await runOf(stack, key, response.headers.get('x-run-id')!);
    expect(run.body.status).toBe('succeeded');
    expect(text).toBe(run.body.answer);
    expect(text).toContain('42');
    expect(run.body.usage.total_tokens).toBe(last.usage!.total_tokens);
  });

  it('without include_usage the stream has no usage chunk', async () => {
    const { client } = await userWithAgent();
    const chunks = [];
    for await (const chunk of await client.chat.completions.create({ model: 'agent:default', messages: [{ role: 'user', content: 'hi' }], stream: true })) chunks.push(chunk);
    expect(chunks.every((c) => c.choices.length === 1 && c.usage === undefined)).toBe(true);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
  });

  it('accepts the sampling parameters clients send, and keeps them with the run', async () => {
    const { client, key } = await userWithAgent();
    const { data, response } = await client.chat.completions
      .create({
        model: 'agent:default',
        messages: [{ role: 'user', content: 'What is 3*3?' }],
        temperature: 0.2,
        top_p: 0.9,
        max_tokens: 256,
        stop: ['END'],
        seed: 7,
        presence_penalty: 0.5,
        frequency_penalty: -0.5,
        user: 'user-123',
        metadata: { source: 'test' },
        logprobs: false,
        response_format: { type: 'text' },
      })
      .withResponse();
    expect(data.choices[0]!.message.content).toContain('9');
    const [row] = await stack.knex('runs').select('sampling').where({ id: response.headers.get('x-run-id') });
    expect(row.sampling).toEqual({ temperature: 0.2, top_p: 0.9, max_tokens: 256, stop: ['END'], seed: 7, presence_penalty: 0.5, frequency_penalty: -0.5 });
    const run = await runOf(stack, key, response.headers.get('x-run-id')!);
    expect(run.body).toMatchObject({ status: 'succeeded', user_metadata: JSON.stringify({ source: 'test' }) });
  });

  it('takes an image part as an attached file of the question', async () => {
    const { client, key } = await userWithAgent();
    const url = `data:image/png;base64,${(await png(40, 30)).toString('base64')}`;
    const { data, response } = await client.chat.completions
      .create({ model: 'agent:default', messages: [{ role: 'user', content: [{ type: 'text', text: 'What is in this picture?' }, { type: 'image_url', image_url: { url } }] }] })
      .withResponse();
    expect(data.choices[0]!.message.content).toContain('I see 1 image');
    const conversation = await stack.api(key, 'GET', `/api/conversations/${response.headers.get('x-conversation-id')}`);
    expect(conversation.body.messages[0].attachments).toEqual([expect.objectContaining({ content_type: 'image/png', width: 40, height: 30 })]);
    const files = await stack.api(key, 'GET', '/api/files');
    expect(files.body.total).toBe(1);
  });

  it('answers the SDK typed errors in OpenAI\'s shape, with the statuses of DESIGN §4', async () => {
    const { client, key } = await userWithAgent();
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (err: unknown) => err as InstanceType<typeof OpenAI.APIError>);

    const tools = await failure(client.chat.completions.create({ model: 'agent:default', messages, tools: [{ type: 'function', function: { name: 'f', parameters: {} } }], tool_choice: 'required' }));
    expect(tools).toBeInstanceOf(OpenAI.BadRequestError);
    expect(tools!.error).toMatchObject({ type: 'invalid_request_error', code: 'unsupported_parameter', param: 'tool_choice' });
    const n = await failure(client.chat.completions.create({ model: 'agent:default', messages, n: 2 }));
    expect(n).toBeInstanceOf(OpenAI.BadRequestError);
    expect(n!.error).toMatchObject({ code: 'unsupported_parameter', param: 'n' });
    const unknown = await failure(client.chat.completions.create({ model: 'gpt-4o', messages }));
    expect(unknown).toBeInstanceOf(OpenAI.NotFoundError);
    expect(unknown!.error).toMatchObject({ type: 'not_found_error', code: 'model_not_found' });
    const absent = await failure(client.chat.completions.create({ model: 'agent:00000000-0000-4000-8000-000000000000', messages }));
    expect(absent).toBeInstanceOf(OpenAI.NotFoundError);
    const hot = await failure(client.chat.completions.create({ model: 'agent:default', messages, temperature: 3 }));
    expect(hot).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    expect(hot!.error).toMatchObject({ type: 'invalid_request_error', param: 'temperature' });
    const lastAssistant = await failure(client.chat.completions.create({ model: 'agent:default', messages: [...messages, { role: 'assistant', content: 'hello' }] }));
    expect(lastAssistant).toBeInstanceOf(OpenAI.BadRequestError);
    expect(lastAssistant!.error).toMatchObject({ code: 'invalid_request', param: 'messages' });
    const toolMessage = await failure(client.chat.completions.create({ model: 'agent:default', messages: [{ role: 'tool', content: 'x', tool_call_id: 'c' }, ...messages] }));
    expect(toolMessage).toBeInstanceOf(OpenAI.BadRequestError);
    const remoteImage = await failure(client.chat.completions.create({ model: 'agent:default', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://169.254.169.254/x.png' } }, { type: 'text', text: 'hi' }] }] }));
    expect(remoteImage).toBeInstanceOf(OpenAI.BadRequestError);
    expect(remoteImage!.error).toMatchObject({ code: 'unsupported_parameter', param: 'messages[0].content[0]' });
    const notImage = await failure(client.chat.completions.create({ model: 'agent:default', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${Buffer.from('not an image').toString('base64')}` } }, { type: 'text', text: 'hi' }] }] }));
    expect(notImage!.status).toBe(415);
    const empty = await failure(client.chat.completions.create({ model: 'agent:default', messages: [] }));
    expect(empty).toBeInstanceOf(OpenAI.UnprocessableEntityError);

    const raw = async (text: string) => {
      const res = await fetch(`${stack.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: text });
      return { status: res.status, body: (await res.json()) as { error: { type: string; code: string; param: string | null; message: string } } };
    };
    const malformed = await raw('{"model": "agent:default", "messages": [');
    expect(malformed).toMatchObject({ status: 422, body: { error: { type: 'invalid_request_error', code: 'json_invalid' } } });
    const tooMany = await raw(JSON.stringify({ model: 'agent:default', messages: Array.from({ length: 501 }, () => messages[0]) }));
    expect(tooMany).toMatchObject({ status: 422, body: { error: { param: 'messages' } } });
    const long = await raw(JSON.stringify({ model: 'agent:default', messages: [{ role: 'user', content: 'x'.repeat(32_001) }] }));
    expect(long).toMatchObject({ status: 400, body: { error: { code: 'invalid_request', param: 'messages' } } });
    const surrogate = await raw('{"model": "agent:default", "messages": [{"role": "user", "content": "\\ud800"}]}');
    expect(surrogate.status).toBe(422);
    const notStreamFlag = await raw(JSON.stringify({ model: 'agent:default', messages, stream: 'yes' }));
    expect(notStreamFlag).toMatchObject({ status: 422, body: { error: { param: 'stream' } } });
    const notAList = await raw(JSON.stringify({ model: 'agent:default', messages: 'hi' }));
    expect(notAList.status).toBe(422);

    const badKey = await failure(clientOf(stack, 'svc_not-a-key').chat.completions.create({ model: 'agent:default', messages }));
    expect(badKey).toBeInstanceOf(OpenAI.AuthenticationError);
    expect(badKey!.error).toMatchObject({ type: 'authentication_error' });
    expect(badKey!.headers?.get('www-authenticate')).toBe('Bearer');
  });

  it('a run that fails answers 502 with its code (not to be retried); a stream ends with an error the SDK raises', async () => {
    const { client, key } = await userWithAgent();
    const agent = await stack.api(key, 'POST', '/api/agents', { name: 'One step', model: 'local', max_iterations: 1 });
    const model = `agent:${agent.body.id}`;
    const messages = [{ role: 'user' as const, content: 'What is 12*7?' }];
    const failed = await client.chat.completions.create({ model, messages }).catch((err: unknown) => err as InstanceType<typeof OpenAI.APIError>);
    expect(failed).toBeInstanceOf(OpenAI.APIError);
    expect(failed!.status).toBe(502);
    expect(failed!.error).toMatchObject({ type: 'server_error', code: 'max_iterations' });
    expect(failed!.headers?.get('x-should-retry')).toBe('false');
    expect((await runOf(stack, key, failed!.headers!.get('x-run-id')!)).body.status).toBe('failed');

    const streamed = (async () => {
      for await (const _ of await client.chat.completions.create({ model, messages, stream: true })) void _;
    })().catch((err: unknown) => err as InstanceType<typeof OpenAI.APIError>);
    expect(await streamed).toBeInstanceOf(OpenAI.APIError);
    expect((await streamed)!.error).toMatchObject({ code: 'max_iterations' });

    const response = await client.responses.create({ model, input: 'What is 12*7?' });
    expect(response).toMatchObject({ status: 'failed', error: { code: 'max_iterations' }, output: [] });
  });

  it('a busy conversation answers 409 in OpenAI\'s shape', async () => {
    const { client, key } = await userWithAgent(slow);
    const first = await client.responses.create({ model: 'agent:default', input: 'hello there', stream: true }).withResponse();
    const runId = first.response.headers.get('x-run-id')!;
    const busy = await client.responses.create({ model: 'agent:default', input: 'again', previous_response_id: runId }).then(() => undefined, (err: unknown) => err as InstanceType<typeof OpenAI.APIError>);
    expect(busy).toBeInstanceOf(OpenAI.ConflictError);
    expect(busy!.error).toMatchObject({ code: 'conversation_busy', type: 'invalid_request_error' });
    for await (const _ of first.data) void _;
    expect((await runOf(slow, key, runId)).body.status).toBe('succeeded');
  });
});

describe('a client that leaves cancels its run', () => {
  it('aborting a stream cancels the run', async () => {
    const { client, key } = await userWithAgent(slow);
    const controller = new AbortController();
    const { data: stream, response } = await client.chat.completions
      .create({ model: 'agent:default', messages: [{ role: 'user', content: 'Tell me something long' }], stream: true }, { signal: controller.signal })
      .withResponse();
    const runId = response.headers.get('x-run-id')!;
    let seen = 0;
    // The SDK ends the iteration quietly once its signal aborts.
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) seen++;
      controller.abort();
    }
    expect(seen).toBeLessThanOrEqual(1);
    const run = await runOf(slow, key, runId, 30);
    expect(run.body.status).toBe('cancelled');
  });

  it('aborting a non-streaming request cancels the run', async () => {
    const { client, key, user } = await userWithAgent(slow);
    const controller = new AbortController();
    const pending = client.chat.completions.create({ model: 'agent:default', messages: [{ role: 'user', content: 'Tell me something long' }] }, { signal: controller.signal }).catch((err: unknown) => err);
    const runId = await firstRunOf(slow, user.id, 'running');
    controller.abort();
    expect(await pending).toBeInstanceOf(APIUserAbortError);
    expect((await runOf(slow, key, runId, 30)).body.status).toBe('cancelled');
  });
});

/** The user's only run, once its row has reached `status` (a non-streaming client learns its id only at the end). */
async function firstRunOf(on: Stack, userId: string, status: string): Promise<string> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const [row] = await on.knex('runs').select('id', 'status').where({ user_id: userId });
    if (row?.status === status) return row.id;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no run of user ${userId} reached ${status}`);
}

describe('POST /v1/responses', () => {
  it('answers a response whose id is the run id; previous_response_id continues its conversation', async () => {
    const { client, key } = await userWithAgent();
    const first = await client.responses.create({ model: 'agent:default', input: 'What is 12*7?' });
    expect(first).toMatchObject({ object: 'response', status: 'completed', model: 'agent:default', error: null });
    expect(first.output_text).toContain('84');
    expect(first.usage!.total_tokens).toBe(first.usage!.input_tokens + first.usage!.output_tokens);
    const firstRun = await runOf(stack, key, first.id);
    expect(firstRun.body).toMatchObject({ status: 'succeeded', answer: first.output_text });

    const second = await client.responses.create({ model: 'agent:default', input: 'And what is 2+3?', previous_response_id: first.id });
    expect(second.previous_response_id).toBe(first.id);
    expect(second.output_text).toContain('5');
    expect(second.usage!.input_tokens).toBeGreaterThan(first.usage!.input_tokens);
    const secondRun = await runOf(stack, key, second.id);
    expect(secondRun.body.conversation_id).toBe(firstRun.body.conversation_id);

    const retrieved = await client.responses.retrieve(second.id);
    expect(retrieved).toMatchObject({ id: second.id, status: 'completed', output_text: second.output_text });

    const stranger = clientOf(stack, (await stack.user()).key);
    const hidden = await stranger.responses.create({ model: 'agent:default', input: 'x', previous_response_id: first.id }).catch((err: unknown) => err);
    expect(hidden).toBeInstanceOf(OpenAI.NotFoundError);
    expect(await stranger.responses.retrieve(first.id).catch((err: unknown) => err)).toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('streams response.created … output_text deltas … response.completed, numbered in order', async () => {
    const { client } = await userWithAgent();
    const events = [];
    for await (const event of await client.responses.create({ model: 'agent:default', input: [{ role: 'user', content: [{ type: 'input_text', text: 'What is 6*7?' }] }], instructions: 'Be brief.', stream: true })) events.push(event);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 4)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added']);
    expect(types.slice(-4)).toEqual(['response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(completed.response.output_text ?? completed.response.output.flatMap((o) => (o.type === 'message' ? o.content : [])).map((c) => (c.type === 'output_text' ? c.text : '')).join('')).toBe(text);
    expect(text).toContain('42');
  });

  it('refuses hosted tools and outputs that answer no call', async () => {
    const { client } = await userWithAgent();
    const tools = await client.responses.create({ model: 'agent:default', input: 'hi', tools: [{ type: 'web_search_preview' }] }).catch((err: unknown) => err);
    expect(tools).toBeInstanceOf(OpenAI.BadRequestError);
    const item = await client.responses.create({ model: 'agent:default', input: [{ type: 'function_call_output', call_id: 'c', output: 'x' }] }).catch((err: unknown) => err);
    expect(item).toBeInstanceOf(OpenAI.BadRequestError);
  });
});

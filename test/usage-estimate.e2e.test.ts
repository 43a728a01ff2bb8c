import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack } from './support/stack.js';
import { ofType, stream, type StreamResult } from './support/sse.js';
import { TestGateway } from './support/gateway.js';
import { chat, native, responses } from './support/gateway-frames.js';
import { uniqueId } from './support/app.js';

/**
 * DESIGN §21 on a server that reports no usage (many OpenAI-compatible servers stream none): every
 * model call is charged the estimate (the prompt and what the model produced, text and tool calls),
 * marked `estimated`, so the run's usage, its key's budget and the refusal once it is spent hold.
 */
let gateway: TestGateway;
let stack: Stack;

beforeAll(async () => {
  gateway = await TestGateway.start();
  stack = await startStack({ env: { MODEL_PROVIDER: 'gateway', GATEWAY_URL: gateway.url, GATEWAY_MODEL: 'default-model', GATEWAY_MAX_RETRIES: '0' } });
});
afterAll(async () => {
  await stack?.stop();
  await gateway?.close();
});

async function agentOn(key: string, format = 'chat'): Promise<{ id: string; model: string }> {
  const model = `model-${uniqueId()}`;
  const created = await stack.api(key, 'POST', '/api/agents', { name: `no usage ${format}`, model, api_format: format });
  expect(created.status).toBe(201);
  return { id: created.body.id, model };
}

const run = (key: string, agentId: string, q: string, mode = 'react') => stream(`${stack.url}/api/${mode}`, { token: key, body: { q, agent_id: agentId } });
const doneOf = (res: StreamResult) => ofType(res.events, 'done')[0]!.data;
const rowOf = (res: StreamResult) => stack.knex('runs').where({ id: res.headers.get('x-run-id') }).first();

async function succeeded(res: StreamResult) {
  expect({ status: res.status, body: res.body }).toEqual({ status: 200, body: undefined });
  expect(ofType(res.events, 'error')).toEqual([]);
  const done = doneOf(res);
  expect(done.status).toBe('succeeded');
  expect((await rowOf(res)).usage).toEqual(done.usage);
  return done.usage as { prompt_tokens: number; completion_tokens: number; total_tokens: number; estimated?: boolean };
}

describe('usage of a server that reports none', () => {
  it.each([
    ['chat', chat.text(['The answer', ' is four.'])],
    ['responses', responses.text(['The answer', ' is four.'])],
    ['native', native.text(['The answer', ' is four.'])],
  ])('the %s format: a completed run is charged the estimate, marked estimated', async (format, frames) => {
    const { key } = await stack.user();
    const agent = await agentOn(key, format);
    gateway.script(agent.model, { frames });
    const usage = await succeeded(await run(key, agent.id, 'What is two plus two, in words?'));
    expect(usage.estimated).toBe(true);
    expect(usage.prompt_tokens).toBeGreaterThan(5);
    expect(usage.completion_tokens).toBeGreaterThanOrEqual(4);
    expect(usage.total_tokens).toBe(usage.prompt_tokens + usage.completion_tokens);
  });

  it('a tool call the model produced counts as completion: its name and arguments', async () => {
    const { key } = await stack.user();
    const agent = await agentOn(key);
    const expression = Array.from({ length: 100 }, (_, i) => String(i + 1)).join(' + ');
    gateway.script(agent.model, { frames: chat.toolCalls([{ id: 'call_1', name: 'calculator', arguments: { expression } }]) }, { frames: chat.text(['5050.']) });
    const usage = await succeeded(await run(key, agent.id, 'Add the numbers from 1 to 100.'));
    expect(usage.estimated).toBe(true);
    // The answer is a token or two; the arguments alone are a few hundred.
    expect(usage.completion_tokens).toBeGreaterThan(150);
  });

  it('a DAG run: the plan, the nodes and the synthesis are all charged', async () => {
    const { key } = await stack.user();
    const agent = await agentOn(key);
    const plan = JSON.stringify({ tasks: [{ id: 't1', task: 'Say hello', depends_on: [] }] });
    gateway.script(agent.model, { frames: chat.text([plan]) }, { frames: chat.text(['Hello.']) }, { frames: chat.text(['Hello to you.']) });
    const usage = await succeeded(await run(key, agent.id, 'Greet me.', 'dag'));
    expect(gateway.requestsFor(agent.model)).toHaveLength(3);
    expect(usage.estimated).toBe(true);
    // The planner's instructions alone are well over a hundred tokens.
    expect(usage.prompt_tokens).toBeGreaterThan(100);
    expect(usage.completion_tokens).toBeGreaterThan(10);
  });

  it("a key's token budget is consumed by the estimates, and refuses runs once spent", async () => {
    const { key } = await stack.user();
    const keyId = (await stack.api(key, 'GET', '/api/me/api-keys')).body.items[0].id as string;
    expect((await stack.api(key, 'PATCH', `/api/me/api-keys/${keyId}`, { token_budget: { limit: 40, period: 'day' } })).status).toBe(200);
    const agent = await agentOn(key);
    gateway.script(agent.model, { frames: chat.text(['Paris is the capital of France, and has been for a long time.']) });
    const usage = await succeeded(await run(key, agent.id, 'What is the capital of France? Answer in one sentence, with a little history.'));
    expect(usage.total_tokens).toBeGreaterThan(40);
    const record = (await stack.api(key, 'GET', '/api/me/api-keys')).body.items.find((k: { id: string }) => k.id === keyId);
    expect(record.token_usage.used).toBe(usage.total_tokens);
    const refused = await run(key, agent.id, 'And of Spain?');
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ error: 'insufficient_quota' });
    expect(gateway.requestsFor(agent.model)).toHaveLength(1);
  });
});
